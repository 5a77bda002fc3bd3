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
    /// Set once, read any time.
    final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        func set() { value.store(true, ordering: .releasing) }
        var isSet: Bool { value.load(ordering: .acquiring) }
    }

    /// `handoff pair`: this agent initiates.
    static func initiate(to endpoint: PeerEndpoint, target: String, link: ControlLink, agent: Agent) async -> Result<JSONValue, HandoffError> {
        let connection: ChannelFrameConnection
        do { connection = try await agent.unpinned.connectUnpinned(to: endpoint, limits: Agent.pairingLimits) } catch {
            return .failure(.connectionUnavailable("cannot connect to \(target) at \(endpoint) to pair: \(error)"))
        }
        let timeout = agent.configuration.security.pairingTimeout
        let expired = Flag()
        let timer = Task {
            try await Task.sleep(for: timeout)
            expired.set()
            await connection.close()
        }
        defer { timer.cancel() }
        let result = await initiate(connection, target: target, link: link, agent: agent)
        await connection.close()
        if expired.isSet, case .failure = result {
            return .failure(.remoteTimedOut("pairing with \(target) did not finish within \(timeout); nothing was stored"))
        }
        return result
    }

    private static func initiate(_ connection: ChannelFrameConnection, target: String, link: ControlLink, agent: Agent) async -> Result<JSONValue, HandoffError> {
        guard let remote = connection.peerIdentity?.deviceID else { return .failure(.handoffFailed("\(target) presented no certificate")) }
        guard remote != agent.deviceID else { return .failure(.handoffFailed("\(target) is this device; pair with another one")) }
        var initiator = PairingInitiator(local: agent.deviceID, remote: remote)
        do {
            try await connection.send([
                PeerMessage.hello(agent.hello).frame,
                PeerMessage.pairing(.request(name: agent.configuration.name, commitment: initiator.commitment)).frame,
            ])
            guard case .hello = try await receive(connection, target) else { return .failure(.handoffFailed("\(target) did not answer the handshake")) }
            guard case .pairing(.nonce(let name, let nonce)) = try await receive(connection, target) else {
                return .failure(.handoffFailed("\(target) broke off pairing"))
            }
            let (reveal, code) = try initiator.receivedResponderNonce(nonce)
            try await connection.send([PeerMessage.pairing(.reveal(nonce: reveal)).frame])
            let accepted = await agent.confirmPairingCode(code, with: name, deviceID: remote, link: link)
            let key = await agent.trust.ownAdvertisingKey.bytes
            try await connection.send([PeerMessage.pairing(.confirm(accepted: accepted, advertisingKey: accepted ? key : nil)).frame])
            guard accepted else { return .failure(.handoffFailed("pairing with \(name) was refused here; nothing was stored")) }
            guard case .pairing(.confirm(let theirs, let theirKey)) = try await receive(connection, target) else {
                return .failure(.handoffFailed("\(name) broke off pairing; nothing was stored"))
            }
            guard theirs, let theirKey else { return .failure(.handoffFailed("\(name) refused the pairing; nothing was stored")) }
            return .success(try await agent.completePairing(with: remote, name: name, key: theirKey))
        } catch let error as HandoffError {
            return .failure(error)
        } catch let error as PairingError {
            return .failure(.handoffFailed("pairing with \(target) stopped: \(error.message)"))
        } catch {
            return .failure(.handoffFailed("pairing with \(target) failed: \(error)"))
        }
    }

    /// The next message; an error frame becomes a ``HandoffError``, the end of the connection too.
    private static func receive(_ connection: ChannelFrameConnection, _ target: String) async throws -> PeerMessage {
        guard let frame = try await connection.receive() else { throw HandoffError.handoffFailed("\(target) closed the connection during pairing; nothing was stored") }
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
        let result: Result<JSONValue, HandoffError>
        do {
            result = try await respond(name: name, commitment: commitment, remote: remote, inbound: &inbound, outbound: outbound,
                                       link: window.link, agent: agent)
        } catch let error as PairingError {
            result = .failure(.handoffFailed("pairing with \(name) stopped: \(error.message)"))
        } catch {
            result = .failure(.handoffFailed("pairing with \(name) failed: \(error)"))
        }
        await agent.closePairingWindow(window.id, result)
    }

    private static func respond<I: AsyncIteratorProtocol>(name: String, commitment: [UInt8], remote: DeviceID, inbound: inout I,
                                                          outbound: NIOAsyncChannelOutboundWriter<Frame>, link: ControlLink,
                                                          agent: Agent) async throws -> Result<JSONValue, HandoffError>
    where I.Element == Frame {
        var responder = PairingResponder(local: agent.deviceID, remote: remote)
        let nonce = try responder.receivedCommitment(commitment)
        try await outbound.write(PeerMessage.pairing(.nonce(name: agent.configuration.name, nonce: nonce)).frame)
        guard let frame = try await inbound.next(), case .pairing(.reveal(let revealed)) = try PeerMessage(frame: frame) else {
            return .failure(.handoffFailed("\(name) broke off pairing; nothing was stored"))
        }
        let code = try responder.receivedReveal(revealed)
        let accepted = await agent.confirmPairingCode(code, with: name, deviceID: remote, link: link)
        let key = await agent.trust.ownAdvertisingKey.bytes
        try await outbound.write(PeerMessage.pairing(.confirm(accepted: accepted, advertisingKey: accepted ? key : nil)).frame)
        guard accepted else { return .failure(.handoffFailed("pairing with \(name) was refused here; nothing was stored")) }
        guard let answer = try await inbound.next(), case .pairing(.confirm(let theirs, let theirKey)) = try PeerMessage(frame: answer) else {
            return .failure(.handoffFailed("\(name) broke off pairing; nothing was stored"))
        }
        guard theirs, let theirKey else { return .failure(.handoffFailed("\(name) refused the pairing; nothing was stored")) }
        do { return .success(try await agent.completePairing(with: remote, name: name, key: theirKey)) } catch { return .failure(error) }
    }
}
