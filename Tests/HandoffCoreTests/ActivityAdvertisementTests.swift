import HandoffCore
import HandoffTestSupport
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

@Suite("Activity advertisement: DNS-SD TXT record")
struct ActivityAdvertisementTests {
    /// TXT rdata from strings: each prefixed by its length byte.
    static func txt(_ strings: [String]) -> [UInt8] {
        strings.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
    }

    /// Splits TXT rdata into its strings, checking every length byte stays in bounds.
    static func strings(_ record: [UInt8]) -> [[UInt8]]? {
        var result: [[UInt8]] = []
        var i = 0
        while i < record.count {
            let length = Int(record[i])
            i += 1
            guard i + length <= record.count else { return nil }
            result.append(Array(record[i..<(i + length)]))
            i += length
        }
        return result
    }

    static let current = ActivityAdvertisement.Current(id: Fixtures.activityID, activityType: Fixtures.notesEdit, title: "Shopping list")

    @Test("build then parse gives the same advertisement", arguments: [
        ActivityAdvertisement(agentID: "5F3C9A2B", sequence: 7, current: current),
        ActivityAdvertisement(agentID: "5F3C9A2B", sequence: 0, current: nil),
        ActivityAdvertisement(agentID: String(repeating: "x", count: 64), sequence: .max, current: current),
        ActivityAdvertisement(agentID: "a", sequence: 1, current: .init(id: Fixtures.otherID, activityType: .browsingWeb, title: nil)),
        ActivityAdvertisement(agentID: "a", sequence: 1, current: .init(id: Fixtures.otherID, activityType: Fixtures.notesEdit, title: "")),
        ActivityAdvertisement(agentID: "a", sequence: 1, current: .init(id: Fixtures.otherID, activityType: Fixtures.notesEdit, title: "a=b; ü 😀")),
    ])
    func roundTrip(_ advertisement: ActivityAdvertisement) throws {
        #expect(try ActivityAdvertisement(txtRecord: advertisement.txtRecord) == advertisement)
    }

    @Test("the record is a list of key=value strings")
    func recordLayout() throws {
        let record = ActivityAdvertisement(agentID: "A1", sequence: 3, current: Self.current).txtRecord
        let strings = try #require(Self.strings(record)).map { String(decoding: $0, as: UTF8.self) }
        #expect(strings == [
            "v=2", "id=A1", "seq=3", "aid=E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "type=com.example.notes.edit", "title=Shopping list",
        ])
    }

    static let hugeTitles: [String] = [
        String(repeating: "a", count: 10_000),
        String(repeating: "é", count: 5_000),
        String(repeating: "中", count: 5_000),
        String(repeating: "😀", count: 5_000),
        String(repeating: "👨‍👩‍👧‍👦", count: 500),
        "ab" + String(repeating: "😀", count: 500),
        String(repeating: "e\u{301}", count: 2_000),
    ]

    @Test("a huge title is truncated on a character boundary; each string <= 255 bytes, the record <= 1300", arguments: hugeTitles)
    func hugeTitle(_ title: String) throws {
        let longestType = try ActivityType(validating: "com." + String(repeating: "x", count: 196))
        let advertisement = ActivityAdvertisement(
            agentID: String(repeating: "A", count: 64), sequence: .max,
            current: .init(id: Fixtures.activityID, activityType: longestType, title: title)
        )
        let record = advertisement.txtRecord
        #expect(record.count <= ActivityAdvertisement.maximumRecordSize)
        let strings = try #require(Self.strings(record))
        for string in strings { #expect(string.count <= 255) }

        let parsed = try ActivityAdvertisement(txtRecord: record)
        let shortened = try #require(parsed.current?.title)
        #expect(shortened.utf8.count <= 255 - "title=".utf8.count)
        #expect(!shortened.isEmpty)
        #expect(title.hasPrefix(shortened), "the truncated title is a prefix of whole characters")
        // Whole characters: the next character of the original would not have fitted.
        let next = title[title.index(title.startIndex, offsetBy: shortened.count)]
        #expect(shortened.utf8.count + String(next).utf8.count > 255 - "title=".utf8.count)
        #expect(parsed.current?.activityType == longestType)
        #expect(parsed.agentID == advertisement.agentID)
    }

    @Test("a title of exactly 249 bytes is kept whole; one more byte is cut")
    func titleBoundary() throws {
        let fits = String(repeating: "t", count: 249)
        let kept = ActivityAdvertisement(agentID: "a", sequence: 1, current: .init(id: Fixtures.activityID, activityType: Fixtures.notesEdit, title: fits))
        #expect(try ActivityAdvertisement(txtRecord: kept.txtRecord).current?.title == fits)
        let over = fits + "!"
        let cut = ActivityAdvertisement(agentID: "a", sequence: 1, current: .init(id: Fixtures.activityID, activityType: Fixtures.notesEdit, title: over))
        #expect(try ActivityAdvertisement(txtRecord: cut.txtRecord).current?.title == fits)
    }

    @Test("a title that would cut a multi-byte character drops the whole character")
    func multiByteBoundary() throws {
        // 248 ASCII bytes leave one byte, not enough for the 2-byte "é".
        let title = String(repeating: "t", count: 248) + "é"
        let advertisement = ActivityAdvertisement(agentID: "a", sequence: 1, current: .init(id: Fixtures.activityID, activityType: Fixtures.notesEdit, title: title))
        #expect(try ActivityAdvertisement(txtRecord: advertisement.txtRecord).current?.title == String(repeating: "t", count: 248))
    }

    @Test("keys are case-insensitive")
    func caseInsensitiveKeys() throws {
        let record = Self.txt(["V=2", "ID=agent", "Seq=9", "AID=E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "TYPE=com.example.notes.edit", "Title=Hi"])
        let parsed = try ActivityAdvertisement(txtRecord: record)
        #expect(parsed == ActivityAdvertisement(agentID: "agent", sequence: 9, current: .init(id: Fixtures.activityID, activityType: Fixtures.notesEdit, title: "Hi")))
    }

    @Test("the first occurrence of a key wins (RFC 6763)")
    func firstOccurrenceWins() throws {
        let parsed = try ActivityAdvertisement(txtRecord: Self.txt(["v=2", "id=first", "seq=1", "ID=second", "v=99", "seq=2"]))
        #expect(parsed.agentID == "first")
        #expect(parsed.sequence == 1)
        #expect(parsed.protocolVersion == 2)
    }

    @Test("boolean attributes, empty strings, empty keys and unknown keys are ignored")
    func ignoredStrings() throws {
        let record = [0] + Self.txt(["flag", "=orphan", "v=2", "future=x", "id=a", "seq=0"]) + [0]
        #expect(try ActivityAdvertisement(txtRecord: record) == ActivityAdvertisement(agentID: "a", sequence: 0, current: nil))
    }

    @Test("values may contain '='")
    func equalsInValue() throws {
        let parsed = try ActivityAdvertisement(txtRecord: Self.txt([
            "v=2", "id=a", "seq=0", "aid=E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "type=com.a.b", "title=x=y",
        ]))
        #expect(parsed.current?.title == "x=y")
    }

    @Test("foreign or malformed records are refused with AdvertisementError", arguments: [
        ([], AdvertisementError.notAHandoffAgent("no protocol version (v)"), "empty record"),
        (txt(["id=a", "seq=1"]), .notAHandoffAgent("no protocol version (v)"), "no v"),
        (txt(["txtvers=1", "path=/printer"]), .notAHandoffAgent("no protocol version (v)"), "a printer's record"),
        (txt(["v=one", "id=a", "seq=1"]), .notAHandoffAgent("no protocol version (v)"), "v not a number"),
        (txt(["v=99", "id=a", "seq=1"]), .unsupportedVersion(99), "v=99"),
        (txt(["v=0", "id=a", "seq=1"]), .unsupportedVersion(0), "v=0"),
        (txt(["v=2", "seq=1"]), .notAHandoffAgent("no agent ID (id)"), "no id"),
        (txt(["v=2", "id=", "seq=1"]), .notAHandoffAgent("no agent ID (id)"), "empty id"),
        (txt(["v=2", "id=" + String(repeating: "x", count: 65), "seq=1"]), .notAHandoffAgent("no agent ID (id)"), "id over 64 bytes"),
        (txt(["v=2", "id=a"]), .malformed("seq is missing or not a number"), "no seq"),
        (txt(["v=2", "id=a", "seq=-1"]), .malformed("seq is missing or not a number"), "negative seq"),
        (txt(["v=2", "id=a", "seq=18446744073709551616"]), .malformed("seq is missing or not a number"), "seq over UInt64"),
        (txt(["v=2", "id=a", "seq=1", "aid=nope", "type=com.a.b"]), .malformed("aid is not a UUID"), "bad aid"),
        (txt(["v=2", "id=a", "seq=1", "aid=E621E1F8-C36C-495A-93FC-0C247A3E6E5F"]), .malformed("type is missing or not reverse-DNS"), "aid without type"),
        (txt(["v=2", "id=a", "seq=1", "aid=E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "type=notes"]), .malformed("type is missing or not reverse-DNS"), "bad type"),
        ([3] + Array("v=2".utf8) + [10] + Array("id=a".utf8), .malformed("TXT string runs past the end of the record"), "length byte past the end"),
        ([255], .malformed("TXT string runs past the end of the record"), "lone length byte"),
        ([4, 0x76, 0x3D, 0x31, 0xFF], .malformed("TXT string is not UTF-8"), "non-UTF-8 value"),
        ([4, 0xC0, 0x3D, 0x31, 0x31], .malformed("TXT string is not UTF-8"), "non-UTF-8 key"),
    ] as [([UInt8], AdvertisementError, String)])
    func refused(_ record: [UInt8], _ expected: AdvertisementError, _ what: String) {
        let error = #expect(throws: AdvertisementError.self, "\(what)") { try ActivityAdvertisement(txtRecord: record) }
        #expect(error == expected, "\(what)")
    }

    @Test("error descriptions explain the refusal")
    func errorDescriptions() {
        #expect(AdvertisementError.unsupportedVersion(99).description == "advertises protocol version 99, which this agent does not speak")
        #expect(AdvertisementError.notAHandoffAgent("no protocol version (v)").description == "not a handoff agent: no protocol version (v)")
        #expect(AdvertisementError.malformed("x").description == "malformed advertisement: x")
    }

    @Test("random bytes are parsed or refused, never a crash (seeded)")
    func randomBytesNeverCrash() {
        var rng = SplitMix64(seed: 1300)
        let valid = ActivityAdvertisement(agentID: "agent", sequence: 5, current: Self.current).txtRecord
        for _ in 0..<5_000 {
            var record: [UInt8]
            if Bool.random(using: &rng) {
                record = (0..<Int.random(in: 0..<80, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            } else {
                // Corrupt a few bytes of a valid record.
                record = valid
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    record[Int.random(in: 0..<record.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                }
                record = Array(record.prefix(Int.random(in: 0...record.count, using: &rng)))
            }
            do {
                _ = try ActivityAdvertisement(txtRecord: record)
            } catch {
                _ = error.description
            }
        }
    }
}
