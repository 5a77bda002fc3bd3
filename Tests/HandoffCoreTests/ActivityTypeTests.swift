import HandoffCore
import HandoffTestSupport
import Testing

@Suite("Activity type validation")
struct ActivityTypeTests {
    @Test("reverse-DNS types are accepted", arguments: [
        "com.example.notes.edit", "a-b.c_d", "com.x", "org.example.App2.view-item", "A.b", "io.github.user_name.x1",
        String(repeating: "a", count: 98) + "." + String(repeating: "b", count: 101),  // exactly 200 bytes
    ])
    func valid(_ text: String) throws {
        let type = try ActivityType(validating: text)
        #expect(type.rawValue == text)
        #expect(type.description == text)
        #expect(ActivityType(rawValue: text) == type)
    }

    @Test("Apple's NSUserActivityTypeBrowsingWeb is accepted though it is not reverse-DNS")
    func browsingWeb() throws {
        #expect(try ActivityType(validating: "NSUserActivityTypeBrowsingWeb") == .browsingWeb)
        #expect(ActivityType.browsingWeb.rawValue == "NSUserActivityTypeBrowsingWeb")
        #expect(ActivityType(rawValue: "NSUserActivityTypeBrowsingWeb") == .browsingWeb)
    }

    @Test("invalid types are refused with the reason", arguments: [
        ("", "it is empty"),
        ("notes", "it needs at least two dot-separated parts, like com.example.view"),
        ("com..x", "it has an empty part (two dots in a row, or a dot at an end)"),
        (".com.x", "it has an empty part (two dots in a row, or a dot at an end)"),
        ("com.x.", "it has an empty part (two dots in a row, or a dot at an end)"),
        (".", "it has an empty part (two dots in a row, or a dot at an end)"),
        ("1com.x", "it must start with a letter"),
        ("_com.x", "it must start with a letter"),
        ("-com.x", "it must start with a letter"),
        ("com.example.my notes", #"part "my notes" may hold only ASCII letters, digits, '-' and '_'"#),
        (" com.x", #"part " com" may hold only ASCII letters, digits, '-' and '_'"#),
        ("com.exämple.x", #"part "exämple" may hold only ASCII letters, digits, '-' and '_'"#),
        ("com.例子.x", #"part "例子" may hold only ASCII letters, digits, '-' and '_'"#),
        ("com.x😀", #"part "x😀" may hold only ASCII letters, digits, '-' and '_'"#),
        ("com/example.x", #"part "com/example" may hold only ASCII letters, digits, '-' and '_'"#),
        ("com.x\n", "part \"x\n\" may hold only ASCII letters, digits, '-' and '_'"),
        (String(repeating: "a", count: 99) + "." + String(repeating: "b", count: 101), "it is longer than 200 bytes"),
        ("nsuseractivitytypebrowsingweb", "it needs at least two dot-separated parts, like com.example.view"),
    ])
    func invalid(_ text: String, _ reason: String) {
        let error = #expect(throws: ActivityTypeError.self) { try ActivityType(validating: text) }
        #expect(error?.text == text)
        #expect(error?.reason == reason)
        #expect(error?.description == "activity type \"\(text)\" is not valid reverse-DNS: \(reason)")
        #expect(ActivityType(rawValue: text) == nil)
    }

    @Test("the length limit counts UTF-8 bytes, not characters")
    func lengthInBytes() {
        // 150 characters but 300 bytes: refused for length before the character check.
        let text = "com." + String(repeating: "é", count: 148)
        let error = #expect(throws: ActivityTypeError.self) { try ActivityType(validating: text) }
        #expect(error?.reason == "it is longer than 200 bytes")
    }

    @Test("types order by their raw value")
    func ordering() throws {
        let a = try ActivityType(validating: "com.a.x")
        let b = try ActivityType(validating: "com.b.x")
        #expect(a < b)
        #expect([b, a].sorted() == [a, b])
    }

    @Test("random texts are accepted exactly when the rules say so")
    func randomTextsFollowTheRules() {
        let pool: [Character] = ["a", "Z", "q", "0", "9", "-", "_", ".", "é", " ", "/", "ß", "\u{0}", "Ａ"]
        var generator = SplitMix64(seed: 7)
        for _ in 0..<5000 {
            let text = String((0..<Int(generator.next() % 12)).map { _ in pool[Int(generator.next() % UInt64(pool.count))] })
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
            let expected = text == "NSUserActivityTypeBrowsingWeb" || (parts.count >= 2 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(allowed.contains) }
                && text.first!.isASCII && text.first!.isLetter)
            #expect((ActivityType(rawValue: text) != nil) == expected, "\(text.unicodeScalars.map { $0.value })")
        }
    }
}
