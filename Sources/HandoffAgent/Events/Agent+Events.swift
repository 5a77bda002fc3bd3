import HandoffCore
import HandoffTrust

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Agent {
    // MARK: Events (`handoff watch`, apps, notifications) and the pause switch

    /// Shows the directory's offers and reachable peers to ``offerWatch`` and publishes what changed.
    func noticeOffers() {
        noticeClipboardItems()
        events.publish(offerWatch.observe(offered: directory.offered, reachablePeers: directory.reachablePeerNames, at: wallClock()))
    }

    /// A continuation here ended: `continued` or `continueFailed`.
    func noticeContinuation(of id: UUID, _ outcome: Result<ContinueResult, HandoffError>) {
        switch outcome {
        case .success(let result): events.publish([AgentEvent(.continued(id: id, peer: result.peer, by: result.by), at: wallClock())])
        case .failure(let error): events.publish([AgentEvent(.continueFailed(id: id, error: error), at: wallClock())])
        }
    }

    /// Whether handoff is paused here (`handoff pause`).
    public var isPaused: Bool { settings.paused }

    /// `handoff pause` (true) and `handoff resume` (false): stops or restarts advertising this
    /// host's activities and serving them to peers, and the desktop notifications. Saved in the
    /// state directory, so it outlasts a restart. Returns the state now.
    public func setPaused(_ paused: Bool) throws(HandoffError) -> PauseResult {
        guard paused != settings.paused else { return PauseResult(paused: paused, changed: false) }
        var next = settings
        next.paused = paused
        if let directory = security.stateDirectory {
            do { try next.save(directory: directory) } catch {
                throw .handoffFailed("cannot \(paused ? "pause" : "resume"): \(error.message)")
            }
        }
        settings = next
        logger.notice(paused ? "handoff paused: advertising nothing until `handoff resume`" : "handoff resumed")
        refreshAdvertisement()
        events.publish([AgentEvent(paused ? .paused : .resumed, at: wallClock())])
        return PauseResult(paused: paused, changed: true)
    }
}
