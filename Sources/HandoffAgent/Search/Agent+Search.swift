import HandoffCore
import HandoffSaved
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Agent {
    // MARK: Saved activities and search

    /// Saves a published activity for search when it is `isEligibleForSearch`; a failure is
    /// logged and the activity stays published.
    public nonisolated func saveForSearch(_ activity: Activity, bundleID: String?) async {
        guard activity.isEligibleForSearch else { return }
        do {
            try await savedActivities.index().save(activity, bundleID: bundleID, at: wallClock())
        } catch {
            logger.error("could not save the activity for search", metadata: ["handoff.id": "\(activity.id)", "handoff.error": "\(error)"])
        }
    }

    /// The saved activities on this device that match `query`, best first.
    public nonisolated func searchSaved(_ query: String, limit: Int) async -> Result<[SavedActivity], HandoffError> {
        do {
            let index = try savedActivities.index()
            return .success(try await index.search(query, device: configuration.name, limit: limit, now: wallClock()))
        } catch let error as HandoffError {
            return .failure(error)
        } catch let error as SearchQueryError {
            return .failure(.handoffFailed(error.description))
        } catch {
            return .failure(.handoffFailed("the search failed: \(error)"))
        }
    }

    /// `search`: this device's saved activities, and with `devices == .all` those of every
    /// reachable paired device, merged best first. A device that does not answer within
    /// `limits.fetchTimeout` is listed in `unreachable`; the others' results still come.
    public func search(_ query: String, devices: ControlRequest.SearchScope, limit: Int) async -> Result<SearchResult, HandoffError> {
        let local = await searchSaved(query, limit: limit)
        guard case .success(var results) = local else { return local.map { SearchResult(results: $0) } }
        var unreachable: [String: String] = [:]
        if devices == .all {
            let peers = directory.all.filter { $0.deviceID.map(trust.isPaired) ?? false && directory.isReachable($0) }
            let names = Dictionary(peers.map { ($0.instanceName, trust.device($0.deviceID!)?.name ?? $0.name) }, uniquingKeysWith: { a, _ in a })
            let (transport, hello, clock, timeout) = (transport, hello, clock, configuration.limits.fetchTimeout)
            let request = PeerSearchRequest(query: query, limit: limit)
            await withTaskGroup(of: (PeerRecord, Result<[SavedActivity], HandoffError>).self) { group in
                for peer in peers {
                    group.addTask { (peer, await PeerSearchExchange.run(request, at: peer.endpoint, connector: transport, hello: hello, clock: clock, timeout: timeout)) }
                }
                for await (peer, answer) in group {
                    let name = names[peer.instanceName] ?? peer.name
                    switch answer {
                    // Each result is named by the name this host stored when pairing.
                    case .success(let found): results += found.map { var result = $0; result.device = name; return result }
                    case .failure(let error): unreachable[name] = error.message
                    }
                }
            }
            results.sort { ($0.rank, $1.savedAt) < ($1.rank, $0.savedAt) }
            results = Array(results.prefix(limit))
        }
        return .success(SearchResult(results: results, unreachable: unreachable))
    }

    /// `deleteSaved`: an app deletes what it saved, the person at the CLI anything.
    public nonisolated func deleteSaved(_ which: ControlRequest.SavedSelection, byApp bundleID: String?) async -> Result<DeleteSavedResult, HandoffError> {
        let deleter: SavedActivityIndex.Deleter = bundleID.map { .app(bundleID: $0) } ?? .user
        do {
            let index = try savedActivities.index()
            switch which {
            case .all: return .success(DeleteSavedResult(deleted: try await index.deleteAll(by: deleter)))
            case .persistentIdentifiers(let ids): return .success(DeleteSavedResult(deleted: try await index.delete(persistentIdentifiers: ids, by: deleter)))
            }
        } catch let error as HandoffError {
            return .failure(error)
        } catch {
            return .failure(.handoffFailed("deleting saved activities failed: \(error)"))
        }
    }

    /// A paired peer's `searchRequest`: the answer frame.
    nonisolated func answerSearch(_ request: PeerSearchRequest) async -> Frame {
        switch await searchSaved(request.query, limit: request.limit) {
        case .success(let results): PeerMessage.searchResults(results).frame
        case .failure(let error): PeerMessage.error(code: error.code.rawValue, message: error.message).frame
        }
    }
}
