/// The answer to `sendFiles`: the receiving device took the offer; for each file, the byte its
/// data starts from (0, or the length of a partial copy the receiver kept from an earlier send).
public struct SendFilesResult: ControlResult, Equatable {
    public var starts: [Int]

    public init(starts: [Int]) { self.starts = starts }

    public var json: JSONValue { .object(["starts": .array(starts.map { .integer($0) })]) }

    public init(json: JSONValue) {
        self.init(starts: (json["starts"]?.arrayValue ?? []).map { Int(clamping: $0.int64Value ?? 0) })
    }
}
