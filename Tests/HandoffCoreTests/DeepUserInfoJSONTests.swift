import HandoffCore
import Testing

/// The deepest userInfo the wire accepts must also have a JSON form the CLI can read back
/// (found by FuzzJSONParser's invariant).
@Test("the deepest userInfo the wire accepts reads back from its JSON form inside a control response")
func deepestUserInfoReadsBackFromJSON() throws {
    var value = PropertyListValue.date(.init(timeIntervalSince1970: 0))
    for level in 0..<(PropertyListBinaryCoding.maximumDepth - 1) {
        value = level.isMultiple(of: 2) ? .dictionary(["$url": value]) : .array([value])
    }
    let userInfo: UserInfo = ["deep": value]
    _ = try PropertyListBinaryCoding.decodeUserInfo(PropertyListBinaryCoding.encode(userInfo))
    let activity = Activity(activityType: ActivityType(rawValue: "com.example.deep")!, userInfo: userInfo)
    let response = ControlProtocol.responseJSON(.success(.object(["activity": activity.json])), requestID: .integer(1))
    let parsed = try JSONValue(parsing: response.serialized)
    let back = try Activity(json: try #require(parsed["ok"]?["activity"]))
    #expect(PropertyListValue.dictionary(back.userInfo).isIdentical(to: .dictionary(userInfo)))
}
