import HandoffCore
import HandoffTrust
import Testing

@testable import HandoffAgent

@Suite("Rejoining: reaching paired devices at their last known addresses after a start")
struct RejoiningTests {
    static func id(_ byte: UInt8) -> DeviceID { try! DeviceID(bytes: Array(repeating: byte, count: 32)) }
    static let start = AgentInstant(sinceStart: .zero)
    static let afterWindow = start.advanced(by: Rejoining.window)

    @Test("at start, only devices with last known addresses are reached there; DNS-SD or a failure ends it; an announce starts it")
    func pending() {
        let known = PairedDevice(deviceID: Self.id(1), name: "laptop", lastKnownAddresses: [PeerAddress(host: "10.0.0.1", port: 7000)])
        let never = PairedDevice(deviceID: Self.id(2), name: "phone")
        var rejoining = Rejoining(devices: [known, never], now: Self.start)
        #expect(rejoining.reachesAtLastKnownAddresses(Self.id(1)))
        #expect(!rejoining.reachesAtLastKnownAddresses(Self.id(2)))
        rejoining.shownByDNSSD(Self.id(1))
        #expect(!rejoining.reachesAtLastKnownAddresses(Self.id(1)), "DNS-SD is the way from now on")
        rejoining.announced(by: Self.id(2))
        #expect(rejoining.reachesAtLastKnownAddresses(Self.id(2)))
        rejoining.unreachable(Self.id(2))
        #expect(!rejoining.reachesAtLastKnownAddresses(Self.id(2)), "one failure, not a probe for ever")
    }

    @Test("a device not listed that liveness finds unreachable (a stale last known address) is not shown unreachable, and not tried there again once the rejoin window has passed")
    func unreachableBeforeListed() {
        let known = PairedDevice(deviceID: Self.id(1), name: "laptop", lastKnownAddresses: [PeerAddress(host: "10.0.0.1", port: 7000)])
        var rejoining = Rejoining(devices: [known], now: Self.start)
        let shownBeforeListed = rejoining.foundUnreachable(Self.id(1), listed: false, now: Self.afterWindow)
        #expect(!shownBeforeListed)
        #expect(!rejoining.reachesAtLastKnownAddresses(Self.id(1)), "not a probe for ever")
        rejoining.announced(by: Self.id(1))
        let shownListed = rejoining.foundUnreachable(Self.id(1), listed: true, now: Self.afterWindow)
        #expect(shownListed, "a listed device that stops answering is shown unreachable")
        #expect(rejoining.reachesAtLastKnownAddresses(Self.id(1)), "a listed device is still reached where it announced from")
    }

    @Test("within the rejoin window a device not heard from yet is still tried at its last known addresses (it may be starting too); when the window passes, only those heard from stay")
    func rejoinWindow() {
        let laptop = PairedDevice(deviceID: Self.id(1), name: "laptop", lastKnownAddresses: [PeerAddress(host: "10.0.0.1", port: 7000)])
        let phone = PairedDevice(deviceID: Self.id(2), name: "phone", lastKnownAddresses: [PeerAddress(host: "10.0.0.2", port: 7000)])
        var rejoining = Rejoining(devices: [laptop, phone], now: Self.start)
        let inWindow = Self.start.advanced(by: .seconds(3))
        let laptopShown = rejoining.foundUnreachable(Self.id(1), listed: false, now: inWindow)
        let phoneShown = rejoining.foundUnreachable(Self.id(2), listed: false, now: inWindow)
        #expect(!laptopShown && !phoneShown, "not shown unreachable")
        #expect(rejoining.reachesAtLastKnownAddresses(Self.id(1)) && rejoining.reachesAtLastKnownAddresses(Self.id(2)), "tried again there")
        rejoining.windowPassed(now: inWindow) { _ in false }
        #expect(rejoining.reachesAtLastKnownAddresses(Self.id(1)), "the window has not passed")
        // The phone answered meanwhile (listed); the laptop never did.
        rejoining.windowPassed(now: Self.afterWindow) { $0 == Self.id(2) }
        #expect(!rejoining.reachesAtLastKnownAddresses(Self.id(1)), "never heard from: dropped")
        #expect(rejoining.reachesAtLastKnownAddresses(Self.id(2)), "heard from: still reached there until DNS-SD shows it")
    }

    @Test("the first connection to each device after start announces; later ones only when they subscribe")
    func announces() {
        var rejoining = Rejoining(devices: [], now: Self.start)
        let answers = [(1, false), (1, false), (1, true), (2, false)].map { rejoining.shouldAnnounce(to: Self.id($0.0), subscribing: $0.1) }
        #expect(answers == [true, false, true, true])
    }
}
