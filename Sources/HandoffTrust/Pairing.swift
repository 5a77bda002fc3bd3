import Crypto

/// The pairing exchange: commit, then reveal, so that a man in the middle cannot choose the code
/// the two people compare.
///
/// Two devices that have connected (each knowing the other's ``DeviceID`` from the TLS
/// handshake) each pick a 32-byte random nonce, then:
///
/// 1. the initiator I sends the commitment `C = SHA-256("handoff-pair-commit-v1" ‖ idI ‖ idR ‖ nI)`;
/// 2. the responder R replies with its nonce `nR`;
/// 3. I reveals `nI`; R checks it against `C`.
///
/// Both then show the code ``shortAuthenticationString(initiator:responder:initiatorNonce:responderNonce:)``
/// and the people confirm that the two screens show the same six digits. Because each side is
/// bound to its nonce before it sees the other's, someone relaying the connection cannot try
/// nonces until the two codes agree (the weakness of KDE Connect's codes, CVE-2025-32898): the
/// codes of the two legs match only by a one-in-a-million chance.
///
/// ``PairingInitiator`` and ``PairingResponder`` are the two sides, pure state machines without
/// I/O.
public enum Pairing {
    /// The size of a nonce, in bytes.
    public static let nonceByteCount = 32

    static let commitPrefix: [UInt8] = Array("handoff-pair-commit-v1".utf8)
    static let codePrefix: [UInt8] = Array("handoff-pair-sas-v1".utf8)

    /// The six-digit code both people compare, as `"042 917"`: the first 4 bytes of
    /// `SHA-256("handoff-pair-sas-v1" ‖ idI ‖ idR ‖ nI ‖ nR)`, big-endian, modulo 1 000 000.
    public static func shortAuthenticationString(
        initiator: DeviceID,
        responder: DeviceID,
        initiatorNonce: [UInt8],
        responderNonce: [UInt8]
    ) -> String {
        let digest = Array(SHA256.hash(data: codePrefix + initiator.bytes + responder.bytes + initiatorNonce + responderNonce))
        let number = digest.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) } % 1_000_000
        var digits = String(number)
        digits = String(repeating: "0", count: 6 - digits.count) + digits
        return String(digits.prefix(3)) + " " + String(digits.suffix(3))
    }

    /// A new nonce from the system's cryptographically secure random number generator.
    public static func randomNonce() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<nonceByteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// The initiator's commitment to `nonce`.
    static func commitment(initiator: DeviceID, responder: DeviceID, nonce: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: commitPrefix + initiator.bytes + responder.bytes + nonce))
    }

    /// Compares without stopping at the first difference.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}

/// The side that starts pairing: sends ``commitment``, receives the responder's nonce, then
/// reveals its own nonce and shows the code.
public struct PairingInitiator: Sendable {
    /// This device.
    public let local: DeviceID
    /// The device being paired with.
    public let remote: DeviceID
    /// The commitment to send first.
    public let commitment: [UInt8]

    private let nonce: [UInt8]
    private var done = false

    /// Starts pairing `local` (the initiator) with `remote`.
    ///
    /// - Parameter nonce: 32 random bytes; the default is fresh from the system's secure random
    ///   number generator. Give one only in tests.
    /// - Precondition: `nonce` has 32 bytes.
    public init(local: DeviceID, remote: DeviceID, nonce: [UInt8] = Pairing.randomNonce()) {
        precondition(nonce.count == Pairing.nonceByteCount, "a pairing nonce is \(Pairing.nonceByteCount) bytes")
        self.local = local
        self.remote = remote
        self.nonce = nonce
        self.commitment = Pairing.commitment(initiator: local, responder: remote, nonce: nonce)
    }

    /// Takes the responder's nonce; returns the nonce to reveal to it and the code to show.
    ///
    /// - Throws: ``PairingError`` when the nonce is not 32 bytes or a nonce was already received.
    public mutating func receivedResponderNonce(_ responderNonce: [UInt8]) throws(PairingError) -> (reveal: [UInt8], code: String) {
        guard !done else { throw PairingError("the other device sent its nonce twice: pairing stopped; start pairing again") }
        done = true
        guard responderNonce.count == Pairing.nonceByteCount else {
            throw PairingError("the other device's nonce is \(responderNonce.count) bytes, not \(Pairing.nonceByteCount): pairing stopped; start pairing again")
        }
        let code = Pairing.shortAuthenticationString(initiator: local, responder: remote, initiatorNonce: nonce, responderNonce: responderNonce)
        return (nonce, code)
    }
}

/// The side that answers pairing: receives the commitment, sends its nonce, then checks the
/// initiator's reveal against the commitment and shows the code.
public struct PairingResponder: Sendable {
    /// This device.
    public let local: DeviceID
    /// The device pairing with this one (the initiator).
    public let remote: DeviceID

    private enum State: Sendable {
        case awaitingCommitment
        case awaitingReveal(commitment: [UInt8])
        case finished
        case failed
    }

    private let nonce: [UInt8]
    private var state = State.awaitingCommitment

    /// Prepares to answer `remote` (the initiator) on `local`.
    ///
    /// - Parameter nonce: 32 random bytes; the default is fresh from the system's secure random
    ///   number generator. Give one only in tests.
    /// - Precondition: `nonce` has 32 bytes.
    public init(local: DeviceID, remote: DeviceID, nonce: [UInt8] = Pairing.randomNonce()) {
        precondition(nonce.count == Pairing.nonceByteCount, "a pairing nonce is \(Pairing.nonceByteCount) bytes")
        self.local = local
        self.remote = remote
        self.nonce = nonce
    }

    /// Takes the initiator's commitment; returns this side's nonce, to send to it.
    ///
    /// - Throws: ``PairingError`` when the commitment is not 32 bytes or comes out of order.
    public mutating func receivedCommitment(_ commitment: [UInt8]) throws(PairingError) -> [UInt8] {
        guard case .awaitingCommitment = state else {
            state = .failed
            throw PairingError("the other device sent a second commitment: pairing stopped; start pairing again")
        }
        guard commitment.count == 32 else {
            state = .failed
            throw PairingError("the other device's commitment is \(commitment.count) bytes, not 32: pairing stopped; start pairing again")
        }
        state = .awaitingReveal(commitment: commitment)
        return nonce
    }

    /// Takes the initiator's revealed nonce; returns the code to show when it matches the
    /// commitment.
    ///
    /// - Throws: ``PairingError`` when the reveal does not match the commitment (someone may be
    ///   interfering) or comes out of order. After an error the exchange is over.
    public mutating func receivedReveal(_ initiatorNonce: [UInt8]) throws(PairingError) -> String {
        switch state {
        case .awaitingCommitment:
            state = .failed
            throw PairingError("the other device revealed its nonce before committing to it: pairing stopped; start pairing again")
        case .finished, .failed:
            state = .failed
            throw PairingError("the other device sent a reveal after pairing was over: pairing stopped; start pairing again")
        case .awaitingReveal(let commitment):
            let expected = Pairing.commitment(initiator: remote, responder: local, nonce: initiatorNonce)
            guard initiatorNonce.count == Pairing.nonceByteCount, Pairing.constantTimeEqual(expected, commitment) else {
                state = .failed
                throw PairingError("the other device's reveal does not match its commitment: someone may be interfering; pairing stopped")
            }
            state = .finished
            return Pairing.shortAuthenticationString(initiator: remote, responder: local, initiatorNonce: initiatorNonce, responderNonce: nonce)
        }
    }
}

/// Why pairing stopped, with what to do.
public struct PairingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong and what to do about it, for a person.
    public var message: String

    /// Creates an error with a message for a person.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
