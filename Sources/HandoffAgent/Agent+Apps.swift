import HandoffConfiguration
import HandoffCore
import HandoffTrust

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Agent {
    // MARK: Apps: the shell of ``AppRegistry``

    /// The app registered on control connection `connection`, with that connection.
    func app(on connection: UUID) -> (manifest: AppManifest, link: ControlLink)? {
        guard let manifest = registry.registered[connection], let link = appLinks[connection] else { return nil }
        return (manifest, link)
    }

    /// The registered app with this bundle ID, with its connection.
    func app(bundleID: String) -> (manifest: AppManifest, link: ControlLink)? {
        registry.connection(of: bundleID).flatMap { app(on: $0) }
    }

    /// An app declared itself on a control connection; refused if its bundle ID is another live connection's (``AppOwnership``).
    /// Returns why the agent started it, when it did (``LaunchOptions``).
    @discardableResult
    public func registerApp(_ manifest: AppManifest, link: ControlLink) async throws(HandoffError) -> LaunchOptions {
        let waiters: [UUID]
        switch registry.register(manifest, on: link.id) {
        case .failure(let refusal): throw refusal
        case .success(let waiting): waiters = waiting
        }
        appLinks[link.id] = link
        let options = registry.takeLaunchOptions(for: manifest.identity.bundleID)
        await link.register(manifest)
        for waiter in waiters { registrations.resolve(waiter, with: ()) }
        logger.info("app registered", metadata: [
            "handoff.app": "\(manifest.identity.bundleID)", "handoff.team": "\(manifest.identity.teamID)",
            "handoff.types": "\(manifest.activityTypes.map(\.rawValue))",
        ])
        return options
    }

    /// A control connection closed: its app is gone, its activities are resigned (as when an app
    /// quits) and events waiting for its replies are answered with nothing.
    public func controlConnectionClosed(_ link: ControlLink) {
        let (app, unanswered) = registry.disconnected(link.id)
        appLinks.removeValue(forKey: link.id)
        if let app { logger.info("app disconnected", metadata: ["handoff.app": "\(app.identity.bundleID)"]) }
        execute(pairing.connectionClosed(link.id))
        let resigned = store.resignAll(ownedBy: link.id)
        if !resigned.isEmpty { refreshAdvertisement() }
        for id in unanswered { replies.resolve(id, with: nil) }
    }

    /// An app answered an event, over `link` (when from a connection): the one the event went to, else 4608 (``AppOwnership``).
    public func resolveReply(_ id: UUID, with reply: AppReply?, from link: UUID? = nil) throws(HandoffError) {
        if let refusal = registry.replyArrived(id, over: link) { throw refusal }
        replies.resolve(id, with: reply)
    }

    /// Sends an event that needs an answer; nil when the app does not answer within `timeout`
    /// (on the agent's clock), goes away, or the asking task is cancelled.
    func ask(_ link: ControlLink, _ event: AppEvent, timeout: Duration) async -> AppReply? {
        let replyID = expectReply(from: link)
        let message = AppEventMessage(event, replyID: replyID).json
        return await answer(to: replyID, timeout: timeout) {
            if await !link.send(message) { try? await self.resolveReply(replyID, with: nil) }
        }
    }

    /// Sends an event that needs an answer at once, in order with the events sent after it, and
    /// returns its reply ID: ``answer(to:timeout:start:)`` waits for the answer later (nil as
    /// ``ask(_:_:timeout:)`` gives it).
    func send(_ link: ControlLink, _ event: AppEvent) async -> UUID {
        let replyID = expectReply(from: link)
        if await !link.send(AppEventMessage(event, replyID: replyID).json) { try? resolveReply(replyID, with: nil) }
        return replyID
    }

    /// A new reply ID, ready before the event goes out: an answer that comes at once is kept.
    private func expectReply(from link: ControlLink) -> UUID {
        let replyID = UUID.random()
        _ = replies.open(replyID)
        registry.expectReply(replyID, from: link.id)
        return replyID
    }

    /// The answer to `replyID`, or nil after `timeout`; `start` (sending the event) runs alongside.
    func answer(to replyID: UUID, timeout: Duration, start: @escaping @Sendable () async -> Void = {}) async -> AppReply? {
        await waitForAnswer(timeout: timeout) { (continuation: CheckedContinuation<AppReply?, Never>) in
            replies.wait(for: replyID, continuation)
        } start: {
            await start()
        } expire: {
            try? await self.resolveReply(replyID, with: nil)
        }
    }

    /// Suspends until the continuation that `register` stores is resumed. `start` runs alongside
    /// (to send the request). After `timeout` on the agent's clock, or as soon as the waiting
    /// task is cancelled (its connection closed), `expire` runs and must resume it if still
    /// waiting. Whoever resumes removes the continuation from where `register` put it, so it
    /// resumes once.
    func waitForAnswer<T: Sendable>(
        timeout: Duration,
        register: (CheckedContinuation<T, Never>) -> Void,
        start: @escaping @Sendable () async -> Void = {},
        expire: @escaping @Sendable () async -> Void
    ) async -> T {
        // `isolation: self` is what keeps `register` on the agent. Swift 6.3 runs a non-Sendable
        // closure that does not capture the actor off it (the task group's body here), and
        // `withCheckedContinuation` would take that closure's isolation: `register` then wrote
        // the agent's tables from another thread, which crashed handoffd under
        // StreamAbuseOnHostsTests. The check below names the agent through a plain `any Actor`
        // (naming `self` would itself put the closures on the agent, and hide what it checks),
        // so the in-memory whole-agent tests (replies, launches, stream requests) trap if the
        // registration ever runs elsewhere; ARCHITECTURE.md, "A closure that must run on an
        // actor names it".
        let agent: any Actor = self
        return await Deadline.watch(timeout, on: clock, expiresOnCancellation: true, onExpiry: expire) {
            await withTaskGroup(of: Void.self) { group in
                await withCheckedContinuation(isolation: self) { (continuation: CheckedContinuation<T, Never>) in
                    agent.assertIsolated("an answer's continuation is registered on the agent")
                    register(continuation)
                    group.addTask { await start() }
                }
            }
        }.value
    }

    /// Sends an event that needs no answer.
    func tell(_ link: ControlLink, _ event: AppEvent) async {
        await link.send(AppEventMessage(event).json)
    }

    /// The app that should continue an activity of `type` from `team` (``AppRegistry/route(_:fromTeam:)``):
    /// one that is not running but has a manifest in `appsDirectory` is started first, with `options`.
    func app(for type: ActivityType, fromTeam team: String?, launchOptions options: LaunchOptions = .none) async -> (manifest: AppManifest, link: ControlLink)? {
        await app(routedBy: { $0.route(type, fromTeam: team) }, launchOptions: options)
    }

    /// The app that should continue a link's content of `type` (``AppRegistry/route(linkOf:)``),
    /// started first as ``app(for:fromTeam:launchOptions:)`` starts one.
    func app(forLinkOf type: ActivityType, launchOptions options: LaunchOptions = .none) async -> (manifest: AppManifest, link: ControlLink)? {
        await app(routedBy: { $0.route(linkOf: type) }, launchOptions: options)
    }

    private func app(routedBy route: (AppRegistry) -> AppRegistry.Route, launchOptions options: LaunchOptions) async -> (manifest: AppManifest, link: ControlLink)? {
        switch route(registry) {
        case .none:
            return nil
        case .running(let connection, _):
            return app(on: connection)
        case .launch(let candidate):
            await launch(candidate, options: options)
            guard case .running(let connection, _) = route(registry) else { return nil }
            return app(on: connection)
        }
    }

    /// Starts an app from its manifest and waits until it registers (at most limits.handlerTimeout).
    /// One launch per app at a time (``LaunchGate``): a request while it starts waits for it; a
    /// peer device (`device`) that has caused too many launches lately gets none. The app learns
    /// `options` when it registers.
    func launch(_ app: LaunchableApp, forDevice device: DeviceID? = nil, options: LaunchOptions = .none) async {
        let bundleID = app.manifest.identity.bundleID
        switch registry.requestLaunch(bundleID, forDevice: device?.description, options: options, now: timeline.now) {
        case .join:
            await waitForRegistration(of: bundleID)
            return
        case .refuse(let retryAfter):
            logger.info("not launching an app: the device asked for too many launches", metadata: [
                "handoff.app": "\(bundleID)", "handoff.device": "\(device?.shortID ?? "-")", "handoff.retryAfter": "\(retryAfter)",
            ])
            return
        case .launch:
            break
        }
        defer { registry.launchEnded(bundleID) }
        let pid: Int32
        do {
            let environment = ChildEnvironment.current(adding: ["HANDOFF_SOCKET": configuration.socketPath])
            // Never stopped by the agent, not even at its shutdown, and not its child (ChildProcess.start).
            pid = try await ChildProcess.start(app.launch, environment: environment, output: .descriptor(2))
        } catch {
            logger.warning("cannot launch app", metadata: ["handoff.app": "\(bundleID)", "handoff.error": "\(error)"])
            return
        }
        logger.info("launched app", metadata: ["handoff.app": "\(bundleID)", "handoff.pid": "\(pid)"])
        await waitForRegistration(of: bundleID)
    }

    /// Waits until an app with this bundle ID registers, at most limits.handlerTimeout. When the
    /// time is up, every caller waiting for it stops waiting.
    func waitForRegistration(of bundleID: String) async {
        let waiter = UUID.random()
        guard registry.awaitRegistration(of: bundleID, by: waiter) else { return }
        _ = registrations.open(waiter)
        await waitForAnswer(timeout: configuration.limits.handlerTimeout) { (continuation: CheckedContinuation<Void, Never>) in
            registrations.wait(for: waiter, continuation)
        } expire: {
            await self.stopWaiting(for: bundleID)
        }
    }

    private func stopWaiting(for bundleID: String) {
        for waiter in registry.stopWaiting(for: bundleID) { registrations.resolve(waiter, with: ()) }
    }
}
