import HandoffCore
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

@Suite("Activity: property-list and JSON forms")
struct ActivityEncodingTests {
    // MARK: Property list

    @Test("an activity with every field set round-trips through its property list")
    func propertyListRoundTrip() throws {
        let activity = Fixtures.fullActivity()
        let back = try Activity(propertyList: activity.propertyList())
        #expect(back == activity)
    }

    @Test("an activity with every field set round-trips through the binary encoding of its property list")
    func binaryRoundTrip() throws {
        let activity = Fixtures.fullActivity()
        let bytes = PropertyListBinaryCoding.encode(activity.propertyList())
        let back = try Activity(propertyList: PropertyListBinaryCoding.decodeUserInfo(bytes))
        #expect(back == activity)
    }

    @Test("a userInfo with every property-list type survives the activity's property list exactly")
    func everyTypeUserInfo() throws {
        var activity = Fixtures.fullActivity()
        activity.userInfo = Fixtures.everyTypeUserInfo
        let bytes = PropertyListBinaryCoding.encode(activity.propertyList())
        let back = try Activity(propertyList: PropertyListBinaryCoding.decodeUserInfo(bytes))
        expectIdentical(back.userInfo, activity.userInfo)
    }

    @Test("a minimal activity's property list holds only the required fields and the flags")
    func minimalPropertyList() throws {
        let activity = Activity(id: Fixtures.activityID, activityType: Fixtures.notesEdit)
        let p = activity.propertyList()
        #expect(Set(p.keys) == [
            "id", "activityType", "userInfo", "needsSave", "isEligibleForHandoff", "isEligibleForSearch",
            "isEligibleForPublicIndexing", "isEligibleForPrediction", "supportsContinuationStreams",
        ])
        #expect(p["id"] == .uuid(Fixtures.activityID))
        #expect(p["activityType"] == .string("com.example.notes.edit"))
        #expect(try Activity(propertyList: p) == activity)
    }

    @Test("propertyList(includingUserInfo: false) leaves userInfo out")
    func withoutUserInfo() throws {
        let p = Fixtures.fullActivity().propertyList(includingUserInfo: false)
        #expect(p["userInfo"] == nil)
        #expect(try Activity(propertyList: p).userInfo == [:])
    }

    @Test("an empty requiredUserInfoKeys (transfer nothing) is not confused with nil (transfer all)")
    func emptyRequiredKeysSurvive() throws {
        var activity = Fixtures.fullActivity()
        activity.requiredUserInfoKeys = []
        #expect(try Activity(propertyList: activity.propertyList()).requiredUserInfoKeys == [])
        #expect(try Activity(json: JSONValue(parsing: activity.json.serialized)).requiredUserInfoKeys == [])
        activity.requiredUserInfoKeys = nil
        #expect(try Activity(propertyList: activity.propertyList()).requiredUserInfoKeys == nil)
    }

    @Test("missing optional fields take Apple's defaults; null counts as missing; unknown keys are ignored")
    func defaultsWhenMissing() throws {
        let activity = try Activity(propertyList: [
            "id": .uuid(Fixtures.activityID), "activityType": .string("com.example.notes.edit"),
            "title": .null, "futureField": .string("from a newer peer"),
        ])
        #expect(activity == Activity(id: Fixtures.activityID, activityType: Fixtures.notesEdit))
    }

    @Test("id may be omitted when a default is given")
    func defaultID() throws {
        let activity = try Activity(propertyList: ["activityType": .string("com.example.notes.edit")], defaultID: Fixtures.otherID)
        #expect(activity.id == Fixtures.otherID)
        let explicit = try Activity(propertyList: ["id": .uuid(Fixtures.activityID), "activityType": .string("com.a.b")], defaultID: Fixtures.otherID)
        #expect(explicit.id == Fixtures.activityID, "an explicit id wins over the default")
    }

    @Test("decoding errors name the field", arguments: [
        (["id": .uuid(Fixtures.activityID)], "activityType", "is missing"),
        (["id": .uuid(Fixtures.activityID), "activityType": .null], "activityType", "is missing"),
        (["id": .uuid(Fixtures.activityID), "activityType": .integer(3)], "activityType", "must be a string, not integer"),
        (["id": .uuid(Fixtures.activityID), "activityType": .string("notes")], "activityType",
         #"activity type "notes" is not valid reverse-DNS: it needs at least two dot-separated parts, like com.example.view"#),
        (["activityType": .string("com.a.b")], "id", "is missing"),
        (["id": .string("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"), "activityType": .string("com.a.b")], "id", "must be a UUID, not string"),
        (["id": .uuid(Fixtures.activityID), "activityType": .string("com.a.b"), "webpageURL": .string("https://example.com")],
         "webpageURL", "must be a URL, not string"),
        (["id": .uuid(Fixtures.activityID), "activityType": .string("com.a.b"), "referrerURL": .integer(1)], "referrerURL", "must be a URL, not integer"),
        (["id": .uuid(Fixtures.activityID), "activityType": .string("com.a.b"), "title": .bool(true)], "title", "must be a string, not bool"),
        (["id": .uuid(Fixtures.activityID), "activityType": .string("com.a.b"), "needsSave": .integer(1)], "needsSave", "must be a bool, not integer"),
        (["id": .uuid(Fixtures.activityID), "activityType": .string("com.a.b"), "userInfo": .array([])], "userInfo", "must be a dictionary, not array"),
        (["id": .uuid(Fixtures.activityID), "activityType": .string("com.a.b"), "keywords": .array([.integer(1)])], "keywords", "must be an array of strings"),
        (["id": .uuid(Fixtures.activityID), "activityType": .string("com.a.b"), "requiredUserInfoKeys": .string("a")],
         "requiredUserInfoKeys", "must be an array of strings, not string"),
        (["id": .uuid(Fixtures.activityID), "activityType": .string("com.a.b"), "expirationDate": .double(0)], "expirationDate", "must be a date, not double"),
    ] as [([String: PropertyListValue], String, String)])
    func propertyListErrors(_ p: [String: PropertyListValue], _ field: String, _ reason: String) {
        let error = #expect(throws: ActivityDecodingError.self) { try Activity(propertyList: p) }
        #expect(error?.field == field)
        #expect(error?.reason == reason)
        #expect(error?.description == "activity field \(field): \(reason)")
    }

    // MARK: JSON

    @Test("an activity with every field set round-trips through JSON text")
    func jsonRoundTrip() throws {
        let activity = Fixtures.fullActivity()
        let text = activity.json.serialized
        let back = try Activity(json: JSONValue(parsing: text))
        #expect(back == activity)
    }

    @Test("id, URLs and the expiration date are plain JSON strings; userInfo uses the tagged forms")
    func jsonShape() {
        let json = Fixtures.fullActivity().json
        #expect(json["id"] == .string("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        #expect(json["webpageURL"] == .string("https://example.com/notes/42"))
        #expect(json["referrerURL"] == .string("https://example.com/search?q=notes"))
        #expect(json["expirationDate"] == .string("2027-01-15T09:00:00.500Z"))
        #expect(json["activityType"] == .string("com.example.notes.edit"))
        #expect(json["needsSave"] == .bool(true))
        #expect(json["keywords"] == .array([.string("groceries"), .string("shopping")]))
        #expect(json["userInfo"]?["attachment"] == .object(["$data": .string("3q2+7w==")]))
        #expect(json["userInfo"]?["ratio"] == .number("0.5"))
        #expect(json["userInfo"]?["noteID"] == .number("42"))
    }

    @Test("a JSON activity may use the tagged forms for its top-level fields too")
    func jsonTaggedTopLevelFields() throws {
        let activity = try Activity(json: JSONValue(parsing: #"""
            {"id": {"$uuid": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"}, "activityType": "com.example.notes.edit",
             "webpageURL": {"$url": "https://example.com"}, "expirationDate": {"$date": 1800000000}}
            """#))
        #expect(activity.id == Fixtures.activityID)
        #expect(activity.webpageURL == URL(string: "https://example.com"))
        #expect(activity.expirationDate == Fixtures.now)
    }

    @Test("JSON decoding errors name the field", arguments: [
        (#"{"id":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","activityType":"com.a.b","webpageURL":42}"#, "webpageURL", "must be a URL, not integer"),
        (#"{"id":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","activityType":"com.a.b","webpageURL":"/relative/path"}"#, "webpageURL",
         #""/relative/path" is not an absolute URL such as https://example.com/page"#),
        (#"{"id":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","activityType":"notes"}"#, "activityType",
         #"activity type "notes" is not valid reverse-DNS: it needs at least two dot-separated parts, like com.example.view"#),
        (#"{"id":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F"}"#, "activityType", "is missing"),
        (#"{"id":"not-a-uuid","activityType":"com.a.b"}"#, "id", #""not-a-uuid" is not a UUID"#),
        (#"{"id":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","activityType":"com.a.b","expirationDate":"tomorrow"}"#, "expirationDate",
         #""tomorrow" is not an ISO 8601 date"#),
        (#"{"id":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","activityType":"com.a.b","userInfo":{"items":[1,2,{"$uuid":7}]}}"#,
         "userInfo.items[2]", "$uuid needs a UUID string, got number"),
        (#"{"id":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","activityType":"com.a.b","userInfo":{"$url":"https://x"}}"#,
         "userInfo", "userInfo must be a dictionary, not a tagged value"),
        (#"{"id":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","activityType":"com.a.b","title":{"$data":1}}"#, "title",
         "$data needs a base64 string, got number"),
    ])
    func jsonErrors(_ text: String, _ field: String, _ reason: String) {
        let error = #expect(throws: ActivityDecodingError.self) { try Activity(json: JSONValue(parsing: text)) }
        #expect(error?.field == field)
        #expect(error?.reason == reason)
    }

    @Test("a JSON activity must be an object")
    func jsonMustBeAnObject() {
        let error = #expect(throws: ActivityDecodingError.self) { try Activity(json: .array([])) }
        #expect(error?.field == "")
        #expect(error?.reason == "an activity must be a JSON object")
    }

    @Test("a userInfo whose only key is a tag name survives the activity's JSON form")
    func jsonUserInfoWithOnlyATagKey() throws {
        var activity = Fixtures.fullActivity()
        activity.userInfo = ["$url": .string("not a URL, just a value stored under the key \"$url\"")]
        let back = try Activity(json: JSONValue(parsing: activity.json.serialized))
        #expect(back == activity)
    }

    @Test("a contentAttributeSet whose only key is a tag name survives the activity's JSON form")
    func jsonContentAttributeSetWithOnlyATagKey() throws {
        var activity = Fixtures.fullActivity()
        activity.contentAttributeSet = ["$data": .string("a Spotlight attribute that happens to be named $data")]
        let back = try Activity(json: JSONValue(parsing: activity.json.serialized))
        #expect(back == activity)
    }
}
