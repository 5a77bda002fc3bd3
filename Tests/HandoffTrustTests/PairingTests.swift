import HandoffTrust
import Testing

@Suite("Pairing: commit, then reveal, then compare six digits")
struct PairingTests {
    static func randomID() -> DeviceID { try! DeviceID(bytes: Pairing.randomNonce()) }

    /// Runs the whole exchange; returns the code each side shows.
    static func pair(_ initiator: inout PairingInitiator, _ responder: inout PairingResponder) throws -> (String, String) {
        let responderNonce = try responder.receivedCommitment(initiator.commitment)
        let (reveal, initiatorCode) = try initiator.receivedResponderNonce(responderNonce)
        let responderCode = try responder.receivedReveal(reveal)
        return (initiatorCode, responderCode)
    }

    @Test("both sides show the same code, formatted as two groups of three digits")
    func sameCode() throws {
        for _ in 0..<50 {
            let a = Self.randomID(), b = Self.randomID()
            var initiator = PairingInitiator(local: a, remote: b)
            var responder = PairingResponder(local: b, remote: a)
            let (codeA, codeB) = try Self.pair(&initiator, &responder)
            #expect(codeA == codeB)
            #expect(codeA.count == 7)
            #expect(codeA.split(separator: " ").map(\.count) == [3, 3])
            #expect(codeA.allSatisfy { $0 == " " || $0.isASCII && $0.isNumber })
        }
    }

    @Test("the code is the first 4 bytes of the SHA-256 transcript, modulo a million, zero-padded")
    func codeDerivation() throws {
        let a = try DeviceID(bytes: Array(repeating: 0xAA, count: 32))
        let b = try DeviceID(bytes: Array(repeating: 0xBB, count: 32))
        let code = Pairing.shortAuthenticationString(initiator: a, responder: b, initiatorNonce: Array(repeating: 1, count: 32), responderNonce: Array(repeating: 2, count: 32))
        // Fixed inputs give a fixed code; swapping the roles or the nonces changes it.
        #expect(code == Pairing.shortAuthenticationString(initiator: a, responder: b, initiatorNonce: Array(repeating: 1, count: 32), responderNonce: Array(repeating: 2, count: 32)))
        #expect(code != Pairing.shortAuthenticationString(initiator: b, responder: a, initiatorNonce: Array(repeating: 1, count: 32), responderNonce: Array(repeating: 2, count: 32)))
        #expect(code != Pairing.shortAuthenticationString(initiator: a, responder: b, initiatorNonce: Array(repeating: 2, count: 32), responderNonce: Array(repeating: 1, count: 32)))
        // Leading zeros are kept: over many codes some start with 0.
        let codes = (0..<2000).map { _ in
            Pairing.shortAuthenticationString(initiator: a, responder: b, initiatorNonce: Pairing.randomNonce(), responderNonce: Pairing.randomNonce())
        }
        #expect(codes.allSatisfy { $0.count == 7 })
        #expect(codes.contains { $0.hasPrefix("0") })
    }

    @Test("a reveal that does not match the commitment is refused")
    func wrongReveal() throws {
        let a = Self.randomID(), b = Self.randomID()
        var initiator = PairingInitiator(local: a, remote: b)
        var responder = PairingResponder(local: b, remote: a)
        _ = try responder.receivedCommitment(initiator.commitment)
        let error = #expect(throws: PairingError.self) { try responder.receivedReveal(Pairing.randomNonce()) }
        #expect(error?.message == "the other device's reveal does not match its commitment: someone may be interfering; pairing stopped")
        // After a failure, the genuine reveal is refused too.
        let (reveal, _) = try initiator.receivedResponderNonce(Pairing.randomNonce())
        #expect(throws: PairingError.self) { try responder.receivedReveal(reveal) }
    }

    @Test("a commitment made for other device IDs is refused")
    func commitmentBoundToIDs() throws {
        let a = Self.randomID(), b = Self.randomID(), m = Self.randomID()
        // The initiator committed to pairing with m, but the responder is b.
        var initiator = PairingInitiator(local: a, remote: m)
        var responder = PairingResponder(local: b, remote: a)
        let nonce = try responder.receivedCommitment(initiator.commitment)
        let (reveal, _) = try initiator.receivedResponderNonce(nonce)
        #expect(throws: PairingError.self) { try responder.receivedReveal(reveal) }
    }

    @Test("a man in the middle who picks its nonces after seeing a commitment cannot make the codes agree")
    func manInTheMiddle() throws {
        var equal = 0
        for _ in 0..<200 {
            let alice = Self.randomID(), bob = Self.randomID()
            // The attacker presents its own certificates: to Alice as "bob" (m1), to Bob as "alice" (m2).
            let m1 = Self.randomID(), m2 = Self.randomID()

            // Leg 2 first, so the attacker knows Bob's nonce before answering Alice.
            var attackerInitiator = PairingInitiator(local: m2, remote: bob)
            var bobResponder = PairingResponder(local: bob, remote: m2)
            let (bobCodeFromAttacker, bobCode) = try Self.pair(&attackerInitiator, &bobResponder)
            #expect(bobCodeFromAttacker == bobCode)

            // Leg 1: Alice commits; the attacker chooses its nonce knowing the commitment and
            // Bob's code, but not Alice's nonce.
            var aliceInitiator = PairingInitiator(local: alice, remote: m1)
            var attackerResponder = PairingResponder(local: m1, remote: alice, nonce: Self.chosenNonce(commitment: aliceInitiator.commitment, target: bobCode))
            let nonce = try attackerResponder.receivedCommitment(aliceInitiator.commitment)
            let (reveal, aliceCode) = try aliceInitiator.receivedResponderNonce(nonce)
            _ = try attackerResponder.receivedReveal(reveal)

            if aliceCode == bobCode { equal += 1 }
        }
        // Each trial matches with probability one in a million.
        #expect(equal <= 2)
    }

    /// The best an attacker can do without the initiator's nonce: derive its nonce from what it has.
    static func chosenNonce(commitment: [UInt8], target: String) -> [UInt8] {
        Array((commitment + Array(target.utf8) + Array(repeating: 0, count: 32)).prefix(32))
    }

    @Test("out-of-order and repeated messages are refused")
    func outOfOrder() throws {
        let a = Self.randomID(), b = Self.randomID()

        var responder = PairingResponder(local: b, remote: a)
        let early = #expect(throws: PairingError.self) { try responder.receivedReveal(Pairing.randomNonce()) }
        #expect(early?.message.contains("before committing") == true)
        #expect(throws: PairingError.self) { try responder.receivedCommitment(Pairing.randomNonce()) }

        var initiator = PairingInitiator(local: a, remote: b)
        var responder2 = PairingResponder(local: b, remote: a)
        _ = try responder2.receivedCommitment(initiator.commitment)
        #expect(throws: PairingError.self) { try responder2.receivedCommitment(initiator.commitment) }

        var responder3 = PairingResponder(local: b, remote: a)
        let nonce = try responder3.receivedCommitment(initiator.commitment)
        let (reveal, _) = try initiator.receivedResponderNonce(nonce)
        #expect(throws: PairingError.self) { try initiator.receivedResponderNonce(nonce) }
        _ = try responder3.receivedReveal(reveal)
        #expect(throws: PairingError.self) { try responder3.receivedReveal(reveal) }
    }

    @Test("nonces and commitments of the wrong size are refused")
    func sizes() throws {
        let a = Self.randomID(), b = Self.randomID()
        var initiator = PairingInitiator(local: a, remote: b)
        #expect(throws: PairingError.self) { try initiator.receivedResponderNonce([1, 2, 3]) }
        var responder = PairingResponder(local: b, remote: a)
        #expect(throws: PairingError.self) { try responder.receivedCommitment([]) }
        #expect(initiator.commitment.count == 32)
        #expect(Pairing.randomNonce() != Pairing.randomNonce())
    }
}
