import Crypto

/// Who a device is: the SHA-256 of its certificate (in DER), written the way Syncthing writes
/// device IDs.
///
/// The readable form is the RFC 4648 base32 of the 32 bytes (52 characters, no padding), split
/// into 4 chunks of 13 characters, each followed by a Luhn mod-32 check character (56 characters),
/// then grouped in 8 groups of 7 separated by `-`:
///
/// ```
/// P56IOI7-MZJNU2Y-IQGDREY-DM2MGTI-MGL3BXN-PQ6W5BM-TBBZ4TJ-XZWICQ2
/// ```
///
/// ``init(parsing:)`` accepts that form in either case, with or without dashes and spaces, and
/// also the 52-character form without check characters.
public struct DeviceID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The SHA-256 of the device's certificate: exactly 32 bytes.
    public let bytes: [UInt8]

    /// The ID of the device whose certificate, in DER, is `certificateDER`.
    public init(certificateDER: [UInt8]) {
        self.bytes = Array(SHA256.hash(data: certificateDER))
    }

    /// An ID from its 32 bytes.
    ///
    /// - Throws: ``DeviceIDError/wrongByteCount(_:)`` unless `bytes` has exactly 32 bytes.
    public init(bytes: [UInt8]) throws(DeviceIDError) {
        guard bytes.count == 32 else { throw .wrongByteCount(bytes.count) }
        self.bytes = bytes
    }

    /// Reads an ID as a person typed or pasted it.
    ///
    /// Upper and lower case are the same; dashes and spaces are ignored; `0`, `1` and `8` are read
    /// as `O`, `I` and `B` (letters that are easily mistyped as digits). The 56-character form has
    /// every check character verified; the 52-character form (no check characters) is accepted too.
    ///
    /// - Throws: ``DeviceIDError`` saying what is wrong with the text.
    public init(parsing text: String) throws(DeviceIDError) {
        var symbols: [UInt8] = []
        symbols.reserveCapacity(56)
        for (offset, scalar) in text.unicodeScalars.enumerated() {
            if scalar == "-" || scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" { continue }
            guard let value = Base32.value(of: scalar) else {
                throw .invalidCharacter(String(scalar), position: offset + 1)
            }
            symbols.append(value)
            // Enough to know the length is wrong; keeps a huge input from growing the array.
            if symbols.count > 56 { break }
        }
        let data: [UInt8]
        switch symbols.count {
        case 56:
            var stripped: [UInt8] = []
            stripped.reserveCapacity(52)
            for chunk in 0..<4 {
                let start = chunk * 14
                let values = symbols[start..<(start + 13)]
                guard Self.luhnBase32(values) == symbols[start + 13] else {
                    throw .wrongCheckCharacter(group: chunk * 2 + 2)
                }
                stripped.append(contentsOf: values)
            }
            data = stripped
        case 52:
            data = symbols
        default:
            let count = symbols.count > 56 ? Self.significantCount(text) : symbols.count
            throw .wrongLength(text: text.count > 80 ? String(text.prefix(77)) + "..." : text, count: count)
        }
        guard let decoded = Base32.decode(data) else { throw .strayBits }
        self.bytes = decoded
    }

    /// The 56-character form in 8 groups of 7, as `handoff status` prints it.
    public var description: String {
        let chars = Self.checkedCharacters(bytes)
        var out = ""
        out.reserveCapacity(63)
        for (i, c) in chars.enumerated() {
            if i > 0 && i % 7 == 0 { out.append("-") }
            out.unicodeScalars.append(Unicode.Scalar(c))
        }
        return out
    }

    /// The first group of 7 of ``description``: enough to tell devices apart at a glance.
    public var shortID: String {
        String(description.prefix(7))
    }

    /// Orders IDs by their bytes.
    public static func < (lhs: DeviceID, rhs: DeviceID) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }

    /// The 56 ASCII characters: base32 with a check character after every 13.
    static func checkedCharacters(_ bytes: [UInt8]) -> [UInt8] {
        let values = Base32.encode(bytes)
        var out: [UInt8] = []
        out.reserveCapacity(56)
        for chunk in 0..<4 {
            let part = values[(chunk * 13)..<(chunk * 13 + 13)]
            out.append(contentsOf: part.map { Base32.alphabet[Int($0)] })
            out.append(Base32.alphabet[Int(luhnBase32(part))])
        }
        return out
    }

    /// Syncthing's `luhnBase32`: the check symbol (0...31) over base32 symbol values.
    static func luhnBase32<C: Collection>(_ values: C) -> UInt8 where C.Element == UInt8 {
        let n = 32
        var factor = 1
        var sum = 0
        for value in values {
            var addend = factor * Int(value)
            factor = factor == 2 ? 1 : 2
            addend = addend / n + addend % n
            sum += addend
        }
        let remainder = sum % n
        return UInt8((n - remainder) % n)
    }

    /// The number of characters other than separators, for an error message.
    private static func significantCount(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { count, s in
            s == "-" || s == " " || s == "\t" || s == "\n" || s == "\r" ? count : count + 1
        }
    }
}

/// Why text or bytes are not a ``DeviceID``.
public enum DeviceIDError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Bytes given to ``DeviceID/init(bytes:)`` were not 32.
    case wrongByteCount(Int)
    /// The text (shortened when long) has `count` characters, not counting dashes and spaces:
    /// neither 56 nor 52.
    case wrongLength(text: String, count: Int)
    /// A character that is not in a device ID, and its position (1-based) in the text.
    case invalidCharacter(String, position: Int)
    /// The check character ending this display group (1...8, always even) does not match.
    case wrongCheckCharacter(group: Int)
    /// The last character has bits set that no device ID has (a 52-character ID was mistyped).
    case strayBits

    public var description: String {
        switch self {
        case .wrongByteCount(let n):
            "a device ID is 32 bytes (a SHA-256), not \(n)"
        case .wrongLength(let text, let n):
            "device ID \"\(text)\" has \(n) characters; a device ID has 56 (8 groups of 7, as `handoff status` prints it)"
        case .invalidCharacter(let c, let position):
            "the device ID has \"\(c)\" at position \(position); a device ID has only the letters A-Z, the digits 2-7 and dashes: copy it again from `handoff status`"
        case .wrongCheckCharacter(let group):
            "the check character of group \(group) is wrong: the ID was mistyped; copy it again from `handoff status` on the other device"
        case .strayBits:
            "the last character of the device ID is wrong: the ID was mistyped; copy it again from `handoff status` on the other device"
        }
    }
}

/// RFC 4648 base32 (A-Z, 2-7) without padding, on symbol values 0...31.
enum Base32 {
    static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// The symbol value of a character, with lower case and the typo fixes 0→O, 1→I, 8→B.
    static func value(of scalar: Unicode.Scalar) -> UInt8? {
        switch scalar {
        case "A"..."Z": UInt8(scalar.value - 65)
        case "a"..."z": UInt8(scalar.value - 97)
        case "2"..."7": UInt8(scalar.value - 50 + 26)
        case "0": 14  // O
        case "1": 8  // I
        case "8": 1  // B
        default: nil
        }
    }

    /// Symbol values (0...31) of `bytes`, without padding.
    static func encode(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 8 + 4) / 5)
        var buffer = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | Int(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(UInt8((buffer >> bits) & 31))
            }
            buffer &= (1 << bits) - 1
        }
        if bits > 0 { out.append(UInt8((buffer << (5 - bits)) & 31)) }
        return out
    }

    /// Bytes from symbol values; nil when the leftover bits are not zero (not a canonical encoding)
    /// or a leftover would be a whole symbol.
    static func decode(_ values: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(values.count * 5 / 8)
        var buffer = 0
        var bits = 0
        for value in values {
            buffer = (buffer << 5) | Int(value & 31)
            bits += 5
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((buffer >> bits) & 0xFF))
            }
            buffer &= (1 << bits) - 1
        }
        guard bits < 5, buffer == 0 else { return nil }
        return out
    }
}
