import HandoffCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Inputs that trigger bugs already found and reported, kept away from the code that fails on
/// them so the fuzzers keep looking for new ones. docs/RELIABILITY.md describes each bug and
/// Fuzz/Crashes/ holds reproducers. Remove an entry once its bug is fixed.
///
/// Set HANDOFF_FUZZ_KNOWN_BUGS=crash to turn every filter off (to check a reproducer, or a fix).
public enum KnownBugs {
    /// Whether the filters are on (the default).
    public static let filtering: Bool = {
        guard let value = getenv("HANDOFF_FUZZ_KNOWN_BUGS") else { return true }
        return String(cString: value) != "crash"
    }()

    /// Bug 1: `PropertyListValue.formatISO8601` traps ("Double value cannot be converted to Int
    /// because it is either infinite or NaN") on a date whose milliseconds since 1970 are not
    /// finite: NaN, ±infinity, or beyond about ±1.8e305 seconds. Any JSON form of a userInfo or an
    /// activity holding such a date crashes: the agent's `continue` (Agent.fetchAndDeliver), the
    /// handler input (ActivityDispatcher.deliver), `handoff publish`.
    public static func crashesFormatter(_ date: Date) -> Bool {
        filtering && !(date.timeIntervalSince1970 * 1000).isFinite
    }

    /// Bug 2: the JSON form of a date outside the years 0000 to about 506713 is wrong: before year
    /// 0 the formatter writes a negative year ("-4712-01-01T12:00:00.000Z") that
    /// `PropertyListValue.parseISO8601` refuses; after 506713-02-07 it writes that date (clamped).
    /// Conservatively: any date outside 0001-01-01 ... 9999-12-31.
    public static func misformatted(_ date: Date) -> Bool {
        guard filtering else { return false }
        let t = date.timeIntervalSince1970
        return !(t >= -62_135_596_800 && t <= 253_402_300_799)
    }

    /// Bug 3: the JSON form nests deeper than the binary encoding: a date, data, URL, UUID or
    /// non-finite double becomes a tagged object (`{"$date": ...}`) and a dictionary whose only key
    /// is a tag is wrapped in `{"$dict": ...}`, one more level each. A userInfo the wire accepts
    /// (64 levels, PropertyListBinaryCoding.maximumDepth) can so have a JSON form deeper than
    /// JSONValue.maximumDepth (64), which JSONValue(parsing:) refuses; and the JSON envelopes
    /// around it (the activity, the control response or event) add more levels.
    public static func tooDeepForJSONParser(_ json: JSONValue) -> Bool {
        filtering && depth(json) > JSONValue.maximumDepth
    }

    /// The number of nested arrays and objects.
    static func depth(_ json: JSONValue) -> Int {
        switch json {
        case .array(let elements): 1 + (elements.map(depth).max() ?? 0)
        case .object(let members): 1 + (members.values.map(depth).max() ?? 0)
        default: 0
        }
    }

    /// Whether producing the JSON form of `value` would hit a known bug; with `faithfully`, also
    /// whether the JSON form would misrepresent it.
    public static func breaksJSONForm(_ value: PropertyListValue, faithfully: Bool = false) -> Bool {
        guard filtering else { return false }
        switch value {
        case .date(let d): return crashesFormatter(d) || (faithfully && misformatted(d))
        case .array(let elements): return elements.contains { breaksJSONForm($0, faithfully: faithfully) }
        case .dictionary(let members): return members.values.contains { breaksJSONForm($0, faithfully: faithfully) }
        default: return false
        }
    }

    /// The same for an activity: its expirationDate, contentAttributeSet and userInfo.
    public static func breaksJSONForm(_ activity: Activity, faithfully: Bool = false) -> Bool {
        guard filtering else { return false }
        if let d = activity.expirationDate, crashesFormatter(d) || (faithfully && misformatted(d)) { return true }
        if let set = activity.contentAttributeSet, breaksJSONForm(.dictionary(set), faithfully: faithfully) { return true }
        return breaksJSONForm(.dictionary(activity.userInfo), faithfully: faithfully)
    }
}

/// Whether `back`, read from the JSON form of `original`, represents it faithfully: equal, except
/// that dates may differ by the JSON form's rounding to the millisecond and NaNs may differ in
/// payload.
public func faithfulJSONRoundTrip(_ original: PropertyListValue, _ back: PropertyListValue) -> Bool {
    switch (original, back) {
    case (.double(let a), .double(let b)): return a.bitPattern == b.bitPattern || (a.isNaN && b.isNaN)
    case (.date(let a), .date(let b)):
        return abs(a.timeIntervalSince1970 - b.timeIntervalSince1970) <= 0.000_501
    case (.url(let a), .url(let b)): return a.absoluteString == b.absoluteString
    case (.array(let a), .array(let b)): return a.count == b.count && zip(a, b).allSatisfy(faithfulJSONRoundTrip)
    case (.dictionary(let a), .dictionary(let b)):
        return a.count == b.count && a.allSatisfy { key, value in b[key].map { faithfulJSONRoundTrip(value, $0) } ?? false }
    default: return original.isIdentical(to: back)
    }
}
