/// The file form of a ``RestorationCoder``: a binary property list (``PropertyListBinaryCoding``)
/// of `{"format": "handoff.restoration", "version": 1, "root": coder}`, where a coder is
/// `{"values": {...}, "children": {identifier: coder}}`.
public enum RestorationArchive {
    /// What `format` holds.
    public static let format = "handoff.restoration"
    /// The version this library writes and reads.
    public static let version: Int64 = 1

    /// The archive's bytes.
    public static func encode(_ coder: RestorationCoder) -> [UInt8] {
        PropertyListBinaryCoding.encode(.dictionary([
            "format": .string(format), "version": .integer(version), "root": coder.propertyList,
        ]))
    }

    /// The root coder of an archive; throws, saying why, for bytes that are not an archive of
    /// this version.
    public static func decode(_ bytes: [UInt8]) throws(RestorationArchiveError) -> RestorationCoder {
        let value: PropertyListValue
        do { value = try PropertyListBinaryCoding.decode(bytes) } catch { throw RestorationArchiveError("not a property list: \(error)") }
        guard case .dictionary(let body) = value, body["format"] == .string(format) else {
            throw RestorationArchiveError("not a handoff restoration archive")
        }
        guard case .integer(let found)? = body["version"], found == version else {
            throw RestorationArchiveError("archive version \(body["version"].map { "\($0)" } ?? "missing"), this library reads version \(version)")
        }
        guard let root = body["root"], let coder = RestorationCoder(propertyList: root) else {
            throw RestorationArchiveError("the archive's coders are malformed")
        }
        return coder
    }
}

/// Why bytes are not a restoration archive this library can read.
public struct RestorationArchiveError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, for a person.
    public var reason: String

    public init(_ reason: String) { self.reason = reason }

    public var description: String { reason }
}
