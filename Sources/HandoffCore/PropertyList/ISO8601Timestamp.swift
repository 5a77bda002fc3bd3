#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The ISO 8601 text of an instant in UTC with milliseconds (`2026-11-26T23:50:01.250Z`), made
/// with integer arithmetic: the agent writes one for every event and every date in a userInfo,
/// and Foundation's `ISO8601FormatStyle` takes tens of microseconds each (a calendar and a time
/// zone behind it). It reads the same form back, for the dates of a userInfo a client publishes.
///
/// Only for instants from 1601 to 9999, where Foundation's Gregorian calendar and the proleptic
/// one this counts in agree; ``PropertyListValue`` formats others with Foundation, as before, and
/// reads every other text with Foundation's parser.
enum ISO8601Timestamp {
    /// 1601-01-01T00:00:00Z and 9999-12-31T23:59:59Z, in seconds since 1970.
    static let fastRange: ClosedRange<Int64> = -11_644_473_600...253_402_300_799

    /// `seconds` since 1970 (whole) and `milliseconds` (0...999) as `YYYY-MM-DDTHH:MM:SS.mmmZ`;
    /// nil outside ``fastRange``.
    static func text(seconds: Int64, milliseconds: Int) -> String? {
        guard fastRange.contains(seconds), (0...999).contains(milliseconds) else { return nil }
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        // Days since 1970 to a civil date (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms").
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        let year = Int(yearOfEra + era * 400) + (month <= 2 ? 1 : 0)

        var bytes = [UInt8](repeating: 0, count: 24)
        func put(_ value: Int, _ width: Int, at offset: Int) {
            var value = value
            for i in stride(from: offset + width - 1, through: offset, by: -1) {
                bytes[i] = UInt8(truncatingIfNeeded: 48 + value % 10)
                value /= 10
            }
        }
        put(year, 4, at: 0)
        bytes[4] = UInt8(ascii: "-")
        put(month, 2, at: 5)
        bytes[7] = UInt8(ascii: "-")
        put(day, 2, at: 8)
        bytes[10] = UInt8(ascii: "T")
        put(secondOfDay / 3_600, 2, at: 11)
        bytes[13] = UInt8(ascii: ":")
        put(secondOfDay / 60 % 60, 2, at: 14)
        bytes[16] = UInt8(ascii: ":")
        put(secondOfDay % 60, 2, at: 17)
        bytes[19] = UInt8(ascii: ".")
        put(milliseconds, 3, at: 20)
        bytes[23] = UInt8(ascii: "Z")
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The instant of `YYYY-MM-DDTHH:MM:SS.mmmZ` (the form ``text(seconds:milliseconds:)``
    /// writes) or `YYYY-MM-DDTHH:MM:SSZ`, in ``fastRange``, as a date; nil for any other text,
    /// which Foundation's parser then reads. A text is taken only if ``text(seconds:milliseconds:)``
    /// writes it back, so the writer's calendar decides what is valid (a 30 February, hour 24 or
    /// second 60 is not written back).
    static func date(parsing text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20 || bytes.count == 24 else { return nil }
        func number(_ offset: Int, _ width: Int) -> Int? {
            var value = 0
            for byte in bytes[offset..<(offset + width)] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
            let minute = number(14, 2), let second = number(17, 2), let milliseconds = bytes.count == 24 ? number(20, 3) : 0
        else { return nil }
        // A civil date to days since 1970 (H. Hinnant, as above, the other way).
        let y = month <= 2 ? year - 1 : year
        let era = y / 400, yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let seconds = Int64(era * 146_097 + dayOfEra - 719_468) * 86_400 + Int64(hour * 3_600 + minute * 60 + second)
        guard let written = self.text(seconds: seconds, milliseconds: milliseconds),
            bytes.count == 24 ? written == text : written.prefix(19) + "Z" == text
        else { return nil }
        // Counted from 2001, as Foundation's parser counts: the same Double to the last bit.
        return Date(timeIntervalSinceReferenceDate: Double(seconds - 978_307_200) + Double(milliseconds) / 1_000)
    }
}
