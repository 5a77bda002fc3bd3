import HandoffCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Inputs shared by the micro benchmarks (Benchmarks/) and the macro benchmarks' client
/// (handoff-bench), so both measure the same bytes.
public enum BenchmarkFixtures {
    /// The activity type the macro benchmarks publish (h2's handler takes it).
    public static let activityType = ActivityType(rawValue: "com.example.bench.edit")!

    /// A userInfo of mixed property-list types whose binary encoding is `targetBytes` long, or a
    /// few bytes less (the default limit is 3072; the default target, 3000, stays under it).
    ///
    /// Holds: strings (ASCII and non-ASCII), integers, doubles, booleans, a date, a URL, a UUID,
    /// a data blob, an array of mixed values and a nested dictionary; a filler string takes up
    /// the rest.
    public static func userInfo(targetBytes: Int = 3000) -> UserInfo {
        var info: UserInfo = [
            "title": .string("Shopping list — Wochenmarkt 🥕"),
            "cursor": .integer(1234),
            "selectionLength": .integer(-17),
            "zoom": .double(1.25),
            "scroll": .double(-0.0),
            "dirty": .bool(true),
            "pinned": .bool(false),
            "modified": .date(Date(timeIntervalSinceReferenceDate: 815_000_000.125)),
            "source": .url(URL(string: "https://notes.example.com/n/42?rev=7")!),
            "document": .uuid(UUID(uuidString: "8C1D3F0A-2B6E-4F55-9B62-3C1A2D4E5F60")!),
            "thumbnail": .data(Data((0..<256).map { UInt8(truncatingIfNeeded: $0 &* 37) })),
            "tags": .array([.string("groceries"), .string("weekend"), .integer(3), .bool(true), .null]),
            "layout": .dictionary([
                "columns": .integer(2),
                "ratio": .double(0.618),
                "collapsed": .array((0..<12).map { .integer(Int64($0)) }),
                "theme": .dictionary(["name": .string("solarized"), "dark": .bool(true)]),
            ]),
        ]
        let base = PropertyListBinaryCoding.encode(info).count
        // "text" costs 4 (key length) + 4 (key) + 1 (tag) + 4 (length) bytes plus its body.
        let fill = max(0, targetBytes - base - 13)
        let words = "milk, eggs, bread, butter, cheese, apples, pears, tomatoes, coffee, tea; "
        info["text"] = .string(String(String(repeating: words, count: fill / words.utf8.count + 1).utf8.prefix(fill))!)
        return info
    }

    /// The activity the macro benchmarks publish and continue.
    public static func activity(title: String = "Benchmark activity", userInfoBytes: Int = 3000) -> Activity {
        Activity(
            activityType: activityType, title: title, userInfo: userInfo(targetBytes: userInfoBytes),
            webpageURL: URL(string: "https://notes.example.com/n/42"))
    }

    /// A typical advertisement: an agent ID, a sequence number and a current activity with a
    /// title.
    public static func advertisement(titleLength: Int = 40) -> ActivityAdvertisement {
        ActivityAdvertisement(
            agentID: "3f2a9c0d5b7e4e61a8c2d94f1e0b7a65", sequence: 1234,
            current: .init(
                id: UUID(uuidString: "8C1D3F0A-2B6E-4F55-9B62-3C1A2D4E5F60")!, activityType: activityType,
                title: String(repeating: "Shopping list ", count: titleLength / 14 + 1).prefix(titleLength).description))
    }

    /// A payload of `count` bytes (a stream chunk).
    public static func payload(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    }
}
