import HandoffCore
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

@Suite("ContinuationStateMachine: the continuing side, event by event")
struct ContinuationStateMachineTests {
    typealias Action = ContinuationStateMachine.Action

    static let sourceHello = PeerHello(agentID: "source-agent", name: "Desktop")
    static let userInfo: UserInfo = ["noteID": .integer(42), "draft": .string("milk")]

    static var activity: Activity {
        Activity(id: Fixtures.activityID, activityType: Fixtures.notesEdit, title: "Shopping list")
    }

    static func machine() -> ContinuationStateMachine {
        ContinuationStateMachine(request: Fixtures.request, hello: Fixtures.hello(), peerName: "Desktop")
    }

    /// A machine that has connected and sent its hello and fetch.
    static func connectedMachine() -> ContinuationStateMachine {
        var machine = machine()
        _ = machine.start()
        _ = machine.connected()
        return machine
    }

    /// A machine waiting for the userInfo frame.
    static func awaitingUserInfo() -> ContinuationStateMachine {
        var machine = connectedMachine()
        _ = machine.received(PeerMessage.hello(sourceHello).frame)
        _ = machine.received(PeerMessage.activity(activity).frame)
        return machine
    }

    /// The code of a `.fail` action, recording an issue for any other action.
    static func code(_ action: Action, sourceLocation: SourceLocation = #_sourceLocation) -> Int? {
        guard case .fail(let code, _) = action else {
            Issue.record("expected .fail, got \(action)", sourceLocation: sourceLocation)
            return nil
        }
        return code.rawValue
    }

    static func message(_ action: Action) -> String? {
        if case .fail(_, let message) = action { return message }
        return nil
    }

    // MARK: Success

    @Test("success: connect, send hello and fetch, read hello, activity and userInfo, deliver")
    func success() {
        var machine = Self.machine()
        #expect(machine.start() == .connect)
        #expect(machine.connected() == .send([PeerMessage.hello(Fixtures.hello()).frame, PeerMessage.fetch(Fixtures.request).frame]))
        #expect(machine.received(PeerMessage.hello(Self.sourceHello).frame) == .read)
        #expect(machine.received(PeerMessage.activity(Self.activity).frame) == .read)
        #expect(!machine.isFinished)
        var expected = Self.activity
        expected.userInfo = Self.userInfo
        #expect(machine.received(PeerMessage.userInfo(Self.userInfo).frame) == .deliver(expected))
        #expect(machine.isFinished)
    }

    @Test("the delivered userInfo is exactly what the source sent, every type included")
    func deliversEveryType() {
        var machine = Self.awaitingUserInfo()
        guard case .deliver(let delivered) = machine.received(PeerMessage.userInfo(Fixtures.everyTypeUserInfo).frame) else {
            Issue.record("not delivered")
            return
        }
        expectIdentical(delivered.userInfo, Fixtures.everyTypeUserInfo)
        #expect(delivered.id == Fixtures.activityID)
        #expect(delivered.title == "Shopping list")
    }

    @Test("the source's version choice may be any version both speak")
    func negotiatesVersion() {
        var machine = ContinuationStateMachine(request: Fixtures.request, hello: Fixtures.hello([1, 2]), peerName: "Desktop")
        _ = machine.start()
        _ = machine.connected()
        #expect(machine.received(PeerMessage.hello(PeerHello(versions: [2], agentID: "s", name: "Desktop")).frame) == .read)
    }

    // MARK: Failures and their codes

    @Test("a failed connect is 4609 and says why")
    func connectFailed() {
        var machine = Self.machine()
        _ = machine.start()
        let action = machine.connectFailed("connection refused")
        #expect(Self.code(action) == 4609)
        #expect(Self.message(action)?.contains("cannot connect to Desktop: connection refused") == true)
        #expect(machine.isFinished)
    }

    @Test("a connect timeout is 4609 and names the timeout", arguments: [
        (Duration.seconds(2), "2 s"), (.milliseconds(250), "0.25 s"), (.milliseconds(1_500), "1.5 s"),
    ])
    func connectTimedOut(_ timeout: Duration, _ text: String) {
        var machine = Self.machine()
        _ = machine.start()
        let action = machine.connectTimedOut(after: timeout)
        #expect(Self.code(action) == 4609)
        #expect(Self.message(action)?.contains("within \(text) (limits.connectTimeout)") == true)
    }

    @Test("the fetch deadline passing is 4610", arguments: [0, 1, 2])
    func fetchTimedOut(_ framesReceived: Int) {
        var machine = Self.connectedMachine()
        let frames = [PeerMessage.hello(Self.sourceHello).frame, PeerMessage.activity(Self.activity).frame]
        for frame in frames.prefix(framesReceived) { #expect(machine.received(frame) == .read) }
        let action = machine.fetchTimedOut(after: .seconds(5))
        #expect(Self.code(action) == 4610)
        #expect(Self.message(action)?.contains("within 5 s (limits.fetchTimeout)") == true)
    }

    @Test("an oversized userInfo refused by header is 4611 with the sizes")
    func userInfoTooLarge() {
        var machine = Self.awaitingUserInfo()
        let action = machine.receiveFailed(FrameError.userInfoTooLarge(declared: 5_000, limit: 3_072))
        #expect(Self.code(action) == 4611)
        #expect(Self.message(action)?.contains("5000 bytes, over limits.maxUserInfoBytes (3072)") == true)
    }

    @Test("an error frame from the source carries the source's code", arguments: [
        (4608, 4608), (4609, 4609), (4610, 4610), (4611, 4611), (4700, 4700), (4863, 4863),
        (0, 4608), (-1, 4608), (4607, 4608), (4864, 4608), (Int.max, 4608),
    ])
    func sourceError(_ sent: Int, _ reported: Int) {
        var machine = Self.connectedMachine()
        _ = machine.received(PeerMessage.hello(Self.sourceHello).frame)
        let action = machine.received(PeerMessage.error(code: sent, message: "activity was resigned").frame)
        #expect(Self.code(action) == reported)
        #expect(Self.message(action)?.contains("activity was resigned") == true, "the source's explanation reaches the user")
    }

    @Test("an error frame is honoured at any point before delivery", arguments: [0, 1, 2])
    func sourceErrorAtAnyPoint(_ framesBefore: Int) {
        var machine = Self.connectedMachine()
        let frames = [PeerMessage.hello(Self.sourceHello).frame, PeerMessage.activity(Self.activity).frame]
        for frame in frames.prefix(framesBefore) { _ = machine.received(frame) }
        #expect(Self.code(machine.received(PeerMessage.error(code: 4608, message: "gone").frame)) == 4608)
    }

    @Test("the connection closing before the source's hello is 4609: the session was never accepted")
    func closedBeforeHello() {
        var machine = Self.connectedMachine()
        let action = machine.closed()
        #expect(Self.code(action) == 4609)
        #expect(Self.message(action)?.contains("closed the connection without answering") == true)
        var broken = Self.connectedMachine()
        struct Reset: Error {}
        #expect(Self.code(broken.receiveFailed(Reset())) == 4609)
    }

    @Test("the connection closing after the hello, before the userInfo arrived, is 4608", arguments: [1, 2])
    func closedEarly(_ framesReceived: Int) {
        var machine = Self.connectedMachine()
        let frames = [PeerMessage.hello(Self.sourceHello).frame, PeerMessage.activity(Self.activity).frame]
        for frame in frames.prefix(framesReceived) { _ = machine.received(frame) }
        let action = machine.closed()
        #expect(Self.code(action) == 4608)
        #expect(Self.message(action)?.contains("closed the connection before the activity arrived") == true)
    }

    @Test("a broken connection is 4608")
    func brokenConnection() {
        struct Reset: Error {}
        var machine = Self.awaitingUserInfo()
        #expect(Self.code(machine.receiveFailed(Reset())) == 4608)
    }

    @Test("other refused frames are 4608", arguments: [
        FrameError.unknownKind(0x42), .frameTooLarge(kind: .activity, declared: 100_000, limit: 65_536), .malformed(kind: .hello, reason: "x"),
    ])
    func otherFrameErrors(_ error: FrameError) {
        var machine = Self.connectedMachine()
        let action = machine.receiveFailed(error)
        #expect(Self.code(action) == 4608)
        #expect(Self.message(action)?.contains("sent invalid data") == true)
    }

    @Test("malformed frames are 4608", arguments: [
        Frame(kind: .hello, payload: [0xFF]),
        Frame(kind: .hello, payload: PropertyListBinaryCoding.encode(["protocol": .string("http")])),
        Frame(kind: .activity, payload: []),
        Frame(kind: .controlResponse, payload: PropertyListBinaryCoding.encode([:])),
    ])
    func malformedFrames(_ frame: Frame) {
        var machine = Self.connectedMachine()
        #expect(Self.code(machine.received(frame)) == 4608)
    }

    @Test("frames out of order are 4608", arguments: [
        ("activity before hello", [PeerMessage.activity(activity)]),
        ("userInfo before hello", [.userInfo([:])]),
        ("userInfo before activity", [.hello(sourceHello), .userInfo([:])]),
        ("a second hello", [.hello(sourceHello), .hello(sourceHello)]),
        ("a fetch from the source", [.hello(sourceHello), .fetch(Fixtures.request)]),
        ("a second activity", [.hello(sourceHello), .activity(activity), .activity(activity)]),
    ])
    func unexpectedFrames(_ what: String, _ messages: [PeerMessage]) {
        var machine = Self.connectedMachine()
        var last: Action = .none
        for message in messages { last = machine.received(message.frame) }
        #expect(Self.code(last) == 4608, "\(what)")
        #expect(machine.isFinished)
    }

    @Test("an activity other than the one asked for is 4608")
    func wrongActivity() {
        var machine = Self.connectedMachine()
        _ = machine.received(PeerMessage.hello(Self.sourceHello).frame)
        let other = Activity(id: Fixtures.otherID, activityType: Fixtures.notesEdit)
        let action = machine.received(PeerMessage.activity(other).frame)
        #expect(Self.code(action) == 4608)
        #expect(Self.message(action)?.contains("asked for \(Fixtures.activityID)") == true)
    }

    @Test("a source without a common protocol version is 4609")
    func versionMismatch() {
        var machine = Self.connectedMachine()
        let action = machine.received(PeerMessage.hello(PeerHello(versions: [3, 4], agentID: "s", name: "Desktop")).frame)
        #expect(Self.code(action) == 4609)
        #expect(Self.message(action)?.contains("protocol versions [3, 4]") == true)
    }

    @Test("a frame before the connection is up is 4608")
    func frameBeforeConnected() {
        var machine = Self.machine()
        _ = machine.start()
        #expect(Self.code(machine.received(PeerMessage.hello(Self.sourceHello).frame)) == 4608)
    }

    // MARK: At most once

    static func everyEvent(_ machine: inout ContinuationStateMachine) -> [Action] {
        var fullActivity = activity
        fullActivity.userInfo = userInfo
        return [
            machine.start(),
            machine.connected(),
            machine.connectFailed("x"),
            machine.connectTimedOut(after: .seconds(1)),
            machine.fetchTimedOut(after: .seconds(1)),
            machine.received(PeerMessage.hello(sourceHello).frame),
            machine.received(PeerMessage.activity(activity).frame),
            machine.received(PeerMessage.userInfo(userInfo).frame),
            machine.received(PeerMessage.error(code: 4611, message: "x").frame),
            machine.received(Frame(kind: .hello, payload: [0xFF])),
            machine.received(Frame(kind: FrameKind(rawValue: 0x99), payload: [])),
            machine.receiveFailed(FrameError.userInfoTooLarge(declared: 1, limit: 0)),
            machine.closed(),
        ]
    }

    @Test("after delivering, every event is ignored: delivered at most once")
    func nothingAfterDelivery() {
        var machine = Self.awaitingUserInfo()
        guard case .deliver = machine.received(PeerMessage.userInfo(Self.userInfo).frame) else {
            Issue.record("not delivered")
            return
        }
        for action in Self.everyEvent(&machine) { #expect(action == .none) }
        #expect(machine.isFinished)
    }

    @Test("after failing, every event is ignored: no late delivery, no second failure", arguments: [
        "connectFailed", "connectTimedOut", "fetchTimedOut", "closed", "receiveFailed", "error frame",
    ])
    func nothingAfterFailure(_ failure: String) {
        var machine = Self.awaitingUserInfo()
        let action: Action = switch failure {
        case "connectFailed": machine.connectFailed("x")
        case "connectTimedOut": machine.connectTimedOut(after: .seconds(2))
        case "fetchTimedOut": machine.fetchTimedOut(after: .seconds(5))
        case "closed": machine.closed()
        case "receiveFailed": machine.receiveFailed(FrameError.userInfoTooLarge(declared: 9_999, limit: 3_072))
        default: machine.received(PeerMessage.error(code: 4608, message: "gone").frame)
        }
        #expect(Self.code(action) != nil)
        for action in Self.everyEvent(&machine) { #expect(action == .none) }
    }

    @Test("start and connected act only once")
    func startOnce() {
        var machine = Self.machine()
        #expect(machine.connected() == .none, "connected before start is ignored")
        #expect(machine.start() == .connect)
        #expect(machine.start() == .none)
        #expect(machine.connected() != .none)
        #expect(machine.connected() == .none)
    }
}
