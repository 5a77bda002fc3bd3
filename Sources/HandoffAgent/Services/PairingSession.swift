import HandoffCore
import HandoffTransport
import HandoffTrust
import NIOCore
import Synchronization

/// The pairing exchange over a TLS connection (docs/SECURITY.md): the initiator commits to a
/// nonce, the responder sends its nonce, the initiator reveals; both show the same six-digit code,
/// derived from both certificates and both nonces, and each user confirms. Neither side can choose
/// the code, so a man in the middle matches it with probability 10⁻⁶ per attempt, and each
/// attempt takes a person: there is nothing to brute-force.
///
/// The decisions are ``PairingExchange``'s; this is its shell: it sends and reads on the
/// connection, asks the person, stores the pairing and runs the timer on the agent's clock, as
/// the exchange's directives say.
enum PairingSession {
    /// `handoff pair`: this agent initiates.
    /// - Parameter address: where the device is remembered once paired (`handoff pair HOST:PORT`).
    static func initiate(to endpoint: PeerEndpoint, target: String, address: PeerAddress? = nil, link: ControlLink,
                         agent: Agent) async -> Result<TrustChange, HandoffError> {
        let connection: any UnpinnedFrameConnection
        do { connection = try await agent.transport.connectUnpinned(to: endpoint, limits: Agent.pairingLimits) } catch {
            return .failure(.connectionUnavailable("cannot connect to \(target) at \(endpoint) to pair: \(error)"))
        }
        let channel = Channel(send: { try await connection.send($0) }, receive: { await input { try await connection.receive() } },
                              close: { await connection.close() }, certificateDER: connection.provenIdentity?.certificateDER,
                              address: address)
        let role = PairingRole.initiator(target: target, hello: agent.hello, timeout: agent.configuration.security.pairingTimeout)
        let result = await run(role, remote: connection.provenIdentity?.device, over: channel, link: link, agent: agent, clock: agent.clock)
        await connection.close()
        return result
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
        var iterator = inbound
        let channel = Channel(send: { try await outbound.write(contentsOf: $0) }, receive: { await input { try await iterator.next() } },
                              close: closer, certificateDER: connection.peerIdentity?.certificateDER)
        let result = await run(.responder(peerName: name, commitment: commitment), remote: remote, over: channel, link: window.link,
                               agent: agent, clock: agent.clock)
        await agent.closePairingWindow(window.id, result)
    }

    /// How a pairing exchange talks to the other device: the initiator's client connection or
    /// the responder's server session, behind the same calls.
    struct Channel {
        var send: ([Frame]) async throws -> Void
        /// The next message, or why there is none.
        var receive: () async -> PairingInput
        var close: @Sendable () async -> Void
        /// The certificate the other device presented in TLS (its SHA-256 is its device ID): the
        /// pairing stores its public key, so the device's signed advertisements are believed at
        /// once, without a key exchange first.
        var certificateDER: [UInt8]?
        /// Where the other device was reached, when it was by address: it is remembered there.
        var address: PeerAddress? = nil
    }

    /// The next frame as an input for the exchange.
    private static func input(_ next: () async throws -> Frame?) async -> PairingInput {
        do {
            guard let frame = try await next() else { return .connectionClosed }
            return .received(try PeerMessage(frame: frame))
        } catch {
            return .failed(error)
        }
    }

    /// The exchange, shared by the loop that runs its directives and its timer.
    private final class Shared<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
        let exchange: Mutex<PairingExchange<Instant>>
        init(_ exchange: PairingExchange<Instant>) { self.exchange = Mutex(exchange) }
        func handle(_ input: PairingInput) -> [PairingExchange<Instant>.Directive] { exchange.withLock { $0.handle(input) } }
    }

    /// Runs one side's exchange to its end: each directive in turn; a waiting one hands its
    /// outcome back to the exchange, whose answer replaces the rest of the batch. The timer is a
    /// child task sleeping on `clock`, cancelled when the exchange ends.
    private static func run<C: Clock>(_ role: PairingRole, remote: DeviceID?, over channel: Channel, link: ControlLink,
                                      agent: Agent, clock: C) async -> Result<TrustChange, HandoffError> where C.Duration == Duration {
        var exchange = PairingExchange<C.Instant>(role, local: agent.deviceID, name: agent.configuration.name)
        var pending = exchange.start(remote: remote, now: clock.now)
        let shared = Shared(exchange)
        let close = channel.close
        return await withTaskGroup(of: Void.self) { group in
            defer { group.cancelAll() }
            while !pending.isEmpty {
                let directive = pending.removeFirst()
                switch directive {
                case .send(let messages):
                    do { try await channel.send(messages.map(\.frame)) } catch { pending = shared.handle(.failed(error)) }
                case .sendAdvertisingKey:
                    let key = await agent.trust.ownAdvertisingKey.bytes
                    do { try await channel.send([PeerMessage.keys(advertisingKey: key).frame]) } catch { pending = shared.handle(.failed(error)) }
                case .receive:
                    pending = shared.handle(await channel.receive())
                case .announceRequest(let peer, let id):
                    await agent.tell(link, .pairRequest(peer: peer, deviceID: id.description))
                case .askUser(let code, let peer, let id):
                    let accepted = await agent.confirmPairingCode(code, with: peer, deviceID: id, link: link)
                    pending = shared.handle(.userAnswered(accepted: accepted))
                case .store(let id, let name, let key):
                    let stored: Result<TrustChange, HandoffError>
                    do throws(HandoffError) {
                        stored = .success(try await agent.completePairing(with: id, name: name, key: key, certificateDER: channel.certificateDER,
                                                                          addresses: channel.address.map { [$0] } ?? []))
                    } catch {
                        stored = .failure(error)
                    }
                    pending = shared.handle(.stored(stored))
                case .rotateAdvertisingKey:
                    await agent.rotateAdvertisingKey(because: "a pairing failed after this device's advertising key was sent")
                case .scheduleTimer(let instant):
                    group.addTask {
                        do { try await clock.sleep(until: instant, tolerance: nil) } catch { return }
                        // At the deadline the connection closes, which ends the exchange wherever it waits.
                        if shared.handle(.timerFired).contains(.close) { await close() }
                    }
                case .close:
                    await close()
                case .finish(let result):
                    return result
                }
            }
            return .failure(.handoffFailed("pairing stopped without an outcome; nothing was stored"))
        }
    }
}
