import HandoffCore
import HandoffTransport
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Your app's link to the local handoff agent: it declares the app (bundle ID, team ID, activity
/// types), publishes your ``UserActivity`` objects, and delivers the continuation lifecycle to
/// your ``HandoffApplicationDelegate``.
///
/// ```swift
/// let app = HandoffApplication(manifest: AppManifest(bundleID: "com.example.notes", teamID: "A1B2C3D4E5",
///                                                    activityTypes: [ActivityType(rawValue: "com.example.notes.edit")!]),
///                              delegate: myDelegate)
/// try await withThrowingTaskGroup(of: Void.self) { group in
///     group.addTask { try await app.run() }
///     try await app.waitUntilConnected()
///     let activity = UserActivity(activityType: "com.example.notes.edit")
///     activity.title = "Shopping list"
///     try await activity.becomeCurrent()
///     ...
/// }
/// ```
///
/// One application runs per process. When ``run()`` ends, the agent resigns the app's activities.
public actor HandoffApplication {
    /// What the app declares.
    public nonisolated let manifest: AppManifest
    let socketPath: String
    let delegate: any HandoffApplicationDelegate
    /// Opens the connection to the agent: its control socket, unless the app was given another
    /// (an agent in the same process).
    let connectToAgent: @Sendable () async throws(HandoffError) -> ControlChannel
    /// The agent's events, on connections of their own (``agentEvents()``).
    private nonisolated let eventSource: AgentEventStream
    /// Opens a connection for one pair of continuation streams: to the control socket, unless the
    /// app was given another.
    private let connectStreamChannel: @Sendable () async throws -> EncodedFrameChannel

    var connection: ControlChannel?
    private var readiness: Result<Void, HandoffError>?
    private var readinessWaiters: [CheckedContinuation<Result<Void, HandoffError>, Never>] = []
    /// Activities this app made current, by ID.
    var published: [UUID: UserActivity] = [:]
    /// Getting the agent back after the connection dropped (HandoffApplication+Reconnect.swift).
    var reconnection = ReconnectionState()
    /// Objects registered for restoration, by identifier path.
    private var restorables: [[String]: any UserActivityRestoring] = [:]
    /// Where the app's state is preserved (``saveApplicationState()``).
    public nonisolated let stateFile: RestorationStateFile
    /// Objects whose state is preserved, by identifier path.
    var stateRestorables: [[String]: any StateRestoring] = [:]
    /// What this launch refuses to deliver, after a launch hook returned false.
    var launchRefusal: LaunchRefusal?
    /// Whether ``run()`` got as far as restoring state: only then is state saved when it ends.
    var launched = false
    /// Feeds ``run()``'s stream-hosting task; set while it runs. Stream connections are hosted
    /// apart from the serial event loop, so a delegate may open streams inside `continue`.
    var hostSink: AsyncStream<ContinuationStreamConnection>.Continuation?

    private static let current = Mutex<HandoffApplication?>(nil)

    /// - Parameters:
    ///   - manifest: the app's bundle ID, team ID and the activity types it continues.
    ///   - socketPath: the agent's control socket; default `HANDOFF_SOCKET`, else the agent's default.
    ///     ``run()`` refuses it (4609, sending nothing) unless its directory is the user's and the
    ///     agent listening runs as the user (`ControlSocketCheck`).
    ///   - delegate: receives the continuing side's callbacks.
    ///   - restorationStatePath: the file for the app's preserved state; default
    ///     `$XDG_STATE_HOME/handoff/apps/<bundleID>/restoration.plist` (``RestorationStateFile``).
    public init(manifest: AppManifest, socketPath: String? = nil, delegate: any HandoffApplicationDelegate,
                restorationStatePath: String? = nil) {
        self.manifest = manifest
        self.stateFile = restorationStatePath.map(RestorationStateFile.init(path:)) ?? RestorationStateFile(bundleID: manifest.identity.bundleID)
        let environment = ProcessInfo.processInfo.environment
        let socketPath = socketPath ?? environment["HANDOFF_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
            ?? DefaultPaths.controlSocket(environment: environment)
        self.socketPath = socketPath
        self.delegate = delegate
        self.connectToAgent = { () async throws(HandoffError) in try await ControlChannel.connect(socketPath: socketPath) }
        self.eventSource = AgentEventStream(socketPath: socketPath)
        self.connectStreamChannel = { try await StreamChannels.connect(controlSocket: socketPath) }
    }

    /// An application whose requests and events go over connections that `connect` opens
    /// instead of the control socket: to an agent in the same process, in tests. Continuation
    /// streams go over channels that `connectStreams` opens (``PipeChannels/appStream(group:)``),
    /// else over the control socket (at `socketPath`).
    public init(manifest: AppManifest, socketPath: String = "", delegate: any HandoffApplicationDelegate,
                restorationStatePath: String? = nil,
                connect: @escaping @Sendable () async throws(HandoffError) -> any FrameConnection,
                connectStreams: (@Sendable () async throws -> EncodedFrameChannel)? = nil) {
        self.manifest = manifest
        self.stateFile = restorationStatePath.map(RestorationStateFile.init(path:)) ?? RestorationStateFile(bundleID: manifest.identity.bundleID)
        self.socketPath = socketPath
        self.delegate = delegate
        self.connectToAgent = { () async throws(HandoffError) in ControlChannel(connection: try await connect()) }
        self.eventSource = AgentEventStream(connect: connect)
        self.connectStreamChannel = connectStreams ?? { try await StreamChannels.connect(controlSocket: socketPath) }
    }

    /// What the agent learns, as it learns it: activities the paired devices offer and withdraw,
    /// devices coming and going, continuations here (``AgentEvent``). Each iteration opens a
    /// connection of its own; it does not need ``run()``.
    ///
    /// ```swift
    /// for try await event in app.agentEvents() {
    ///     if case .activityOffered(let offer) = event.kind { print("\(offer.peer) offers \(offer.title ?? offer.activityType)") }
    /// }
    /// ```
    public nonisolated func agentEvents() -> AgentEventStream { eventSource }

    /// The application whose ``run()`` is in progress.
    static func running() throws(HandoffError) -> HandoffApplication {
        guard let app = current.withLock({ $0 }) else {
            throw .connectionUnavailable("no HandoffApplication is running; start one (HandoffApplication.run()) before making activities current")
        }
        return app
    }

    /// Connects to the agent, registers the app, launches it (``HandoffApplicationDelegate/willFinishLaunching(options:)``,
    /// state restoration, ``HandoffApplicationDelegate/didFinishLaunching(options:)``) and
    /// delivers events until the task is cancelled; then saves the app's state if the delegate
    /// agrees. When the agent goes away (a restart), the app connects again, registers again and
    /// makes its current activities current again (HandoffApplication+Reconnect.swift); the
    /// delegate hears nothing of it, and a line on standard error says so.
    public func run() async throws(HandoffError) {
        let connection: ControlChannel
        do {
            connection = try await connectToAgent()
        } catch {
            setReadiness(.failure(error))
            throw error
        }
        self.connection = connection
        let work = AsyncStream.makeStream(of: Work.self)
        let hosting = AsyncStream.makeStream(of: ContinuationStreamConnection.self)
        hostSink = hosting.continuation
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withDiscardingTaskGroup { hosts in
                    for await streamConnection in hosting.stream { hosts.addTask { await streamConnection.run() } }
                }
            }
            Self.read(connection, into: work.continuation, group: &group)
            switch await connection.request(.registerApp(manifest)) {
            case .failure(let error):
                setReadiness(.failure(error))
            case .success(let registered):
                Self.current.withLock { $0 = self }
                setReadiness(.success(()))
                await finishLaunching(RegisterAppResult(json: registered).launchOptions)
                for await item in work.stream {
                    switch item {
                    case .event(.streamsRequested(let activityID, let streamID)?, _):
                        // Long-lived: the delegate reads and writes the streams in its own task.
                        group.addTask { await self.acceptStreams(activityID: activityID, streamID: streamID) }
                    case .connectionLost(let channel):
                        if connectionLost(channel) { group.addTask { await self.reconnect(into: work.continuation) } }
                    case .connected(let channel):
                        Self.read(channel, into: work.continuation, group: &group)
                        group.addTask { await self.resume(on: channel) }
                    default:
                        await perform(item, enqueue: work.continuation)
                    }
                }
            }
            await self.connection?.close()
            await endReconnecting()
            hosting.continuation.finish()
            group.cancelAll()
        }
        if launched { _ = try? await saveApplicationState() }
        Self.current.withLock { if $0 === self { $0 = nil } }
        self.connection = nil
        hostSink = nil
        published.removeAll()
        if case .failure(let error)? = readiness { throw error }
    }

    /// Waits until ``run()`` has connected and registered the app.
    public func waitUntilConnected() async throws(HandoffError) {
        let result = await withCheckedContinuation { continuation in
            if let readiness { continuation.resume(returning: readiness) } else { readinessWaiters.append(continuation) }
        }
        try result.get()
    }

    private func setReadiness(_ result: Result<Void, HandoffError>) {
        readiness = result
        for waiter in readinessWaiters { waiter.resume(returning: result) }
        readinessWaiters = []
    }

    /// Registers an object to restore when a continued activity names its identifier path (the
    /// activity's `targetContentIdentifier`, split at "/").
    public func registerRestorable(_ object: any UserActivityRestoring, identifierPath: [String]) {
        restorables[identifierPath] = object
    }

    // MARK: Source side

    func publish(_ activity: UserActivity) async throws(HandoffError) {
        try await waitUntilConnected()
        let snapshot = activity.snapshot
        guard !reconnection.isReconnecting else { return holdUntilReconnected(activity) }
        guard let connection else { throw .connectionUnavailable("the app is not connected to its agent") }
        let result = await connection.request(.publish(snapshot))
        if case .failure(let error) = result, appliesOnReconnect(error) { return holdUntilReconnected(activity) }
        _ = try result.get()
        published[snapshot.id] = activity
        reconnection.madeCurrent(snapshot.id)
    }

    func resign(_ activity: UserActivity) async throws(HandoffError) {
        published.removeValue(forKey: activity.identifier)
        reconnection.order.removeAll { $0 == activity.identifier }
        // While the agent is away it holds none of this app's activities: nothing to resign.
        guard let connection, !reconnection.isReconnecting else { return }
        let result = await connection.request(.resign(id: activity.identifier))
        if case .failure(let error) = result, appliesOnReconnect(error) { return }
        _ = try result.get()
    }

    /// Deletes the activities this app saved for search (`isEligibleForSearch`) with these
    /// persistent identifiers; never another app's. ``UserActivity/deleteSavedUserActivities(withPersistentIdentifiers:)``
    /// does the same for the running application.
    public func deleteSavedUserActivities(withPersistentIdentifiers persistentIdentifiers: [String]) async throws(HandoffError) {
        guard !persistentIdentifiers.isEmpty else { return }
        try await deleteSaved(.persistentIdentifiers(persistentIdentifiers))
    }

    /// Deletes every activity this app saved for search.
    public func deleteAllSavedUserActivities() async throws(HandoffError) {
        try await deleteSaved(.all)
    }

    private func deleteSaved(_ which: ControlRequest.SavedSelection) async throws(HandoffError) {
        _ = try await connectedChannel().request(.deleteSaved(which)).get()
    }

    // MARK: Events

    enum Work: Sendable {
        /// An event from the agent (nil: one this version does not know), with its `replyID`.
        case event(AppEvent?, replyID: UUID?)
        /// Objects passed to a restoration handler after `continue` returned.
        case restore([any UserActivityRestoring], UserActivity)
        /// The connection to the agent closed (``connectionLost(_:)``).
        case connectionLost(ControlChannel)
        /// A new connection to the agent, to register on again (``resume(on:)``).
        case connected(ControlChannel)
    }

    // MARK: Continuation streams

    /// Opens this app's end of a stream pair on a new control connection (`openStreams` or
    /// `acceptStreams`).
    func openStreams(_ request: ControlRequest) async -> Result<ContinuationStreams, HandoffError> {
        guard let hostSink else { return .failure(.connectionUnavailable("the app is not connected to its agent")) }
        let channel: EncodedFrameChannel
        do { channel = try await connectStreamChannel() } catch {
            return .failure(.connectionUnavailable("cannot reach the handoff agent at \(socketPath): \(error)"))
        }
        let hosted = await withCheckedContinuation { continuation in
            let request = Frame(kind: .controlRequest, payload: request.json.serializedBytes)
            if case .terminated = hostSink.yield(ContinuationStreamConnection(channel: channel, request: request, result: continuation)) {
                continuation.resume(returning: nil)
            }
        } as Result<ContinuationStreams, HandoffError>?
        guard let hosted else {
            // The application stopped meanwhile: close the channel the way NIO requires.
            try? await channel.executeThenClose { _, _ in }
            return .failure(.connectionUnavailable("the application stopped"))
        }
        return hosted
    }

    /// The source side: a continuing app asked for streams to one of our activities.
    private func acceptStreams(activityID: UUID, streamID: UUID) async {
        guard let activity = published[activityID] else { return }
        switch await openStreams(.acceptStreams(streamID: streamID)) {
        case .success(let streams):
            if let delegate = activity.delegate {
                await delegate.userActivity(activity, didReceive: streams.input, outputStream: streams.output)
            } else {
                await streams.output.close()
            }
        case .failure:
            break  // the request timed out or the peer left; the continuing app gets the error
        }
    }

    private func perform(_ work: Work, enqueue: AsyncStream<Work>.Continuation) async {
        switch work {
        case .restore(let objects, let activity):
            for object in objects { await object.restoreUserActivityState(activity) }
        case .event(let event, let replyID):
            await handle(event, replyID: replyID, enqueue: enqueue)
        case .connectionLost, .connected:
            break  // run() handles them
        }
    }

    private func handle(_ event: AppEvent?, replyID: UUID?, enqueue: AsyncStream<Work>.Continuation) async {
        if let event, let refusal = launchRefusal?.refuses(event) {
            await reply(replyID, refusal ? AppReply(handled: false, launchDeclined: true) : .empty)
            return
        }
        switch event {
        case .willContinue(let continuing)?:
            let notifies = await delegate.willContinueUserActivity(withType: continuing.activityType)
            await reply(replyID, AppReply(notifiesPerson: notifies))
        case .continueActivity(let continuing, let activity, _)?:
            await continueActivity(UserActivity(continuing: activity, continuationID: continuing.continuationID, application: self),
                                   replyID: replyID, enqueue: enqueue)
        case .didFail(let continuing, let error)?:
            await delegate.didFailToContinueUserActivity(withType: continuing.activityType, error: error)
        case .willSave(let id)?:
            guard let activity = published[id] else {
                await reply(replyID, .empty)
                return
            }
            await activity.delegate?.userActivityWillSave(activity)
            activity.needsSave = false
            await reply(replyID, AppReply(activity: activity.snapshot.json))
        case .openURL(let opened)?:
            // A file URL is only ever a file the agent wrote to this app's Inbox: the agent
            // refuses file URLs from peers, and this library refuses a file URL not marked so.
            guard opened.url.isFileURL == opened.inboxFile else {
                await reply(replyID, AppReply(handled: false))
                return
            }
            let handled = await delegate.open(opened.url, sourceApplication: opened.sourceApplication, annotation: opened.annotation)
            await reply(replyID, AppReply(handled: handled))
        case .wasContinued(let id, _, _)?:
            guard let activity = published[id] else { return }
            await activity.delegate?.userActivityWasContinued(activity)
        case .streamsRequested?, .pairRequest?, .pairCode?, .agent?, nil:
            // Streams are accepted in run(); pairing events go to the CLI. An event this
            // version does not know is answered empty, so the agent does not wait for it.
            if replyID != nil { await reply(replyID, .empty) }
        }
    }

    /// continue, then the restoration objects, then didUpdate.
    private func continueActivity(_ activity: UserActivity, replyID: UUID?, enqueue: AsyncStream<Work>.Continuation) async {
        let collected = RestorationCollector()
        let handled = await delegate.continue(activity) { objects in
            if !collected.add(objects) { enqueue.yield(.restore(objects, activity)) }
        }
        await reply(replyID, AppReply(handled: handled))
        guard handled else { return }
        var objects = collected.close()
        if objects.isEmpty, let target = activity.targetContentIdentifier {
            let path = target.split(separator: "/").map(String.init)
            if let object = await delegate.restorationObject(forIdentifierPath: path) ?? restorables[path] {
                objects = [object]
            }
        }
        for object in objects { await object.restoreUserActivityState(activity) }
        await delegate.didUpdate(activity)
    }

    func reply(_ replyID: UUID?, _ reply: AppReply) async {
        guard let replyID, let connection else { return }
        await connection.reply(to: replyID, reply)
    }
}

/// Collects the objects a restoration handler receives while `continue` runs; later calls are
/// handed back to the caller.
private final class RestorationCollector: Sendable {
    private let state = Mutex<(objects: [any UserActivityRestoring], closed: Bool)>(([], false))

    /// Adds objects; false once closed.
    func add(_ objects: [any UserActivityRestoring]) -> Bool {
        state.withLock { s in
            guard !s.closed else { return false }
            s.objects += objects
            return true
        }
    }

    func close() -> [any UserActivityRestoring] {
        state.withLock { s in
            s.closed = true
            return s.objects
        }
    }
}
