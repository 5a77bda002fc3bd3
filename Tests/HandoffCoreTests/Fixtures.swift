import HandoffCore
import HandoffTestSupport
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Sample values shared by the tests.
enum Fixtures {
    static let activityID = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    static let continuationID = UUID(uuidString: "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0")!
    static let otherID = UUID(uuidString: "11111111-2222-3333-4444-555555555555")!

    static let notesEdit = ActivityType(rawValue: "com.example.notes.edit")!

    /// 2027-01-15T08:00:00Z.
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// A userInfo holding every property-list type, including the awkward values (NaN, -0.0,
    /// infinities, the integer extremes, empty data, nested containers, non-ASCII text and keys,
    /// a date with a sub-microsecond fraction).
    static var everyTypeUserInfo: UserInfo {
        [
            "string": .string("Grüße, 世界 🌍"),
            "emptyString": .string(""),
            "integer": .integer(42),
            "negative": .integer(-7),
            "int64Min": .integer(.min),
            "int64Max": .integer(.max),
            "double": .double(3.25),
            "tiny": .double(.leastNonzeroMagnitude),
            "nan": .double(.nan),
            "negativeZero": .double(-0.0),
            "infinity": .double(.infinity),
            "negativeInfinity": .double(-.infinity),
            "true": .bool(true),
            "false": .bool(false),
            "data": .data(Data([0x00, 0x01, 0x7F, 0x80, 0xFF])),
            "emptyData": .data(Data()),
            "date": .date(Date(timeIntervalSinceReferenceDate: 812_345_678.123_456_789)),
            "url": .url(URL(string: "https://example.com/notes/42?tab=edit&q=a%20b#section-2")!),
            "uuid": .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
            "null": .null,
            "array": .array([.integer(1), .double(1), .string("1"), .array([]), .dictionary([:]), .null]),
            "dictionary": .dictionary([
                "nested": .dictionary(["deeper": .array([.bool(true), .data(Data([1, 2, 3]))])]),
                "ключ": .string("значение"),
            ]),
            "emptyArray": .array([]),
            "emptyDictionary": .dictionary([:]),
            "日本語キー": .string("non-ASCII key"),
            "emoji 👩‍💻": .string("👨‍👩‍👧‍👦"),
        ]
    }

    /// An activity with every field set (a userInfo without NaN, so `==` is meaningful).
    static func fullActivity(id: UUID = activityID) -> Activity {
        Activity(
            id: id,
            activityType: notesEdit,
            title: "Shopping list — Ünïcödé 📝",
            userInfo: [
                "noteID": .integer(42),
                "cursor": .dictionary(["line": .integer(3), "column": .integer(17)]),
                "draft": .string("milk, eggs"),
                "ratio": .double(0.5),
                "attachment": .data(Data([0xDE, 0xAD, 0xBE, 0xEF])),
            ],
            requiredUserInfoKeys: ["noteID", "cursor"],
            targetContentIdentifier: "note-42",
            needsSave: true,
            contentAttributeSet: ["title": .string("Shopping list"), "rating": .integer(5)],
            keywords: ["shopping", "groceries"],
            persistentIdentifier: "persistent-42",
            isEligibleForHandoff: true,
            isEligibleForSearch: true,
            isEligibleForPublicIndexing: true,
            isEligibleForPrediction: true,
            expirationDate: Date(timeIntervalSince1970: 1_800_003_600.5),
            webpageURL: URL(string: "https://example.com/notes/42")!,
            referrerURL: URL(string: "https://example.com/search?q=notes")!,
            supportsContinuationStreams: true
        )
    }

    static func hello(_ versions: [Int] = [2], agentID: String = "continuing-agent-id", name: String = "Laptop") -> PeerHello {
        PeerHello(versions: versions, agentID: agentID, name: name)
    }

    static var request: FetchRequest { FetchRequest(activityID: activityID, continuationID: continuationID) }
}

/// Records a failure unless `actual` is identical to `expected` (bit-exact doubles and dates).
func expectIdentical(
    _ actual: PropertyListValue?,
    _ expected: PropertyListValue,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    guard let actual else {
        Issue.record("got nil, expected \(expected)", sourceLocation: sourceLocation)
        return
    }
    #expect(actual.isIdentical(to: expected), "\(actual)\nis not identical to\n\(expected)", sourceLocation: sourceLocation)
}

/// Records a failure unless the two userInfo dictionaries are identical.
func expectIdentical(
    _ actual: UserInfo?,
    _ expected: UserInfo,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    expectIdentical(actual.map(PropertyListValue.dictionary), .dictionary(expected), sourceLocation: sourceLocation)
}

/// A generator of random property-list values, for property-based round-trip tests.
struct RandomPropertyList {
    var rng: SplitMix64
    /// Whether to produce dates (the JSON form keeps only milliseconds).
    var includeDates = true
    /// Whether doubles may be any bit pattern (NaN payloads included); otherwise NaN is `.nan`.
    var arbitraryDoubleBits = true

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    static let scalarPool: [Unicode.Scalar] = [
        "a", "b", "z", "A", "0", "9", " ", "-", "_", ".", "$", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}",
        "é", "ß", "ж", "中", "日", "\u{301}", "\u{200D}", "\u{FEFF}", "\u{FFFD}", "😀", "🌍", "👩", "\u{10FFFF}",
    ]
    static let keyPool = ["a", "b", "key", "Key", "", "$url", "$data", "$date", "$uuid", "$double", "$dict", "ключ", "🔑", "a.b", "x[0]"]
    static let urlPool = [
        "https://example.com", "https://example.com/a/b?c=d&e=f#g", "http://[::1]:8080/path",
        "mailto:someone@example.com", "file:///tmp/a%20b.txt", "https://user:pw@example.com:8443/%E2%9C%93?x=%C3%A9#frag",
        "urn:isbn:0451450523", "notes://note/42",
    ]

    mutating func int(_ range: Range<Int>) -> Int { Int.random(in: range, using: &rng) }

    mutating func string(maxLength: Int = 12) -> String {
        var s = String.UnicodeScalarView()
        for _ in 0..<int(0..<(maxLength + 1)) { s.append(Self.scalarPool[int(0..<Self.scalarPool.count)]) }
        return String(s)
    }

    mutating func double() -> Double {
        if arbitraryDoubleBits { return Double(bitPattern: rng.next()) }
        switch int(0..<8) {
        case 0: return .nan
        case 1: return [Double.infinity, -.infinity, 0.0, -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude][int(0..<6)]
        case 2: return Double(int(-1000..<1000))
        default:
            let d = Double(bitPattern: rng.next())
            return d.isFinite ? d : 0.5
        }
    }

    mutating func scalarValue() -> PropertyListValue {
        switch int(0..<10) {
        case 0: return .null
        case 1: return .bool(int(0..<2) == 0)
        case 2: return .integer(Int64(bitPattern: rng.next()))
        case 3: return .double(double())
        case 4: return .string(string())
        case 5: return .data(Data((0..<int(0..<20)).map { _ in UInt8.random(in: 0...255, using: &rng) }))
        case 6:
            if includeDates {
                // Any finite time, with sub-microsecond fractions.
                let seconds = Double(int(-4_000_000_000..<4_000_000_000)) + Double(rng.next() % 1_000_000_000) / 1e9
                return .date(Date(timeIntervalSinceReferenceDate: seconds))
            }
            return .integer(Int64(int(-100..<100)))
        case 7: return .url(URL(string: Self.urlPool[int(0..<Self.urlPool.count)])!)
        case 8:
            var bytes = [UInt8](repeating: 0, count: 16)
            for i in bytes.indices { bytes[i] = UInt8.random(in: 0...255, using: &rng) }
            return .uuid(UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                                     bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15])))
        default: return .integer(Int64(int(-3..<3)))
        }
    }

    mutating func value(depth: Int = 0) -> PropertyListValue {
        let containerChance = depth < 4 ? 3 : 0
        switch int(0..<(10 + containerChance)) {
        case 10: return .array((0..<int(0..<5)).map { _ in value(depth: depth + 1) })
        case 11, 12: return .dictionary(dictionary(depth: depth + 1))
        default: return scalarValue()
        }
    }

    mutating func dictionary(depth: Int = 0) -> [String: PropertyListValue] {
        var members: [String: PropertyListValue] = [:]
        for _ in 0..<int(0..<5) {
            let key = int(0..<2) == 0 ? Self.keyPool[int(0..<Self.keyPool.count)] : string(maxLength: 6)
            members[key] = value(depth: depth)
        }
        return members
    }
}
