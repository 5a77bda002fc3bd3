import Foundation
import HandoffCore
import Testing

@Suite("HandoffLink: the lasting link's format, read strictly")
struct HandoffLinkTests {
    static let notes = ActivityType(rawValue: "com.example.notes.edit")!

    @Test("a link round-trips every field, percent-encoded, in a fixed order, with no userInfo")
    func roundTrip() throws {
        let link = try HandoffLink(activityType: Self.notes, persistentIdentifier: "note/7 & more=yes", targetContentIdentifier: "window/2",
                                   webpageURL: URL(string: "https://example.com/notes/7?x=1#top"), title: "Groceries: milk, 2 €")
        #expect(link.text == "x-handoff:continue?v=1&type=com.example.notes.edit&persistentIdentifier=note%2F7%20%26%20more%3Dyes"
            + "&targetContentIdentifier=window%2F2&webpageURL=https%3A%2F%2Fexample.com%2Fnotes%2F7%3Fx%3D1%23top&title=Groceries%3A%20milk%2C%202%20%E2%82%AC")
        #expect(try HandoffLink(parsing: link.text) == link)
        let activity = link.activity
        #expect(activity.userInfo.isEmpty)
        #expect(activity.persistentIdentifier == "note/7 & more=yes")
        #expect(activity.targetContentIdentifier == "window/2")
        #expect(activity.webpageURL?.absoluteString == "https://example.com/notes/7?x=1#top")
        #expect(activity.title == "Groceries: milk, 2 €")
    }

    @Test("made from an activity, a link leaves the userInfo and the team behind")
    func fromActivity() throws {
        let activity = Activity(activityType: Self.notes, title: "T", userInfo: ["secret": .string("s")], persistentIdentifier: "p")
        let link = try HandoffLink(activity)
        #expect(link.text == "x-handoff:continue?v=1&type=com.example.notes.edit&persistentIdentifier=p&title=T")
        #expect(!link.text.contains("secret"))
    }

    @Test("items in any order, the scheme in any case, and raw query characters read as themselves")
    func lenientWhereHarmless() throws {
        let link = try HandoffLink(parsing: "X-Handoff:continue?title=a+b&targetContentIdentifier=w:1&type=com.example.notes.edit&v=1")
        #expect(link.title == "a+b")
        #expect(link.targetContentIdentifier == "w:1")
    }

    @Test("a link that names no content cannot be made")
    func noContent() {
        #expect(throws: HandoffLinkError.self) { try HandoffLink(activityType: Self.notes, title: "only a title") }
        #expect(throws: HandoffLinkError.self) { try HandoffLink(Activity(activityType: Self.notes)) }
    }

    @Test("every malformed link gets an error that says what is wrong",
          arguments: [
              ("https://example.com", "must start with x-handoff:"),
              ("x-handoff:open?v=1&type=a.b&persistentIdentifier=p", "must start with x-handoff:continue?"),
              ("x-handoff:continue?v=1&type=a.b&persistentIdentifier=p q", "never does at byte"),
              ("x-handoff:continue?v=1&type=a.b&persistentIdentifier=p#frag", "never does at byte"),
              ("x-handoff:continue?v=1&type=a.b&persistentIdentifier=é", "never does at byte"),
              ("x-handoff:continue?v=1&type=a.b&persistentIdentifier", "NAME=VALUE"),
              ("x-handoff:continue?v=1&type=a.b&&persistentIdentifier=p", "NAME=VALUE"),
              ("x-handoff:continue?v=1&type=a.b&persistentIdentifier=p&userInfo=x", "unknown item \"userInfo\""),
              ("x-handoff:continue?v=1&type=a.b&persistentIdentifier=p&persistentIdentifier=q", "appears twice"),
              ("x-handoff:continue?v=1&type=a.b&persistentIdentifier=a=b", "unencoded '='"),
              ("x-handoff:continue?v=1&type=a.b&persistentIdentifier=%4", "two hex digits"),
              ("x-handoff:continue?v=1&type=a.b&persistentIdentifier=%zz", "two hex digits"),
              ("x-handoff:continue?v=1&type=a.b&persistentIdentifier=%FF", "not UTF-8"),
              ("x-handoff:continue?v=1&type=a.b&persistentIdentifier=%0A", "control character"),
              ("x-handoff:continue?v=1&type=a.b&persistentIdentifier=", "persistentIdentifier is empty"),
              ("x-handoff:continue?type=a.b&persistentIdentifier=p", "no version"),
              ("x-handoff:continue?v=2&type=a.b&persistentIdentifier=p", "version 2 of the link format"),
              ("x-handoff:continue?v=1&persistentIdentifier=p", "no activity type"),
              ("x-handoff:continue?v=1&type=nodots&persistentIdentifier=p", "type is not valid"),
              ("x-handoff:continue?v=1&type=a.b&webpageURL=file%3A%2F%2F%2Fetc%2Fpasswd", "http or https"),
              ("x-handoff:continue?v=1&type=a.b&webpageURL=javascript%3Aalert(1)", "http or https"),
              ("x-handoff:continue?v=1&type=a.b&title=t", "names no content"),
          ])
    func malformed(text: String, says: String) {
        do {
            _ = try HandoffLink(parsing: text)
            Issue.record("\(text) was accepted")
        } catch {
            #expect(error.description.contains(says), "\(error.description)")
            #expect(error.description.hasPrefix("not a usable handoff link: "))
        }
    }

    @Test("a link or field that is too long is refused")
    func tooLong() throws {
        let long = String(repeating: "a", count: HandoffLink.maximumFieldBytes + 1)
        #expect(throws: HandoffLinkError.self) { try HandoffLink(activityType: Self.notes, persistentIdentifier: long) }
        let huge = "x-handoff:continue?v=1&type=a.b&title=" + String(repeating: "a", count: HandoffLink.maximumLength)
        #expect(throws: HandoffLinkError("it is longer than \(HandoffLink.maximumLength) bytes")) { try HandoffLink(parsing: huge) }
    }

    @Test("whether text is meant as a link")
    func looksLikeLink() {
        #expect(HandoffLink.looksLikeLink("x-handoff:continue?v=1"))
        #expect(HandoffLink.looksLikeLink("X-HANDOFF:anything"))
        #expect(!HandoffLink.looksLikeLink("AAAA1111"))
        #expect(!HandoffLink.looksLikeLink("x-handoffs:continue"))
    }

    @Test("link and continueLink round-trip on the control protocol; missing arguments say what to send")
    func controlRequests() throws {
        for request in [ControlRequest.link(.held("ABCD")), .link(.saved(persistentIdentifier: "p")), .continueLink("x-handoff:continue?v=1")] {
            #expect(try ControlRequest(json: request.json) == request)
        }
        #expect(throws: HandoffError.self) { try ControlRequest(json: .object(["command": .string("link")])) }
        #expect(throws: HandoffError.self) {
            try ControlRequest(json: .object(["command": .string("link"), "id": .string("a"), "persistentIdentifier": .string("p")]))
        }
        #expect(throws: HandoffError.self) { try ControlRequest(json: .object(["command": .string("continueLink")])) }
        let result = LinkResult(try HandoffLink(activityType: Self.notes, persistentIdentifier: "p", title: "T"))
        #expect(LinkResult(json: result.json) == result)
    }
}
