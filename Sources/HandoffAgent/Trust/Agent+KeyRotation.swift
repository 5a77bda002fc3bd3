import HandoffCore
import HandoffTrust

extension Agent {
    /// Gives this device a fresh advertising key (after a pairing that failed once the key was
    /// sent), saves it and seals the advertisement with it. The paired devices learn the new key
    /// through the authenticated key exchange, as after an unpairing.
    func rotateAdvertisingKey(because reason: String) {
        var next = trust
        next.rotateAdvertisingKey()
        do { try commit(next) } catch {
            logger.warning("cannot save the rotated advertising key", metadata: ["handoff.error": "\(error.message)"])
            return
        }
        refreshAdvertisement()
        logger.info("advertising key rotated", metadata: ["handoff.reason": "\(reason)"])
    }
}
