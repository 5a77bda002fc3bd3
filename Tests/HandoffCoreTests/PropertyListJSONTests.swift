import HandoffCore
import HandoffTestSupport
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

@Suite("Property lists in JSON")
struct PropertyListJSONTests {
    static func fromText(_ text: String) throws -> PropertyListValue {
        try PropertyListValue(json: JSONValue(parsing: text))
    }

    /// value -> JSON -> text -> JSON -> value.
    static func throughText(_ value: PropertyListValue) throws -> PropertyListValue {
        try PropertyListValue(json: JSONValue(parsing: value.json.serialized))
    }

    // MARK: Tagged forms

    @Test("data is written as {\"$data\": base64}")
    func dataForm() throws {
        let value = PropertyListValue.data(Data([0x00, 0x01, 0x02, 0xFF]))
        #expect(value.json.serialized == #"{"$data":"AAEC/w=="}"#)
        expectIdentical(try Self.fromText(#"{"$data":"AAEC/w=="}"#), value)
        expectIdentical(try Self.fromText(#"{"$data":""}"#), .data(Data()))
    }

    @Test("dates are written as ISO 8601 with milliseconds, UTC")
    func dateForm() throws {
        let value = PropertyListValue.date(Date(timeIntervalSince1970: 1_800_000_000.25))
        #expect(value.json.serialized == #"{"$date":"2027-01-15T08:00:00.250Z"}"#)
    }

    @Test("dates are read from ISO 8601 with or without fraction or offset, or from seconds since 1970")
    func dateParsing() throws {
        let expected = 1_800_000_000.0
        for text in [
            #"{"$date":"2027-01-15T08:00:00Z"}"#,
            #"{"$date":"2027-01-15T08:00:00.000Z"}"#,
            #"{"$date":1800000000}"#,
            #"{"$date":1.8e9}"#,
        ] {
            guard case .date(let date) = try Self.fromText(text) else { Issue.record("\(text) is not a date"); continue }
            #expect(date.timeIntervalSince1970 == expected, "\(text)")
        }
        guard case .date(let fractional) = try Self.fromText(#"{"$date":"2027-01-15T08:00:00.250Z"}"#) else { Issue.record("not a date"); return }
        #expect(abs(fractional.timeIntervalSince1970 - 1_800_000_000.25) < 0.000_001)
    }

    @Test("JSON keeps dates to the millisecond: the text is stable and the value within 1 ms")
    func dateMillisecondPrecision() throws {
        for seconds in [1_800_000_000.123_456_789, 0.000_4, -1.5, 978_307_200.999_9, 1_800_000_000.5] {
            let date = Date(timeIntervalSince1970: seconds)
            let json = PropertyListValue.date(date).json
            guard case .date(let back) = try PropertyListValue(json: JSONValue(parsing: json.serialized)) else {
                Issue.record("not a date")
                continue
            }
            #expect(abs(back.timeIntervalSince1970 - seconds) < 0.001, "\(seconds) came back as \(back.timeIntervalSince1970)")
            #expect(PropertyListValue.date(back).json == json, "formatting the parsed date again gives the same text")
        }
    }

    static func millisecondText(_ ms: Int) -> String {
        "2027-01-15T08:00:00." + String(repeating: "0", count: 3 - String(ms).count) + String(ms) + "Z"
    }

    @Test("a date on an exact millisecond is written with that millisecond, not one less")
    func millisecondsAreNotTruncated() {
        var wrong: [String] = []
        for ms in 0..<1_000 {
            let date = Date(timeIntervalSince1970: 1_800_000_000 + Double(ms) / 1_000)
            let expected = Self.millisecondText(ms)
            let written = PropertyListValue.date(date).json["$date"]?.stringValue ?? "nil"
            if written != expected { wrong.append("\(expected) written as \(written)") }
        }
        #expect(wrong.count == 0, "\(wrong.count) of 1000 dates are written with the wrong millisecond, e.g. \(wrong.prefix(3))")
    }

    @Test("a date read from JSON text is written back as the same text")
    func dateTextIsStable() throws {
        var drifted: [String] = []
        for ms in 0..<1_000 {
            let text = Self.millisecondText(ms)
            let value = try PropertyListValue(json: .object(["$date": .string(text)]))
            let written = value.json["$date"]?.stringValue ?? "nil"
            if written != text { drifted.append("\(text) -> \(written)") }
        }
        #expect(drifted.count == 0, "\(drifted.count) of 1000 dates change when read and written again, e.g. \(drifted.prefix(3))")
    }

    @Test("URLs and UUIDs are tagged strings")
    func urlAndUUIDForms() throws {
        let url = URL(string: "https://example.com/a?b=c#d")!
        #expect(PropertyListValue.url(url).json.serialized == #"{"$url":"https://example.com/a?b=c#d"}"#)
        expectIdentical(try Self.fromText(#"{"$url":"https://example.com/a?b=c#d"}"#), .url(url))
        let uuid = Fixtures.activityID
        #expect(PropertyListValue.uuid(uuid).json.serialized == #"{"$uuid":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F"}"#)
        expectIdentical(try Self.fromText(#"{"$uuid":"e621e1f8-c36c-495a-93fc-0c247a3e6e5f"}"#), .uuid(uuid))
    }

    @Test("non-finite doubles use $double")
    func nonFiniteDoubles() throws {
        #expect(PropertyListValue.double(.nan).json.serialized == #"{"$double":"nan"}"#)
        #expect(PropertyListValue.double(.infinity).json.serialized == #"{"$double":"inf"}"#)
        #expect(PropertyListValue.double(-.infinity).json.serialized == #"{"$double":"-inf"}"#)
        expectIdentical(try Self.fromText(#"{"$double":"nan"}"#), .double(.nan))
        expectIdentical(try Self.fromText(#"{"$double":"NaN"}"#), .double(.nan))
        expectIdentical(try Self.fromText(#"{"$double":"inf"}"#), .double(.infinity))
        expectIdentical(try Self.fromText(#"{"$double":"Infinity"}"#), .double(.infinity))
        expectIdentical(try Self.fromText(#"{"$double":"-inf"}"#), .double(-.infinity))
        expectIdentical(try Self.fromText(#"{"$double":2}"#), .double(2))
    }

    @Test("a dictionary whose only key is a tag is escaped with $dict, and reads back as a dictionary",
          arguments: ["$url", "$data", "$date", "$uuid", "$double", "$dict"])
    func dictEscaping(_ tag: String) throws {
        let value = PropertyListValue.dictionary([tag: .string("not a tagged value")])
        #expect(value.json == .object(["$dict": .object([tag: .string("not a tagged value")])]))
        expectIdentical(try Self.throughText(value), value)
    }

    @Test("an object with a tag key and other keys is a plain dictionary")
    func tagAmongOtherKeys() throws {
        expectIdentical(try Self.fromText(#"{"$url":"x","other":1}"#), .dictionary(["$url": .string("x"), "other": .integer(1)]))
        let value = PropertyListValue.dictionary(["$url": .string("x"), "other": .integer(1)])
        #expect(value.json == .object(["$url": .string("x"), "other": .number("1")]))
    }

    @Test("an unknown $-key is an ordinary dictionary key")
    func unknownDollarKey() throws {
        expectIdentical(try Self.fromText(#"{"$ref":"x"}"#), .dictionary(["$ref": .string("x")]))
    }

    // MARK: Numbers

    @Test("JSON integers become integers; any fraction or exponent makes a double")
    func integerVersusDouble() throws {
        expectIdentical(try Self.fromText("1"), .integer(1))
        expectIdentical(try Self.fromText("-0"), .integer(0))
        expectIdentical(try Self.fromText("1.0"), .double(1))
        expectIdentical(try Self.fromText("1e3"), .double(1000))
        expectIdentical(try Self.fromText("-0.0"), .double(-0.0))
        expectIdentical(try Self.fromText("9223372036854775807"), .integer(.max))
        expectIdentical(try Self.fromText("-9223372036854775808"), .integer(.min))
        #expect(PropertyListValue.integer(1).json.serialized == "1")
        #expect(PropertyListValue.double(1).json.serialized == "1.0")
    }

    @Test("an integer that does not fit in 64 bits is refused with advice")
    func integerOverflow() {
        let error = #expect(throws: PropertyListJSONError.self) { try Self.fromText("9223372036854775808") }
        #expect(error?.path == "")
        #expect(error?.reason == "integer 9223372036854775808 does not fit in 64 bits; write it as a double (9223372036854775808.0) or a string")
        #expect(error?.description == error?.reason)
        let negative = #expect(throws: PropertyListJSONError.self) { try Self.fromText(#"{"n":-9223372036854775809}"#) }
        #expect(negative?.path == "n")
        #expect(negative?.description.hasPrefix("n: integer -9223372036854775809 does not fit in 64 bits") == true)
    }

    @Test("a double outside the finite range is refused")
    func doubleOutOfRange() {
        let error = #expect(throws: PropertyListJSONError.self) { try Self.fromText("[1e400]") }
        #expect(error?.path == "[0]")
        #expect(error?.reason == "number 1e400 is out of range")
    }

    // MARK: Round trips

    @Test("every value except dates survives value -> JSON text -> value exactly (seeded)", arguments: [11, 12, 13] as [UInt64])
    func randomJSONTextRoundTrip(seed: UInt64) throws {
        var generator = RandomPropertyList(seed: seed)
        generator.includeDates = false
        generator.arbitraryDoubleBits = false
        for i in 0..<1_000 {
            let value = generator.value()
            let back = try Self.throughText(value)
            #expect(back.isIdentical(to: value), "seed \(seed) value #\(i): \(value.json.serialized) read back as \(back)")
        }
    }

    @Test("the every-type userInfo, without its date, survives JSON text exactly; integer vs double is preserved")
    func everyTypeThroughJSONText() throws {
        var userInfo = Fixtures.everyTypeUserInfo
        userInfo["date"] = nil
        let text = userInfo.userInfoJSON.serialized
        let back = try UserInfo(userInfoJSON: JSONValue(parsing: text))
        expectIdentical(back, userInfo)
        guard case .integer? = back["integer"], case .double? = back["double"], case .double? = back["negativeZero"] else {
            Issue.record("integer/double distinction lost: \(back)")
            return
        }
    }

    // MARK: Errors name the key path

    @Test("an error inside an array inside a dictionary names the path, like items[2]")
    func errorPathInArray() {
        let error = #expect(throws: PropertyListJSONError.self) {
            try Self.fromText(#"{"items":[1,"two",{"$data":5}]}"#)
        }
        #expect(error?.path == "items[2]")
        #expect(error?.reason == "$data needs a base64 string, got number")
        #expect(error?.description == "items[2]: $data needs a base64 string, got number")
    }

    @Test("error paths go through nested dictionaries, arrays and $dict", arguments: [
        (#"{"a":{"b":[0,{"$uuid":"nope"}]}}"#, "a.b[1]", "$uuid needs a UUID string, got string"),
        (#"[[0,[1,{"$url":3}]]]"#, "[0][1][1]", "$url needs a URL string, got number"),
        (#"{"$dict":{"$url":{"$date":"yesterday"}}}"#, "$url", #"$date "yesterday" is not ISO 8601 such as 2026-11-22T10:00:00Z"#),
        (#"{"x":{"$double":"one"}}"#, "x", #"$double needs a number, "nan", "inf" or "-inf", got string"#),
        (#"{"x":{"$dict":[1]}}"#, "x", "$dict needs an object, got array"),
        (#"{"x":{"$date":true}}"#, "x", "$date needs an ISO 8601 string or seconds since 1970, got boolean"),
        (#"{"x":{"$data":"***"}}"#, "x", "$data needs a base64 string, got string"),
        // Valid siblings converted before the bad value leave nothing of their own path behind.
        (#"[{"a":[1,{"b":2}],"c":{"d":[3]}},[4,{"e":{"$uuid":0}}]]"#, "[1][1].e", "$uuid needs a UUID string, got number"),
        (#"{"k":[[1],[2,[3]],{"m":{"$url":false}}]}"#, "k[2].m", "$url needs a URL string, got boolean"),
    ])
    func errorPaths(_ text: String, _ path: String, _ reason: String) {
        let error = #expect(throws: PropertyListJSONError.self) { try Self.fromText(text) }
        #expect(error?.path == path)
        #expect(error?.reason == reason)
    }

    @Test("a userInfo must be a JSON object, and not a tagged one")
    func userInfoShape() throws {
        let array = #expect(throws: PropertyListJSONError.self) { try UserInfo(userInfoJSON: .array([])) }
        #expect(array?.reason == "userInfo must be a JSON object, got array")
        let tagged = #expect(throws: PropertyListJSONError.self) {
            try UserInfo(userInfoJSON: JSONValue(parsing: #"{"$uuid":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F"}"#))
        }
        #expect(tagged?.reason == "userInfo must be a dictionary, not a tagged value")
        let escaped = try UserInfo(userInfoJSON: JSONValue(parsing: #"{"$dict":{"$uuid":"plain string"}}"#))
        expectIdentical(escaped, ["$uuid": .string("plain string")])
    }

    @Test("a userInfo whose only key is a tag name survives userInfoJSON", arguments: ["$url", "$dict"])
    func userInfoWithOnlyATagKeyRoundTrips(_ tag: String) throws {
        let userInfo: UserInfo = [tag: .string("https://example.com")]
        let back = try UserInfo(userInfoJSON: JSONValue(parsing: userInfo.userInfoJSON.serialized))
        expectIdentical(back, userInfo)
    }
}
