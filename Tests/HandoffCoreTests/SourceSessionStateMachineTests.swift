import HandoffCore
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

@Suite("SourceSessionStateMachine: the source side of a connection")
struct SourceSessionStateMachineTests {
    typealias Action = SourceSessionStateMachine.Action

    static let sourceHello = PeerHello(agentID: "source-agent", name: "Desktop")

    static func ready() -> SourceSessionStateMachine {
        var machine = SourceSessionStateMachine(hello: sourceHello)
        _ = machine.received(PeerMessage.hello(Fixtures.hello()).frame)
        return machine
    }

    /// Decodes the frames of a `.send` action.
    static func sent(_ action: Action, sourceLocation: SourceLocation = #_sourceLocation) throws -> [PeerMessage] {
        guard case .send(let frames) = action else {
            Issue.record("expected .send, got \(action)", sourceLocation: sourceLocation)
            return []
        }
        return try frames.map { try PeerMessage(frame: $0) }
    }

    static func isSendAndClose(_ action: Action) -> Bool {
        if case .sendAndClose = action { return true }
        return false
    }

    // MARK: Hello

    @Test("a hello is answered with the source's hello naming the chosen version")
    func helloAnswered() throws {
        var machine = SourceSessionStateMachine(hello: Self.sourceHello)
        #expect(machine.peer == nil)
        let answer = try Self.sent(machine.received(PeerMessage.hello(Fixtures.hello()).frame))
        #expect(answer == [.hello(PeerHello(versions: [2], agentID: "source-agent", name: "Desktop"))])
        #expect(machine.peer == Fixtures.hello())
    }

    @Test("the answer picks the highest version both speak")
    func negotiatesHighest() throws {
        var machine = SourceSessionStateMachine(hello: PeerHello(versions: [1, 2, 3], agentID: "s", name: "Desktop"))
        let answer = try Self.sent(machine.received(PeerMessage.hello(Fixtures.hello([2, 3, 4])).frame))
        #expect(answer == [.hello(PeerHello(versions: [3], agentID: "s", name: "Desktop"))])
    }

    @Test("no common version: an error frame 4609, then close")
    func versionMismatch() throws {
        var machine = SourceSessionStateMachine(hello: Self.sourceHello)
        let action = machine.received(PeerMessage.hello(Fixtures.hello([7])).frame)
        guard case .sendAndClose(let frames, let reason) = action else {
            Issue.record("expected sendAndClose, got \(action)")
            return
        }
        #expect(reason.contains("no common protocol version"))
        let messages = try frames.map { try PeerMessage(frame: $0) }
        guard case .error(let code, let message)? = messages.first, messages.count == 1 else {
            Issue.record("expected one error frame, got \(messages)")
            return
        }
        #expect(code == 4609)
        #expect(message.contains("Desktop speaks protocol versions [2]"))
        #expect(machine.peer == nil)
    }

    // MARK: Fetch

    @Test("a subscribe after hello asks for the advertisement to be pushed; a second one on the connection closes it")
    func subscribeOnce() {
        var machine = Self.ready()
        #expect(machine.received(PeerMessage.subscribe.frame) == .subscribeAdvertisements)
        #expect(machine.received(PeerMessage.ping(sequence: 1).frame) == .send([PeerMessage.pong(sequence: 1).frame]), "pings go on")
        guard case .sendAndClose = machine.received(PeerMessage.subscribe.frame) else {
            Issue.record("a second subscribe was not refused")
            return
        }
    }

    @Test("an announce after hello hands the peer's port and record to the agent once; a second one closes the connection")
    func announceOnce() {
        var machine = Self.ready()
        let announce = PeerMessage.announce(port: 7000, instanceName: "handoff-1", txtRecord: [1, 0x61])
        #expect(machine.received(announce.frame) == .announced(port: 7000, instanceName: "handoff-1", txtRecord: [1, 0x61]))
        #expect(machine.received(PeerMessage.ping(sequence: 1).frame) == .send([PeerMessage.pong(sequence: 1).frame]), "pings go on")
        guard case .sendAndClose = machine.received(announce.frame) else {
            Issue.record("a second announce was not refused")
            return
        }
    }

    @Test("a goodbye after hello tells the agent the peer stops, and nothing more is read")
    func goodbyeCloses() {
        var machine = Self.ready()
        #expect(machine.received(PeerMessage.goodbye.frame) == .saidGoodbye)
        guard case .sendAndClose = machine.received(PeerMessage.ping(sequence: 1).frame) else {
            Issue.record("a frame after goodbye was read")
            return
        }
    }

    @Test("a fetch after hello asks for a lookup of that activity")
    func fetchAsksForLookup() {
        var machine = Self.ready()
        #expect(machine.received(PeerMessage.fetch(Fixtures.request).frame) == .lookUp(Fixtures.request))
    }

    @Test("a held activity is sent as an activity frame without userInfo, then a userInfo frame with requiredUserInfoKeys applied")
    func sendsActivityAndUserInfo() throws {
        var machine = Self.ready()
        _ = machine.received(PeerMessage.fetch(Fixtures.request).frame)
        let activity = Fixtures.fullActivity()  // requiredUserInfoKeys: noteID, cursor
        let messages = try Self.sent(machine.lookedUp(activity, request: Fixtures.request, now: Fixtures.now))
        var fields = activity
        fields.userInfo = [:]
        #expect(messages == [.activity(fields), .userInfo(["noteID": .integer(42), "cursor": activity.userInfo["cursor"]!])])
    }

    @Test("all of userInfo is sent when requiredUserInfoKeys is nil, exactly")
    func sendsWholeUserInfo() throws {
        var machine = Self.ready()
        _ = machine.received(PeerMessage.fetch(Fixtures.request).frame)
        let activity = Activity(id: Fixtures.activityID, activityType: Fixtures.notesEdit, userInfo: Fixtures.everyTypeUserInfo)
        let messages = try Self.sent(machine.lookedUp(activity, request: Fixtures.request, now: Fixtures.now))
        guard messages.count == 2, case .userInfo(let userInfo) = messages[1] else {
            Issue.record("unexpected messages \(messages)")
            return
        }
        expectIdentical(userInfo, Fixtures.everyTypeUserInfo)
    }

    static func errorCodeAndMessage(_ action: Action) throws -> (Int, String)? {
        guard case .send(let frames) = action, frames.count == 1, case .error(let code, let message) = try PeerMessage(frame: frames[0]) else {
            return nil
        }
        return (code, message)
    }

    @Test("an unknown activity is answered with error 4608, and the connection stays open")
    func unknownActivity() throws {
        var machine = Self.ready()
        _ = machine.received(PeerMessage.fetch(Fixtures.request).frame)
        let answer = try #require(try Self.errorCodeAndMessage(machine.lookedUp(nil, request: Fixtures.request, now: Fixtures.now)))
        #expect(answer.0 == 4608)
        #expect(answer.1.contains("is no longer offered by Desktop: it was resigned"))
        // Ready for another fetch on the same connection.
        #expect(machine.received(PeerMessage.fetch(Fixtures.request).frame) == .lookUp(Fixtures.request))
    }

    @Test("an expired activity is answered with error 4608 (at the expiration instant too)", arguments: [0.0, 60.0])
    func expiredActivity(_ secondsAfterExpiry: Double) throws {
        var machine = Self.ready()
        _ = machine.received(PeerMessage.fetch(Fixtures.request).frame)
        var activity = Fixtures.fullActivity()
        activity.expirationDate = Fixtures.now
        let answer = try #require(try Self.errorCodeAndMessage(
            machine.lookedUp(activity, request: Fixtures.request, now: Fixtures.now.addingTimeInterval(secondsAfterExpiry))))
        #expect(answer.0 == 4608)
        #expect(answer.1.hasSuffix("no longer offered: it expired"))
    }

    @Test("an activity just before it expires is still sent")
    func notYetExpired() throws {
        var machine = Self.ready()
        _ = machine.received(PeerMessage.fetch(Fixtures.request).frame)
        var activity = Fixtures.fullActivity()
        activity.expirationDate = Fixtures.now
        let messages = try Self.sent(machine.lookedUp(activity, request: Fixtures.request, now: Fixtures.now.addingTimeInterval(-0.001)))
        #expect(messages.count == 2)
    }

    @Test("an activity not eligible for handoff is answered with error 4608")
    func ineligibleActivity() throws {
        var machine = Self.ready()
        _ = machine.received(PeerMessage.fetch(Fixtures.request).frame)
        var activity = Fixtures.fullActivity()
        activity.isEligibleForHandoff = false
        let answer = try #require(try Self.errorCodeAndMessage(machine.lookedUp(activity, request: Fixtures.request, now: Fixtures.now)))
        #expect(answer.0 == 4608)
        #expect(answer.1.hasSuffix("no longer offered: it is not eligible for handoff"))
    }

    @Test("several fetches may follow one hello")
    func severalFetches() throws {
        var machine = Self.ready()
        for _ in 0..<3 {
            #expect(machine.received(PeerMessage.fetch(Fixtures.request).frame) == .lookUp(Fixtures.request))
            #expect(try Self.sent(machine.lookedUp(Fixtures.fullActivity(), request: Fixtures.request, now: Fixtures.now)).count == 2)
        }
    }

    // MARK: Liveness

    @Test("a ping after hello is answered with a pong of the same sequence, and the connection stays open")
    func pingAnswered() throws {
        var machine = Self.ready()
        #expect(try Self.sent(machine.received(PeerMessage.ping(sequence: 3).frame)) == [.pong(sequence: 3)])
        #expect(try Self.sent(machine.received(PeerMessage.ping(sequence: 4).frame)) == [.pong(sequence: 4)])
        #expect(machine.received(PeerMessage.fetch(Fixtures.request).frame) == .lookUp(Fixtures.request))
    }

    @Test("a ping before hello, or a pong, closes the connection")
    func pingBeforeHello() {
        var fresh = SourceSessionStateMachine(hello: Self.sourceHello)
        #expect(fresh.received(PeerMessage.ping(sequence: 1).frame) == .sendAndClose([], reason: "unexpected ping frame"))
        var ready = Self.ready()
        #expect(ready.received(PeerMessage.pong(sequence: 1).frame) == .sendAndClose([], reason: "unexpected pong frame"))
    }

    // MARK: Refusals

    @Test("a fetch before hello closes the connection without an answer")
    func fetchBeforeHello() {
        var machine = SourceSessionStateMachine(hello: Self.sourceHello)
        let action = machine.received(PeerMessage.fetch(Fixtures.request).frame)
        #expect(action == .sendAndClose([], reason: "unexpected fetch frame"))
    }

    @Test("junk closes the connection", arguments: [
        Frame(kind: .hello, payload: [0xFF, 0x00]),
        Frame(kind: .fetch, payload: []),
        Frame(kind: .controlRequest, payload: PropertyListBinaryCoding.encode([:])),
        Frame(kind: FrameKind(rawValue: 0x77), payload: [1, 2, 3]),
        PeerMessage.hello(PeerHello(agentID: "x", name: "y")).frame.with(payload: PropertyListBinaryCoding.encode(["protocol": .string("ssh")])),
    ])
    func junk(_ frame: Frame) {
        var fresh = SourceSessionStateMachine(hello: Self.sourceHello)
        #expect(Self.isSendAndClose(fresh.received(frame)))
        var ready = Self.ready()
        #expect(Self.isSendAndClose(ready.received(frame)))
    }

    @Test("frames only the source sends close the connection", arguments: [
        PeerMessage.activity(Activity(id: Fixtures.activityID, activityType: Fixtures.notesEdit)), .userInfo([:]), .error(code: 4608, message: "x"),
    ])
    func sourceOnlyFrames(_ message: PeerMessage) {
        var machine = Self.ready()
        #expect(Self.isSendAndClose(machine.received(message.frame)))
    }

    @Test("a second hello closes the connection")
    func secondHello() {
        var machine = Self.ready()
        #expect(machine.received(PeerMessage.hello(Fixtures.hello()).frame) == .sendAndClose([], reason: "unexpected hello frame"))
    }

    @Test("a fetch while a lookup is pending closes the connection")
    func fetchDuringLookup() {
        var machine = Self.ready()
        _ = machine.received(PeerMessage.fetch(Fixtures.request).frame)
        #expect(Self.isSendAndClose(machine.received(PeerMessage.fetch(Fixtures.request).frame)))
    }

    @Test("a lookup result nobody asked for closes the connection")
    func unaskedLookup() {
        var machine = Self.ready()
        #expect(machine.lookedUp(Fixtures.fullActivity(), request: Fixtures.request, now: Fixtures.now)
            == .sendAndClose([], reason: "lookup finished in the wrong state"))
    }

    @Test("a refused frame or broken connection closes the connection")
    func receiveFailed() {
        var machine = Self.ready()
        #expect(Self.isSendAndClose(machine.receiveFailed(FrameError.unknownKind(9))))
    }

    @Test("once closed, everything closes again")
    func closedStaysClosed() {
        var machine = SourceSessionStateMachine(hello: Self.sourceHello)
        _ = machine.received(PeerMessage.fetch(Fixtures.request).frame)
        #expect(Self.isSendAndClose(machine.received(PeerMessage.hello(Fixtures.hello()).frame)))
        #expect(machine.peer == nil)
    }
}

extension Frame {
    func with(payload: [UInt8]) -> Frame { Frame(kind: kind, payload: payload) }
}
