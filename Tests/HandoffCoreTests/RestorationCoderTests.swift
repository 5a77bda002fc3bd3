import Foundation
import HandoffCore
import Testing

@Suite("Restoration coder: a keyed archive of property-list values with nested coders")
struct RestorationCoderTests {
    static let every: [String: PropertyListValue] = [
        "string": .string("Grüße"), "integer": .integer(-42), "double": .double(2.5), "bool": .bool(true),
        "data": .data(Data([0, 1, 255])), "date": .date(Date(timeIntervalSinceReferenceDate: 1234.5)),
        "url": .url(URL(string: "https://example.com/notes?id=7")!), "uuid": .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
        "array": .array([.integer(1), .string("two"), .null]), "dictionary": .dictionary(["nested": .array([.bool(false)])]), "null": .null,
    ]

    @Test("every property-list type round-trips through the archive, at the root and in nested coders")
    func roundTrip() throws {
        let coder = RestorationCoder()
        for (key, value) in Self.every { coder.encode(value, forKey: key) }
        let editor = coder.nestedCoder(forIdentifier: "editor")
        for (key, value) in Self.every { editor.encode(value, forKey: key) }
        coder.nestedCoder(forIdentifierPath: ["editor", "cursor"]).encode(17, forKey: "offset")

        let decoded = try RestorationArchive.decode(RestorationArchive.encode(coder))
        for (key, value) in Self.every {
            #expect(decoded.decodeValue(forKey: key)?.isIdentical(to: value) == true, "\(key)")
            #expect(decoded.existingNestedCoder(forIdentifier: "editor")?.decodeValue(forKey: key)?.isIdentical(to: value) == true, "\(key)")
        }
        #expect(decoded.nestedCoder(forIdentifierPath: ["editor", "cursor"]).decodeInteger(forKey: "offset") == 17)
        #expect(decoded.nestedIdentifierPaths == [["editor"], ["editor", "cursor"]])
        #expect(decoded.allKeys == Self.every.keys.sorted())
    }

    @Test("the typed encoders and decoders agree; a wrong type or a missing key decodes as nil")
    func typedAccess() {
        let coder = RestorationCoder()
        let now = Date(timeIntervalSinceReferenceDate: 99)
        let id = UUID()
        coder.encode("text", forKey: "s")
        coder.encode(7, forKey: "i")
        coder.encode(Int64.max, forKey: "big")
        coder.encode(1.5, forKey: "d")
        coder.encode(true, forKey: "b")
        coder.encode(Data([9]), forKey: "data")
        coder.encode(now, forKey: "date")
        coder.encode(URL(string: "file:///tmp/x")!, forKey: "url")
        coder.encode(id, forKey: "uuid")
        coder.encode([PropertyListValue.integer(1)], forKey: "array")
        coder.encode(["k": PropertyListValue.string("v")], forKey: "dict")
        #expect(coder.decodeString(forKey: "s") == "text")
        #expect(coder.decodeInteger(forKey: "i") == 7)
        #expect(coder.decodeInt64(forKey: "big") == Int64.max)
        #expect(coder.decodeDouble(forKey: "d") == 1.5)
        #expect(coder.decodeDouble(forKey: "i") == 7, "an integer reads as a double, as NSCoder's decodeDouble does")
        #expect(coder.decodeBool(forKey: "b") == true)
        #expect(coder.decodeData(forKey: "data") == Data([9]))
        #expect(coder.decodeDate(forKey: "date") == now)
        #expect(coder.decodeURL(forKey: "url") == URL(string: "file:///tmp/x"))
        #expect(coder.decodeUUID(forKey: "uuid") == id)
        #expect(coder.decodeArray(forKey: "array") == [.integer(1)])
        #expect(coder.decodeDictionary(forKey: "dict") == ["k": .string("v")])
        // Wrong types and missing keys: nil, never a trap.
        #expect(coder.decodeInteger(forKey: "s") == nil)
        #expect(coder.decodeString(forKey: "i") == nil)
        #expect(coder.decodeBool(forKey: "i") == nil)
        #expect(coder.decodeDate(forKey: "d") == nil)
        #expect(coder.decodeURL(forKey: "s") == nil)
        #expect(coder.decodeDictionary(forKey: "array") == nil)
        #expect(coder.decodeString(forKey: "absent") == nil)
        #expect(coder.containsValue(forKey: "s"))
        #expect(!coder.containsValue(forKey: "absent"))
        coder.removeValue(forKey: "s")
        #expect(!coder.containsValue(forKey: "s"))
        #expect(coder.existingNestedCoder(forIdentifier: "nobody") == nil)
    }

    @Test("bytes that are not an archive of this version are refused with a reason")
    func refusesOthers() throws {
        #expect(throws: RestorationArchiveError.self) { try RestorationArchive.decode([1, 2, 3]) }
        #expect(throws: RestorationArchiveError.self) { try RestorationArchive.decode(PropertyListBinaryCoding.encode(.string("hello"))) }
        let future = PropertyListBinaryCoding.encode(.dictionary([
            "format": .string(RestorationArchive.format), "version": .integer(2), "root": RestorationCoder().propertyList,
        ]))
        do {
            _ = try RestorationArchive.decode(future)
            Issue.record("a version-2 archive was accepted")
        } catch {
            #expect(error.reason.contains("version 2"), "\(error)")
        }
        let malformed = PropertyListBinaryCoding.encode(.dictionary([
            "format": .string(RestorationArchive.format), "version": .integer(RestorationArchive.version),
            "root": .dictionary(["values": .dictionary([:]), "children": .dictionary(["x": .integer(1)])]),
        ]))
        #expect(throws: RestorationArchiveError.self) { try RestorationArchive.decode(malformed) }
    }

    @Test("launch options and the reply that declines a launch keep their fields on the wire")
    func launchWireForms() throws {
        let id = UUID()
        let continuing = LaunchOptions.continuing("com.example.notes.edit", continuationID: id)
        #expect(LaunchOptions(json: continuing.json) == continuing)
        let open = LaunchOptions(url: URL(string: "https://example.com/a")!, sourceApplication: "com.example.mail", annotation: .string("hi"))
        #expect(open.opensResource)
        #expect(LaunchOptions(json: open.json) == open)
        #expect(!LaunchOptions.none.hasReason)
        let result = RegisterAppResult(registered: "com.example.notes", launchOptions: continuing)
        #expect(RegisterAppResult(json: result.json) == result)
        #expect(RegisterAppResult(json: RegisterAppResult(registered: "x").json).launchOptions == .none)
        let declined = AppReply(handled: false, launchDeclined: true)
        #expect(AppReply(json: declined.json) == declined)
        #expect(LaunchOptions.declined(by: "com.example.notes").code.rawValue == 4608)
    }
}
