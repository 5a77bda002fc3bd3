import Foundation
import HandoffCore
import HandoffTestSupport
import Testing

@Suite("Native messaging: the browser extension's framing")
struct NativeMessageFramingTests {
    @Test("a message is a 32-bit little-endian length, then its JSON; read back whole, byte by byte, or several at once")
    func roundTrip() throws {
        let message: JSONValue = .object(["type": .string("page"), "url": .string("https://example.com/ü"), "title": .string("Ex")])
        let frame = NativeMessageFraming.frame(message)
        let length = message.serialized.utf8.count
        #expect(Array(frame.prefix(4)) == [UInt8(length & 0xFF), UInt8(length >> 8 & 0xFF), 0, 0])
        var framing = NativeMessageFraming()
        #expect(try framing.feed(frame) == [message])
        var bytewise = NativeMessageFraming()
        var read: [JSONValue] = []
        for byte in frame + frame { read += try bytewise.feed([byte]) }
        #expect(read == [message, message])
        #expect(!bytewise.hasPartialMessage)
        _ = try bytewise.feed(frame.prefix(6))
        #expect(bytewise.hasPartialMessage)
    }

    @Test("a length over the limit, or a body that is not JSON, is refused with what it is")
    func refused() {
        var framing = NativeMessageFraming()
        #expect(throws: NativeMessageFraming.Invalid.self) { try framing.feed([0xFF, 0xFF, 0xFF, 0x7F]) }
        var other = NativeMessageFraming()
        #expect(throws: NativeMessageFraming.Invalid.self) { try other.feed([3, 0, 0, 0] + Array("{x}".utf8)) }
    }
}

@Suite("BrowserPageTracker: what the browser host offers")
struct BrowserPageTrackerTests {
    typealias Tracker = BrowserPageTracker<ManualClock.Instant>
    let t0 = ManualClock().now

    @Test("the focused tab's web page is offered once; a new page replaces it")
    func pages() {
        var tracker = Tracker()
        let url = URL(string: "https://example.com/a")!
        #expect(tracker.received(.page(url: url.absoluteString, title: "A", incognito: false), now: t0) == .publish(url: url, title: "A"))
        #expect(tracker.received(.page(url: url.absoluteString, title: "A", incognito: false), now: t0) == nil, "the same page: nothing new")
        let b = URL(string: "http://example.com/b")!
        #expect(tracker.received(.page(url: b.absoluteString, title: nil, incognito: false), now: t0) == .publish(url: b, title: nil))
    }

    @Test("a private window's page, or one that is not http(s), is never offered and withdraws what was", arguments: [
        ("https://example.com/secret", true), ("file:///home/me/notes.txt", false), ("chrome://settings", false),
        ("about:blank", false), ("moz-extension://abc/page.html", false), ("https:relative", false),
    ])
    func neverOffered(_ url: String, _ incognito: Bool) {
        var tracker = Tracker()
        #expect(tracker.received(.page(url: url, title: "x", incognito: incognito), now: t0) == nil)
        _ = tracker.received(.page(url: "https://example.com/", title: "x", incognito: false), now: t0)
        #expect(tracker.received(.page(url: url, title: "x", incognito: incognito), now: t0) == .resign)
    }

    @Test("the browser loses the focus: the page stays for the grace, then is withdrawn; focus back offers it again")
    func blur() {
        var tracker = Tracker()
        let url = URL(string: "https://example.com/a")!
        _ = tracker.received(.page(url: url.absoluteString, title: "A", incognito: false), now: t0)
        #expect(tracker.received(.blur, now: t0) == nil)
        #expect(tracker.deadline == t0.advanced(by: Tracker.blurGrace))
        #expect(tracker.tick(now: t0.advanced(by: Tracker.blurGrace - .milliseconds(1))) == nil)
        #expect(tracker.received(.blur, now: t0.advanced(by: .seconds(30))) == nil, "a second blur does not move the deadline")
        #expect(tracker.tick(now: t0.advanced(by: Tracker.blurGrace)) == .resign)
        #expect(tracker.deadline == nil)
        #expect(tracker.received(.focus, now: t0.advanced(by: .seconds(90))) == .publish(url: url, title: "A"))
    }

    @Test("focus back within the grace keeps the offer as it is; the browser quitting withdraws it")
    func focusAndClose() {
        var tracker = Tracker()
        _ = tracker.received(.page(url: "https://example.com/a", title: "A", incognito: false), now: t0)
        _ = tracker.received(.blur, now: t0)
        #expect(tracker.received(.focus, now: t0.advanced(by: .seconds(5))) == nil)
        #expect(tracker.tick(now: t0.advanced(by: .seconds(600))) == nil)
        #expect(tracker.closed() == .resign)
        #expect(tracker.closed() == nil)
    }

    @Test("the extension's JSON messages")
    func messages() throws {
        #expect(Tracker.Message(json: try JSONValue(parsing: #"{"type":"page","url":"https://e.com","title":"E","incognito":true}"#))
            == .page(url: "https://e.com", title: "E", incognito: true))
        #expect(Tracker.Message(json: try JSONValue(parsing: #"{"type":"blur"}"#)) == .blur)
        #expect(Tracker.Message(json: try JSONValue(parsing: #"{"type":"focus"}"#)) == .focus)
        #expect(Tracker.Message(json: try JSONValue(parsing: #"{"type":"page"}"#)) == nil)
        #expect(Tracker.Message(json: try JSONValue(parsing: #"{"type":"other"}"#)) == nil)
    }
}
