import HandoffCore
import HandoffTransport
import HandoffTrust
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Agent {
    // MARK: Continuing

    /// Continues a peer's activity here: fetch it, then hand it to the handlers. A second request
    /// for an activity already being continued waits for the first and gets its result, so the
    /// handlers run once.
    ///
    /// With an `idempotencyKey`, the continuation happens at most once per key: a retry with the
    /// same key (after a lost reply, say) gets the first result, marked `"replayed": true`, and
    /// runs no handler. A continuation that failed before any handler ran may be retried with the
    /// same key. The continuation runs to its end even when the caller goes away.
    public func continueActivity(id: UUID, idempotencyKey: String? = nil) async -> Result<ContinueResult, HandoffError> {
        let caller = UUID.random()
        switch continuations.request(id, idempotencyKey: idempotencyKey, caller: caller, now: timeline.now) {
        case .replay(let outcome):
            logger.info("continuation replayed", metadata: ["handoff.id": "\(id)", "handoff.key": "\(idempotencyKey ?? "")"])
            return outcome
        case .answer(let outcome):
            return outcome
        case .wait:
            // Opened before this actor suspends: no answer can come before it.
            _ = continuationAnswers.open(caller)
        case .start(let id):
            _ = continuationAnswers.open(caller)
            // In the background service, so that a caller that goes away (a closed control
            // connection) does not cut the continuation short.
            background.spawn { await self.runContinuation(id: id) } ifStopped: { [continuationAnswers] in
                continuationAnswers.close(answering: .failure(.connectionUnavailable("handoffd is stopping; continue the activity once it runs again")))
            }
        }
        return await continuationAnswers.answer(for: caller)
    }

    /// Runs one continuation and hands its result to everyone the coordinator says waits for it.
    private func runContinuation(id: UUID) async {
        let (outcome, handlerStarted) = await performContinuation(id: id)
        noticeContinuation(of: id, outcome)
        for (caller, answer) in continuations.finished(id, outcome: outcome, handlerStarted: handlerStarted, now: timeline.now) {
            continuationAnswers.resolve(caller, with: answer)
        }
    }

    private func performContinuation(id: UUID) async -> (Result<ContinueResult, HandoffError>, handlerStarted: Bool) {
        let advertised: PeerRecord, offered: ActivityAdvertisement.Current
        switch ContinuationSource.find(id, in: directory, now: wallClock()) {
        case .failure(let error): return (.failure(error), false)
        case .success(let source): (advertised, offered) = source
        }
        let request = FetchRequest(activityID: id, continuationID: UUID.random())
        // Apps and handlers are told the name this host gave the device when pairing, not the
        // name the device gives itself.
        let peer = advertised.named(trustedName(of: advertised.deviceID))
        var metadata: Logger.Metadata = ["handoff.peer": "\(peer.name)", "handoff.id": "\(id)", "handoff.continuation": "\(request.continuationID)"]
        // One line at info per continuation, its outcome ("continuation delivered" or
        // "continuation failed"); this one and a handler's success are at debug. Each line cost
        // about 15 µs of the agent's CPU.
        logger.debug("continuing activity", metadata: metadata)

        // The app is chosen before the data arrives (willContinue), from the advertised type and team.
        let app = await app(for: offered.activityType, fromTeam: offered.teamID,
                            launchOptions: .continuing(offered.activityType.rawValue, continuationID: request.continuationID))
        let continuing = AppEvent.Continuing(continuationID: request.continuationID, activityType: offered.activityType.rawValue, peer: peer.name)
        await announce(continuing, of: id, to: app?.link)

        var handlerStarted = false
        let result = await fetchAndDeliver(request, from: peer, offered: offered, app: app, handlerStarted: &handlerStarted)
        switch result {
        case .failure(let error):
            metadata["handoff.error"] = "\(error.code.rawValue)"
            logger.info("continuation failed", metadata: metadata.merging(["handoff.message": "\(error.message)"]) { $1 })
            if let app { await tell(app.link, .didFail(continuing, error: error)) }
        case .success(let delivered):
            logger.info("continuation delivered", metadata: metadata.merging(["handoff.by": "\(delivered.by)"]) { $1 })
            if let error = await client.notifyContinued(request, at: peer.endpoint) {
                logger.info("could not tell the source it was continued", metadata: metadata.merging(["handoff.message": "\(error.message)"]) { $1 })
            }
        }
        return (result, handlerStarted)
    }

    /// How long the agent waits for an app's answer to `willContinue` before it shows its own
    /// "continuing…" notification.
    static let willContinueAnswerTimeout: Duration = .seconds(2)

    /// `willContinue` to the app that will continue activity `id` (sent now, before the
    /// `continue` that follows), then the `continuing` event once the app answered: its
    /// `willContinueUserActivity(withType:)` returned true when it tells the person itself
    /// (`appNotifies`, and the agent shows no "continuing…" notification). Without an app, or
    /// without an answer within ``willContinueAnswerTimeout``, the agent shows its own. The
    /// answer is awaited in the background: the fetch does not wait for it.
    private func announce(_ continuing: AppEvent.Continuing, of id: UUID, to app: ControlLink?) async {
        guard let app else { return publishContinuing(id: id, peer: continuing.peer, appNotifies: false) }
        let replyID = await send(app, .willContinue(continuing))
        background.spawn { [self] in
            let appNotifies = await answer(to: replyID, timeout: Self.willContinueAnswerTimeout)?.notifiesPerson == true
            await publishContinuing(id: id, peer: continuing.peer, appNotifies: appNotifies)
        }
    }

    private func publishContinuing(id: UUID, peer: String, appNotifies: Bool) {
        events.publish([AgentEvent(.continuing(id: id, peer: peer, appNotifies: appNotifies), at: wallClock())])
    }

    private func fetchAndDeliver(_ request: FetchRequest, from peer: PeerRecord, offered: ActivityAdvertisement.Current,
                                 app: (manifest: AppManifest, link: ControlLink)?, handlerStarted: inout Bool) async -> Result<ContinueResult, HandoffError> {
        let fetched: FetchedActivity
        switch await fetchWhileReachable(request, from: peer) {
        case .failure(let error): return .failure(error)
        case .success(let value): fetched = value
        }
        let activity = fetched.activity
        if let problem = FetchedActivityCheck.problem(activity, sourceTeam: fetched.source?.teamID, offered: offered, from: peer.name,
                                                      app: app?.manifest, now: wallClock()) {
            return .failure(problem)
        }
        var response = ContinueResult(peer: peer.name, continuationID: request.continuationID, activity: activity.json, by: "")
        if let app {
            let continuing = AppEvent.Continuing(continuationID: request.continuationID, activityType: activity.activityType.rawValue, peer: peer.name)
            handlerStarted = true
            // Recorded before the app hears of it: an app may open streams (openStreams, by this
            // continuationID) as soon as it has the activity, before its reply reaches the agent.
            deliveredToApps.append((request.continuationID, activity.id, peer))
            if deliveredToApps.count > 256 { deliveredToApps.removeFirst() }
            let reply = await ask(app.link, .continueActivity(continuing, activity: activity, sourceApplication: fetched.source?.bundleID),
                                  timeout: configuration.limits.handlerTimeout)
            guard let reply, reply.handled == true else {
                deliveredToApps.removeAll { $0.continuationID == request.continuationID }
                guard let reply else {
                    return .failure(.handoffFailed("the app \(app.manifest.identity.bundleID) did not answer within limits.handlerTimeout"))
                }
                if reply.launchDeclined == true { return .failure(LaunchOptions.declined(by: app.manifest.identity.bundleID)) }
                // The app declined: the handlers, then the web page, as when no app takes it.
                logger.info("app declined the activity", metadata: ["handoff.app": "\(app.manifest.identity.bundleID)"])
                return await deliverToHandlers(activity, from: peer, response: response, handlerStarted: &handlerStarted)
            }
            response.by = "app"
            response.app = app.manifest.identity.bundleID
            return .success(response)
        }
        return await deliverToHandlers(activity, from: peer, response: response, handlerStarted: &handlerStarted)
    }

    /// The configured handlers, then the web page: for an activity no app took.
    private func deliverToHandlers(_ activity: Activity, from peer: PeerRecord, response: ContinueResult,
                                   handlerStarted: inout Bool) async -> Result<ContinueResult, HandoffError> {
        var response = response
        let timeout = configuration.limits.handlerTimeout
        let streams: @Sendable ([String], [String: String]) async -> Result<CommandOutcome, HandoffError> = { command, environment in
            await StreamingCommand.run(command, environment: environment, timeout: timeout, source: peer, activityID: activity.id, agent: self)
        }
        handlerStarted = true
        switch await dispatcher.deliver(activity, json: response.activity, from: peer.name, streams: streams) {
        case .failure(let error): return .failure(error)
        case .success(let delivery):
            response.by = delivery.by
            response.command = delivery.command
            return .success(response)
        }
    }
}
