extension JSONValue {
    /// The JSON text: compact, with object keys sorted so output is deterministic.
    public var serialized: String { String(decoding: serializedBytes, as: UTF8.self) }

    /// ``serialized`` as UTF-8 bytes, built directly as bytes (what frames and pipes carry).
    public var serializedBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(to: &out, indent: nil, level: 0)
        return out
    }

    /// The JSON text indented by two spaces per level, keys sorted.
    public var prettySerialized: String {
        var out: [UInt8] = []
        write(to: &out, indent: Array("  ".utf8), level: 0)
        return String(decoding: out, as: UTF8.self)
    }

    private func write(to out: inout [UInt8], indent: [UInt8]?, level: Int) {
        switch self {
        case .null: out += "null".utf8
        case .bool(let b): out += (b ? "true" : "false").utf8
        case .number(let n): out += n.utf8
        case .string(let s): Self.writeString(s, to: &out)
        case .array(let elements):
            if elements.isEmpty { out += "[]".utf8; return }
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                Self.newline(&out, indent, level + 1)
                element.write(to: &out, indent: indent, level: level + 1)
            }
            Self.newline(&out, indent, level)
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            if members.isEmpty { out += "{}".utf8; return }
            out.append(UInt8(ascii: "{"))
            for (i, key) in members.keys.sorted().enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                Self.newline(&out, indent, level + 1)
                Self.writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                if indent != nil { out.append(UInt8(ascii: " ")) }
                members[key]!.write(to: &out, indent: indent, level: level + 1)
            }
            Self.newline(&out, indent, level)
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func newline(_ out: inout [UInt8], _ indent: [UInt8]?, _ level: Int) {
        guard let indent else { return }
        out.append(UInt8(ascii: "\n"))
        for _ in 0..<level { out += indent }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A JSON string literal: `"` and `\` escaped, control characters as `\n`, `\r`, `\t` or
    /// `\u00XX`; DEL, C1 controls, the line and paragraph separators and the bidi controls
    /// (``UntrustedText/mustEscape(_:)``) as `\uXXXX`, so that JSON printed on a terminal cannot
    /// draw on it; every other character as its UTF-8.
    ///
    /// The string's UTF-8 is copied in runs: bytes that need no escape are appended a run at a
    /// time, not scalar by scalar (a 3 KB userInfo string was tens of microseconds). Only the
    /// non-ASCII scalars whose lead byte some escaped scalar shares (``escapedLeadBytes``) are
    /// decoded.
    private static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            var runStart = 0, index = 0
            while index < bytes.count {
                // Eight plain ASCII bytes at a time, where there are eight left.
                if index + 8 <= bytes.count, !Self.mayNeedEscape(UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self)) {
                    index += 8
                    continue
                }
                let byte = bytes[index]
                let length: Int
                if byte < 0x80 {
                    guard byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F else {
                        index += 1
                        continue
                    }
                    length = 1
                } else {
                    guard Self.escapedLeadBytes[Int(byte)] else {
                        index += 1
                        continue
                    }
                    length = byte < 0xE0 ? 2 : 3
                }
                let scalar = length == 1 ? UInt32(byte) : Self.scalarValue(bytes, at: index, length: length)
                if length > 1, let value = Unicode.Scalar(scalar), !UntrustedText.mustEscape(value) {
                    index += length
                    continue
                }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                Self.writeEscape(scalar, to: &out)
                index += length
                runStart = index
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
        }
        out.append(UInt8(ascii: "\""))
    }

    /// The lead bytes of the UTF-8 of the non-ASCII scalars ``UntrustedText/mustEscape(_:)``
    /// names, made from it once (all of them are below U+10000, so their lead bytes start 2- or
    /// 3-byte sequences). Every other non-ASCII byte is copied without decoding.
    private static let escapedLeadBytes: [Bool] = {
        var lead = [Bool](repeating: false, count: 256)
        for value in UInt32(0x80)..<0x10000 {
            guard let scalar = Unicode.Scalar(value), UntrustedText.mustEscape(scalar) else { continue }
            lead[Int(UTF8.encode(scalar)!.first!)] = true
        }
        return lead
    }()

    /// Whether any of the eight bytes of `word` is below 0x20, `"`, `\`, DEL or not ASCII (it may
    /// say so of a word that has none; never the other way round).
    private static func mayNeedEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highBits: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ v: UInt64) -> Bool { (v &- ones) & ~v & highBits != 0 }
        return word & highBits != 0 || (word &- ones &* 0x20) & ~word & highBits != 0
            || hasZeroByte(word ^ (ones &* 0x22)) || hasZeroByte(word ^ (ones &* 0x5C)) || hasZeroByte(word ^ (ones &* 0x7F))
    }

    /// The value of the 2- or 3-byte UTF-8 sequence at `index` of valid UTF-8.
    private static func scalarValue(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int, length: Int) -> UInt32 {
        let lead = UInt32(bytes[index]), second = UInt32(bytes[index + 1]) & 0x3F
        if length == 2 { return (lead & 0x1F) << 6 | second }
        return (lead & 0x0F) << 12 | second << 6 | UInt32(bytes[index + 2]) & 0x3F
    }

    /// The escape of one scalar that must not appear as itself (at most U+FFFF).
    private static func writeEscape(_ value: UInt32, to out: inout [UInt8]) {
        switch value {
        case 0x22: out += #"\""#.utf8
        case 0x5C: out += #"\\"#.utf8
        case 0x0A: out += #"\n"#.utf8
        case 0x0D: out += #"\r"#.utf8
        case 0x09: out += #"\t"#.utf8
        default:
            out += #"\u"#.utf8
            for shift in stride(from: 12, through: 0, by: -4) { out.append(hexDigits[Int((value >> UInt32(shift)) & 0xF)]) }
        }
    }
}
