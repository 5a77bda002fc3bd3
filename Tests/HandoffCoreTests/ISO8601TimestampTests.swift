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
}
