import HandoffCore
import HandoffTransport
import HandoffTrust
import NIOCore
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The pairing exchange over a TLS connection (docs/SECURITY.md): the initiator commits to a
/// nonce, the responder sends its nonce, the initiator reveals; both show the same six-digit code,
/// derived from both certificates and both nonces, and each user confirms. Neither side can choose
/// the code, so a man in the middle matches it with probability 10⁻⁶ per attempt, and each
/// attempt takes a person: there is nothing to brute-force.
enum PairingSession {
    /// `handoff pair`: this agent initiates.
    static func initiate(to endpoint: PeerEndpoint, target: String, link: ControlLink, agent: Agent) async -> Result<JSONValue, HandoffError> {
        let connection: any UnpinnedFrameConnection
        do { connection = try await agent.transport.connectUnpinned(to: endpoint, limits: Agent.pairingLimits) } catch {
            return .failure(.connectionUnavailable("cannot connect to \(target) at \(endpoint) to pair: \(error)"))
        }
        let timeout = agent.configuration.security.pairingTimeout
        // At the deadline the connection closes, which ends the exchange wherever it waits.
        let (result, expired) = await Deadline.watch(timeout, on: agent.clock, onExpiry: { await connection.close() }) {
            await initiate(connection, target: target, link: link, agent: agent)
        }
        await connection.close()
        if expired, case .failure = result {
            return .failure(.remoteTimedOut("pairing with \(target) did not finish within \(timeout); nothing was stored"))
        }
        return result
    }

    private static func initiate(_ connection: any UnpinnedFrameConnection, target: String, link: ControlLink, agent: Agent) async -> Result<JSONValue, HandoffError> {
        guard let remote = connection.provenIdentity?.device else { return .failure(.handoffFailed("\(target) presented no certificate")) }
        guard remote != agent.deviceID else { return .failure(.handoffFailed("\(target) is this device; pair with another one")) }
        let channel = Channel(send: { try await connection.send($0) }, receive: { try await receive(connection, target) },
                              certificateDER: connection.provenIdentity?.certificateDER)
        var initiator = PairingInitiator(local: agent.deviceID, remote: remote)
        return await run(target: target) {
            try await channel.send([
                PeerMessage.hello(agent.hello).frame,
                PeerMessage.pairing(.request(name: agent.configuration.name, commitment: initiator.commitment)).frame,
            ])
            guard case .hello = try await channel.receive() else { return .failure(.handoffFailed("\(target) did not answer the handshake")) }
            guard case .pairing(.nonce(let name, let nonce)) = try await channel.receive() else {
                return .failure(.handoffFailed("\(target) broke off pairing"))
            }
            let (reveal, code) = try initiator.receivedResponderNonce(nonce)
            try await channel.send([PeerMessage.pairing(.reveal(nonce: reveal)).frame])
            return try await confirmAndExchangeKeys(code: code, name: name, remote: remote, channel: channel, link: link, agent: agent)
        }
    }

    /// How a pairing exchange talks to the other device: the initiator's client connection or
    /// the responder's server session, behind the same two calls.
    struct Channel {
        var send: ([Frame]) async throws -> Void
        /// The next message; an error frame is thrown as a ``HandoffError``.
        var receive: () async throws -> PeerMessage
        /// The certificate the other device presented in TLS (its SHA-256 is its device ID): the
        /// pairing stores its public key, so the device's signed advertisements are believed at
        /// once, without a key exchange first.
        var certificateDER: [UInt8]?
    }

    /// Runs one side's exchange, turning what it throws into the error the user sees.
    private static func run(target: String, _ body: () async throws -> Result<JSONValue, HandoffError>) async -> Result<JSONValue, HandoffError> {
        do { return try await body() } catch let error as HandoffError {
            return .failure(error)
        } catch let error as PairingError {
            return .failure(.handoffFailed("pairing with \(target) stopped: \(error.message); nothing was stored"))
        } catch {
            return .failure(.handoffFailed("pairing with \(target) failed: \(error); nothing was stored"))
        }
    }

    /// The end both sides share: the local user confirms the code, each side learns the other's
    /// answer, and only when both said yes are the advertising keys exchanged. A pairing that
    /// fails once this side's key was sent rotates the key, so a device that was never stored
    /// cannot read this one's advertisements.
    private static func confirmAndExchangeKeys(code: String, name: String, remote: DeviceID, channel: Channel,
                                               link: ControlLink, agent: Agent) async throws -> Result<JSONValue, HandoffError> {
        let shown = UntrustedText.escaped(name)
        let accepted = await agent.confirmPairingCode(code, with: name, deviceID: remote, link: link)
        try await channel.send([PeerMessage.pairing(.confirm(accepted: accepted)).frame])
        guard accepted else { return .failure(.handoffFailed("pairing with \(shown) was refused here; nothing was stored")) }
        guard case .pairing(.confirm(let theirs)) = try await channel.receive() else {
            return .failure(.handoffFailed("\(shown) broke off pairing; nothing was stored"))
        }
        guard theirs else { return .failure(.handoffFailed("\(shown) refused the pairing; nothing was stored")) }
        // Both confirmed: from here, this device's key is out.
        do {
            try await channel.send([PeerMessage.keys(advertisingKey: await agent.trust.ownAdvertisingKey.bytes).frame])
            guard case .keys(let theirKey) = try await channel.receive() else {
                throw HandoffError.handoffFailed("\(shown) broke off pairing before sending its advertising key; nothing was stored")
            }
            return .success(try await agent.completePairing(with: remote, name: name, key: theirKey, certificateDER: channel.certificateDER))
        } catch {
            await agent.rotateAdvertisingKey(because: "a pairing failed after this device's advertising key was sent")
            throw error
        }
    }

    /// The next message; an error frame becomes a ``HandoffError``, the end of the connection too.
    private static func receive(_ connection: any UnpinnedFrameConnection, _ target: String) async throws -> PeerMessage {
        guard let frame = try await connection.receive() else { throw HandoffError.handoffFailed("\(target) closed the connection during pairing; nothing was stored") }
        return try message(frame)
    }

    private static func message(_ frame: Frame) throws -> PeerMessage {
        let message = try PeerMessage(frame: frame)
        if case .error(let code, let text) = message { throw HandoffError(HandoffError.Code(rawValue: code), text) }
        return message
    }

    /// A device asks to pair with this agent (`handoff pair --accept` must be waiting).
    static func respond<I: AsyncIteratorProtocol>(name: String, commitment: [UInt8], inbound: inout I,
                                                  connection: FrameServer.Connection, agent: Agent) async throws
    where I.Element == Frame {
        let outbound = connection.outbound
        guard let remote = connection.peerIdentity?.deviceID else { return }
        let closer: @Sendable () -> Void = { outbound.finish() }
        guard let window = await agent.claimPairingWindow(closeConnection: closer) else {
            try await outbound.write(PeerMessage.error(code: HandoffError.Code.userActivityConnectionUnavailable.rawValue,
                message: "\(agent.configuration.name) is not accepting pairing now; run `handoff pair --accept` on it first").frame)
            return
        }
        // The exchange waits for people from here: the handshake deadline no longer applies.
        connection.gate?.authenticate()
        // The person at this device sees who asks, by the ID its certificate proves, before any code.
        await agent.tell(window.link, .pairRequest(peer: name, deviceID: remote.description))
        var iterator = inbound
        let channel = Channel(send: { try await outbound.write(contentsOf: $0) }, receive: {
            guard let frame = try await iterator.next() else {
                throw HandoffError.handoffFailed("\(UntrustedText.escaped(name)) closed the connection during pairing; nothing was stored")
            }
            return try message(frame)
        }, certificateDER: connection.peerIdentity?.certificateDER)
        let result = await run(target: UntrustedText.escaped(name)) {
            var responder = PairingResponder(local: agent.deviceID, remote: remote)
            let nonce = try responder.receivedCommitment(commitment)
            try await channel.send([PeerMessage.pairing(.nonce(name: agent.configuration.name, nonce: nonce)).frame])
            guard case .pairing(.reveal(let revealed)) = try await channel.receive() else {
                return .failure(.handoffFailed("\(UntrustedText.escaped(name)) broke off pairing; nothing was stored"))
            }
            let code = try responder.receivedReveal(revealed)
            return try await confirmAndExchangeKeys(code: code, name: name, remote: remote, channel: channel, link: window.link, agent: agent)
        }
        await agent.closePairingWindow(window.id, result)
    }
}
