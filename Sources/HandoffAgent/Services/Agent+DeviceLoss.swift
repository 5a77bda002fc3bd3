import HandoffCore
import HandoffTrust

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Agent {
    // MARK: A device lost mid-continuation

    /// Fetches an activity from `peer`, unless liveness finds the device unreachable first: then
    /// the fetch is cut off at once with 4609 saying so, rather than waiting out
    /// `limits.fetchTimeout` and blaming a slow app (4610).
    func fetchWhileReachable(_ request: FetchRequest, from peer: PeerRecord) async -> Result<FetchedActivity, HandoffError> {
        let client = self.client
        guard let deviceID = peer.deviceID else { return await client.fetchActivity(request, from: peer.endpoint, peerName: peer.name) }
        let watch = UUID.random()
        let lost = lostDevices
        _ = lost.open(watch)
        fetchesInFlight[deviceID, default: []].insert(watch)
        let result = await withTaskGroup(of: Result<FetchedActivity, HandoffError>?.self) { group in
            group.addTask {
                let fetched = await client.fetchActivity(request, from: peer.endpoint, peerName: peer.name)
                lost.resolve(watch, with: nil)  // the device was not lost: the watch ends
                return fetched
            }
            group.addTask {
                guard let reason = await lost.answer(for: watch) else { return nil }
                return .failure(.connectionUnavailable(reason))
            }
            var first: Result<FetchedActivity, HandoffError>?
            while let next = await group.next() {
                guard let next else { continue }
                first = next
                break
            }
            // A lost device's fetch is cancelled: its connection closes and the task ends.
            group.cancelAll()
            return first ?? .failure(.handoffFailed("internal error: the fetch ended without a result"))
        }
        fetchesInFlight[deviceID]?.remove(watch)
        if fetchesInFlight[deviceID]?.isEmpty == true { fetchesInFlight.removeValue(forKey: deviceID) }
        return result
    }

    /// Liveness found a device unreachable: its fetches in flight fail now with 4609.
    func abandonFetches(from deviceID: DeviceID, name: String, lastHeard: Date?) {
        guard let watches = fetchesInFlight.removeValue(forKey: deviceID) else { return }
        let heard = lastHeard.map { "last heard \(ContinuationSource.describe($0, now: wallClock()))" } ?? "never heard"
        let reason = "\(name) stopped answering while its activity was being fetched (\(heard)); continue it once \(name) is back"
        for watch in watches { lostDevices.resolve(watch, with: reason) }
        logger.info("cut off continuations from an unreachable device", metadata: ["handoff.peer": "\(name)", "handoff.count": "\(watches.count)"])
    }
}
