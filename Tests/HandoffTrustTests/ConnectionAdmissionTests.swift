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
        for _ in 0..<8 { #expect(admission.admit(address: "10.0.0.1", now: clock.now).isAdmitted) }
        guard case .refuse(let reason) = admission.admit(address: "10.0.0.1", now: clock.now) else {
            Issue.record("the ninth connection was admitted")
            return
        }
        #expect(reason.contains("already has 8 connections waiting to authenticate"))
        #expect(admission.admit(address: "10.0.0.2", now: clock.now).isAdmitted)
        #expect(admission.unauthenticatedCount(address: "10.0.0.1") == 8)
        #expect(admission.unauthenticatedCount == 9)
    }

    @Test("authenticating or closing a connection frees its place")
    func freeing() throws {
        let clock = ManualClock()
        var admission = Admission(limits: .init(maxUnauthenticatedPerAddress: 2))
        let first = try #require(admission.admit(address: "a", now: clock.now).admitted)
        let second = try #require(admission.admit(address: "a", now: clock.now).admitted)
        #expect(!admission.admit(address: "a", now: clock.now).isAdmitted)
        admission.authenticated(first)
        let third = try #require(admission.admit(address: "a", now: clock.now).admitted)
        admission.closed(second)
        #expect(admission.admit(address: "a", now: clock.now).isAdmitted)
        #expect(admission.unauthenticatedCount == 2)
        admission.closed(first)
        admission.closed(first)  // one too many: ignored
        admission.authenticated(first)  // closed: ignored
        #expect(admission.unauthenticatedCount == 2)
        admission.authenticated(third)
        admission.authenticated(third)  // twice: ignored
        #expect(admission.unauthenticatedCount == 1)
        #expect(admission.unauthenticatedCount(address: "a") == 1)
    }

    @Test("the global cap counts connections from all addresses; at the cap, a newcomer takes the place of the greediest address's oldest")
    func globalCap() throws {
        let clock = ManualClock()
        var admission = Admission()
        var ids: [Admission.ConnectionID] = []
        for i in 0..<64 {
            ids.append(try #require(admission.admit(address: "10.0.\(i / 8).\(i % 8)", now: clock.now).admitted))
            clock.advance(by: .milliseconds(1))
        }
        // 64 addresses holding one each: the newcomer (holding none) evicts the oldest of all.
        let decision = admission.admit(address: "192.168.1.1", now: clock.now)
        #expect(decision.isAdmitted && decision.evicted == ids[0])
        #expect(!admission.isOpen(ids[0]) && admission.unauthenticatedCount == 64)
        // An address that already holds as many as every other one cannot evict.
        guard case .refuse(let reason) = admission.admit(address: "10.0.0.1", now: clock.now) else {
            Issue.record("an address evicted another holding no more than itself")
            return
        }
        #expect(reason.contains("64 connections are already waiting to authenticate"))
        admission.authenticated(ids[1])
        let after = admission.admit(address: "10.0.0.1", now: clock.now)
        #expect(after.isAdmitted && after.evicted == nil)
    }

    @Test("a flood from 16 addresses holding 8 each never keeps a paired device out, nor evicts its connection")
    func floodFromManyAddresses() throws {
        let clock = ManualClock()
        var admission = Admission()
        let attackers = (0..<16).map { "192.168.1.\(10 + $0)" }
        var open: [(id: Admission.ConnectionID, at: ManualClock.Instant)] = []
        // Each attacker address holds up to 8 connections and reopens each at 8/s for 10 s.
        var pairedGotIn = 0
        for tick in 0..<80 {
            for attacker in attackers {
                for _ in 0..<8 {
                    if let id = admission.admit(address: attacker, now: clock.now).admitted { open.append((id, clock.now)) }
                }
            }
            #expect(admission.unauthenticatedCount <= 64)
            // The paired device connects now and then; its TLS handshake takes a few ms.
            if tick % 4 == 0 {
                let decision = admission.admit(address: "192.168.1.2", now: clock.now)
                let id = try #require(decision.admitted, "the paired device was refused: \(decision)")
                clock.advance(by: .milliseconds(5))
                for attacker in attackers { _ = admission.admit(address: attacker, now: clock.now) }
                #expect(admission.isOpen(id), "the paired device's connection was evicted during its handshake")
                admission.authenticated(id)
                pairedGotIn += 1
            }
            clock.advance(by: .milliseconds(125))
            // The handshake deadline closes the attackers' connections after 1 s.
            for connection in open where connection.at.duration(to: clock.now) >= .seconds(1) { admission.closed(connection.id) }
            open.removeAll { $0.at.duration(to: clock.now) >= .seconds(1) }
        }
        #expect(pairedGotIn == 20)
        #expect(admission.unauthenticatedCount(address: "192.168.1.2") == 0)
    }

    @Test("an address making connections too fast is refused until its bucket refills")
    func rate() {
        let clock = ManualClock()
        var admission = Admission(limits: .init(maxUnauthenticatedPerAddress: 1000, ratePerSecond: 20, burst: 40))
        for _ in 0..<40 {
            let id = admission.admit(address: "a", now: clock.now).admitted
            #expect(id != nil)
            if let id { admission.closed(id) }
        }
        guard case .refuse(let reason) = admission.admit(address: "a", now: clock.now) else {
            Issue.record("the 41st connection in a burst was admitted")
            return
        }
        #expect(reason.contains("more than 20 times a second"))
        #expect(admission.admit(address: "b", now: clock.now).isAdmitted)

        clock.advance(by: .milliseconds(40))  // 0.8 tokens: not yet
        #expect(!admission.admit(address: "a", now: clock.now).isAdmitted)
        clock.advance(by: .milliseconds(20))  // 1.2 tokens in all
        #expect(admission.admit(address: "a", now: clock.now).isAdmitted)
        #expect(!admission.admit(address: "a", now: clock.now).isAdmitted)

        clock.advance(by: .seconds(1))  // 20 more
        var admitted = 0
        for _ in 0..<30 where admission.admit(address: "a", now: clock.now).isAdmitted { admitted += 1 }
        #expect(admitted == 20)

        clock.advance(by: .seconds(60))  // refills only up to the burst
        admitted = 0
        for _ in 0..<100 where admission.admit(address: "a", now: clock.now).isAdmitted { admitted += 1 }
        #expect(admitted == 40)
    }

    @Test("the table of addresses stays bounded, keeping addresses with open connections")
    func boundedTable() {
        let clock = ManualClock()
        var admission = Admission(limits: .init(maxTrackedAddresses: 100))
        #expect(admission.admit(address: "keeper", now: clock.now).isAdmitted)
        for i in 0..<10_000 {
            let address = "10.\(i / 65_536).\(i / 256 % 256).\(i % 256)"
            let id = admission.admit(address: address, now: clock.now).admitted
            #expect(id != nil)
            if let id { admission.closed(id) }
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
            if let id = admission.admit(address: "flooder", now: clock.now).admitted { admission.closed(id) }
        }
        #expect(!admission.admit(address: "flooder", now: clock.now).isAdmitted)
        clock.advance(by: .seconds(10))
        for i in 0..<8 {
            if let id = admission.admit(address: "idle-\(i)", now: clock.now).admitted { admission.closed(id) }
        }
        clock.advance(by: .milliseconds(1))
        // Drain the flooder again, then let 100 new addresses arrive at once.
        for _ in 0..<10 {
            if let id = admission.admit(address: "flooder", now: clock.now).admitted { admission.closed(id) }
        }
        for i in 0..<3 { _ = admission.admit(address: "new-\(i)", now: clock.now) }
        #expect(admission.trackedAddressCount <= 10)
        #expect(!admission.admit(address: "flooder", now: clock.now).isAdmitted)
    }
}
