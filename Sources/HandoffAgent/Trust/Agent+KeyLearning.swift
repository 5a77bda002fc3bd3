import HandoffCore
import HandoffDiscovery
import HandoffTransport
import HandoffTrust

/// A sealed advertisement the agent cannot open, and what it learnt by connecting to its sender.
struct UnreadableService: Sendable {
    var service: DiscoveredService
    /// The device that pushed it over its connection (reached at its address); nil: DNS-SD.
    var pushedBy: DeviceID?
    /// Who answered at its address, once asked.
    var deviceID: DeviceID?
    /// When the agent last connected to learn the key.
    var askedAt: AgentInstant?

    var endpoint: PeerEndpoint { PeerEndpoint(addresses: service.addresses, orHost: service.hostTarget, port: Int(service.port)) }
    var pairingName: String? { try? SealedAdvertisement.parse(txtRecord: service.txtRecord).pairingName }
}

/// The agent's state for learning advertising keys: the probe schedule and its pending wake-up.
struct KeyLearning: Sendable {
    var schedule = KeyProbeSchedule<AgentInstant>()
    /// When a background timer will call ``Agent/askUnreadable()`` again, if one is set.
    var wakeAt: AgentInstant?
}

extension Agent {
    // MARK: Learning advertising keys

    /// Connects to the senders of unreadable advertisements to learn their keys: if one is a
    /// paired device, the two exchange advertising keys over TLS. Bounded by
    /// ``KeyProbeSchedule`` (a shared rate, backoff per endpoint, a device known to be unpaired
    /// not again until the paired devices change); sets a timer for when more become due. The
    /// exchanges and the timer run in the background service (``BackgroundWork``).
    func askUnreadable() {
        let now = timeline.now
        var byEndpoint: [KeyProbeSchedule<AgentInstant>.Endpoint: String] = [:]
        for (name, entry) in unreadable {
            byEndpoint[.init(host: entry.endpoint.host, port: entry.endpoint.port)] = name
        }
        let (ask, nextCheck) = keyLearning.schedule.due(Array(byEndpoint.keys), now: now)
        for endpoint in ask {
            guard let name = byEndpoint[endpoint], let target = unreadable[name]?.endpoint else { continue }
            unreadable[name]?.askedAt = now
            background.spawn { await self.exchangeKeys(instance: name, endpoint: target) }
        }
        guard let nextCheck else { return }
        let wake = now.advanced(by: nextCheck)
        if let pending = keyLearning.wakeAt, pending <= wake { return }
        keyLearning.wakeAt = wake
        let timeline = self.timeline
        background.spawn { [weak self] in
            guard (try? await timeline.sleep(until: wake)) != nil else { return }
            await self?.keyProbesWoke(at: wake)
        }
    }

    private func keyProbesWoke(at wake: AgentInstant) {
        guard keyLearning.wakeAt == wake else { return }
        keyLearning.wakeAt = nil
        askUnreadable()
    }

    /// What the schedule learns from one probe: who answered at the endpoint, if anyone.
    private func probed(_ endpoint: KeyProbeSchedule<AgentInstant>.Endpoint, answeredBy id: DeviceID?, instance name: String) -> Bool {
        keyLearning.schedule.finished(endpoint, answeredBy: id, isPaired: id.map { trust.isPaired($0) } ?? false, now: timeline.now)
        guard let id else { return false }
        unreadable[name]?.deviceID = id
        return trust.isPaired(id)
    }

    /// One key exchange, off the actor: the agent is asked only for its decisions (who is
    /// paired, whether to take the key).
    private nonisolated func exchangeKeys(instance name: String, endpoint: PeerEndpoint) async {
        let probed = KeyProbeSchedule<AgentInstant>.Endpoint(host: endpoint.host, port: endpoint.port)
        let connection: any UnpinnedFrameConnection
        do { connection = try await transport.connectUnpinned(to: endpoint, limits: Self.pairingLimits) } catch {
            logger.debug("cannot ask for an advertising key", metadata: ["handoff.peer": "\(name)", "handoff.error": "\(error)"])
            _ = await self.probed(probed, answeredBy: nil, instance: name)
            return
        }
        // At the deadline the connection closes, which ends the exchange wherever it waits.
        _ = await Deadline.watch(configuration.limits.fetchTimeout, on: clock, onExpiry: { await connection.close() }) {
            await exchangeKeys(over: connection, instance: name, probed: probed)
        }
    }

    private nonisolated func exchangeKeys(over connection: any UnpinnedFrameConnection, instance name: String,
                                          probed: KeyProbeSchedule<AgentInstant>.Endpoint) async {
        let id = connection.provenIdentity?.device
        guard await self.probed(probed, answeredBy: id, instance: name), let id else { return await connection.close() }
        do {
            try await connection.send([PeerMessage.hello(hello).frame, PeerMessage.keys(advertisingKey: await advertisingKey.bytes).frame])
            while let frame = try await connection.receive() {
                switch try PeerMessage(frame: frame) {
                case .hello: continue
                case .keys(let key):
                    _ = await receivedAdvertisingKey(key, from: id, certificateDER: connection.provenIdentity?.certificateDER)
                    logger.info("learnt the advertising key of a paired device", metadata: ["handoff.device": "\(id.shortID)"])
                case .error(_, let message):
                    logger.warning("a paired device refused the key exchange", metadata: ["handoff.device": "\(id.shortID)", "handoff.message": "\(message)"])
                    // It no longer pairs with this device (it said so over TLS with its own
                    // certificate): what it advertised before can no longer be followed.
                    await forgetAdvertisements(of: id)
                default: break
                }
                break
            }
        } catch {
            logger.debug("key exchange failed", metadata: ["handoff.peer": "\(name)", "handoff.error": "\(error)"])
        }
        await connection.close()
    }
}
