import HandoffCore
import HandoffTransport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Agent {
    // MARK: Continuation streams

    /// Where the activity of a continuation delivered to an app came from.
    public func streamSource(continuationID: UUID) -> (activityID: UUID, peer: PeerRecord)? {
        deliveredToApps.last { $0.continuationID == continuationID }.map { ($0.activityID, $0.peer) }
    }

    /// A peer asks for streams to one of our activities: the owning app gets `streamsRequested`
    /// and must accept (`acceptStreams`, ``claimStreams(_:)``) within `limits.fetchTimeout`.
    /// Returns once the app's session has joined the peer connection's splice with its own.
    func awaitStreamApp(_ request: StreamRequest, peer: StreamSplice, relay: StreamRelay) async -> Result<Void, HandoffError> {
        guard let activity = store.activity(id: request.activityID) else {
            return .failure(.handoffFailed("activity \(request.activityID) is no longer offered by \(configuration.name)"))
        }
        guard activity.supportsContinuationStreams else {
            return .failure(.connectionUnavailable("activity \(activity.activityType) does not support continuation streams"))
        }
        guard let owner = store.owner(of: request.activityID), let app = app(on: owner.connectionID) else {
            return .failure(.connectionUnavailable("the app that published \(activity.activityType) is not running on \(configuration.name)"))
        }
        // The peer chooses the stream ID: one already waiting is refused, never overwritten (the
        // first request's session would wait for ever).
        guard pendingStreams[request.streamID] == nil else {
            return .failure(.handoffFailed("stream \(request.streamID) is already being opened; use a new stream ID for each stream pair"))
        }
        let timeout = configuration.limits.fetchTimeout
        let accepted = await waitForAnswer(timeout: timeout) { (continuation: CheckedContinuation<Bool, Never>) in
            pendingStreams[request.streamID] = (peer, relay, continuation)
        } start: {
            await self.tell(app.link, .streamsRequested(activityID: request.activityID, streamID: request.streamID))
        } expire: {
            await self.abandonStream(request.streamID)
        }
        guard accepted else {
            return .failure(.remoteTimedOut("the app \(owner.identity.bundleID) did not accept the continuation streams within \(timeout)"))
        }
        logger.info("continuation streams open", metadata: ["handoff.id": "\(request.activityID)", "handoff.stream": "\(request.streamID)"])
        return .success(())
    }

    private func abandonStream(_ streamID: UUID) {
        pendingStreams.removeValue(forKey: streamID)?.continuation.resume(returning: false)
    }

    /// The source app claims a stream request: returns the peer connection's splice, the pair's
    /// relay, and the continuation that releases the peer's session (with true once the splices
    /// are joined, false if they could not be), or nil when no request with this ID is waiting.
    func claimStreams(_ streamID: UUID) -> (peer: StreamSplice, relay: StreamRelay, release: CheckedContinuation<Bool, Never>)? {
        guard let pending = pendingStreams.removeValue(forKey: streamID) else { return nil }
        return (pending.peer, pending.relay, pending.continuation)
    }
}
