import HandoffCore
import HandoffTrust
import Testing

@testable import HandoffAgent

/// A DNS-SD record reported before its address query answered (Avahi under load: the browser's
/// report hold of a second ends without an address) keeps the addresses the peer was reached at.
@Suite("PeerDirectory: a resolve whose address query has not answered")
struct PeerDirectoryUnansweredAddressTests {
    static let device = try! DeviceID(bytes: Array(repeating: 7, count: 32))
    static let record = Sample.txt(agent: "peer7", seq: 1, current: nil)

    @Test("a record without addresses on the same port keeps the known addresses; the address, once answered, replaces them")
    func keepsKnownAddresses() throws {
        var directory = PeerDirectory(ownAgentID: PeerDirectoryTests.ownID)
        // Announced from 198.18.0.7 (pushed over a connection pinned to the device).
        _ = directory.update(name: "h7", hostTarget: "198.18.0.7", addresses: ["198.18.0.7"], port: 41000, txtRecord: Self.record,
                             deviceID: Self.device, via: .address)
        #expect(directory.update(name: "h7", hostTarget: "h7.local.", addresses: [], port: 41000, txtRecord: Self.record,
                                 deviceID: Self.device) == .changed)
        let held = try #require(directory.peer(named: "h7"))
        #expect(held.via == .dnsSD)
        #expect(held.hostTarget == "h7.local.")
        #expect(held.endpoint == PeerEndpoint(addresses: ["198.18.0.7"], orHost: "h7.local.", port: 41000, expectedIdentity: Self.device.bytes))
        _ = directory.update(name: "h7", hostTarget: "h7.local.", addresses: ["198.18.0.17"], port: 41000, txtRecord: Self.record, deviceID: Self.device)
        #expect(directory.peer(named: "h7")?.addresses == ["198.18.0.17"])
    }

    @Test("a first record without addresses is reached at its device's last known hosts, on the port DNS-SD resolved")
    func lastKnownHosts() throws {
        var directory = PeerDirectory(ownAgentID: PeerDirectoryTests.ownID)
        _ = directory.update(name: "h7", hostTarget: "h7.local.", addresses: [], port: 41002, txtRecord: Self.record, deviceID: Self.device,
                             unansweredAddresses: ["198.18.0.7"])
        #expect(directory.peer(named: "h7")?.endpoint
            == PeerEndpoint(addresses: ["198.18.0.7"], orHost: "h7.local.", port: 41002, expectedIdentity: Self.device.bytes))
        _ = directory.update(name: "h7", hostTarget: "h7.local.", addresses: ["198.18.0.70"], port: 41002, txtRecord: Self.record,
                             deviceID: Self.device, unansweredAddresses: ["198.18.0.7"])
        #expect(directory.peer(named: "h7")?.addresses == ["198.18.0.70"], "DNS-SD's address, once answered, wins")
    }

    @Test("on another port, or for another device, a record without addresses is reached by its host name")
    func movesWhenTheEndpointDoes() throws {
        var directory = PeerDirectory(ownAgentID: PeerDirectoryTests.ownID)
        _ = directory.update(name: "h7", hostTarget: "h7.local.", addresses: ["198.18.0.7"], port: 41000, txtRecord: Self.record, deviceID: Self.device)
        _ = directory.update(name: "h7", hostTarget: "h7.local.", addresses: [], port: 41001, txtRecord: Self.record, deviceID: Self.device)
        #expect(directory.peer(named: "h7")?.endpoint == PeerEndpoint(addresses: [], orHost: "h7.local.", port: 41001, expectedIdentity: Self.device.bytes))
        let other = try DeviceID(bytes: Array(repeating: 8, count: 32))
        _ = directory.update(name: "h7", hostTarget: "h7.local.", addresses: ["198.18.0.7"], port: 41001, txtRecord: Self.record, deviceID: Self.device)
        _ = directory.update(name: "h7", hostTarget: "h7.local.", addresses: [], port: 41001, txtRecord: Self.record, deviceID: other)
        #expect(directory.peer(named: "h7")?.addresses == [])
    }
}
