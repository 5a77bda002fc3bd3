import HandoffCore
import HandoffTestSupport
import Testing

@Suite("PeerLiveness: when a paired peer is probed and declared unreachable")
struct PeerLivenessTests {
    typealias Machine = PeerLiveness<String, ManualClock.Instant>
    typealias Action = Machine.Action

    let clock = ManualClock()
    static let timing = Machine.Timing(interval: .seconds(1), timeout: .milliseconds(2500))

    /// Ticks every `tickInterval` for `duration`, collecting the actions.
    func run(_ machine: inout Machine, for duration: Duration) -> [Action] {
        var actions: [Action] = []
        var elapsed = Duration.zero
        while elapsed < duration {
            clock.advance(by: Self.timing.tickInterval)
            elapsed += Self.timing.tickInterval
            actions += machine.tick(now: clock.now)
        }
        return actions
    }

    /// A machine with peer "h1" connected on attempt 1.
    func connected() -> Machine {
        var machine = Machine(timing: Self.timing)
        machine.track("h1", now: clock.now)
        #expect(machine.tick(now: clock.now) == [.connect("h1", attempt: 1)])
        #expect(machine.established("h1", attempt: 1, now: clock.now) == [.reachable("h1")])
        return machine
    }

    @Test("the timing derives the retry and tick intervals")
    func timing() {
        #expect(Self.timing.retryInterval == .milliseconds(500))
        #expect(Self.timing.tickInterval == .milliseconds(50))
    }

    @Test("a tracked peer is connected at once, and reachable before its first probe answers")
    func firstConnect() {
        var machine = Machine(timing: Self.timing)
        machine.track("h1", now: clock.now)
        #expect(machine.status(of: "h1") == .unknown)
        #expect(machine.tick(now: clock.now) == [.connect("h1", attempt: 1)])
        #expect(machine.tick(now: clock.now) == [], "one attempt at a time")
        #expect(machine.established("h1", attempt: 1, now: clock.now) == [.reachable("h1")])
        #expect(machine.status(of: "h1") == .reachable)
        #expect(machine.lastHeard("h1") == clock.now)
    }

    @Test("an answering peer is pinged every interval and stays reachable")
    func pingsEveryInterval() {
        var machine = connected()
        var pings = 0
        for _ in 0..<Int(Duration.seconds(10) / Self.timing.tickInterval) {
            for action in run(&machine, for: Self.timing.tickInterval) {
                guard case .ping("h1", attempt: 1, _) = action else { Issue.record("unexpected \(action)"); continue }
                pings += 1
                machine.heard("h1", attempt: 1, now: clock.now)
            }
        }
        #expect(pings == 10)
        #expect(machine.status(of: "h1") == .reachable)
    }

    @Test("a peer silent for the timeout is unreachable within it, with when it was last heard")
    func silenceMakesUnreachable() {
        var machine = connected()
        let heardAt = clock.now
        var actions: [Action] = []
        var detectedAfter: Duration?
        for step in 1...100 {
            let new = run(&machine, for: Self.timing.tickInterval)
            actions += new
            if new.contains(.unreachable("h1", lastHeard: heardAt)) { detectedAfter = Self.timing.tickInterval * step; break }
        }
        #expect(detectedAfter == .milliseconds(2500))
        #expect(actions.filter { if case .ping = $0 { true } else { false } }.count == 2)
        #expect(actions.contains(.close("h1", attempt: 1)))
        #expect(machine.status(of: "h1") == .unreachable)
    }

    @Test("a closed connection is retried at once; the peer is unreachable when the retry fails too")
    func closedThenRefused() {
        var machine = connected()
        clock.advance(by: .milliseconds(300))
        #expect(machine.lost("h1", attempt: 1, now: clock.now) == [], "one failure is not enough")
        #expect(machine.status(of: "h1") == .reachable)
        #expect(machine.tick(now: clock.now) == [.connect("h1", attempt: 2)])
        let heardAt = clock.now.advanced(by: .milliseconds(-300))
        #expect(machine.lost("h1", attempt: 2, now: clock.now) == [.unreachable("h1", lastHeard: heardAt)])
        #expect(machine.status(of: "h1") == .unreachable)
    }

    @Test("a closed connection whose retry succeeds keeps the peer reachable without a change")
    func closedThenReconnected() {
        var machine = connected()
        #expect(machine.lost("h1", attempt: 1, now: clock.now) == [])
        #expect(machine.tick(now: clock.now) == [.connect("h1", attempt: 2)])
        #expect(machine.established("h1", attempt: 2, now: clock.now) == [])
        #expect(machine.status(of: "h1") == .reachable)
    }

    @Test("while unreachable, an attempt every retry interval; a returning peer is reachable again")
    func retriesWhileUnreachable() {
        var machine = connected()
        _ = machine.lost("h1", attempt: 1, now: clock.now)
        _ = machine.tick(now: clock.now)
        _ = machine.lost("h1", attempt: 2, now: clock.now)
        var attempts: [Int] = []
        for _ in 0..<Int(Duration.seconds(2) / Self.timing.tickInterval) {  // 2 s: each attempt refused at once
            for case .connect("h1", let attempt) in run(&machine, for: Self.timing.tickInterval) {
                attempts.append(attempt)
                _ = machine.lost("h1", attempt: attempt, now: clock.now)
            }
        }
        #expect(attempts == [3, 4, 5, 6])
        #expect(machine.status(of: "h1") == .unreachable)
        let next = run(&machine, for: Self.timing.retryInterval)
        #expect(next == [.connect("h1", attempt: 7)])
        #expect(machine.established("h1", attempt: 7, now: clock.now) == [.reachable("h1")])
    }

    @Test("an attempt that hangs is given up after the timeout and counts as a failure")
    func hangingAttempt() {
        var machine = Machine(timing: Self.timing)
        machine.track("h1", now: clock.now)
        #expect(machine.tick(now: clock.now) == [.connect("h1", attempt: 1)])
        let actions = run(&machine, for: .milliseconds(2600))
        #expect(actions == [.close("h1", attempt: 1), .connect("h1", attempt: 2)], "given up at 2.5 s, retried at the next tick")
        #expect(machine.status(of: "h1") == .unknown, "a new peer gets a second attempt")
        let more = run(&machine, for: .milliseconds(2500))
        #expect(more == [.close("h1", attempt: 2), .unreachable("h1", lastHeard: nil)])
        #expect(machine.established("h1", attempt: 2, now: clock.now) == [.close("h1", attempt: 2)], "a late answer of an abandoned attempt is closed")
    }

    @Test("a fresh resolve probes at once: a ping when connected, an attempt when not")
    func resolveProbesAtOnce() {
        var machine = connected()
        clock.advance(by: .milliseconds(200))
        #expect(machine.resolved("h1", now: clock.now, endpointChanged: false) == [])
        #expect(machine.tick(now: clock.now) == [.ping("h1", attempt: 1, sequence: 1)])
        _ = machine.lost("h1", attempt: 1, now: clock.now)
        _ = machine.tick(now: clock.now)
        _ = machine.lost("h1", attempt: 2, now: clock.now)
        #expect(machine.tick(now: clock.now) == [], "the next attempt waits for the retry interval")
        _ = machine.resolved("h1", now: clock.now, endpointChanged: true)
        #expect(machine.tick(now: clock.now) == [.connect("h1", attempt: 3)])
    }

    @Test("a peer that moved (new address or port) while its connection was still opening gets a new connection")
    func endpointChanged() {
        var machine = Machine(timing: Self.timing)
        machine.track("h1", now: clock.now)
        #expect(machine.tick(now: clock.now) == [.connect("h1", attempt: 1)])
        #expect(machine.resolved("h1", now: clock.now, endpointChanged: true) == [.close("h1", attempt: 1)])
        #expect(machine.tick(now: clock.now) == [.connect("h1", attempt: 2)])
        #expect(machine.lost("h1", attempt: 1, now: clock.now) == [], "the old connection's end is stale")
        #expect(machine.established("h1", attempt: 2, now: clock.now) == [.reachable("h1")])
    }

    @Test("a peer that moved keeps a working connection: pinged at once, and kept when it answers")
    func movedKeepsAWorkingConnection() {
        var machine = connected()
        clock.advance(by: .milliseconds(300))
        #expect(machine.resolved("h1", now: clock.now, endpointChanged: true) == [], "not closed")
        #expect(machine.tick(now: clock.now) == [.ping("h1", attempt: 1, sequence: 1)], "pinged at once")
        clock.advance(by: .milliseconds(10))
        machine.heard("h1", attempt: 1, now: clock.now)
        let later = run(&machine, for: .seconds(2))
        #expect(!later.contains(.close("h1", attempt: 1)), "\(later)")
        #expect(!later.contains { if case .connect = $0 { true } else { false } }, "\(later)")
        #expect(machine.status(of: "h1") == .reachable)
    }

    @Test("a peer that moved and whose connection says nothing within the retry interval: replaced at once, never shown unreachable for it")
    func movedAndSilentIsReplaced() {
        var machine = connected()
        clock.advance(by: .milliseconds(1800))
        machine.heard("h1", attempt: 1, now: clock.now)  // within the timeout; then nothing more
        clock.advance(by: .milliseconds(600))
        _ = machine.tick(now: clock.now)
        #expect(machine.resolved("h1", now: clock.now, endpointChanged: true) == [])
        let actions = run(&machine, for: .milliseconds(600))
        #expect(actions.filter { if case .ping = $0 { false } else { true } } == [.close("h1", attempt: 1), .connect("h1", attempt: 2)],
                "\(actions)")
        #expect(machine.status(of: "h1") == .reachable, "the silence since the move is no failure")
        #expect(machine.established("h1", attempt: 2, now: clock.now) == [])
        #expect(machine.status(of: "h1") == .reachable)
    }

    @Test("a peer that keeps moving (a flapping record) while its connection says nothing: replaced half a second after the first move")
    func flappingMovesDoNotHoldOffTheReplacement() {
        var machine = connected()
        _ = machine.resolved("h1", now: clock.now, endpointChanged: true)
        let first = run(&machine, for: .milliseconds(300))
        #expect(!first.contains(.close("h1", attempt: 1)))
        _ = machine.resolved("h1", now: clock.now, endpointChanged: true)  // moved again, 0.3 s later
        let second = run(&machine, for: .milliseconds(300))
        #expect(second.contains(.close("h1", attempt: 1)), "half a second after the first move, not the last: \(second)")
        #expect(machine.status(of: "h1") == .reachable)
    }

    @Test("a peer that moved and is gone: the replacing attempts fail, and it is unreachable as for any lost connection")
    func movedAndGone() {
        var machine = connected()
        #expect(machine.resolved("h1", now: clock.now, endpointChanged: true) == [])
        var actions = run(&machine, for: .milliseconds(550))
        #expect(actions.contains(.close("h1", attempt: 1)))
        #expect(actions.contains(.connect("h1", attempt: 2)))
        #expect(machine.lost("h1", attempt: 2, now: clock.now) == [], "one more attempt at once")
        actions = run(&machine, for: .milliseconds(100))
        #expect(actions == [.connect("h1", attempt: 3)])
        #expect(machine.lost("h1", attempt: 3, now: clock.now) == [.unreachable("h1", lastHeard: machine.lastHeard("h1"))])
    }

    @Test("events of attempts that are not current change nothing")
    func staleEvents() {
        var machine = connected()
        #expect(machine.lost("h1", attempt: 99, now: clock.now) == [])
        machine.heard("h1", attempt: 99, now: clock.now)
        #expect(machine.lost("h2", attempt: 1, now: clock.now) == [])
        #expect(machine.status(of: "h1") == .reachable)
    }

    @Test("an untracked peer's connection is closed and it is forgotten")
    func untrack() {
        var machine = connected()
        #expect(machine.untrack("h1") == [.close("h1", attempt: 1)])
        #expect(machine.status(of: "h1") == nil)
        #expect(machine.keys.isEmpty)
        #expect(machine.untrack("h1") == [])
    }

    @Test("a peer that answers but refuses the probe (another certificate, unpaired) keeps its status; retried after the retry interval")
    func answeredButRefused() {
        var machine = Machine(timing: Self.timing)
        machine.track("h1", now: clock.now)
        #expect(machine.tick(now: clock.now) == [.connect("h1", attempt: 1)])
        #expect(machine.lost("h1", attempt: 1, now: clock.now, peerAnswered: true) == [])
        #expect(machine.tick(now: clock.now) == [])
        #expect(run(&machine, for: Self.timing.retryInterval) == [.connect("h1", attempt: 2)])
        #expect(machine.lost("h1", attempt: 2, now: clock.now, peerAnswered: true) == [])
        #expect(machine.status(of: "h1") == .unknown)
    }
}
