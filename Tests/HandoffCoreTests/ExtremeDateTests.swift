import Foundation
import HandoffCore
import Testing

/// Dates a peer can send that ISO 8601 cannot write (found by FuzzUserInfoDecoder and
/// FuzzFrameDecoder): they must survive the JSON form instead of crashing the agent.
@Suite("Dates outside ISO 8601's range")
struct ExtremeDateTests {
    @Test("non-finite and far dates round-trip through JSON", arguments: [
        Double.nan, .infinity, -.infinity, 1e308, -1e308, 15_927_000_000_000, -62_135_596_801, 253_402_300_800,
    ])
    func roundTrip(seconds: Double) throws {
        let value = PropertyListValue.dictionary(["when": .date(Date(timeIntervalSince1970: seconds))])
        let text = value.json.serialized
        let back = try PropertyListValue(json: try JSONValue(parsing: text))
        guard case .dictionary(let d) = back, case .date(let date)? = d["when"] else { Issue.record("not a date: \(text)"); return }
        if seconds.isNaN { #expect(date.timeIntervalSince1970.isNaN) } else { #expect(date.timeIntervalSince1970 == seconds) }
    }

    @Test("an activity expiring in year 506714 has a JSON form")
    func farExpiration() throws {
        var activity = Activity(activityType: ActivityType(rawValue: "com.example.x")!)
        activity.expirationDate = Date(timeIntervalSince1970: 15_927_000_000_000)
        let back = try Activity(json: try JSONValue(parsing: activity.json.serialized))
        #expect(back.expirationDate == activity.expirationDate)
    }
}
