import HandoffCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Agent {
    // MARK: Clipboard: this device's item

    /// Offers a clipboard item whose bytes are in the spool under `id`: an activity of the
    /// reserved type `org.handoff.clipboard` whose userInfo is only `item` (type, size, SHA-256),
    /// advertised sealed and expiring after `clipboard.expiry`. It replaces this device's older
    /// item, whose bytes are deleted.
    func offerClipboard(id: UUID, item: ClipboardItemInfo) -> CopyResult {
        let now = wallClock()
        let expires = now.addingTimeInterval(Self.seconds(configuration.clipboard.expiry))
        let activity = Activity(id: id, activityType: .clipboard, title: "\(item.mimeType), \(item.size) bytes", userInfo: item.propertyList,
                                expirationDate: expires)
        let older = store.all.filter { $0.activityType.isClipboard }
        for old in older { store.resign(id: old.id) }
        dropClipboardBytes(of: older)
        store.publish(activity)
        logger.info("offered a clipboard item", metadata: [
            "handoff.id": "\(id)", "handoff.type": "\(item.mimeType)", "handoff.size": "\(item.size)",
        ])
        refreshAdvertisement(now: now)
        return CopyResult(id: id, item: item, expires: expires)
    }

    /// Deletes the spooled bytes of the clipboard items among `activities` (expired, resigned or
    /// replaced).
    func dropClipboardBytes(of activities: [Activity]) {
        for activity in activities where activity.activityType.isClipboard { clipboardSpool.remove(activity.id) }
    }

    /// The item `id` for a paired device's `clipboardFetch`: its description and its bytes,
    /// open for reading. Only an unexpired item that is still this device's newest is served.
    func clipboardItemToServe(_ id: UUID) -> Result<(ClipboardItemInfo, Int32), HandoffError> {
        guard !settings.paused else {
            return .failure(.handoffFailed("handoff is paused on \(configuration.name): it offers no clipboard item until `handoff resume` there"))
        }
        guard let activity = store.activity(id: id), activity.activityType.isClipboard, !activity.isExpired(at: wallClock()),
            let item = ClipboardItemInfo(propertyList: activity.userInfo)
        else {
            return .failure(.handoffFailed("the clipboard item on \(configuration.name) expired or was replaced; run `handoff copy` there again"))
        }
        do { return .success((item, try clipboardSpool.openForReading(id))) } catch { return .failure(error) }
    }

    // MARK: Clipboard: the paired devices' items

    /// Shows ``clipboardSightings`` the items the reachable paired devices advertise now.
    func noticeClipboardItems() {
        let advertised = directory.all.filter { $0.deviceID != nil && directory.isReachable($0) }
            .compactMap { peer in peer.advertisement.clipboard.map { (itemID: $0, peer: peer.name) } }
        syncIn(clipboardSightings.observe(advertised, at: wallClock()))
    }

    /// The item `handoff paste` takes: the newest of any reachable paired device, or of `from`;
    /// with the peer that offers it. The error says what to do.
    func clipboardItemToPaste(from: String?) -> Result<(UUID, PeerRecord), HandoffError> {
        if let from, directory.peer(named: from) == nil {
            return .failure(.connectionUnavailable("no paired device named \(from) is reachable; `handoff peers` lists them"))
        }
        guard let sighting = clipboardSightings.newest(from: from),
            let peer = directory.all.first(where: { $0.advertisement.clipboard == sighting.itemID && directory.isReachable($0) })
        else {
            let whom = from.map { "from \($0)" } ?? "from a paired device"
            let host = from ?? "the other host"
            return .failure(.handoffFailed("no clipboard item \(whom) in the last two minutes; run `handoff copy` on \(host)"))
        }
        return .success((sighting.itemID, peer))
    }

    static func seconds(_ duration: Duration) -> TimeInterval {
        let (whole, attoseconds) = duration.components
        return TimeInterval(whole) + TimeInterval(attoseconds) / 1e18
    }
}
