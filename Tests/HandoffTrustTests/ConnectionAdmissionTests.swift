import HandoffCore
import HandoffTestSupport
import Testing

@Suite("Connection admission: limits before authentication")
struct ConnectionAdmissionTests {
    typealias Admission = ConnectionAdmission<ManualClock.Instant>

    @Test("connections are admitted up to the per-address cap")
    func perAddressCap() {
        let clock = ManualClock()
        var admission = Admission()
        for _ in 0..<8 { #expect(admission.admit(address: "10.0.0.1", now: clock.now) == .admit) }
        guard case .refuse(let reason) = admission.admit(address: "10.0.0.1", now: clock.now) else {
            Issue.record("the ninth connection was admitted")
            return
        }
        #expect(reason.contains("already has 8 connections waiting to authenticate"))
        #expect(admission.admit(address: "10.0.0.2", now: clock.now) == .admit)
        #expect(admission.unauthenticatedCount(address: "10.0.0.1") == 8)
        #expect(admission.unauthenticatedCount == 9)
    }

    @Test("authenticating or closing a connection frees its place")
    func freeing() {
        let clock = ManualClock()
        var admission = Admission(limits: .init(maxUnauthenticatedPerAddress: 2))
        #expect(admission.admit(address: "a", now: clock.now) == .admit)
        #expect(admission.admit(address: "a", now: clock.now) == .admit)
        #expect(admission.admit(address: "a", now: clock.now) != .admit)
        admission.authenticated(address: "a")
        #expect(admission.admit(address: "a", now: clock.now) == .admit)
        admission.closed(address: "a", wasAuthenticated: false)
        #expect(admission.admit(address: "a", now: clock.now) == .admit)
        #expect(admission.unauthenticatedCount == 2)
        admission.closed(address: "a", wasAuthenticated: true)
        admission.closed(address: "a", wasAuthenticated: true)  // one too many: ignored
        admission.closed(address: "unknown", wasAuthenticated: false)
        admission.authenticated(address: "unknown")
        #expect(admission.unauthenticatedCount == 2)
    }

    @Test("the global cap counts connections from all addresses")
    func globalCap() {
        let clock = ManualClock()
        var admission = Admission()
        for i in 0..<64 { #expect(admission.admit(address: "10.0.\(i / 8).\(i % 8)", now: clock.now) == .admit) }
        guard case .refuse(let reason) = admission.admit(address: "192.168.1.1", now: clock.now) else {
            Issue.record("the 65th connection was admitted")
            return
        }
        #expect(reason.contains("64 connections are already waiting to authenticate"))
        admission.authenticated(address: "10.0.0.0")
        #expect(admission.admit(address: "192.168.1.1", now: clock.now) == .admit)
    }

    @Test("an address making connections too fast is refused until its bucket refills")
    func rate() {
        let clock = ManualClock()
        var admission = Admission(limits: .init(maxUnauthenticatedPerAddress: 1000, ratePerSecond: 20, burst: 40))
        for _ in 0..<40 {
            #expect(admission.admit(address: "a", now: clock.now) == .admit)
            admission.closed(address: "a", wasAuthenticated: false)
        }
        guard case .refuse(let reason) = admission.admit(address: "a", now: clock.now) else {
            Issue.record("the 41st connection in a burst was admitted")
            return
        }
        #expect(reason.contains("more than 20 times a second"))
        #expect(admission.admit(address: "b", now: clock.now) == .admit)

        clock.advance(by: .milliseconds(40))  // 0.8 tokens: not yet
        #expect(admission.admit(address: "a", now: clock.now) != .admit)
        clock.advance(by: .milliseconds(20))  // 1.2 tokens in all
        #expect(admission.admit(address: "a", now: clock.now) == .admit)
        #expect(admission.admit(address: "a", now: clock.now) != .admit)

        clock.advance(by: .seconds(1))  // 20 more
        var admitted = 0
        for _ in 0..<30 where admission.admit(address: "a", now: clock.now) == .admit { admitted += 1 }
        #expect(admitted == 20)

        clock.advance(by: .seconds(60))  // refills only up to the burst
        admitted = 0
        for _ in 0..<100 where admission.admit(address: "a", now: clock.now) == .admit { admitted += 1 }
        #expect(admitted == 40)
    }

    @Test("the table of addresses stays bounded, keeping addresses with open connections")
    func boundedTable() {
        let clock = ManualClock()
        var admission = Admission(limits: .init(maxTrackedAddresses: 100))
        #expect(admission.admit(address: "keeper", now: clock.now) == .admit)
        for i in 0..<10_000 {
            let address = "10.\(i / 65_536).\(i / 256 % 256).\(i % 256)"
            #expect(admission.admit(address: address, now: clock.now) == .admit)
            admission.closed(address: address, wasAuthenticated: false)
            #expect(admission.trackedAddressCount <= 101)
            if i % 100 == 0 { clock.advance(by: .milliseconds(10)) }
        }
        #expect(admission.unauthenticatedCount(address: "keeper") == 1)
        #expect(admission.unauthenticatedCount == 1)
    }

    @Test("full idle buckets are forgotten first; a flooding address keeps its empty bucket")
    func pruneKeepsDrainedBuckets() {
        let clock = ManualClock()
        var admission = Admission(limits: .init(maxUnauthenticatedPerAddress: 1000, burst: 5, maxTrackedAddresses: 10))
        for _ in 0..<5 {
            _ = admission.admit(address: "flooder", now: clock.now)
            admission.closed(address: "flooder", wasAuthenticated: false)
        }
        #expect(admission.admit(address: "flooder", now: clock.now) != .admit)
        clock.advance(by: .seconds(10))
        for i in 0..<8 {
            _ = admission.admit(address: "idle-\(i)", now: clock.now)
            admission.closed(address: "idle-\(i)", wasAuthenticated: false)
        }
        clock.advance(by: .milliseconds(1))
        // Drain the flooder again, then let 100 new addresses arrive at once.
        for _ in 0..<10 {
            _ = admission.admit(address: "flooder", now: clock.now)
            admission.closed(address: "flooder", wasAuthenticated: false)
        }
        for i in 0..<3 { _ = admission.admit(address: "new-\(i)", now: clock.now) }
        #expect(admission.trackedAddressCount <= 10)
        #expect(admission.admit(address: "flooder", now: clock.now) != .admit)
    }
}
