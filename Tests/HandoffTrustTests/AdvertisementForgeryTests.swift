import Foundation
import HandoffTrust
import Testing

/// Review findings 10 and 11: a paired device holds every other paired device's advertising key
/// (A gives the same key to all its peers), so the key alone cannot say who wrote a record.
@Suite("Advertisements: a paired device cannot forge another's, nor move one to another instance")
struct AdvertisementForgeryTests {
    typealias Sender = SealedAdvertisement.Sender

    /// A (the sender) and B (a paired device gone bad, which holds A's advertising key).
    static let a = SealedAdvertisementTests.identity
    static let b = SealedAdvertisementTests.otherIdentity
    static let aKey = AdvertisingKey.random()
    static let bKey = AdvertisingKey.random()
    static let instance = "handoff-aaaaaaaaaaaa"
    static let plaintext = Array("v=2 id=A seq=9 type=com.example.bank.pay title=Pay now".utf8)

    /// A receiver C paired with A and B, knowing both keys of each.
    static let receiver: [Sender] = [
        Sender(deviceID: b.deviceID, advertisingKey: bKey, publicKey: b.publicKey),
        Sender(deviceID: a.deviceID, advertisingKey: aKey, publicKey: a.publicKey),
    ]

    static func record(key: AdvertisingKey = aKey, signer: DeviceIdentity = a, instanceName: String = instance,
                       timestamp: UInt64 = 1_746_100_800_000) -> SealedAdvertisement.Public {
        try! SealedAdvertisement.parse(txtRecord: SealedAdvertisement.txtRecord(
            sealing: plaintext, timestamp: timestamp, instanceName: instanceName, key: key, identity: signer))
    }

    @Test("A's own record opens, attributed to A")
    func genuine() {
        guard case .opened(let opened) = SealedAdvertisement.open(Self.record(), instanceName: Self.instance, senders: Self.receiver) else {
            Issue.record("A's record did not open")
            return
        }
        #expect(opened.deviceID == Self.a.deviceID)
        #expect(opened.plaintext == Self.plaintext)
    }

    @Test("B seals with A's key and signs with its own: refused as forged, not attributed to anyone",
          arguments: [UInt64(1_746_100_800_001), UInt64.max, 0])
    func forgedByAnotherPairedDevice(_ timestamp: UInt64) {
        let forged = Self.record(signer: Self.b, timestamp: timestamp)
        #expect(SealedAdvertisement.open(forged, instanceName: Self.instance, senders: Self.receiver) == .forged(Self.a.deviceID))
        // Also for a receiver that knows only A.
        #expect(SealedAdvertisement.open(forged, instanceName: Self.instance, senders: [Self.receiver[1]]) == .forged(Self.a.deviceID))
    }

    @Test("a stranger's signature over A's key is refused as well")
    func forgedByStranger() {
        let stranger = SealedAdvertisementTests.makeIdentity("stranger")
        let forged = Self.record(signer: stranger)
        #expect(SealedAdvertisement.open(forged, instanceName: Self.instance, senders: Self.receiver) == .forged(Self.a.deviceID))
    }

    @Test("A's genuine record under another instance name is refused (a replay moved elsewhere)",
          arguments: ["handoff-000000000000", "HANDOFF-AAAAAAAAAAAA", "handoff-aaaaaaaaaaaa #2", "", "handoff-aaaaaaaaaaa"])
    func movedToAnotherInstance(_ other: String) {
        #expect(SealedAdvertisement.open(Self.record(), instanceName: other, senders: Self.receiver) == .forged(Self.a.deviceID))
    }

    @Test("B claims A's advertising key as its own: A's records still go to A, B's forgeries to no one")
    func sameKeyClaimedByTwoDevices() {
        // C wrongly holds A's key for B too, B listed first (the review's variant of finding 10).
        let confused = [
            Sender(deviceID: Self.b.deviceID, advertisingKey: Self.aKey, publicKey: Self.b.publicKey),
            Sender(deviceID: Self.a.deviceID, advertisingKey: Self.aKey, publicKey: Self.a.publicKey),
        ]
        guard case .opened(let opened) = SealedAdvertisement.open(Self.record(), instanceName: Self.instance, senders: confused) else {
            Issue.record("A's record did not open")
            return
        }
        #expect(opened.deviceID == Self.a.deviceID)
        // What B signs with A's key is B's own record then; it is never A's.
        if case .opened(let other) = SealedAdvertisement.open(Self.record(signer: Self.b), instanceName: Self.instance, senders: confused) {
            #expect(other.deviceID == Self.b.deviceID)
        }
    }

    @Test("a record of a device whose public key is not known yet is unverified, never opened")
    func unknownPublicKey() {
        let unknown = [Sender(deviceID: Self.a.deviceID, advertisingKey: Self.aKey, publicKey: nil)]
        #expect(SealedAdvertisement.open(Self.record(), instanceName: Self.instance, senders: unknown) == .unverified(Self.a.deviceID))
        #expect(SealedAdvertisement.open(Self.record(signer: Self.b), instanceName: Self.instance, senders: unknown) == .unverified(Self.a.deviceID))
    }

    @Test("a public key is taken only from the certificate of the device it is for")
    func publicKeyFromCertificate() throws {
        let key = try DevicePublicKey(certificateDER: Self.a.certificateDER, of: Self.a.deviceID)
        #expect(key == Self.a.publicKey)
        #expect(throws: TrustStoreError.self) { try DevicePublicKey(certificateDER: Self.b.certificateDER, of: Self.a.deviceID) }
        #expect(throws: TrustStoreError.self) { try DevicePublicKey(certificateDER: Array("not a certificate".utf8), of: DeviceID(certificateDER: Array("not a certificate".utf8))) }
        #expect(throws: TrustStoreError.self) { try DevicePublicKey(x963: Array(repeating: 4, count: 65)) }
        #expect(try DevicePublicKey(base64: key.base64) == key)
    }

    @Test("a signature checks only the bytes it was made for")
    func signatures() {
        let message = Array("message".utf8)
        let signature = Self.a.sign(message)
        #expect(signature.count == 64)
        #expect(Self.a.publicKey.isValidSignature(signature, for: message))
        #expect(!Self.b.publicKey.isValidSignature(signature, for: message))
        #expect(!Self.a.publicKey.isValidSignature(signature, for: message + [0]))
        #expect(!Self.a.publicKey.isValidSignature(Array(signature.dropLast()), for: message))
    }

    @Test("a record proven to come from A (pushed over a connection pinned to A) opens without its signature checked, but only with A's key")
    func provenByItsSender() {
        // A record A's own agent would never send: its signature is B's. Over a connection pinned
        // to A only A can have sent it, so it is A's word, as a record A signed would be.
        let forged = Self.record(signer: Self.b)
        guard case .opened(let opened) = SealedAdvertisement.open(forged, instanceName: Self.instance, senders: Self.receiver, provenBy: Self.a.deviceID)
        else {
            Issue.record("A's pushed record did not open")
            return
        }
        #expect(opened.deviceID == Self.a.deviceID)
        #expect(opened.plaintext == Self.plaintext)
        // B, proven to be B, still cannot be attributed a record sealed with A's key: A's signature is checked.
        #expect(SealedAdvertisement.open(forged, instanceName: Self.instance, senders: Self.receiver, provenBy: Self.b.deviceID) == .forged(Self.a.deviceID))
        // A key that does not open the record opens nothing, proven or not.
        #expect(SealedAdvertisement.open(forged, instanceName: Self.instance, senders: [Self.receiver[0]], provenBy: Self.a.deviceID) == .unreadable)
        // A's public key not learnt yet: nothing is believed, as without proof.
        let unknown = [Sender(deviceID: Self.a.deviceID, advertisingKey: Self.aKey, publicKey: nil)]
        #expect(SealedAdvertisement.open(Self.record(), instanceName: Self.instance, senders: unknown, provenBy: Self.a.deviceID) == .unverified(Self.a.deviceID))
    }
}
