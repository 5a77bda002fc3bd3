/// Reads a DNS message's fields in order; every read checks the bounds (a message from the
/// network may be anything).
struct DNSReader {
    let bytes: [UInt8]
    var offset = 0

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    mutating func u8() throws(DNSWireError) -> UInt8 {
        guard offset < bytes.count else { throw .truncated }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u16() throws(DNSWireError) -> UInt16 { UInt16(try u8()) << 8 | UInt16(try u8()) }

    mutating func u32() throws(DNSWireError) -> UInt32 { UInt32(try u16()) << 16 | UInt32(try u16()) }

    mutating func take(_ count: Int) throws(DNSWireError) -> [UInt8] {
        guard count >= 0, offset + count <= bytes.count else { throw .truncated }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// A name, following compression pointers (each must point backwards, so no loops).
    mutating func name() throws(DNSWireError) -> DNSName {
        var labels: [String] = []
        var position = offset
        var jumped = false
        while true {
            guard position < bytes.count else { throw .truncated }
            let length = bytes[position]
            if length & 0xC0 == 0xC0 {
                guard position + 1 < bytes.count else { throw .truncated }
                let target = Int(length & 0x3F) << 8 | Int(bytes[position + 1])
                guard target < position else { throw .badName }
                if !jumped { offset = position + 2 }
                jumped = true
                position = target
            } else if length == 0 {
                if !jumped { offset = position + 1 }
                break
            } else {
                guard length <= 63, position + 1 + Int(length) <= bytes.count else { throw .badName }
                labels.append(String(decoding: bytes[position + 1...position + Int(length)], as: UTF8.self))
                position += 1 + Int(length)
            }
        }
        guard let name = DNSName(labels: labels) else { throw .badName }
        return name
    }
}

/// A DNS message that could not be read.
public enum DNSWireError: Error, Equatable, Sendable {
    /// It ends before a field it announces.
    case truncated
    /// A name with a bad label or a forward compression pointer.
    case badName
}

extension Array where Element == UInt8 {
    mutating func appendU16(_ value: UInt16) { append(contentsOf: [UInt8(value >> 8), UInt8(value & 0xFF)]) }
    mutating func appendU32(_ value: UInt32) { appendU16(UInt16(value >> 16)); appendU16(UInt16(value & 0xFFFF)) }
}
