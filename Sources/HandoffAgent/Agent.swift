import HandoffCore
import HandoffDiscovery
import HandoffTransport
import HandoffTrust
import Dispatch
import Logging
import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The agent: holds the local activities, knows the peers, answers peers' fetches, continues
/// peers' activities and hands them to the local handlers. Pure state lives in ``ActivityStore``
/// and ``PeerDirectory``; this actor is the shell that does the I/O.
public actor Agent {
    public nonisolated let configuration: AgentConfiguration
    /// A random ID for this run of the agent, advertised in TXT and sent in hello.
    public nonisolated let agentID: String
    public nonisolated let hello: PeerHello
    let logger: Logger
    nonisolated let advertiser: ServiceAdvertiser
    let client: ContinuationClient<ContinuousClock>
    /// Connections to peers kept open between continuations (``IdleConnectionPool``).
    public nonisolated let fetchPool: IdleConnectionPool<ContinuousClock>
    let dispatcher: ActivityDispatcher
    /// The bound peer port.
    public nonisolated let port: Int
    /// This device's identity, TLS and open connections.
    public nonisolated let security: AgentSecurity
    /// This device's ID.
    public nonisolated var deviceID: DeviceID { security.identity.deviceID }
    /// The DNS-SD instance name: random, so that it tells unpaired observers nothing.
    public nonisolated let instanceName: String
    /// How the agent reaches peers, for every kind of connection: fetches, streams, `open`,
    /// pairing and key exchange (TCP with TLS in the daemon, in-memory pipes in tests).
    public nonisolated let transport: any PeerTransport
    /// The clock of the sessions' deadlines (``Deadline``): pairing, key exchange, stream and open handshakes.
    nonisolated let clock: any Clock<Duration>

    var store = ActivityStore()
    var directory: PeerDirectory
    private var advertisedTXT: [UInt8]
    /// The paired devices and the advertising keys.
    var trust: TrustStore
    /// What the advertisement was last sealed from, so an unchanged one is not sealed again.
    private var sealedFrom: SealInput
    /// The timestamp of the last sealed advertisement (ms since 1970, strictly increasing).
    private var sealTimestamp: UInt64
    /// The newest advertisement taken from each device (older ones are replays), as saved.
    var seenAdvertisements: SeenAdvertisementsFile
    /// Advertisements this agent cannot open (unpaired devices, or keys not yet learnt), by
    /// instance name.
    var unreadable: [String: UnreadableService] = [:]
    /// When to connect to the senders of unreadable advertisements (bounded, backed off).
    var keyLearning = KeyLearning()
    /// How many times DNS-SD resolved each paired device: liveness probes at once when it grows.
    var resolveGenerations: [DeviceID: Int] = [:]
    /// The open pairing window (`handoff pair --accept`), if any.
    var pairingWindow: PairingWindow?
    /// The faults this agent injects now: `faults` from the configuration, changed by
    /// `handoff fault` (docs/FAULTS.md).
    public internal(set) var faults: FaultPlan
    /// Continuations in flight, by activity ID, with the callers waiting for the same result.
    var inFlight: [UUID: [CheckedContinuation<Result<ContinueResult, HandoffError>, Never>]] = [:]
    /// Continuations by the caller's idempotency key: a retry after a lost reply is answered
    /// from here and runs no handler again.
    var ledger = IdempotencyLedger<Result<ContinueResult, HandoffError>, ContinuousClock.Instant>()
    /// Callers retrying a key whose continuation is still running.
    var keyWaiters: [String: [CheckedContinuation<Result<ContinueResult, HandoffError>, Never>]] = [:]
    /// Apps connected to the control socket, by connection.
    var apps: [UUID: (manifest: AppManifest, link: ControlLink)] = [:]
    /// Apps the agent may start (config `appsDirectory`).
    let launchable: [LaunchableApp]
    /// Single-flight, per-device rate-limited app launches.
    private var launchGate = LaunchGate<ContinuousClock.Instant>()
    /// Callers waiting for an app to register, by bundle ID.
    private var registrationWaiters: [String: [CheckedContinuation<Void, Never>]] = [:]
    /// Events waiting for an app's reply, by reply ID, with the connection they went to.
    /// Apps' replies to events, by `replyID` (nil: no answer), and the connection each event went to.
    private let replies = RequestCorrelator<UUID, AppReply?>()
    private var replyLinks: [UUID: UUID] = [:]
    /// Continuations delivered to apps, newest last: where their activity came from, so the app
    /// can ask for continuation streams.
    var deliveredToApps: [(continuationID: UUID, activityID: UUID, peer: PeerRecord)] = []
    /// The continuation stream pairs this agent relays.
    nonisolated let streamRelays = StreamRelays()
    /// Continuation stream pairs relayed now, as either side's agent (`handoff status`).
    public nonisolated var openStreamPairs: Int { streamRelays.open }
    /// Inbox bytes per peer device (`limits.maxInboxBytesPerDevice`).
    public nonisolated let inboxQuota: InboxQuota
    /// Peers' stream requests waiting for the source app to accept, by stream ID.
    var pendingStreams: [UUID: (peer: StreamSplice, relay: StreamRelay, continuation: CheckedContinuation<Bool, Never>)] = [:]

    /// - Parameters:
    ///   - port: the port the peer listener is bound to (advertised).
    ///   - transport: how to reach peers (``TCPPeerConnector`` in the daemon).
    ///   - security: the device identity and the paired devices.
    ///   - clock: measures the sessions' deadlines; a manual clock in tests.
    public init(configuration: AgentConfiguration, port: Int, transport: any PeerTransport, logger: Logger,
                launchable: [LaunchableApp] = [], security: AgentSecurity, clock: any Clock<Duration> = ContinuousClock()) {
        self.configuration = configuration
        self.clock = clock
        self.faults = configuration.faults
        self.launchable = launchable
        self.port = port
        self.logger = logger
        self.security = security
        self.trust = security.initialTrust
        self.transport = transport
        let agentID = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        self.agentID = agentID
        self.instanceName = "handoff-" + agentID.prefix(12)
        self.hello = PeerHello(agentID: agentID, name: configuration.name)
        self.directory = PeerDirectory(ownAgentID: agentID)
        let sealInput = SealInput(
            plaintext: ActivityAdvertisement(agentID: agentID, sequence: 0, current: nil, name: configuration.name)
                .txtRecord(maximumSize: SealedAdvertisement.maximumPlaintextBytes),
            pairingName: nil, key: security.initialTrust.ownAdvertisingKey, instanceName: instanceName)
        self.sealedFrom = sealInput
        self.seenAdvertisements = SeenAdvertisementsFile(seen: security.initialSeen)
        // Past the last record of our own that peers may have taken, even if the clock went back.
        let ownLast = security.initialSeen.last[security.identity.deviceID]?.timestamp ?? 0
        self.sealTimestamp = max(UInt64(max(0, Date().timeIntervalSince1970 * 1000)), ownLast &+ 1)
        let initialTXT = sealInput.seal(timestamp: sealTimestamp, identity: security.identity)
        self.advertisedTXT = initialTXT
        self.advertiser = ServiceAdvertiser(
            name: instanceName, serviceType: configuration.serviceType, port: UInt16(port), txtRecord: initialTXT, logger: logger)
        let pool = IdleConnectionPool(clock: ContinuousClock())
        self.fetchPool = pool
        self.client = ContinuationClient(
            connector: transport, clock: ContinuousClock(), hello: hello,
            limits: FrameLimits(maxUserInfoBytes: configuration.limits.maxUserInfoBytes),
            timeouts: ContinuationTimeouts(connect: configuration.limits.connectTimeout, fetch: configuration.limits.fetchTimeout),
            pool: pool)
        self.dispatcher = ActivityDispatcher(configuration: configuration, logger: logger)
        self.inboxQuota = InboxQuota(limit: configuration.limits.maxInboxBytesPerDevice)
    }

    /// The DNS-SD registration, to run in the service group.
    public nonisolated var advertiserService: ServiceAdvertiser { advertiser }

    // MARK: Local activities

    /// Makes an activity current here and advertises it; returns its ID. Never replaces another connection's (``AppOwnership``).
    public func publish(_ activity: Activity, owner: ActivityStore.Owner? = nil) throws(HandoffError) -> UUID {
        guard store.publish(activity, owner: owner) else { throw AppOwnership.notYours(activity.id, "replace") }
        logger.info("published activity", metadata: ["handoff.activity": "\(activity.activityType)", "handoff.id": "\(activity.id)"])
        refreshAdvertisement()
        return activity.id
    }

    /// Stops offering an activity, for control connection `connection` (nil: no app), if it published it (``AppOwnership``).
    public func resign(id: UUID, by connection: UUID? = nil) throws(HandoffError) {
        guard store.mayChange(id, by: connection) else { throw AppOwnership.notYours(id, "resign") }
        guard let activity = store.resign(id: id) else { throw .handoffFailed("this agent holds no activity \(id); `handoff status` lists the ones it holds") }
        logger.info("resigned activity", metadata: ["handoff.activity": "\(activity.activityType)", "handoff.id": "\(id)"])
        refreshAdvertisement()
    }

    /// The TXT record the agent advertises now.
    public var advertisedTXTRecord: [UInt8] { advertisedTXT }

    /// Drops expired activities and updates the advertisement.
    public func expireActivities(now: Date = Date()) {
        let expired = store.removeExpired(at: now)
        for activity in expired {
            logger.info("activity expired", metadata: ["handoff.activity": "\(activity.activityType)", "handoff.id": "\(activity.id)"])
        }
        refreshAdvertisement(now: now)
    }

    /// A held activity, for a peer's fetch.
    public func lookUp(id: UUID) -> Activity? { store.activity(id: id) }

    /// Seals the current advertisement for the paired devices and publishes it, unless nothing
    /// changed (the activity, the pairing window, the advertising key or the registered instance name).
    func refreshAdvertisement(now: Date = Date()) {
        let current = store.current(at: now).map {
            ActivityAdvertisement.Current(id: $0.id, activityType: $0.activityType, title: $0.title, teamID: store.owner(of: $0.id)?.identity.teamID)
        }
        let plaintext = ActivityAdvertisement(agentID: agentID, sequence: store.sequence, current: current, name: configuration.name)
            .txtRecord(maximumSize: SealedAdvertisement.maximumPlaintextBytes)
        let input = SealInput(plaintext: plaintext, pairingName: pairingWindow == nil ? nil : configuration.name, key: trust.ownAdvertisingKey,
                              instanceName: advertiser.registeredName ?? instanceName)
        guard input != sealedFrom else { return }
        sealedFrom = input
        sealTimestamp = max(UInt64(max(0, now.timeIntervalSince1970 * 1000)), sealTimestamp + 1)
        let txt = input.seal(timestamp: sealTimestamp, identity: security.identity)
        advertisedTXT = txt
        advertiser.updateTXTRecord(txt)
    }

    // MARK: Apps

    /// An app declared itself on a control connection; refused if its bundle ID is another live connection's (``AppOwnership``).
    public func registerApp(_ manifest: AppManifest, link: ControlLink) async throws(HandoffError) {
        if let refusal = AppOwnership.refusal(manifest, on: link.id, registered: apps.mapValues(\.manifest)) { throw refusal }
        await link.register(manifest)
        apps[link.id] = (manifest, link)
        for waiter in registrationWaiters.removeValue(forKey: manifest.identity.bundleID) ?? [] { waiter.resume() }
        logger.info("app registered", metadata: [
            "handoff.app": "\(manifest.identity.bundleID)", "handoff.team": "\(manifest.identity.teamID)",
            "handoff.types": "\(manifest.activityTypes.map(\.rawValue))",
        ])
    }

    /// A control connection closed: its app is gone, its activities are resigned (as when an app
    /// quits) and events waiting for its replies are answered with nothing.
    public func controlConnectionClosed(_ link: ControlLink) {
        if let app = apps.removeValue(forKey: link.id) {
            logger.info("app disconnected", metadata: ["handoff.app": "\(app.manifest.identity.bundleID)"])
        }
        if let window = pairingWindow, window.link.id == link.id {
            closePairingWindow(window.id, .failure(.handoffFailed("pairing was cancelled")))
        }
        let resigned = store.resignAll(ownedBy: link.id)
        if !resigned.isEmpty { refreshAdvertisement() }
        for (id, owner) in replyLinks where owner == link.id {
            replyLinks.removeValue(forKey: id)
            replies.resolve(id, with: nil)
        }
    }

    /// An app answered an event, over `link` (when from a connection): the one the event went to, else 4608 (``AppOwnership``).
    public func resolveReply(_ id: UUID, with reply: AppReply?, from link: UUID? = nil) throws(HandoffError) {
        if let link, let owner = replyLinks[id], owner != link { throw AppOwnership.notYours(id, "answer") }
        replyLinks.removeValue(forKey: id)
        replies.resolve(id, with: reply)
    }

    /// Sends an event that needs an answer; nil when the app does not answer within `timeout`
    /// (on the agent's clock), goes away, or the asking task is cancelled.
    func ask(_ link: ControlLink, _ event: AppEvent, timeout: Duration) async -> AppReply? {
        let replyID = UUID()
        let message = AppEventMessage(event, replyID: replyID).json
        _ = replies.open(replyID)  // before sending: an answer that comes at once is kept
        replyLinks[replyID] = link.id
        return await waitForAnswer(timeout: timeout) { (continuation: CheckedContinuation<AppReply?, Never>) in
            replies.wait(for: replyID, continuation)
        } start: {
            if await !link.send(message) { try? await self.resolveReply(replyID, with: nil) }
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
        await Deadline.watch(timeout, on: clock, expiresOnCancellation: true, onExpiry: expire) {
            await withTaskGroup(of: Void.self) { group in
                await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
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

    /// The app that should continue an activity of `type` from `team`: it declares the type and
    /// belongs to the same team. One that is not running but has a manifest in `appsDirectory`
    /// is started first.
    func app(for type: ActivityType, fromTeam team: String?) async -> (manifest: AppManifest, link: ControlLink)? {
        if let running = runningApp(for: type, fromTeam: team) { return running }
        guard let candidate = launchable.first(where: { $0.manifest.accepts(type, fromTeam: team) }) else { return nil }
        await launch(candidate)
        return runningApp(for: type, fromTeam: team)
    }

    private func runningApp(for type: ActivityType, fromTeam team: String?) -> (manifest: AppManifest, link: ControlLink)? {
        apps.values.sorted { $0.manifest.identity.bundleID < $1.manifest.identity.bundleID }
            .first { $0.manifest.accepts(type, fromTeam: team) }
    }

    /// Starts an app from its manifest and waits until it registers (at most limits.handlerTimeout).
    /// One launch per app at a time (``LaunchGate``): a request while it starts waits for it; a
    /// peer device (`device`) that has caused too many launches lately gets none.
    func launch(_ app: LaunchableApp, forDevice device: DeviceID? = nil) async {
        let bundleID = app.manifest.identity.bundleID
        switch launchGate.request(bundleID, forDevice: device?.description, now: .now) {
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
        defer { launchGate.finished(bundleID) }
        let pid: Int32
        do {
            let environment = ChildEnvironment.current(adding: ["HANDOFF_SOCKET": configuration.socketPath])
            // Never stopped by the agent, not even at its shutdown; reaped when it exits (ChildProcess.start).
            pid = try await ChildProcess.start(app.launch, environment: environment, stdout: .descriptor(2), stderr: .descriptor(2))
        } catch {
            logger.info("cannot launch app", metadata: ["handoff.app": "\(bundleID)", "handoff.error": "\(error)"])
            return
        }
        logger.info("launched app", metadata: ["handoff.app": "\(bundleID)", "handoff.pid": "\(pid)"])
        await waitForRegistration(of: bundleID)
    }

    /// Waits until an app with this bundle ID registers, at most limits.handlerTimeout.
    private func waitForRegistration(of bundleID: String) async {
        if apps.values.contains(where: { $0.manifest.identity.bundleID == bundleID }) { return }
        await waitForAnswer(timeout: configuration.limits.handlerTimeout) { (continuation: CheckedContinuation<Void, Never>) in
            registrationWaiters[bundleID, default: []].append(continuation)
        } expire: {
            await self.stopWaiting(for: bundleID)
        }
    }

    private func stopWaiting(for bundleID: String) {
        for waiter in registrationWaiters.removeValue(forKey: bundleID) ?? [] { waiter.resume() }
    }

    // MARK: Serving peers

    /// Prepares a held activity for a peer's fetch: when it needs saving and its app is connected,
    /// the app gets `willSave` and must answer within `limits.fetchTimeout` (else 4610). Returns
    /// nil when no such activity is held.
    public func prepareForFetch(id: UUID) async -> Result<(Activity, AppIdentity?)?, HandoffError> {
        guard let activity = store.activity(id: id) else { return .success(nil) }
        let owner = store.owner(of: id)
        guard activity.needsSave, let owner, let app = apps[owner.connectionID] else { return .success((activity, owner?.identity)) }
        var timeout = configuration.limits.fetchTimeout
        let slowSave = faults.willSaveDelay
        if slowSave > .zero {
            // Fault injection: the app takes this much longer to save.
            logger.info("fault: slowing the app's willSave", metadata: ["handoff.id": "\(id)", "handoff.delay": "\(slowSave)"])
            try? await Task.sleep(for: min(slowSave, timeout))
            guard slowSave < timeout else {
                return .failure(.remoteTimedOut(
                    "the app \(owner.identity.bundleID) on \(configuration.name) did not save the activity within \(timeout) (userActivityWillSave; faults.willSaveDelayMs)"))
            }
            timeout -= slowSave
        }
        guard let reply = await ask(app.link, .willSave(activityID: id), timeout: timeout), let savedJSON = reply.activity
        else {
            return .failure(.remoteTimedOut(
                "the app \(owner.identity.bundleID) on \(configuration.name) did not save the activity within \(timeout) (userActivityWillSave)"))
        }
        var saved: Activity
        do { saved = try Activity(json: savedJSON, defaultID: id) } catch {
            return .failure(.handoffFailed("the app \(owner.identity.bundleID) saved an invalid activity: \(error)"))
        }
        saved.id = id
        saved.needsSave = false
        guard store.update(saved) else { return .success(nil) }
        refreshAdvertisement()
        return .success((saved, owner.identity))
    }

    /// A peer continued one of our activities: its app gets `userActivityWasContinued`.
    public func activityWasContinued(_ request: FetchRequest, by peer: String) async {
        logger.info("activity was continued", metadata: ["handoff.id": "\(request.activityID)", "handoff.by": "\(peer)"])
        guard let owner = store.owner(of: request.activityID), let app = apps[owner.connectionID] else { return }
        await tell(app.link, .wasContinued(activityID: request.activityID, continuationID: request.continuationID, peer: peer))
    }

    // MARK: Peers

    /// Applies a discovery event. A sealed advertisement is opened with the paired devices' keys
    /// and taken only when signed by its device and fresh; one that cannot be opened is kept
    /// aside (an unpaired device, or a key not learnt yet). See Agent+Advertisements.swift.
    public func handle(_ event: BrowseEvent) {
        switch event {
        case .resolved(let service): handleResolved(service)
        case .removed(let name): handleRemoved(name)
        }
    }

}
