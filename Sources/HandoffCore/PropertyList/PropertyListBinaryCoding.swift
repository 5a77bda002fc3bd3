#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why bytes could not be decoded as a property-list value.
public struct PropertyListDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Byte offset of the problem.
    public var offset: Int
    /// What is wrong.
    public var reason: String
    public var description: String { "invalid userInfo encoding at byte \(offset): \(reason)" }
}

/// The compact binary encoding of property-list values used on the wire (docs/PROTOCOL.md).
///
/// Each value is a one-byte tag followed by its body; every length and count is a big-endian
/// UInt32 and is checked against the bytes that remain before anything is allocated. Doubles and
/// dates travel as IEEE-754 bit patterns, so every value round-trips exactly.
public enum PropertyListBinaryCoding {
    /// The deepest nesting of arrays and dictionaries a decoder accepts.
    public static let maximumDepth = 64

    enum Tag: UInt8 {
        case null = 0x00, `false` = 0x01, `true` = 0x02, integer = 0x03, double = 0x04
        case string = 0x05, data = 0x06, date = 0x07, url = 0x08, uuid = 0x09
        case array = 0x0A, dictionary = 0x0B
    }

    /// Encodes a value.
    public static func encode(_ value: PropertyListValue) -> [UInt8] {
        var out: [UInt8] = []
        encode(value, into: &out)
        return out
    }

    /// Encodes a userInfo dictionary (as a dictionary value).
    public static func encode(_ userInfo: UserInfo) -> [UInt8] { encode(.dictionary(userInfo)) }

    /// Appends the encoding of a value to `out`.
    public static func encode(_ value: PropertyListValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(Tag.null.rawValue)
        case .bool(let b): out.append(b ? Tag.true.rawValue : Tag.false.rawValue)
        case .integer(let i): out.append(Tag.integer.rawValue); appendUInt64(UInt64(bitPattern: i), to: &out)
        case .double(let d): out.append(Tag.double.rawValue); appendUInt64(d.bitPattern, to: &out)
        case .date(let d):
            out.append(Tag.date.rawValue)
            appendUInt64(d.timeIntervalSinceReferenceDate.bitPattern, to: &out)
        case .string(let s): out.append(Tag.string.rawValue); appendBytes(Array(s.utf8), to: &out)
        case .data(let d): out.append(Tag.data.rawValue); appendBytes(Array(d), to: &out)
        case .url(let u): out.append(Tag.url.rawValue); appendBytes(Array(u.absoluteString.utf8), to: &out)
        case .uuid(let u):
            out.append(Tag.uuid.rawValue)
            withUnsafeBytes(of: u.uuid) { out.append(contentsOf: $0) }
        case .array(let elements):
            out.append(Tag.array.rawValue)
            appendUInt32(UInt32(elements.count), to: &out)
            for element in elements { encode(element, into: &out) }
        case .dictionary(let members):
            out.append(Tag.dictionary.rawValue)
            appendUInt32(UInt32(members.count), to: &out)
            // Sorted keys: the encoding of a value is deterministic.
            for key in members.keys.sorted() {
                appendBytes(Array(key.utf8), to: &out)
                encode(members[key]!, into: &out)
            }
        }
    }

    /// Decodes exactly one value that spans all of `bytes`.
    public static func decode(_ bytes: some Collection<UInt8>) throws(PropertyListDecodingError) -> PropertyListValue {
        var reader = Reader(bytes: Array(bytes))
        let value = try reader.readValue(depth: 0)
        guard reader.index == reader.bytes.count else {
            throw PropertyListDecodingError(offset: reader.index, reason: "\(reader.bytes.count - reader.index) trailing bytes")
        }
        return value
    }

    /// Decodes a userInfo dictionary.
    public static func decodeUserInfo(_ bytes: some Collection<UInt8>) throws(PropertyListDecodingError) -> UserInfo {
        guard case .dictionary(let members) = try decode(bytes) else {
            throw PropertyListDecodingError(offset: 0, reason: "userInfo must be a dictionary")
        }
        return members
    }

    static func appendUInt32(_ v: UInt32, to out: inout [UInt8]) {
        out.append(UInt8(v >> 24)); out.append(UInt8(truncatingIfNeeded: v >> 16))
        out.append(UInt8(truncatingIfNeeded: v >> 8)); out.append(UInt8(truncatingIfNeeded: v))
    }

    static func appendUInt64(_ v: UInt64, to out: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: v >> UInt64(shift))) }
    }

    static func appendBytes(_ bytes: [UInt8], to out: inout [UInt8]) {
        appendUInt32(UInt32(bytes.count), to: &out)
        out.append(contentsOf: bytes)
    }

    struct Reader {
        /// The most elements a container reserves room for before they arrive.
        static let maximumReservation = 64

        let bytes: [UInt8]
        var index = 0
        /// The room the containers read so far reserved before their elements arrived (the
        /// capacity they were given), so tests can check the bound above.
        private(set) var reservedElements = 0

        func fail(_ reason: String) -> PropertyListDecodingError { .init(offset: index, reason: reason) }

        mutating func readByte() throws(PropertyListDecodingError) -> UInt8 {
            guard index < bytes.count else { throw fail("truncated") }
            defer { index += 1 }
            return bytes[index]
        }

        mutating func readUInt32() throws(PropertyListDecodingError) -> UInt32 {
            guard bytes.count - index >= 4 else { throw fail("truncated length") }
            var v: UInt32 = 0
            for _ in 0..<4 { v = v << 8 | UInt32(bytes[index]); index += 1 }
            return v
        }

        mutating func readUInt64() throws(PropertyListDecodingError) -> UInt64 {
            guard bytes.count - index >= 8 else { throw fail("truncated number") }
            var v: UInt64 = 0
            for _ in 0..<8 { v = v << 8 | UInt64(bytes[index]); index += 1 }
            return v
        }

        /// A length-prefixed byte run; the length is checked against what remains first.
        mutating func readRun() throws(PropertyListDecodingError) -> ArraySlice<UInt8> {
            let length = Int(try readUInt32())
            guard length <= bytes.count - index else { throw fail("length \(length) exceeds the \(bytes.count - index) bytes left") }
            defer { index += length }
            return bytes[index..<(index + length)]
        }

        mutating func readString() throws(PropertyListDecodingError) -> String {
            let start = index
            let run = try readRun()
            guard let s = String(validating: run, as: UTF8.self) else {
                throw PropertyListDecodingError(offset: start, reason: "string is not valid UTF-8")
            }
            return s
        }

        mutating func readCount(minimumElementSize: Int) throws(PropertyListDecodingError) -> Int {
            let count = Int(try readUInt32())
            guard count <= (bytes.count - index) / minimumElementSize else {
                throw fail("count \(count) cannot fit in the \(bytes.count - index) bytes left")
            }
            return count
        }

        /// Containers may nest `maximumDepth` deep (the values inside the deepest do not count).
        func checkDepth(_ depth: Int, at offset: Int) throws(PropertyListDecodingError) {
            guard depth < PropertyListBinaryCoding.maximumDepth else {
                throw PropertyListDecodingError(offset: offset, reason: "nested deeper than \(PropertyListBinaryCoding.maximumDepth)")
            }
        }

        mutating func readValue(depth: Int) throws(PropertyListDecodingError) -> PropertyListValue {
            let tagOffset = index
            guard let tag = Tag(rawValue: try readByte()) else {
                throw PropertyListDecodingError(offset: tagOffset, reason: "unknown type tag \(bytes[tagOffset])")
            }
            switch tag {
            case .null: return .null
            case .false: return .bool(false)
            case .true: return .bool(true)
            case .integer: return .integer(Int64(bitPattern: try readUInt64()))
            case .double: return .double(Double(bitPattern: try readUInt64()))
            case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try readUInt64())))
            case .string: return .string(try readString())
            case .data: return .data(Data(try readRun()))
            case .url:
                let start = index
                let text = try readString()
                guard let url = URL(string: text) else { throw PropertyListDecodingError(offset: start, reason: "invalid URL") }
                return .url(url)
            case .uuid:
                guard bytes.count - index >= 16 else { throw fail("truncated UUID") }
                let b = Array(bytes[index..<(index + 16)])
                index += 16
                return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
            case .array:
                try checkDepth(depth, at: tagOffset)
                let count = try readCount(minimumElementSize: 1)
                var elements: [PropertyListValue] = []
                // Reserved for at most 64 up front: with a count bounded only by the bytes left,
                // 64 nested containers would each reserve about that much (megabytes from one
                // small frame). Larger containers grow as their elements arrive.
                elements.reserveCapacity(min(count, Self.maximumReservation))
                reservedElements += elements.capacity
                for _ in 0..<count { elements.append(try readValue(depth: depth + 1)) }
                return .array(elements)
            case .dictionary:
                try checkDepth(depth, at: tagOffset)
                let count = try readCount(minimumElementSize: 5)
                var members: [String: PropertyListValue] = [:]
                members.reserveCapacity(min(count, Self.maximumReservation))
                reservedElements += members.capacity
                for _ in 0..<count {
                    let keyOffset = index
                    let key = try readString()
                    let value = try readValue(depth: depth + 1)
                    guard members.updateValue(value, forKey: key) == nil else {
                        throw PropertyListDecodingError(offset: keyOffset, reason: "duplicate key \"\(key)\"")
                    }
                }
                return .dictionary(members)
            }
        }
    }
}
