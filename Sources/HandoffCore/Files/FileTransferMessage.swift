/// What one file of a send came to at the receiver (a `fileReceived` frame).
public struct FileReceipt: Sendable, Hashable {
    /// The file's index in the offer.
    public var index: Int
    /// Where it landed, relative to the download directory (`photos/a (2).jpg`); empty on failure.
    public var name: String
    /// The byte it started from (more than 0: resumed from a partial copy).
    public var start: Int
    /// The bytes that arrived this time.
    public var bytes: Int
    /// Why the file was not kept, or nil when it was.
    public var error: HandoffError?

    public init(index: Int, name: String, start: Int, bytes: Int, error: HandoffError? = nil) {
        self.index = index
        self.name = name
        self.start = start
        self.bytes = bytes
        self.error = error
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(index)
        hasher.combine(name)
        hasher.combine(error?.code.rawValue)
    }
}

/// The messages of a file send (docs/PROTOCOL.md, "Sending files"), besides the stream frames
/// that carry the bytes: the offer, the receiver's answer, each file's end, and each file's
/// receipt. Payloads are property-list dictionaries like every peer message.
public enum FileTransferMessage: Sendable, Hashable {
    /// The sender's offer (`fileOffer`, first frame after hello).
    case offer(FileOffer)
    /// The receiver takes the offer: for each file, the byte to start from (`fileAnswer`).
    case answer(starts: [Int])
    /// The sender's end of one file, with its SHA-256 (`fileEnd`).
    case fileEnd(sha256: String)
    /// The receiver's receipt for one file (`fileReceived`).
    case received(FileReceipt)

    /// The frame kinds of a file send.
    public static let kinds: Set<FrameKind> = [.fileOffer, .fileAnswer, .fileEnd, .fileReceived]

    /// The message as one frame.
    public var frame: Frame {
        switch self {
        case .offer(let offer):
            return Frame(kind: .fileOffer, payload: PropertyListBinaryCoding.encode(offer.propertyList))
        case .answer(let starts):
            return Frame(kind: .fileAnswer, payload: PropertyListBinaryCoding.encode(["starts": .array(starts.map { .integer(Int64($0)) })]))
        case .fileEnd(let sha256):
            return Frame(kind: .fileEnd, payload: PropertyListBinaryCoding.encode(["sha256": .string(sha256)]))
        case .received(let receipt):
            var fields: [String: PropertyListValue] = [
                "index": .integer(Int64(receipt.index)), "name": .string(receipt.name),
                "start": .integer(Int64(receipt.start)), "bytes": .integer(Int64(receipt.bytes)),
            ]
            if let error = receipt.error {
                fields["code"] = .integer(Int64(error.code.rawValue))
                fields["message"] = .string(error.message)
            }
            return Frame(kind: .fileReceived, payload: PropertyListBinaryCoding.encode(fields))
        }
    }

    /// Decodes a frame of one of ``kinds``.
    public init(frame: Frame) throws(FrameError) {
        let kind = frame.kind
        func malformed(_ reason: String) -> FrameError { .malformed(kind: kind, reason: reason) }
        let fields: UserInfo
        do { fields = try PropertyListBinaryCoding.decodeUserInfo(frame.payload) } catch { throw malformed(error.description) }
        func integer(_ key: String) throws(FrameError) -> Int {
            guard case .integer(let n)? = fields[key], n >= 0 else { throw malformed("missing \(key)") }
            return Int(clamping: n)
        }
        switch kind {
        case .fileOffer:
            do { self = .offer(try FileOffer(propertyList: fields)) } catch { throw malformed(error.message) }
        case .fileAnswer:
            guard case .array(let values)? = fields["starts"] else { throw malformed("missing starts") }
            var starts: [Int] = []
            for value in values {
                guard case .integer(let n) = value, n >= 0 else { throw malformed("a start must be 0 or more") }
                starts.append(Int(clamping: n))
            }
            self = .answer(starts: starts)
        case .fileEnd:
            guard case .string(let hash)? = fields["sha256"], FileOffer.isSHA256(hash) else { throw malformed("sha256 must be 64 lowercase hex digits") }
            self = .fileEnd(sha256: hash)
        case .fileReceived:
            guard case .string(let name)? = fields["name"] else { throw malformed("missing name") }
            var receipt = FileReceipt(index: try integer("index"), name: name, start: try integer("start"), bytes: try integer("bytes"))
            if case .integer(let code)? = fields["code"] {
                var message = ""
                if case .string(let text)? = fields["message"] { message = text }
                receipt.error = HandoffError(HandoffError.Code(rawValue: Int(clamping: code)), message)
            }
            self = .received(receipt)
        default:
            throw .unexpected(kind: kind, expecting: "a file send message")
        }
    }
}
