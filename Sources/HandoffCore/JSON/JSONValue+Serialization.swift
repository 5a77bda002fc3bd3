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
    private static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for scalar in s.unicodeScalars {
            let value = scalar.value
            switch value {
            case 0x22: out += #"\""#.utf8
            case 0x5C: out += #"\\"#.utf8
            case 0x0A: out += #"\n"#.utf8
            case 0x0D: out += #"\r"#.utf8
            case 0x09: out += #"\t"#.utf8
            case 0x20..<0x7F: out.append(UInt8(value))
            default:
                if UntrustedText.mustEscape(scalar) {
                    out += #"\u"#.utf8
                    for shift in stride(from: 12, through: 0, by: -4) { out.append(hexDigits[Int((value >> UInt32(shift)) & 0xF)]) }
                } else {
                    out += UTF8.encode(scalar)!
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
