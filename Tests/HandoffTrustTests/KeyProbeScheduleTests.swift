import HandoffTestSupport
import HandoffTrust
import Testing

@Suite("Key probes: connecting to unreadable advertisements is bounded and backed off")
struct KeyProbeScheduleTests {
    typealias Schedule = KeyProbeSchedule<ManualClock.Instant>
    typealias Endpoint = Schedule.Endpoint

    let paired = DeviceID(certificateDER: [1])
    let stranger = DeviceID(certificateDER: [2])

    func junk(_ count: Int, host: String = "198.18.0.3") -> [Endpoint] {
        (0..<count).map { Endpoint(host: host, port: 40000 + $0) }
    }

    @Test("64 junk advertisements get 8 probes at once, then one a second, never a second one within the backoff")
    func budget() {
        let clock = ManualClock()
        var schedule = Schedule()
        let endpoints = junk(64)
        var asked = schedule.due(endpoints, now: clock.now)
        #expect(asked.ask.count == 8)
        #expect(asked.nextCheck != nil && asked.nextCheck! <= .seconds(1))
        var total = asked.ask.count
        for endpoint in asked.ask { schedule.finished(endpoint, answeredBy: stranger, isPaired: false, now: clock.now) }
        for _ in 0..<120 {
            clock.advance(by: .milliseconds(500))
            asked = schedule.due(endpoints, now: clock.now)
            total += asked.ask.count
            for endpoint in asked.ask { schedule.finished(endpoint, answeredBy: stranger, isPaired: false, now: clock.now) }
        }
        // 60 s: 8 at once and 60 more tokens, but only 64 endpoints, each asked once (an unpaired
        // device answered: not again for 30 minutes).
        #expect(total == 64)
        clock.advance(by: .seconds(28 * 60))
        #expect(schedule.due(endpoints, now: clock.now).ask.isEmpty)
        clock.advance(by: .seconds(61))
        #expect(schedule.due(endpoints, now: clock.now).ask.count == 8)
    }

    @Test("ports below 1024 are never asked")
    func privilegedPorts() {
        var schedule = Schedule()
        let result = schedule.due([Endpoint(host: "198.18.0.3", port: 9), Endpoint(host: "198.18.0.3", port: 443)], now: ManualClock().now)
        #expect(result.ask.isEmpty && result.nextCheck == nil)
    }

    @Test("an endpoint where nothing answers backs off exponentially up to 30 minutes")
    func backoff() {
        let clock = ManualClock()
        var schedule = Schedule()
        let dead = Endpoint(host: "10.9.9.9", port: 50000)
        var times: [Duration] = []
        let start = clock.now
        for _ in 0..<200 {
            if schedule.due([dead], now: clock.now).ask == [dead] {
                times.append(start.duration(to: clock.now))
                schedule.finished(dead, answeredBy: nil, isPaired: false, now: clock.now)
            }
            clock.advance(by: .seconds(30))
        }
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect(Array(gaps.prefix(7)) == [.seconds(30), .seconds(60), .seconds(120), .seconds(240), .seconds(480), .seconds(960), .seconds(1800)])
        #expect(gaps.allSatisfy { $0 <= .seconds(1800) })
    }

    @Test("a paired device whose key rotated is asked within 30 s + 1 s per earlier junk advertisement, however much junk")
    func recoveryBound() {
        let clock = ManualClock()
        var schedule = Schedule()
        let peer = Endpoint(host: "198.18.0.2", port: 41000)
        // The peer was asked and exchanged keys; then 63 junk advertisements appear, then the
        // peer's key rotates (its advertisement becomes unreadable again).
        #expect(schedule.due([peer], now: clock.now).ask == [peer])
        schedule.finished(peer, answeredBy: paired, isPaired: true, now: clock.now)
        var endpoints = junk(63)
        _ = schedule.due(endpoints, now: clock.now)
        endpoints.append(peer)
        var waited: Duration = .zero
        while true {
            let asked = schedule.due(endpoints, now: clock.now)
            for endpoint in asked.ask where endpoint != peer { schedule.finished(endpoint, answeredBy: stranger, isPaired: false, now: clock.now) }
            if asked.ask.contains(peer) { break }
            // New junk keeps arriving: one more fresh endpoint every second.
            endpoints.insert(Endpoint(host: "198.18.0.3", port: 50000 + Int(waited.components.seconds)), at: 0)
            clock.advance(by: .seconds(1))
            waited += .seconds(1)
            #expect(waited < .seconds(200))
        }
        #expect(waited <= .seconds(30 + 63), "waited \(waited)")
    }

    @Test("after the paired devices change, a sender that answered as the newly paired device is asked at once, first")
    func trustChange() {
        let clock = ManualClock()
        var schedule = Schedule()
        let newlyPaired = Endpoint(host: "198.18.0.4", port: 42000)
        var endpoints = junk(20)
        endpoints.append(newlyPaired)
        var pairedNow = false
        for _ in 0..<60 {
            for endpoint in schedule.due(endpoints, now: clock.now).ask {
                schedule.finished(endpoint, answeredBy: endpoint == newlyPaired ? paired : stranger, isPaired: false, now: clock.now)
            }
            clock.advance(by: .seconds(1))
        }
        #expect(schedule.due(endpoints, now: clock.now).ask.isEmpty)
        pairedNow = true
        schedule.trustChanged { $0 == paired && pairedNow }
        #expect(schedule.due(endpoints, now: clock.now).ask == [newlyPaired])
    }
}
