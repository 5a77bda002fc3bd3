import HandoffConfiguration
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
    /// The configuration now: a reload (``reload(_:launchable:)``) replaces its live keys.
    public nonisolated var configuration: AgentConfiguration { liveConfiguration.value }
    /// Where ``configuration`` is kept, shared with what reads it outside the agent.
    public nonisolated let liveConfiguration: LiveConfiguration
    /// A random ID for this run of the agent, advertised in TXT and sent in hello.
    public nonisolated let agentID: String
    public nonisolated let hello: PeerHello
    /// ``hello`` on the connections this agent shares with a peer (docs/PROTOCOL.md, "One
    /// connection per pair"): its liveness connections say it, and its sessions answer with it
    /// (agreeing only when the peer's liveness asked). Other connections (fetches of their own,
    /// streams, `open`, files, pairing) never share.
    public nonisolated var sharingHello: PeerHello {
        var sharing = hello
        sharing.sharedConnection = true
        return sharing
    }
    /// Shared connections the peer sessions accepted, for liveness to take (``LivenessService``).
    nonisolated let sharedLinks = SharedLinks()
    /// The instances whose records peers push now, which the browser then does not query.
    public nonisolated let pushedInstances = PushedInstances()
    let logger: Logger
    nonisolated let advertiser: ServiceAdvertiser
    /// The wide-area DNS-SD registration, when `wideArea` is configured.
    public nonisolated let wideAreaRegistrar: WideAreaRegistrar?
    /// Fetches activities from peers; a reload changes its limits and timeouts.
    var client: ContinuationClient<AgentTimeline>
    /// Connections to peers kept open between continuations (``IdleConnectionPool``).
    public nonisolated let fetchPool: IdleConnectionPool<AgentTimeline>
    /// The handlers and the URL opener; a reload replaces it.
    var dispatcher: ActivityDispatcher
    /// The bound peer port.
    public nonisolated let port: Int
    /// This device's identity, TLS and open connections.
    public nonisolated let security: AgentSecurity
    /// This device's ID.
    public nonisolated var deviceID: DeviceID { security.identity.deviceID }
    /// The DNS-SD instance name: random, so that it tells unpaired observers nothing.
    public nonisolated let instanceName: String
    /// The instance name the advertisement is sealed for: the name DNS-SD last registered the
    /// service under (Avahi renames it on a name conflict, ``registered(as:)``), ``instanceName`` until then.
    var sealedInstanceName: String
    /// How the agent reaches peers, for every kind of connection: fetches, streams, `open`,
    /// pairing and key exchange (TCP with TLS in the daemon, in-memory pipes in tests).
    public nonisolated let transport: any PeerTransport
    /// The clock of the agent's deadlines (``Deadline``) and timers: fetches, handlers and their timeouts, pairing, key exchange, stream and open handshakes (handoffd's `EventLoopClock`).
    nonisolated let clock: any Clock<Duration>
    /// The same clock, as the instants the agent's decisions are made at.
    nonisolated let timeline: AgentTimeline
    /// The wall clock: activities' expiry dates and advertisements' timestamps.
    nonisolated let wallClock: @Sendable () -> Date
    /// Work that outlives the request that caused it, run by a Service (``BackgroundWork``).
    public nonisolated let background = BackgroundWork()

    var store = ActivityStore()
    /// Where the activities published without an app are kept across restarts (nil: an agent
    /// without a state directory keeps none), and what writes it, off the actor.
    nonisolated let publishedFile: PublishedActivitiesFile?
    nonisolated let keptActivitiesWriter: KeptActivitiesWriter?
    /// The peers found. Every change is shown to ``offerWatch``, whose events go to ``events``.
    var directory: PeerDirectory {
        didSet { noticeOffers() }
    }
    /// What the peers offer, and since when (events, `handoff list`).
    var offerWatch = OfferWatch()
    /// The agent's events, for `handoff watch`, apps and the desktop notifications.
    public nonisolated let events = AgentEventHub()
    /// Whether handoff is paused here (`handoff pause`), saved in the state directory.
    var settings: DeviceSettings
    /// What this agent advertises (the sealing policy).
    private var sealing: AdvertisementSealing
    /// When a new advertisement goes to DNS-SD.
    private var dnsSDUpdates = DNSSDUpdateSchedule()
    /// The paired devices and the advertising keys.
    var trust: TrustStore
    /// What the agent makes of the advertisements it browses.
    var intake: AdvertisementIntake
    /// Which paired devices it reaches at their last known addresses, and which it told it is back.
    var rejoining: Rejoining
    /// Advertisements this agent cannot open (unpaired devices, or keys not yet learnt), by
    /// instance name.
    var unreadable: [String: UnreadableService] {
        get { intake.unreadable }
        set { intake.unreadable = newValue }
    }
    /// When to connect to the senders of unreadable advertisements (bounded, backed off).
    var keyLearning = KeyLearning()
    /// How many times DNS-SD resolved each paired device: liveness probes at once when it grows.
    var resolveGenerations: [DeviceID: Int] { intake.resolveGenerations }
    /// Whether a pairing window is open (`handoff pair --accept`), and its rules.
    var pairing = PairingWindowState<AgentInstant>()
    /// The open window's control connection and, once a device claimed it, its pairing connection.
    var pairingLinks: [UUID: PairingWindowLinks] = [:]
    /// The `handoff pair --accept` callers waiting for their window's outcome, by window ID.
    let pairingAnswers = RequestCorrelator<UUID, Result<TrustChange, HandoffError>>()
    /// The faults this agent injects now: `faults` from the configuration, changed by
    /// `handoff fault` (docs/FAULTS.md).
    public internal(set) var faults: FaultPlan
    /// Who asked for which continuation, and which answer each gets.
    var continuations = ContinuationCoordinator()
    /// The callers waiting for a continuation's answer, by caller ID.
    let continuationAnswers = RequestCorrelator<UUID, Result<ContinueResult, HandoffError>>()
    /// The apps on the control socket, and the apps the agent may start.
    var registry: AppRegistry
    /// The control connections of the registered apps.
    var appLinks: [UUID: ControlLink] = [:]
    /// Callers waiting for an app to register, by waiter ID.
    let registrations = RequestCorrelator<UUID, Void>()
    /// Apps' replies to events, by `replyID` (nil: no answer).
    let replies = RequestCorrelator<UUID, AppReply?>()
    /// Continuations delivered to apps, newest last: where their activity came from, so the app
    /// can ask for continuation streams.
    var deliveredToApps: [(continuationID: UUID, activityID: UUID, peer: PeerRecord)] = []
    /// Fetches in flight, by the device they fetch from (``fetchWhileReachable(_:from:)``).
    var fetchesInFlight: [DeviceID: Set<UUID>] = [:]
    /// Ends those fetches: why the device was lost, or nil when the fetch ended by itself.
    let lostDevices = RequestCorrelator<UUID, String?>()
    /// The continuation stream pairs this agent relays.
    nonisolated let streamRelays = StreamRelays()
    /// Continuation stream pairs relayed now, as either side's agent (`handoff status`).
    public nonisolated var openStreamPairs: Int { streamRelays.open }
    /// Inbox bytes per peer device (`limits.maxInboxBytesPerDevice`).
    public nonisolated let inboxQuota: InboxQuota
    /// The activities saved for search (`isEligibleForSearch`).
    public nonisolated let savedActivities: SavedActivities
    /// The bytes of this device's clipboard item (`handoff copy`).
    nonisolated let clipboardSpool: ClipboardSpool
    /// The paired devices' clipboard items, and when each was first seen (`handoff paste`).
    var clipboardSightings = ClipboardSightings()
    /// The SHA-256 of what `clipboard.sync` last put on the desktop clipboard: not offered back.
    var clipboardLastPut: String?
    /// Peers' stream requests waiting for the source app to accept, by stream ID.
    var pendingStreams: [UUID: (peer: StreamSplice, relay: StreamRelay, continuation: CheckedContinuation<Bool, Never>)] = [:]

    /// - Parameters:
    ///   - port: the port the peer listener is bound to (advertised).
    ///   - transport: how to reach peers (``TCPPeerConnector`` in the daemon).
    ///   - security: the device identity and the paired devices.
    ///   - clock: measures every deadline and timer of the agent, handlers' timeouts included; a manual clock in tests.
    ///   - wallClock: the date now (activities' expiry, advertisements' timestamps).
    ///   - savedActivities: the activities saved for search; by default
    ///     `<stateDirectory>/saved-activities.sqlite`.
    public init(configuration: AgentConfiguration, port: Int, transport: any PeerTransport, logger: Logger,
                launchable: [LaunchableApp] = [], security: AgentSecurity, clock: any Clock<Duration> = ContinuousClock(),
                wallClock: @escaping @Sendable () -> Date = { Date() }, savedActivities: SavedActivities? = nil) {
        self.init(configuration: LiveConfiguration(configuration), port: port, transport: transport, logger: logger,
                  launchable: launchable, security: security, clock: clock, wallClock: wallClock, savedActivities: savedActivities)
    }

    /// An agent on a ``LiveConfiguration`` that others share (handoffd's connector and log handlers).
    public init(configuration live: LiveConfiguration, port: Int, transport: any PeerTransport, logger: Logger,
                launchable: [LaunchableApp] = [], security: AgentSecurity, clock: any Clock<Duration> = ContinuousClock(),
                wallClock: @escaping @Sendable () -> Date = { Date() }, savedActivities: SavedActivities? = nil) {
        let configuration = live.value
        self.savedActivities = savedActivities ?? SavedActivities(path: configuration.stateDirectory + "/" + SavedActivities.fileName)
        self.liveConfiguration = live
        self.clock = clock
        let timeline = AgentTimeline(clock)
        self.timeline = timeline
        self.wallClock = wallClock
        self.faults = configuration.faults
        self.registry = AppRegistry(launchable: launchable)
        self.port = port
        self.logger = logger
        self.security = security
        self.trust = security.initialTrust
        self.rejoining = Rejoining(devices: security.initialTrust.devices, now: timeline.now)
        self.settings = security.initialSettings
        self.transport = transport
        let agentID = UUID.random().uuidString.replacing("-", with: "").lowercased()
        self.agentID = agentID
        self.instanceName = "handoff-" + agentID.prefix(12)
        self.sealedInstanceName = instanceName
        self.hello = PeerHello(agentID: agentID, name: configuration.name, multiplexing: true, pushesAdvertisements: true)
        self.directory = PeerDirectory(ownAgentID: agentID)
        let publishedFile = security.stateDirectory.map(PublishedActivitiesFile.init(stateDirectory:))
        self.publishedFile = publishedFile
        let restored = Self.restoredStore(publishedFile, now: wallClock(), logger: logger)
        self.store = restored
        self.keptActivitiesWriter = publishedFile.map { KeptActivitiesWriter(file: $0, loaded: PublishedActivitiesFile.kept(in: restored), logger: logger) }
        let sealInput = AdvertisementSealing.input(restored, agentID: agentID, name: configuration.name, pairingOpen: false,
                                                   key: security.initialTrust.ownAdvertisingKey, instanceName: instanceName,
                                                   paused: security.initialSettings.paused, now: wallClock())
        self.intake = AdvertisementIntake(ownDeviceID: security.identity.deviceID, seen: security.initialSeen, logger: logger)
        // Past the last record of our own that peers may have taken, even if the clock went back.
        let sealing = AdvertisementSealing(sealInput, identity: security.identity, now: wallClock(),
                                           ownLast: security.initialSeen.last[security.identity.deviceID]?.timestamp ?? 0)
        self.sealing = sealing
        self.advertisementFeed = AdvertisementFeed(current: .init(instanceName: instanceName, txtRecord: sealing.txtRecord))
        self.advertiser = ServiceAdvertiser(
            name: instanceName, serviceType: configuration.serviceType, port: UInt16(port), txtRecord: sealing.txtRecord, logger: logger)
        self.wideAreaRegistrar = Self.wideAreaRegistrar(configuration, instanceName: instanceName, port: port, txtRecord: sealing.txtRecord,
                                                        logger: logger, wallClock: wallClock)
        // One multiplexed connection per peer for fetches and `continued` notices (docs/PROTOCOL.md).
        let pool = IdleConnectionPool(policy: .init(multiplexing: true), clock: timeline,
                                      background: BackgroundSpawner { [background] work, ifStopped in background.spawn(work, ifStopped: ifStopped) })
        self.fetchPool = pool
        self.client = ContinuationClient(
            connector: transport, clock: timeline, hello: hello,
            limits: Self.fetchLimits(configuration), timeouts: Self.fetchTimeouts(configuration), pool: pool)
        self.dispatcher = ActivityDispatcher(configuration: configuration, runner: CommandRunner(clock: clock), logger: logger)
        self.inboxQuota = InboxQuota(limit: configuration.limits.maxInboxBytesPerDevice)
        // An agent that keeps no state (tests) spools in a directory of its own.
        self.clipboardSpool = ClipboardSpool(stateDirectory: security.stateDirectory ?? (ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp") + "/handoff-\(agentID)")
        if security.stateDirectory != nil {
            do { try clipboardSpool.prepare() } catch { logger.warning("\(error.message)") }
        }
    }

    /// The sealed advertisement for paired devices that know this one by address (`subscribe`).
    public nonisolated let advertisementFeed: AdvertisementFeed

    /// The DNS-SD registration, to run in the service group.
    public nonisolated var advertiserService: ServiceAdvertiser { advertiser }

    // MARK: Local activities

    /// Makes an activity current here and advertises it; returns its ID once it is kept for the
    /// next start (``keepPublishedActivities()``). Never replaces another connection's (``AppOwnership``).
    public func publish(_ activity: Activity, owner: ActivityStore.Owner? = nil) async throws(HandoffError) -> UUID {
        guard !activity.activityType.isClipboard else {
            throw .handoffFailed("\(ActivityType.clipboard) is reserved for the clipboard: offer an item with `handoff copy`")
        }
        guard store.publish(activity, owner: owner) else { throw AppOwnership.notYours(activity.id, "replace") }
        // Advertised (and pushed to connected peers) before it is logged and kept for the next
        // start: keeping it encodes and writes a file, which peers need not wait for. So for a
        // resign and an expiry too. The write runs off the actor (``KeptActivitiesWriter``).
        // Logged at debug, as a resign: apps publish on every change of what they do, and the
        // journal keeps one info line per continuation, its outcome, instead.
        refreshAdvertisement()
        await letPushesGoFirst()
        logger.debug("published activity", metadata: ["handoff.activity": "\(activity.activityType)", "handoff.id": "\(activity.id)"])
        await keepPublishedActivities()
        return activity.id
    }

    /// Stops offering an activity, for control connection `connection` (nil: no app), if it published it (``AppOwnership``).
    public func resign(id: UUID, by connection: UUID? = nil) async throws(HandoffError) {
        guard store.mayChange(id, by: connection) else { throw AppOwnership.notYours(id, "resign") }
        guard let activity = store.resign(id: id) else { throw .handoffFailed("this agent holds no activity \(id); `handoff status` lists the ones it holds") }
        dropClipboardBytes(of: [activity])
        refreshAdvertisement()
        await letPushesGoFirst()
        logger.debug("resigned activity", metadata: ["handoff.activity": "\(activity.activityType)", "handoff.id": "\(id)"])
        await keepPublishedActivities()
    }

    /// Lets the tasks that push the advertisement just published to connected peers
    /// (``advertisementFeed``, woken by ``refreshAdvertisement()``) write it before this task
    /// goes on: in handoffd the agent's tasks share one thread (its event loop), which runs them
    /// in the order they were woken. Without this, the publish kept the activity first (its
    /// snapshot, and waking the writer's thread) and the push waited for that.
    ///
    /// Not `Task.yield()`: it hands the task to Dispatch's pool directly (the current executor
    /// of a task on an actor), waking a pool thread, and the task comes back to the loop from
    /// there. A new task is enqueued through the global hook handoffd points at the loop
    /// (`TasksOnEventLoop`), behind the pushes; it resumes this one, which goes behind them too.
    private func letPushesGoFirst() async {
        guard advertisementFeed.subscriberCount > 0 else { return }
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            Task.detached { continuation.resume() }
        }
    }

    /// The TXT record the agent advertises now.
    public var advertisedTXTRecord: [UInt8] { sealing.txtRecord }

    /// Drops expired activities and updates the advertisement.
    public func expireActivities() async {
        await expireActivities(now: wallClock())
    }

    /// Drops the activities expired at `now` and updates the advertisement.
    public func expireActivities(now: Date) async {
        let expired = store.removeExpired(at: now)
        dropClipboardBytes(of: expired)
        for activity in expired {
            logger.info("activity expired", metadata: ["handoff.activity": "\(activity.activityType)", "handoff.id": "\(activity.id)"])
        }
        refreshAdvertisement(now: now)
        if !expired.isEmpty { await keepPublishedActivities() }
    }

    /// A held activity, for a peer's fetch.
    public func lookUp(id: UUID) -> Activity? { store.activity(id: id) }

    /// Seals the current advertisement for the paired devices and publishes it, unless nothing
    /// changed (the activity, the pairing window, the advertising key or the registered instance name).
    func refreshAdvertisement() {
        refreshAdvertisement(now: wallClock())
    }

    /// Advertises what is current at `now`, sealed again if it changed (``AdvertisementSealing``).
    func refreshAdvertisement(now: Date) {
        let input = AdvertisementSealing.input(store, agentID: agentID, name: configuration.name, pairingOpen: pairingWindow != nil,
                                               key: trust.ownAdvertisingKey, instanceName: sealedInstanceName,
                                               paused: settings.paused, now: now)
        guard let txt = sealing.reseal(input, now: now) else { return }
        // The push first: it wakes the task that writes it to each subscribed peer, a frame that
        // arrives in about a millisecond. DNS-SD (the poller's thread, then Avahi) takes longer
        // anyway, and waits a little while peers get the push (``DNSSDUpdateSchedule``).
        advertisementFeed.publish(.init(instanceName: input.instanceName, txtRecord: txt))
        switch dnsSDUpdates.changed(subscribers: advertisementFeed.subscriberCount, now: timeline.now) {
        case .updateNow:
            advertiser.updateTXTRecord(txt)
        case .wake(let instant):
            let timeline = self.timeline
            background.spawn { [weak self] in
                guard (try? await timeline.sleep(until: instant)) != nil else { return }
                await self?.dnsSDWaitEnded(instant)
            }
        case .none:
            break
        }
        // Wide-area DNS-SD registers it under the name it is sealed for: a rename moves it there.
        wideAreaRegistrar?.advertise(.init(instanceName: input.instanceName, txtRecord: txt))
    }

    /// A wait of ``DNSSDUpdateSchedule`` ended: DNS-SD gets the record advertised now.
    private func dnsSDWaitEnded(_ instant: AgentInstant) {
        guard dnsSDUpdates.settled(instant) else { return }
        advertiser.updateTXTRecord(sealing.txtRecord)
    }

    // MARK: Serving peers

    /// Prepares a held activity for a peer's fetch: when it needs saving and its app is connected,
    /// the app is asked to save it (`saving`: `willSave`) and must answer within
    /// `limits.fetchTimeout` (else 4610). Returns nil when no such activity is held.
    func prepareForFetch(id: UUID, saving: any ActivitySaving) async -> Result<(Activity, AppIdentity?)?, HandoffError> {
        guard let activity = store.activity(id: id) else { return .success(nil) }
        guard !settings.paused else {
            return .failure(.handoffFailed("handoff is paused on \(configuration.name): it offers no activity until `handoff resume` there"))
        }
        let owner = store.owner(of: id)
        guard activity.needsSave, let owner, let app = app(on: owner.connectionID) else { return .success((activity, owner?.identity)) }
        let savedJSON: JSONValue
        switch await saving.save(id, by: owner.identity, over: app.link, within: configuration.limits.fetchTimeout, agent: self) {
        case .success(let json): savedJSON = json
        case .failure(let error): return .failure(error)
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
        guard let owner = store.owner(of: request.activityID), let app = app(on: owner.connectionID) else { return }
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
