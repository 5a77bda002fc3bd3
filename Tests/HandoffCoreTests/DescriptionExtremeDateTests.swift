import Foundation
import HandoffCore
import Testing

/// Printing what a peer sent must not crash: `Date.description` traps on a NaN date, and the
/// default descriptions of values, userInfo, activities and messages reach it (found by
/// FuzzUserInfoDecoder, Fuzz/Crashes/FuzzUserInfoDecoder/userinfo-top-level-nan-date.bin).
@Suite("Descriptions of values holding extreme dates")
struct DescriptionExtremeDateTests {
    @Test("a value, a userInfo, an activity and a message holding an extreme date can be printed", arguments: [
        Double.nan, .infinity, -.infinity, 1e308, -62_135_596_801, 0,
    ])
    func describes(seconds: Double) throws {
        let date = Date(timeIntervalSince1970: seconds)
        let value = PropertyListValue.date(date)
        let text = "\(value)"
        #expect(text == value.json.serialized)
        if seconds.isNaN { #expect(text == #"{"$date":"nan"}"#) }

        let userInfo: UserInfo = ["when": value, "list": .array([value])]
        #expect(!"\(userInfo)".isEmpty)
        #expect(!String(reflecting: userInfo).isEmpty)

        var activity = Activity(activityType: ActivityType(rawValue: "com.example.x")!, userInfo: userInfo)
        activity.expirationDate = date
        #expect("\(activity)" == activity.json.serialized)
        #expect(!"\(PeerMessage.activity(activity))".isEmpty)
        #expect(!"\(PeerMessage.userInfo(userInfo))".isEmpty)
    }

    @Test("the reproducer decodes to a NaN date whose description is its JSON form")
    func reproducer() throws {
        let input: [UInt8] = [0x07, 0x7F, 0xF8, 0, 0, 0, 0, 0, 0]
        let value = try PropertyListBinaryCoding.decode(input)
        #expect("\(value)" == #"{"$date":"nan"}"#)
    }
}
