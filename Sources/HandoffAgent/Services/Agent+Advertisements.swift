import HandoffCore
import HandoffDiscovery
import HandoffTrust

extension Agent {
    // MARK: Advertisements: the shell of ``AdvertisementIntake``

    /// A service was resolved, or a device reached at its address pushed its record over a
    /// connection pinned to it (`pushedBy`): ``AdvertisementIntake`` decides what to believe of
    /// it, with the paired devices' keys and this device's own; the agent does what it asks.
    ///
    /// With `probingKeys` false, a request to learn keys is not carried out but returned (true),
    /// so that a caller going through many records asks once, at the end.
    @discardableResult
    func handleResolved(_ service: DiscoveredService, pushedBy: DeviceID? = nil, announced: Bool = false, probingKeys: Bool = true) -> Bool {
        var senders = trust.devices.compactMap { device in
            device.advertisingKey.map { SealedAdvertisement.Sender(deviceID: device.deviceID, advertisingKey: $0, publicKey: device.publicKey) }
        }
        senders.append(.init(deviceID: deviceID, advertisingKey: trust.ownAdvertisingKey, publicKey: security.identity.publicKey))
        let trust = self.trust
        // The directory's change reaches the watchers (``noticeOffers()``) as `resolved` returns;
        // the directives and the log line come after.
        let directives = intake.resolved(service, pushedBy: pushedBy, announced: announced, senders: senders, isPaired: { trust.isPaired($0) },
                                         lastKnownHosts: { trust.device($0)?.lastKnownAddresses.map(\.host) ?? [] },
                                         directory: &directory, now: timeline.now)
        let learnKeys = directives.contains(.learnKeys)
        perform(probingKeys ? directives : directives.filter { $0 != .learnKeys })
        intake.logPeerChange()
        return learnKeys
    }

    /// A DNS-SD goodbye (or expiry) for an instance (``AdvertisementIntake/removed(_:isPaired:directory:)``).
    func handleRemoved(_ name: String) {
        let trust = self.trust
        intake.removed(name, isPaired: { trust.isPaired($0) }, directory: &directory)
    }

    /// Carries out what the intake asked for.
    func perform(_ directives: [AdvertisementIntake.Directive]) {
        for directive in directives {
            switch directive {
            case .learnKeys:
                askUnreadable()
            case .saveSeenNow:
                saveSeenAdvertisements()
            case .rememberAddresses(let addresses, let deviceID):
                var next = trust
                guard next.rememberAddresses(addresses, for: deviceID) else { continue }
                do { try commit(next) } catch {
                    logger.warning("cannot keep where a paired device was found: \(error.message)")
                }
            case .saveSeen(let instant):
                let timeline = self.timeline
                background.spawn {
                    try? await timeline.sleep(until: instant)
                    await self.saveSeenAdvertisements()
                }
            }
        }
    }

    private func saveSeenAdvertisements() {
        guard let directory = security.stateDirectory else { return }
        intake.saving(now: timeline.now)
        do { try intake.seen.save(directory: directory) } catch {
            logger.warning("cannot save the seen advertisements: \(error.message)")
        }
    }
}
