import Foundation
import HandoffCore
import HandoffTestSupport
import Testing

/// Issue 21: the pure parts of one connection per pair (docs/PROTOCOL.md, "One connection per
/// pair"): the hello flag, the rule for crossing dials, the machine adopting a peer's connection,
/// and the source session routing the frames that answer this side's own requests.
@Suite("One connection per pair: hello, crossing rule, adoption, routing")
struct SharedConnectionTests {
    typealias Machine = PeerLiveness<String, ManualClock.Instant>
    let clock = ManualClock()
    static let timing = Machine.Timing(interval: .seconds(1), timeout: .milliseconds(2500))
    static let ours = PeerHello(agentID: "a", name: "alpha", multiplexing: true, pushesAdvertisements: true, sharedConnection: true)
    static let theirs = PeerHello(agentID: "b", name: "bravo", multiplexing: true, pushesAdvertisements: true, sharedConnection: true)

    @Test("the hello flag round-trips, and an old hello (no field) reads as not sharing")
    func helloFlag() throws {
        guard case .hello(let read) = try PeerMessage(frame: PeerMessage.hello(Self.theirs).frame) else { Issue.record("not a hello"); return }
        #expect(read.sharedConnection)
        guard case .hello(let old) = try PeerMessage(frame: PeerMessage.hello(PeerHello(agentID: "b", name: "bravo", multiplexing: true)).frame)
        else { Issue.record("not a hello"); return }
        #expect(!old.sharedConnection)
    }

    @Test("sharing needs both hellos to say so, and both to multiplex")
    func agreement() {
        var noShare = Self.theirs
        noShare.sharedConnection = false
        var noMux = Self.theirs
        noMux.multiplexing = false
        #expect(SourceSessionStateMachine.agreeToShare(Self.ours, Self.theirs))
        #expect(!SourceSessionStateMachine.agreeToShare(Self.ours, noShare))
        #expect(!SourceSessionStateMachine.agreeToShare(Self.ours, noMux))
        #expect(!SourceSessionStateMachine.agreeToShare(noShare, Self.theirs))
    }

    @Test("crossing dials: the lower device ID's wins on both sides; with none of its own, or one adopted, a side adopts the peer's")
    func crossingRule() {
        let low: [UInt8] = [0x01, 0xff]
        let high: [UInt8] = [0x02, 0x00]
        #expect(SharedConnectionRule.dialWins(of: low, over: high))
        #expect(!SharedConnectionRule.dialWins(of: high, over: low))
        // The higher side adopts the lower's dial and drops its own; the lower keeps its own.
        #expect(SharedConnectionRule.adoptsAccepted(local: high, peer: low, current: .dialled))
        #expect(!SharedConnectionRule.adoptsAccepted(local: low, peer: high, current: .dialled))
        for current in [SharedConnectionRule.Current.none, .adopted] {
            #expect(SharedConnectionRule.adoptsAccepted(local: low, peer: high, current: current))
            #expect(SharedConnectionRule.adoptsAccepted(local: high, peer: low, current: current))
        }
    }

    @Test("the machine adopts a peer's connection: open and reachable at once, the attempt opening closed, pings on the new one")
    func adoptWhileConnecting() {
        var machine = Machine(timing: Self.timing)
        #expect(machine.adopt("h1", now: clock.now) == nil, "an untracked peer's is not adopted")
        machine.track("h1", now: clock.now)
        #expect(machine.tick(now: clock.now) == [.connect("h1", attempt: 1)])
        let adopted = machine.adopt("h1", now: clock.now)
        #expect(adopted?.attempt == 2)
        #expect(adopted?.actions == [.close("h1", attempt: 1), .reachable("h1")])
        #expect(machine.link(of: "h1") == .open(attempt: 2))
        #expect(machine.established("h1", attempt: 1, now: clock.now) == [.close("h1", attempt: 1)], "the closed attempt's late success is dropped")
        #expect(machine.lost("h1", attempt: 1, now: clock.now) == [], "its failure counts for nothing")
        clock.advance(by: .seconds(1))
        #expect(machine.tick(now: clock.now) == [.ping("h1", attempt: 2, sequence: 1)])
    }

    @Test("adopting over an open connection closes it; the adopted one's loss is a loss as any connection's")
    func adoptOverOpen() {
        var machine = Machine(timing: Self.timing)
        machine.track("h1", now: clock.now)
        _ = machine.tick(now: clock.now)
        #expect(machine.established("h1", attempt: 1, now: clock.now) == [.reachable("h1")])
        let adopted = machine.adopt("h1", now: clock.now)
        #expect(adopted?.actions == [.close("h1", attempt: 1)], "reachable already: nothing to report")
        #expect(machine.lost("h1", attempt: 2, now: clock.now) == [])
        #expect(machine.link(of: "h1") == .idle)
        #expect(machine.tick(now: clock.now) == [.connect("h1", attempt: 3)], "a closed connection is confirmed by one more attempt at once")
    }

    @Test("a peer that said goodbye is unreachable at once, and tried again only after the retry interval")
    func goodbyeIsFinal() {
        var machine = Machine(timing: Self.timing)
        machine.track("h1", now: clock.now)
        _ = machine.tick(now: clock.now)
        _ = machine.established("h1", attempt: 1, now: clock.now)
        #expect(machine.saidGoodbye("h1", attempt: 7, now: clock.now) == [], "another connection's goodbye is not this one's")
        #expect(machine.saidGoodbye("h1", attempt: 1, now: clock.now) == [.unreachable("h1", lastHeard: clock.now)])
        #expect(machine.status(of: "h1") == .unreachable)
        clock.advance(by: .milliseconds(400))
        #expect(machine.tick(now: clock.now) == [], "not at once: it is stopping")
        clock.advance(by: .milliseconds(100))
        #expect(machine.tick(now: clock.now) == [.connect("h1", attempt: 2)])
        #expect(machine.established("h1", attempt: 2, now: clock.now) == [.reachable("h1")], "back after a restart")
    }

    @Test("on a shared connection the accepting session hands pong, reply and advertisement to its watcher, takes keys without answering, and serves the rest")
    func acceptingSessionRoutes() throws {
        var machine = SourceSessionStateMachine(hello: Self.ours)
        guard case .send(let answer) = machine.received(PeerMessage.hello(Self.theirs).frame),
              case .hello(let hello) = try PeerMessage(frame: answer[0]) else { Issue.record("no hello answer"); return }
        #expect(hello.sharedConnection && machine.shared)
        let pong = PeerMessage.pong(sequence: 3).frame
        #expect(machine.received(pong) == .forwardToWatcher(pong))
        let reply = TaggedFrame(id: 9, frame: PeerMessage.error(code: 4608, message: "gone").frame).wrapped(as: .reply)
        #expect(machine.received(reply) == .forwardToWatcher(reply))
        let record = PeerMessage.advertisement(instanceName: "x", txtRecord: [1]).frame
        #expect(machine.received(record) == .forwardToWatcher(record))
        let key = [UInt8](repeating: 7, count: 32)
        #expect(machine.received(PeerMessage.keys(advertisingKey: key).frame) == .takeKeys(key))
        #expect(machine.received(PeerMessage.ping(sequence: 1).frame) == .send([PeerMessage.pong(sequence: 1).frame]))
    }

    @Test("without sharing, the same frames are refused as before, and keys are answered")
    func notSharedAsBefore() {
        var machine = SourceSessionStateMachine(hello: Self.ours)
        _ = machine.received(PeerMessage.hello(PeerHello(agentID: "b", name: "bravo", multiplexing: true)).frame)
        #expect(!machine.shared)
        let key = [UInt8](repeating: 7, count: 32)
        #expect(machine.received(PeerMessage.keys(advertisingKey: key).frame) == .exchangeKeys(key))
        if case .sendAndClose = machine.received(PeerMessage.pong(sequence: 3).frame) {} else { Issue.record("a pong is refused") }
    }

    @Test("the dialling side's source session starts ready, multiplexed and shared")
    func diallerSourceStartsReady() {
        var machine = SourceSessionStateMachine(hello: Self.ours, sharingWith: Self.theirs)
        #expect(machine.peer == Self.theirs && machine.multiplexing && machine.shared)
        let request = FetchRequest(activityID: UUID(), continuationID: UUID())
        let tagged = TaggedFrame(id: 4, frame: PeerMessage.fetch(request).frame).wrapped(as: .request)
        #expect(machine.received(tagged) == .lookUpTagged(id: 4, request))
        #expect(machine.received(PeerMessage.subscribe.frame) == .subscribeAdvertisements)
    }
}
