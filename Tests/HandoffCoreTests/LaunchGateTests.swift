import HandoffCore
import HandoffTestSupport
import Testing

@Suite("Launch gate: a paired device cannot start apps at will")
struct LaunchGateTests {
    typealias Gate = LaunchGate<ManualClock.Instant>

    @Test("one launch per app at a time: a second request joins it")
    func singleFlight() {
        let clock = ManualClock()
        var gate = Gate()
        #expect(gate.request("com.example.notes", forDevice: "A", now: clock.now) == .launch)
        for _ in 0..<50 { #expect(gate.request("com.example.notes", forDevice: "A", now: clock.now) == .join) }
        #expect(gate.request("com.example.notes", forDevice: nil, now: clock.now) == .join)
        gate.finished("com.example.notes")
        #expect(!gate.isStarting("com.example.notes"))
    }

    @Test("a device gets `burst` launches, then one per `refill`; other devices and this host's user are not held back")
    func ratePerDevice() async {
        let clock = ManualClock()
        var gate = Gate(burst: 3, refill: .seconds(20))
        for index in 0..<3 {
            #expect(gate.request("com.example.app\(index)", forDevice: "A", now: clock.now) == .launch)
            gate.finished("com.example.app\(index)")
        }
        #expect(gate.request("com.example.app9", forDevice: "A", now: clock.now) == .refuse(retryAfter: .seconds(20)))
        #expect(gate.request("com.example.app9", forDevice: "B", now: clock.now) == .launch)
        gate.finished("com.example.app9")
        #expect(gate.request("com.example.app9", forDevice: nil, now: clock.now) == .launch)
        gate.finished("com.example.app9")
        clock.advance(by: .seconds(10))
        #expect(gate.request("com.example.app9", forDevice: "A", now: clock.now) == .refuse(retryAfter: .seconds(10)))
        clock.advance(by: .seconds(10))
        #expect(gate.request("com.example.app9", forDevice: "A", now: clock.now) == .launch)
        gate.finished("com.example.app9")
        // 200 requests in a minute from one device start at most 3 + 3 processes.
        var launches = 0
        for step in 0..<200 {
            if gate.request("com.example.flood\(step)", forDevice: "A", now: clock.now) == .launch { launches += 1 }
            gate.finished("com.example.flood\(step)")
            clock.advance(by: .milliseconds(300))
        }
        #expect(launches <= 4, "\(launches) launches")
    }
}
