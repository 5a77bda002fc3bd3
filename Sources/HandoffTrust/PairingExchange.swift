import HandoffCore

/// Which side of a pairing exchange this device plays, with what that side starts from.
public enum PairingRole: Sendable, Hashable {
    /// `handoff pair TARGET`: this device connected to `target` (its name or HOST:PORT, as the
    /// user gave it) and opens with its `hello`. The exchange must end within `timeout`.
    case initiator(target: String, hello: PeerHello, timeout: Duration)
    /// `handoff pair --accept`: a device that calls itself `peerName` asked to pair, committing
    /// to its nonce with `commitment`. The pairing window bounds the exchange, not a timer here.
    case responder(peerName: String, commitment: [UInt8])
}

/// What happened, as the shell running a ``PairingExchange`` reports it.
public enum PairingInput: Sendable {
    /// The other device sent a message.
    case received(PeerMessage)
    /// The other device closed the connection.
    case connectionClosed
    /// Sending or reading failed (a frame that is not a message, a broken connection).
    case failed(any Error)
    /// The person at this device compared the codes and said yes or no (no answer is no).
    case userAnswered(accepted: Bool)
    /// The shell stored the pairing (``PairingExchange/Directive/store(deviceID:name:advertisingKey:)``), or could not.
    case stored(Result<TrustChange, HandoffError>)
    /// The timer of ``PairingExchange/Directive/scheduleTimer(at:)`` fired.
    case timerFired
}

/// One side of the pairing exchange (docs/SECURITY.md) as a pure state machine, SWIM style: it
/// takes ``PairingInput``s and returns ``Directive``s, and does no I/O and reads no clock. The
/// agent's shell (`PairingSession`) sends, reads, asks the person, stores and schedules the
/// timer as told, on the agent's clock.
///
/// The exchange: the initiator commits to a nonce, the responder sends its nonce, the initiator
/// reveals (``PairingInitiator``, ``PairingResponder``); each side asks its person to compare the
/// six-digit code and tells the other the answer; only when both said yes do the two send their
/// advertising keys, and the pairing is stored. A pairing that fails once this side's key may be
/// out rotates the key, so a device that was never stored cannot read this one's advertisements.
/// An initiator that does not finish within its timeout closes the connection and fails with
/// 4610; nothing is stored.
///
/// A shell runs the directives of one batch in order. A waiting directive (``Directive/receive``,
/// ``Directive/askUser(code:peer:deviceID:)``, ``Directive/store(deviceID:name:advertisingKey:)``)
/// ends its batch: the shell hands its outcome to ``handle(_:)`` and runs what comes back. A send
/// that fails ends the batch too: the shell reports ``PairingInput/failed(_:)`` and runs what
/// comes back instead of the rest, which replaces an outcome the batch announced.
public struct PairingExchange<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// What the shell does next.
    public enum Directive: Sendable, Equatable {
        /// Send these messages, in one write.
        case send([PeerMessage])
        /// Send this device's current advertising key (``PeerMessage/keys(advertisingKey:)``).
        case sendAdvertisingKey
        /// Read the next message (then ``PairingInput/received(_:)``, ``PairingInput/connectionClosed``
        /// or ``PairingInput/failed(_:)``).
        case receive
        /// Show the person at this device who asks to pair, by the ID its certificate proves,
        /// before any code (the responder).
        case announceRequest(peer: String, deviceID: DeviceID)
        /// Ask the person at this device to compare `code` (then ``PairingInput/userAnswered(accepted:)``).
        case askUser(code: String, peer: String, deviceID: DeviceID)
        /// Both people confirmed: store the device, with the advertising key it sent (then
        /// ``PairingInput/stored(_:)``).
        case store(deviceID: DeviceID, name: String, advertisingKey: [UInt8])
        /// Give this device a fresh advertising key: the old one may have reached a device that
        /// is not stored.
        case rotateAdvertisingKey
        /// Call ``handle(_:)`` with ``PairingInput/timerFired`` at `instant`, unless the exchange
        /// has finished by then.
        case scheduleTimer(at: Instant)
        /// Close the connection.
        case close
        /// The exchange is over, with this outcome.
        case finish(Result<TrustChange, HandoffError>)
    }

    private enum Step: Sendable {
        case notStarted
        case awaitingHello
        case awaitingNonce
        case awaitingReveal
        case awaitingUser(peer: String)
        case awaitingConfirmation(peer: String)
        case awaitingKey(peer: String)
        case storing
        case finished
    }

    private let role: PairingRole
    private let local: DeviceID
    private let name: String
    private let nonce: [UInt8]
    private var step = Step.notStarted
    private var remote: DeviceID?
    private var initiator: PairingInitiator?
    private var responder: PairingResponder?
    /// Whether this device's advertising key may have reached the other device.
    private var keyMayBeOut = false
    /// Whether the timer fired before the exchange finished: every failure is then the timeout.
    private var expired = false
    /// Whether the connection was closed (by ``Directive/close``): nothing more can be sent.
    private var closed = false

    /// Prepares one side of a pairing of `local`, whose agent is called `name`.
    ///
    /// - Parameter nonce: 32 random bytes; the default is fresh from the system's secure random
    ///   number generator. Give one only in tests.
    public init(_ role: PairingRole, local: DeviceID, name: String, nonce: [UInt8] = Pairing.randomNonce()) {
        (self.role, self.local, self.name, self.nonce) = (role, local, name, nonce)
    }

    /// Whether the exchange is over (a ``Directive/finish(_:)`` was given).
    public var isFinished: Bool {
        if case .finished = step { return true }
        return false
    }

    /// How the other device is named in errors: the target as the user gave it (initiator), or
    /// the name the device gave itself, escaped (responder).
    private var label: String {
        switch role {
        case .initiator(let target, _, _): target
        case .responder(let peerName, _): UntrustedText.escaped(peerName)
        }
    }

    /// Starts the exchange with `remote`, the device ID the other device's certificate proves
    /// (nil: it presented none), at `now`.
    public mutating func start(remote: DeviceID?, now: Instant) -> [Directive] {
        guard case .notStarted = step else { return [] }
        guard let remote else { return finish(.failure(.handoffFailed("\(label) presented no certificate"))) }
        self.remote = remote
        switch role {
        case .initiator(let target, let hello, let timeout):
            guard remote != local else { return finish(.failure(.handoffFailed("\(target) is this device; pair with another one"))) }
            let initiator = PairingInitiator(local: local, remote: remote, nonce: nonce)
            self.initiator = initiator
            step = .awaitingHello
            return [.scheduleTimer(at: now.advanced(by: timeout)),
                    .send([.hello(hello), .pairing(.request(name: name, commitment: initiator.commitment))]), .receive]
        case .responder(let peerName, let commitment):
            var responder = PairingResponder(local: local, remote: remote, nonce: nonce)
            let announce = Directive.announceRequest(peer: peerName, deviceID: remote)
            do {
                let nonce = try responder.receivedCommitment(commitment)
                self.responder = responder
                step = .awaitingReveal
                return [announce] + send([.pairing(.nonce(name: name, nonce: nonce))]) + [.receive]
            } catch {
                return [announce] + fail(error)
            }
        }
    }

    /// Takes what happened; returns what to do.
    public mutating func handle(_ input: PairingInput) -> [Directive] {
        switch input {
        case .timerFired:
            guard !isFinished, !expired else { return [] }
            expired = true
            closed = true
            return [.close]
        case .failed(let error):
            return fail(error)
        case .connectionClosed:
            guard !isFinished else { return [] }
            return fail(HandoffError.handoffFailed("\(label) closed the connection during pairing; nothing was stored"))
        case .received(let message):
            guard !isFinished else { return [] }
            if case .error(let code, let text) = message { return fail(HandoffError(HandoffError.Code(rawValue: code), text)) }
            return received(message)
        case .userAnswered(let accepted):
            guard case .awaitingUser(let peer) = step else { return [] }
            return userAnswered(accepted, peer: peer)
        case .stored(let result):
            guard case .storing = step else { return [] }
            switch result {
            case .success: return finish(result)
            case .failure(let error): return fail(error)
            }
        }
    }

    private mutating func received(_ message: PeerMessage) -> [Directive] {
        switch step {
        case .awaitingHello:
            guard case .hello = message else { return fail(HandoffError.handoffFailed("\(label) did not answer the handshake")) }
            step = .awaitingNonce
            return [.receive]
        case .awaitingNonce:
            guard case .pairing(.nonce(let peer, let responderNonce)) = message, var initiator else {
                return fail(HandoffError.handoffFailed("\(label) broke off pairing"))
            }
            do {
                let (reveal, code) = try initiator.receivedResponderNonce(responderNonce)
                self.initiator = initiator
                return send([.pairing(.reveal(nonce: reveal))]) + askUser(code, peer: peer)
            } catch {
                return fail(error)
            }
        case .awaitingReveal:
            guard case .pairing(.reveal(let revealed)) = message, case .responder(let peer, _) = role, var responder else {
                return fail(HandoffError.handoffFailed("\(label) broke off pairing; nothing was stored"))
            }
            do {
                let code = try responder.receivedReveal(revealed)
                self.responder = responder
                return askUser(code, peer: peer)
            } catch {
                return fail(error)
            }
        case .awaitingConfirmation(let peer):
            guard case .pairing(.confirm(let theirs)) = message else {
                return fail(HandoffError.handoffFailed("\(UntrustedText.escaped(peer)) broke off pairing; nothing was stored"))
            }
            guard theirs else { return finish(.failure(.handoffFailed("\(UntrustedText.escaped(peer)) refused the pairing; nothing was stored"))) }
            // Both confirmed: from here, this device's key is out.
            keyMayBeOut = true
            guard !closed else { return fail(ConnectionClosed()) }
            step = .awaitingKey(peer: peer)
            return [.sendAdvertisingKey, .receive]
        case .awaitingKey(let peer):
            guard case .keys(let theirKey) = message, let remote else {
                return fail(HandoffError.handoffFailed(
                    "\(UntrustedText.escaped(peer)) broke off pairing before sending its advertising key; nothing was stored"))
            }
            step = .storing
            return [.store(deviceID: remote, name: peer, advertisingKey: theirKey)]
        case .notStarted, .awaitingUser, .storing, .finished:
            return []  // nothing is read in these steps
        }
    }

    private mutating func askUser(_ code: String, peer: String) -> [Directive] {
        guard !isFinished, let remote else { return [] }
        step = .awaitingUser(peer: peer)
        return [.askUser(code: code, peer: peer, deviceID: remote)]
    }

    private mutating func userAnswered(_ accepted: Bool, peer: String) -> [Directive] {
        let confirm = send([.pairing(.confirm(accepted: accepted))])
        guard !isFinished else { return confirm }
        guard accepted else {
            return confirm + finish(.failure(.handoffFailed("pairing with \(UntrustedText.escaped(peer)) was refused here; nothing was stored")))
        }
        step = .awaitingConfirmation(peer: peer)
        return confirm + [.receive]
    }

    /// Sends, unless the connection is closed already: then the exchange fails as a send would.
    private mutating func send(_ messages: [PeerMessage]) -> [Directive] {
        closed ? fail(ConnectionClosed()) : [.send(messages)]
    }

    private mutating func finish(_ result: Result<TrustChange, HandoffError>) -> [Directive] {
        step = .finished
        return [.finish(result)]
    }

    /// Ends the exchange with `error` as the person reads it; the timeout once the timer fired.
    /// Also replaces the outcome of a batch whose send failed.
    private mutating func fail(_ error: any Error) -> [Directive] {
        let reported: HandoffError
        if expired, case .initiator(let target, _, let timeout) = role {
            reported = .remoteTimedOut("pairing with \(target) did not finish within \(timeout); nothing was stored")
        } else if let error = error as? HandoffError {
            reported = error
        } else if let error = error as? PairingError {
            reported = .handoffFailed("pairing with \(label) stopped: \(error.message); nothing was stored")
        } else {
            reported = .handoffFailed("pairing with \(label) failed: \(error); nothing was stored")
        }
        return (keyMayBeOut ? [.rotateAdvertisingKey] : []) + finish(.failure(reported))
    }
}

/// A send after the exchange closed its connection.
private struct ConnectionClosed: Error, CustomStringConvertible {
    var description: String { "the connection is closed" }
}
