import Foundation
import HandoffCore
import HandoffDiscovery
import HandoffTrust
import Testing

@testable import HandoffAgent

@Suite("PairingTarget")
struct PairingTargetTests {
    static func accepting(_ name: String?, address: String, instance: String) -> UnreadableService {
        let txt = SealedAdvertisement.txtRecord(sealing: Sample.txt(agent: instance, seq: 0, current: nil), timestamp: 1, instanceName: instance,
                                                key: AdvertisingKey.random(), identity: TestPeer.peerIdentity, pairingName: name)
        return UnreadableService(service: AdvertisementTrustTests.service(instance, txt, address: address))
    }

    @Test("a name one device shows in its pairing window is that device; a name two claim is refused; HOST:PORT is taken as given")
    func endpoints() throws {
        let desk = Self.accepting("Desk", address: "10.0.0.2", instance: "a")
        #expect(try PairingTarget.endpoint("desk", unreadable: [desk]).get() == PeerEndpoint(host: "10.0.0.2", port: 7200))
        let impostor = Self.accepting("desk", address: "10.0.0.9", instance: "b")
        let refused = PairingTarget.endpoint("Desk", unreadable: [desk, impostor])
        #expect(throws: HandoffError.self) { try refused.get() }
        #expect(try PairingTarget.endpoint("[fe80::1]:7300", unreadable: [desk]).get() == PeerEndpoint(host: "fe80::1", port: 7300))
        guard case .failure(let error) = PairingTarget.endpoint("kitchen", unreadable: [desk, Self.accepting(nil, address: "10.0.0.3", instance: "c")]) else {
            Issue.record("expected an error")
            return
        }
        #expect(error.message.contains("devices accepting pairing now: Desk"))
    }
}
