import HandoffTestSupport
import Testing

@testable import HandoffCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// ``ISO8601Timestamp`` writes what Foundation's ISO 8601 formatter writes, without it.
@Suite("ISO8601Timestamp")
struct ISO8601TimestampTests {
    /// What ``PropertyListValue/formatISO8601(_:)`` wrote before: Foundation's formatter.
    static func foundation(_ seconds: Int64, _ milliseconds: Int) -> String {
        PropertyListValue.foundationISO8601(seconds: Double(seconds), fraction: milliseconds)
    }

    @Test("the same text as Foundation's formatter, at the edges of years, leap days, centuries and the range")
    func edges() throws {
        let instants: [Int64] = [
            0, -1, 1, 86_399, 86_400, -86_400, -86_401,
            951_782_400, 951_868_799, 951_868_800,  // 2000-02-29 and around
            -2_208_988_800, -2_203_891_200,  // 1900-01-01, 1900-03-01 (1900 is no leap year)
            4_107_542_400, 4_102_444_800,  // 2100-03-01, 2100-01-01
            1_795_000_000, 1_764_201_601,
            ISO8601Timestamp.fastRange.lowerBound, ISO8601Timestamp.fastRange.lowerBound + 86_399,
            ISO8601Timestamp.fastRange.upperBound, ISO8601Timestamp.fastRange.upperBound - 86_400,
        ]
        for seconds in instants {
            for milliseconds in [0, 1, 250, 999] {
                #expect(ISO8601Timestamp.text(seconds: seconds, milliseconds: milliseconds) == Self.foundation(seconds, milliseconds),
                        "\(seconds).\(milliseconds)")
            }
        }
        #expect(ISO8601Timestamp.text(seconds: 0, milliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(ISO8601Timestamp.text(seconds: 951_782_400, milliseconds: 250) == "2000-02-29T00:00:00.250Z")
    }

    @Test("the same text as Foundation's formatter for 20,000 instants drawn across the range")
    func drawn() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let seconds = Int64.random(in: ISO8601Timestamp.fastRange, using: &generator)
            let milliseconds = Int.random(in: 0...999, using: &generator)
            let text = ISO8601Timestamp.text(seconds: seconds, milliseconds: milliseconds)
            guard text == Self.foundation(seconds, milliseconds) else {
                Issue.record("\(seconds).\(milliseconds): \(text ?? "nil") against \(Self.foundation(seconds, milliseconds))")
                return
            }
        }
    }

    @Test("outside 1601-9999 it writes nothing, and dates there are formatted by Foundation as before")
    func outside() {
        #expect(ISO8601Timestamp.text(seconds: ISO8601Timestamp.fastRange.lowerBound - 1, milliseconds: 0) == nil)
        #expect(ISO8601Timestamp.text(seconds: ISO8601Timestamp.fastRange.upperBound + 1, milliseconds: 0) == nil)
        let old = Date(timeIntervalSince1970: -30_000_000_000.5)  // year 1019
        #expect(PropertyListValue.formatISO8601(old) == Self.foundation(-30_000_000_001, 500))
    }

    /// What ``PropertyListValue/parseISO8601(_:)`` read before: Foundation's parser.
    static func foundationDate(_ text: String) -> Date? { PropertyListValue.foundationParseISO8601(text) }

    @Test("it reads the same instant as Foundation's parser, with and without milliseconds, across the range")
    func readsAsFoundation() {
        var generator = SplitMix64(seed: 8601)
        let edges: [Int64] = [0, -1, 86_399, 951_782_400, 951_868_799, -2_208_988_800, 4_107_542_400,
                              ISO8601Timestamp.fastRange.lowerBound, ISO8601Timestamp.fastRange.upperBound]
        let drawn = (0..<20_000).map { _ in Int64.random(in: ISO8601Timestamp.fastRange, using: &generator) }
        for seconds in edges + drawn {
            let milliseconds = Int.random(in: 0...999, using: &generator)
            let text = ISO8601Timestamp.text(seconds: seconds, milliseconds: milliseconds)!
            let whole = String(text.prefix(19)) + "Z"
            for form in [text, whole] {
                guard let date = ISO8601Timestamp.date(parsing: form), date == Self.foundationDate(form) else {
                    Issue.record("\(form): \(String(describing: ISO8601Timestamp.date(parsing: form))) against \(String(describing: Self.foundationDate(form)))")
                    return
                }
            }
        }
    }

    @Test("any other text is left to Foundation's parser", arguments: [
        "2026-13-01T00:00:00Z", "2026-02-29T00:00:00Z", "2100-02-29T00:00:00.000Z", "2026-04-31T00:00:00Z", "2026-00-10T00:00:00Z",
        "2026-01-00T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z", "2026-01-01T00:00:60Z", "1600-12-31T23:59:59Z",
        "2026-01-01T00:00:00+01:00", "2026-01-01 00:00:00Z", "2026-01-01T00:00:00.5Z", "2026-01-01T00:00:00,500Z", "２026-01-01T00:00:00Z",
        "2026-1-01T00:00:00Z", "", "2026-01-01T00:00:00",
    ])
    func othersGoToFoundation(text: String) {
        #expect(ISO8601Timestamp.date(parsing: text) == nil)
        #expect(PropertyListValue.parseISO8601(text) == Self.foundationDate(text))
    }
}
