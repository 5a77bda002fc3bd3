import HandoffCore
import HandoffTestSupport
import Testing

@Suite("JSON serialization")
struct JSONSerializationTests {
    @Test("object keys are written sorted, so output is deterministic")
    func sortsKeys() {
        let value = JSONValue.object(["zebra": .number("1"), "apple": .number("2"), "Mango": .number("3"), "ápple": .null])
        #expect(value.serialized == #"{"Mango":3,"apple":2,"zebra":1,"ápple":null}"#)
    }

    @Test("nested objects are sorted at every level")
    func sortsNestedKeys() {
        let value = JSONValue.array([.object(["b": .object(["d": .bool(true), "c": .bool(false)]), "a": .array([])])])
        #expect(value.serialized == #"[{"a":[],"b":{"c":false,"d":true}}]"#)
    }

    @Test("control characters (DEL too) are escaped; other text is written as is")
    func escapesControlCharacters() {
        let value = JSONValue.string("quote\" backslash\\ nl\n cr\r tab\t nul\u{0} bs\u{08} ff\u{0C} us\u{1F} del\u{7F} é 😀 /")
        #expect(value.serialized == #""quote\" backslash\\ nl\n cr\r tab\t nul\u0000 bs\u0008 ff\u000c us\u001f del\u007f é 😀 /""#)
    }

    @Test("C1 controls, line separators and bidi controls are escaped, so JSON on a terminal cannot draw on it")
    func escapesTerminalControls() throws {
        let value = JSONValue.string("csi\u{9B}2J nel\u{85} ls\u{2028} ps\u{2029} rlo\u{202E} lri\u{2066} rlm\u{200F} alm\u{61C} zwj👨\u{200D}👩")
        let text = value.serialized
        #expect(text == #""csi\u009b2J nel\u0085 ls\u2028 ps\u2029 rlo\u202e lri\u2066 rlm\u200f alm\u061c zwj"# + "👨\u{200D}👩\"")
        #expect(try JSONValue(parsing: text) == value)
        #expect(try JSONValue(parsing: value.prettySerialized) == value)
    }

    @Test("every control character survives serialize then parse")
    func controlCharactersRoundTrip() throws {
        let all = String(String.UnicodeScalarView((0..<0x20).map { Unicode.Scalar(UInt8($0)) }))
        let value = JSONValue.object([all: .string(all)])
        let text = value.serialized
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 })
        #expect(try JSONValue(parsing: text) == value)
    }

    @Test("compact and pretty forms")
    func compactAndPretty() {
        let value = JSONValue.object(["b": .array([.number("1"), .string("x")]), "a": .object([:]), "c": .array([])])
        #expect(value.serialized == #"{"a":{},"b":[1,"x"],"c":[]}"#)
        #expect(value.prettySerialized == """
            {
              "a": {},
              "b": [
                1,
                "x"
              ],
              "c": []
            }
            """)
    }

    @Test("scalars serialize to their JSON literals")
    func scalars() {
        #expect(JSONValue.null.serialized == "null")
        #expect(JSONValue.bool(true).serialized == "true")
        #expect(JSONValue.bool(false).serialized == "false")
        #expect(JSONValue.number("-1.5e-7").serialized == "-1.5e-7")
        #expect(JSONValue.integer(UInt64.max).serialized == "18446744073709551615")
        #expect(JSONValue.double(0.1).serialized == "0.1")
        #expect(JSONValue.double(-0.0).serialized == "-0.0")
        #expect(JSONValue.double(1e300).serialized.contains("e"))
    }

    @Test("JSONValue.double always reads back as the same floating-point number")
    func doublesReadBack() throws {
        for d in [0.0, -0.0, 1, -1, 0.1, 1e-7, .leastNonzeroMagnitude, 1e22, 1e23, 1.7976931348623157e308, 123456789.125] {
            let text = JSONValue.double(d).serialized
            let parsed = try JSONValue(parsing: text)
            #expect(!parsed.isIntegerNumber, "\(text) reads back as an integer")
            #expect(parsed.doubleValue?.bitPattern == d.bitPattern, "\(d) -> \(text)")
        }
    }

    @Test("strings are written exactly as scalar by scalar escaping writes them, whatever their mix of scalars")
    func stringsMatchScalarByScalarEscaping() throws {
        // Plain ASCII, each escape, every scalar UntrustedText escapes and their neighbours that
        // share a lead byte (C2, D8, E2), other 2-, 3- and 4-byte scalars.
        let pool: [Unicode.Scalar] = [
            "a", "Z", " ", "~", "/", "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1F}", "\u{7F}",
            "\u{80}", "\u{9F}", "\u{A0}", "\u{E9}", "\u{FF}", "\u{600}", "\u{61B}", "\u{61C}", "\u{61D}", "\u{63F}",
            "\u{2000}", "\u{200D}", "\u{200E}", "\u{200F}", "\u{2014}", "\u{2027}", "\u{2028}", "\u{2029}",
            "\u{202A}", "\u{202E}", "\u{202F}", "\u{2065}", "\u{2066}", "\u{2069}", "\u{206A}", "\u{20AC}", "\u{2FFF}",
            "\u{3042}", "\u{FEFF}", "\u{FFFD}", "\u{1F600}", "\u{10FFFF}",
        ]
        var generator = SplitMix64(seed: 0x5EED)
        for _ in 0..<2000 {
            let length = Int(generator.next() % 40)
            let text = String(String.UnicodeScalarView((0..<length).map { _ in pool[Int(generator.next() % UInt64(pool.count))] }))
            #expect(JSONValue.string(text).serialized == Self.scalarByScalar(text), "\(text.unicodeScalars.map { $0.value })")
            #expect(try JSONValue(parsing: JSONValue.string(text).serialized) == .string(text))
        }
    }

    @Test("a scalar to escape is found at every offset of a long plain run")
    func escapesAtEveryOffsetOfALongRun() {
        for special in ["\"", "\\", "\n", "\u{7F}", "\u{1F}", "\u{0}", "é", "\u{85}", "\u{2028}", "\u{202E}", "😀"] {
            for offset in 0..<24 {
                let text = String(repeating: "a", count: offset) + special + String(repeating: "b", count: 20)
                #expect(JSONValue.string(text).serialized == Self.scalarByScalar(text), "\(special.unicodeScalars.map(\.value)) at \(offset)")
            }
        }
    }

    @Test("no scalar above U+FFFF must be escaped: the writer decodes 2- and 3-byte lead bytes only")
    func noEscapedScalarAboveTheBasicPlane() {
        #expect(!(UInt32(0x10000)...0x10FFFF).contains { UntrustedText.mustEscape(Unicode.Scalar($0)!) })
    }

    /// The writer before it copied runs: one scalar at a time.
    private static func scalarByScalar(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar.value {
            case 0x22: out += #"\""#
            case 0x5C: out += #"\\"#
            case 0x0A: out += #"\n"#
            case 0x0D: out += #"\r"#
            case 0x09: out += #"\t"#
            case 0x20..<0x7F: out.unicodeScalars.append(scalar)
            default:
                if UntrustedText.mustEscape(scalar) {
                    let hex = String(scalar.value, radix: 16)
                    out += #"\u"# + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
