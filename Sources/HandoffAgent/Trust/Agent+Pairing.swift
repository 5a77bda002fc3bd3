import HandoffCore
import HandoffTransport
import HandoffTrust

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `handoff pair --accept`: open for one pairing attempt, until it ends or times out.
struct PairingWindow: Sendable {
    let id: UUID
    let link: ControlLink
    let continuation: CheckedContinuation<Result<TrustChange, HandoffError>, Never>
    /// Whether a device has started pairing (one attempt per window).
    var claimed = false
    /// Closes the pairing connection, when the window ends first.
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

    /// `handoff pair --accept`: opens this device to one pairing attempt for `security.pairingTimeout`.
    /// The advertisement shows this agent's name meanwhile, so the other device can find it.
    public func acceptPairing(link: ControlLink) async -> Result<TrustChange, HandoffError> {
        guard pairingWindow == nil else {
            return .failure(.handoffFailed("\(configuration.name) is already accepting a pairing; finish or cancel that one first"))
        }
        let id = UUID()
        let timeout = configuration.security.pairingTimeout
        logger.info("accepting pairing", metadata: ["handoff.timeout": "\(timeout)"])
        return await waitForAnswer(timeout: timeout) { (continuation: CheckedContinuation<Result<TrustChange, HandoffError>, Never>) in
            pairingWindow = PairingWindow(id: id, link: link, continuation: continuation)
            refreshAdvertisement()
        } expire: {
            await self.closePairingWindow(id, .failure(.remoteTimedOut("no device completed pairing within \(timeout); nothing was stored")))
        }
    }

    /// Ends the pairing window `id` with `result` (and its connection, if one is open).
    func closePairingWindow(_ id: UUID, _ result: Result<TrustChange, HandoffError>) {
        guard let window = pairingWindow, window.id == id else { return }
        pairingWindow = nil
        window.closeConnection?()
        window.continuation.resume(returning: result)
        refreshAdvertisement()
    }

    /// A device asks to pair: takes the open window (one attempt each). Nil when none is open.
    func claimPairingWindow(closeConnection: @escaping @Sendable () -> Void) -> (id: UUID, link: ControlLink)? {
        guard var window = pairingWindow, !window.claimed else { return nil }
        window.claimed = true
        window.closeConnection = closeConnection
        pairingWindow = window
        return (window.id, window.link)
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
