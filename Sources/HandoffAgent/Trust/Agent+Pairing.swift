import HandoffCore
import HandoffTransport
import HandoffTrust

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the agent holds for the open pairing window (the decisions are ``PairingWindowState``'s).
struct PairingWindowLinks: Sendable {
    /// The connection of `handoff pair --accept`: the pairing shows its code and asks there.
    let link: ControlLink
    /// Closes the pairing connection, once a device has claimed the window.
    var closeConnection: (@Sendable () -> Void)?
}

extension Agent {
    /// Where `handoff pair TARGET` connects: a device whose pairing window shows that name, else
    /// an address `HOST:PORT`.
    func pairingEndpoint(_ target: String) -> Result<PeerEndpoint, HandoffError> {
        PairingTarget.endpoint(target, unreadable: unreadable.values)
    }

    /// `handoff pair --list`: the devices accepting pairing now (`handoff pair --accept`), by name.
    public func pairableDevices() -> [PairableDevice] {
        unreadable.values.compactMap { entry in entry.pairingName.map { PairableDevice(name: $0, address: entry.endpoint.description) } }
            .sorted { $0.name < $1.name }
    }

    /// The open pairing window, if any (``PairingWindowState``).
    var pairingWindow: PairingWindowState<AgentInstant>.Window? { pairing.window }

    /// `handoff pair --accept`: opens this device to one pairing attempt for `security.pairingTimeout`
    /// (``PairingWindowState``). The advertisement shows this agent's name meanwhile, so the other
    /// device can find it. The window's timer runs in the caller's task, on the agent's clock.
    public func acceptPairing(link: ControlLink) async -> Result<TrustChange, HandoffError> {
        let id = UUID.random()
        _ = pairingAnswers.open(id)
        let timeout = configuration.security.pairingTimeout
        let directives = pairing.open(id, owner: link.id, name: configuration.name, timeout: timeout, now: timeline.now)
        var timer: AgentInstant?
        for case .scheduleTimer(id, let instant) in directives {
            timer = instant
            pairingLinks[id] = PairingWindowLinks(link: link)
            logger.info("accepting pairing", metadata: ["handoff.timeout": "\(timeout)"])
        }
        execute(directives)
        guard let timer else { return await pairingAnswers.answer(for: id) }
        let answers = pairingAnswers
        let answer = await withTaskCancellationHandler {
            await Deadline.watch(timeline.now.duration(to: timer), on: clock, onExpiry: { await self.pairingTimerFired(id) }) {
                await answers.answer(for: id)
            }.value
        } onCancel: {
            answers.resolve(id, with: .failure(.handoffFailed("pairing was cancelled")))
        }
        // A caller cancelled before its window closed leaves it open: it closes now.
        execute(pairing.callerLeft(id))
        return answer
    }

    private func pairingTimerFired(_ id: UUID) {
        execute(pairing.timerFired(id, now: timeline.now))
    }

    /// Ends the pairing window `id` with `result` (and its connection, if one is open).
    func closePairingWindow(_ id: UUID, _ result: Result<TrustChange, HandoffError>) {
        execute(pairing.close(id, with: result))
    }

    /// A device asks to pair: takes the open window (one attempt each). Nil when none is open.
    func claimPairingWindow(closeConnection: @escaping @Sendable () -> Void) -> (id: UUID, link: ControlLink)? {
        guard let window = pairing.claim(), let link = pairingLinks[window.id]?.link else { return nil }
        pairingLinks[window.id]?.closeConnection = closeConnection
        return (window.id, link)
    }

    /// Carries out what ``PairingWindowState`` decided. A timer is run by the caller that opened
    /// the window (``acceptPairing(link:)``).
    func execute(_ directives: [PairingWindowState<AgentInstant>.Directive]) {
        for directive in directives {
            switch directive {
            case .advertise:
                refreshAdvertisement()
            case .scheduleTimer:
                break
            case .closeConnection(let id):
                pairingLinks[id]?.closeConnection?()
            case .answer(let id, let result):
                pairingLinks[id] = nil
                pairingAnswers.resolve(id, with: result)
            }
        }
    }

    /// Shows the code to the user on `link` and waits for the answer.
    func confirmPairingCode(_ code: String, with peer: String, deviceID id: DeviceID, link: ControlLink) async -> Bool {
        let answer = await ask(link, .pairCode(code: code, peer: peer, deviceID: id.description), timeout: configuration.security.pairingTimeout)
        return answer?.accept == true
    }

    /// Both users confirmed: stores the device and its advertising key.
    func completePairing(with id: DeviceID, name: String, key: [UInt8], certificateDER: [UInt8]?,
                         addresses: [PeerAddress] = []) throws(HandoffError) -> TrustChange {
        var next = trust
        var advertisingKey = try? AdvertisingKey(bytes: key)
        if let claimed = advertisingKey {
            do { try trust.checkAdvertisingKey(claimed, for: id) } catch {
                // Paired, but its records are not read until it sends a key of its own.
                logger.warning("refused the advertising key a newly paired device sent", metadata: ["handoff.device": "\(id.shortID)", "handoff.reason": "\(error.message)"])
                advertisingKey = nil
            }
        }
        // The public key from the certificate the device presented while pairing (its SHA-256
        // is the device ID, checked here again): its signed records are believed at once.
        let publicKey = certificateDER.flatMap { try? DevicePublicKey(certificateDER: $0, of: id) }
        next.add(PairedDevice(deviceID: id, name: name, advertisingKey: advertisingKey, publicKey: publicKey, addresses: addresses))
        try commit(next)
        logger.info("paired", metadata: ["handoff.device": "\(id.shortID)", "handoff.peer": "\(name)"])
        reopenUnreadable()
        askEveryUnreadable()
        return TrustChange(deviceID: id.description, name: name)
    }

    /// `handoff pair TARGET`: pairs with a device that accepts pairing.
    public func pair(with target: String, link: ControlLink) async -> Result<TrustChange, HandoffError> {
        let endpoint: PeerEndpoint
        switch pairingEndpoint(target) {
        case .failure(let error): return .failure(error)
        case .success(let value): endpoint = value
        }
        // Paired by address: the device is remembered there (unless a name on offer matched).
        let address = unreadable.values.contains { $0.pairingName?.lowercased() == target.lowercased() } ? nil : PairingTarget.address(target)
        return await PairingSession.initiate(to: endpoint, target: target, address: address, link: link, agent: self)
    }
}
