import HandoffCore
import Testing

@Suite("JSON parsing")
struct JSONParsingTests {
    @Test("a document with every JSON type parses to the expected value")
    func parsesEveryType() throws {
        let value = try JSONValue(parsing: #" { "n": null, "t": true, "f": false, "i": -12, "d": 0.5, "s": "x", "a": [1, [], {}], "o": {"k": "v"} } "#)
        #expect(value == .object([
            "n": .null, "t": .bool(true), "f": .bool(false), "i": .number("-12"), "d": .number("0.5"), "s": .string("x"),
            "a": .array([.number("1"), .array([]), .object([:])]), "o": .object(["k": .string("v")]),
        ]))
    }

    @Test("parse then serialize then parse gives the same value")
    func roundTrip() throws {
        let text = #"{"list":[1,2.50,-0,1E+3,"two",{"deep":[null,true,false]}],"name":"Ünïcödé \"quoted\" \\ / 😀","empty":{}}"#
        let value = try JSONValue(parsing: text)
        let again = try JSONValue(parsing: value.serialized)
        #expect(again == value)
        #expect(try JSONValue(parsing: value.prettySerialized) == value)
    }

    @Test("numbers keep their lexeme", arguments: ["1", "1.0", "1e3", "1E3", "1e+3", "1.5e-3", "-0", "-0.0", "0", "123456789012345678901234567890", "2.50"])
    func numbersKeepTheirLexeme(_ text: String) throws {
        let value = try JSONValue(parsing: text)
        #expect(value == .number(text))
        #expect(value.serialized == text)
    }

    @Test("1, 1.0 and 1e3 stay distinct: integer or not")
    func integerVersusFloatingPoint() throws {
        let one = try JSONValue(parsing: "1")
        let onePointZero = try JSONValue(parsing: "1.0")
        let thousand = try JSONValue(parsing: "1e3")
        #expect(one != onePointZero)
        #expect(one.isIntegerNumber)
        #expect(!onePointZero.isIntegerNumber)
        #expect(!thousand.isIntegerNumber)
        #expect(one.int64Value == 1)
        #expect(onePointZero.int64Value == nil)
        #expect(thousand.doubleValue == 1000)
        #expect(JSONValue.integer(Int64.min) == .number("-9223372036854775808"))
        #expect(JSONValue.double(1) == .number("1.0"))
        #expect(JSONValue.double(.nan) == .null)
        #expect(JSONValue.double(-.infinity) == .null)
    }

    @Test("escapes decode, including surrogate pairs")
    func escapes() throws {
        let value = try JSONValue(parsing: #""\" \\ \/ \b \f \n \r \t \u0041 \u00e9 \u4E2D \ud83d\ude00 \uD83C\uDF0D \u0000""#)
        #expect(value == .string("\" \\ / \u{08} \u{0C} \n \r \t A é 中 😀 🌍 \u{0}"))
    }

    @Test("raw multi-byte UTF-8 in strings is kept")
    func rawUTF8() throws {
        #expect(try JSONValue(parsing: "\"Grüße 世界 👩‍💻\"") == .string("Grüße 世界 👩‍💻"))
        #expect(try JSONValue(parsing: Array("[\"é\"]".utf8)) == .array([.string("é")]))
    }

    @Test("runs of plain text between escapes are kept whole, multi-byte ones too")
    func runsAndEscapes() throws {
        #expect(try JSONValue(parsing: #""Grüße\n世界\u0041👩‍💻\"end""#) == .string("Grüße\n世界A👩‍💻\"end"))
        #expect(try JSONValue(parsing: #"["", "\n", "a\\"]"#) == .array([.string(""), .string("\n"), .string("a\\")]))
    }

    @Test("whitespace around and between tokens is allowed")
    func whitespace() throws {
        #expect(try JSONValue(parsing: " \t\r\n[ 1 ,\n 2 ] \n") == .array([.number("1"), .number("2")]))
    }

    @Test("nesting up to maximumDepth is accepted")
    func nestingAtLimit() throws {
        let depth = JSONValue.maximumDepth
        let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        var value = try JSONValue(parsing: text)
        var levels = 0
        while case .array(let elements) = value {
            levels += 1
            guard let first = elements.first else { break }
            value = first
        }
        #expect(levels == depth)
    }

    struct Invalid: CustomTestStringConvertible, Sendable {
        var name: String
        var bytes: [UInt8]
        var offset: Int
        var reason: String
        init(_ name: String, _ text: String, offset: Int, _ reason: String) {
            self.init(name, Array(text.utf8), offset: offset, reason)
        }
        init(_ name: String, _ bytes: [UInt8], offset: Int, _ reason: String) {
            self.name = name
            self.bytes = bytes
            self.offset = offset
            self.reason = reason
        }
        var testDescription: String { name }
    }

    static let invalidInputs: [Invalid] = [
        Invalid("empty input", "", offset: 0, "unexpected end of input"),
        Invalid("only whitespace", "  ", offset: 2, "unexpected end of input"),
        Invalid("trailing comma in an array", "[1,2,]", offset: 5, "unexpected character"),
        Invalid("trailing comma in an object", #"{"a":1,}"#, offset: 7, "expected a string key"),
        Invalid("lone high surrogate", #""\ud83d""#, offset: 7, "lone high surrogate"),
        Invalid("high surrogate followed by another escape", #""\ud83d\n""#, offset: 7, "lone high surrogate"),
        Invalid("high surrogate followed by a non-surrogate", #""\ud83d\u0041""#, offset: 13, "invalid low surrogate"),
        Invalid("lone low surrogate", #""\ude00""#, offset: 7, "lone low surrogate"),
        Invalid("raw control character in a string", "\"a\u{01}b\"", offset: 2, "control character in string"),
        Invalid("raw newline in a string", "\"a\nb\"", offset: 2, "control character in string"),
        Invalid("duplicate key", #"{"a":1,"b":2,"a":3}"#, offset: 13, #"duplicate key "a""#),
        Invalid("leading zero", "01", offset: 1, "unexpected text after the value"),
        Invalid("leading zero in an array", "[01]", offset: 2, "expected ',' or ']'"),
        Invalid("bare minus", "-", offset: 1, "incomplete number"),
        Invalid("minus without digits", "-a", offset: 1, "invalid number"),
        Invalid("fraction without digits", "1.", offset: 2, "digits expected after '.'"),
        Invalid("exponent without digits", "1e+", offset: 3, "digits expected in exponent"),
        Invalid("leading plus", "+1", offset: 0, "unexpected character"),
        Invalid("leading dot", ".5", offset: 0, "unexpected character"),
        Invalid("NaN literal", "NaN", offset: 0, "unexpected character"),
        Invalid("invalid UTF-8 byte in a string", [0x22, 0x61, 0xFF, 0x22], offset: 1, "invalid UTF-8 in string"),
        Invalid("overlong UTF-8 encoding in a string", [0x22, 0xC0, 0x80, 0x22], offset: 1, "invalid UTF-8 in string"),
        Invalid("UTF-8 encoded surrogate in a string", [0x22, 0xED, 0xA0, 0x80, 0x22], offset: 1, "invalid UTF-8 in string"),
        Invalid("truncated UTF-8 sequence before an escape", [0x22, 0xE4, 0xB8, 0x5C, 0x6E, 0x22], offset: 1, "invalid UTF-8 in string"),
        Invalid("invalid UTF-8 after an escape", [0x22, 0x5C, 0x6E, 0x61, 0xFF, 0x22], offset: 3, "invalid UTF-8 in string"),
        Invalid("invalid UTF-8 outside a string", [0xFF], offset: 0, "unexpected character"),
        Invalid("single quotes", "'a'", offset: 0, "unexpected character"),
        Invalid("unterminated string", #""abc"#, offset: 4, "unterminated string"),
        Invalid("unterminated array", "[1", offset: 2, "unterminated array"),
        Invalid("unterminated object", #"{"a":1"#, offset: 6, "unterminated object"),
        Invalid("missing colon", #"{"a" 1}"#, offset: 5, "expected ':'"),
        Invalid("unquoted key", "{a:1}", offset: 1, "expected a string key"),
        Invalid("invalid escape", #""\x""#, offset: 3, "invalid escape"),
        Invalid("short unicode escape", #""\u12""#, offset: 3, #"incomplete \u escape"#),
        Invalid("bad hex digit", #""\u12G4""#, offset: 5, #"invalid hex digit in \u escape"#),
        Invalid("misspelled literal", "tru", offset: 3, "expected true"),
        Invalid("two values", "1 2", offset: 2, "unexpected text after the value"),
        Invalid("nested one level deeper than maximumDepth",
                String(repeating: "[", count: JSONValue.maximumDepth + 1) + String(repeating: "]", count: JSONValue.maximumDepth + 1),
                offset: JSONValue.maximumDepth, "nested deeper than \(JSONValue.maximumDepth) levels"),
    ]

    @Test("invalid input is refused with the offset of the problem", arguments: invalidInputs)
    func invalidInputIsRefused(_ input: Invalid) throws {
        let error = #expect(throws: JSONParseError.self) { try JSONValue(parsing: input.bytes) }
        #expect(error?.offset == input.offset)
        #expect(error?.reason == input.reason)
        #expect(error?.description == "invalid JSON at byte \(input.offset): \(input.reason)")
    }

    @Test("very deep nesting is refused without exhausting the stack")
    func veryDeepNesting() {
        let text = String(repeating: "[", count: 100_000)
        let error = #expect(throws: JSONParseError.self) { try JSONValue(parsing: text) }
        #expect(error?.reason.contains("nested deeper") == true)
        let objects = String(repeating: #"{"a":"#, count: 10_000)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: objects) }
    }

    @Test("accessors return the payload of the matching case only")
    func accessors() throws {
        let value = try JSONValue(parsing: #"{"s":"x","b":true,"a":[1],"o":{}}"#)
        #expect(value["s"]?.stringValue == "x")
        #expect(value["b"]?.boolValue == true)
        #expect(value["a"]?.arrayValue == [.number("1")])
        #expect(value["o"]?.objectValue == [:])
        #expect(value["missing"] == nil)
        #expect(value["s"]?.boolValue == nil)
        #expect(JSONValue.string("1").int64Value == nil)
        #expect(JSONValue.number("9223372036854775808").int64Value == nil)
        #expect(value.typeName == "object")
        #expect(JSONValue.null.typeName == "null")
    }
}
