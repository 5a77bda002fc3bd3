import HandoffCore
import Logging
import ServiceLifecycle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Desktop notifications for the activities paired devices offer (docs/NOTIFICATIONS.md): the
/// shell of ``NotificationPlan``. It follows the agent's events, posts, replaces and closes
/// notifications through the desktop's notification server on the session bus, and continues an
/// activity when its notification is clicked.
///
/// Without a session bus or a notification server it logs one line saying so and carries on. A
/// server that starts later on the bus (as after logging in) is noticed at once from the bus's
/// `NameOwnerChanged`; a missing bus, and a server that stopped answering, are looked for again
/// every ``retryInterval``. With `notifications: false` nothing is posted and the bus is not looked
/// for; a reload that turns them on starts looking at once. On shutdown the
/// notifications it shows are closed.
public actor NotificationService: Service {
    /// How often a missing bus or server is looked for again.
    public static let retryInterval: Duration = .seconds(30)
    private static var retrySeconds: Int64 { retryInterval.components.seconds }
    /// How long a withdrawn activity's notification waits for the device's newer activity to
    /// replace it before it is closed (the two events come together, one after the other).
    static let settleDelay: Duration = .milliseconds(50)

    private enum Input: Sendable {
        case event(AgentEvent)
        case signal(NotificationServer.Signal, generation: Int)
        case connectionEnded(generation: Int)
        case retry
        case settle
        /// A reload set `notifications`.
        case enabled(Bool)
    }

    private let agent: Agent
    private let logger: Logger
    private let environment: [String: String]
    private var plan: NotificationPlan
    /// The session bus connection, to the notification server when one is there
    /// (``NotificationPlan/capabilities`` is set then).
    private var connection: NotificationServer?
    /// Where the run loop's inputs go (events, signals, timers).
    private var input: AsyncStream<Input>.Continuation?
    /// Work that runs beside the loop (timers, continuations), in the service's task group.
    private var jobs: AsyncStream<@Sendable () async -> Void>.Continuation?
    /// Counts connections, so that a stale connection's signals and end are told apart.
    private var connectionGeneration = 0
    /// Whether a ``Input/retry`` is on its way.
    private var retryPending = false
    /// Whether a ``Input/settle`` is on its way.
    private var settling = false
    /// Whether the one line about missing notifications has been logged.
    private var reportedMissing = false

    /// - Parameter environment: where the session bus's address comes from
    ///   (`DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`).
    public init(agent: Agent, logger: Logger, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.agent = agent
        self.logger = logger
        self.environment = environment
        self.plan = NotificationPlan(enabled: agent.configuration.notifications, paused: false)
    }

    public func run() async throws {
        if !plan.enabled { logger.debug("desktop notifications are off (config notifications: false)") }
        let subscription = agent.events.subscribe(background: true)
        let reloads = agent.liveConfiguration.updates()
        plan = NotificationPlan(enabled: plan.enabled, paused: await agent.isPaused)
        let (agent, logger) = (agent, logger)
        let (inputs, input) = AsyncStream.makeStream(of: Input.self)
        let (jobs, job) = AsyncStream.makeStream(of: (@Sendable () async -> Void).self)
        self.input = input
        self.jobs = job
        await withDiscardingTaskGroup { group in
            group.addTask {
                var subscription = subscription
                while true {
                    for await event in subscription.events { input.yield(.event(event)) }
                    // Fell AgentEventHub.bufferSize events behind (never seen): follow them again.
                    guard subscription.overflowed, !Task.isCancelled else { return }
                    logger.info("desktop notifications fell behind the agent's events; following them again")
                    subscription = agent.events.subscribe(background: true)
                }
            }
            group.addTask {
                for await configuration in reloads { input.yield(.enabled(configuration.notifications)) }
            }
            group.addTask {
                await withDiscardingTaskGroup { running in
                    for await work in jobs { running.addTask { await work() } }
                }
            }
            if plan.enabled { input.yield(.retry) }
            try? await cancelWhenGracefulShutdown {
                for await next in inputs { await self.handle(next) }
            }
            group.cancelAll()
        }
        self.input = nil
        self.jobs = nil
        await closeAll()
    }

    private func handle(_ next: Input) async {
        switch next {
        case .event(let event):
            await perform(plan.receive(event))
            if plan.hasUnsettledWithdrawals, !settling {
                settling = true
                after(Self.settleDelay, .settle)
            }
        case .settle:
            settling = false
            await perform(plan.settle())
        case .signal(let signal, let generation):
            guard generation == connectionGeneration else { return }
            switch signal {
            case .actionInvoked(let id, let key): await perform(plan.actionInvoked(serverID: id, key: key))
            case .closed(let id, let reason): plan.closed(serverID: id, reason: reason)
            case .serverPresent(true): await lookForServer()
            case .serverPresent(false): serverLost("the notification server exited")
            }
        case .connectionEnded(let generation):
            guard generation == connectionGeneration, connection != nil else { return }
            connectionLost()
        case .retry:
            retryPending = false
            guard plan.enabled else { return }
            if connection == nil { await connect() } else { await lookForServer() }
        case .enabled(let on):
            guard on != plan.enabled else { return }
            logger.info("desktop notifications turned \(on ? "on" : "off") by a reload (config notifications)")
            await perform(plan.setEnabled(on))
            if on, !retryPending { input?.yield(.retry) }
        }
    }

    // MARK: The bus and the server

    /// Connects to the session bus, then looks for the server on it.
    private func connect() async {
        guard let address = NotificationServer.sessionBusAddress(environment: environment) else {
            missing("no session bus (DBUS_SESSION_BUS_ADDRESS is not set and there is no $XDG_RUNTIME_DIR/bus); run handoffd in your desktop session (as a systemd user service, or started from it) to get them; looking again every \(Self.retrySeconds) s")
            return
        }
        let connected: NotificationServer
        do { connected = try await NotificationServer.connect(address: address) } catch {
            missing("\(error); looking again every \(Self.retrySeconds) s")
            return
        }
        connectionGeneration += 1
        let (generation, input) = (connectionGeneration, input)
        connection = connected
        spawn {
            for await signal in connected.signals { input?.yield(.signal(signal, generation: generation)) }
            input?.yield(.connectionEnded(generation: generation))
        }
        await lookForServer()
    }

    /// Asks the bus's notification server for its capabilities; the current offers are shown
    /// if it answers.
    private func lookForServer() async {
        guard let connection, plan.capabilities == nil else { return }
        let capabilities: [String]
        do { capabilities = try await connection.capabilities() } catch {
            missing("no notification server on the session bus (\(error)); start one (such as dunst, or your desktop's) to get them, they show as soon as it runs")
            return
        }
        let name = (try? await connection.serverName()) ?? "unknown server"
        reportedMissing = false
        logger.info("desktop notifications through the session bus", metadata: [
            "handoff.server": "\(name)", "handoff.capabilities": "\(capabilities.sorted().joined(separator: ","))",
        ])
        await perform(plan.serverAppeared(capabilities: capabilities))
    }

    /// The server exited, or stopped answering: what it showed is gone; it is looked for when a
    /// server takes the name again, and every ``retryInterval``.
    private func serverLost(_ reason: String) {
        guard plan.capabilities != nil else { return }
        plan.serverLost()
        logger.info("desktop notifications stopped: \(reason); they come back when a notification server runs again")
        reportedMissing = true
        scheduleRetry()
    }

    /// The session bus connection ended.
    private func connectionLost() {
        connection?.disconnect()
        connection = nil
        connectionGeneration += 1
        plan.serverLost()
        logger.info("desktop notifications stopped: the session bus connection ended; looking for it every \(Self.retrySeconds) s")
        reportedMissing = true
        scheduleRetry()
    }

    /// Logs the first time notifications cannot be shown (later times at debug level), and tries
    /// again after ``retryInterval``.
    private func missing(_ reason: String) {
        let message: Logger.Message = "desktop notifications are off: \(reason) (config notifications: false turns them off)"
        if reportedMissing { logger.debug(message) } else { logger.info(message) }
        reportedMissing = true
        scheduleRetry()
    }

    private func scheduleRetry() {
        guard !retryPending else { return }
        retryPending = true
        after(Self.retryInterval, .retry)
    }

    /// Runs `work` beside the loop, in the service's task group (cancelled when it stops).
    private func spawn(_ work: @escaping @Sendable () async -> Void) {
        jobs?.yield(work)
    }

    /// Hands `next` to the loop after `delay`, on the agent's clock (a manual one in tests).
    private func after(_ delay: Duration, _ next: Input) {
        let (input, clock) = (input, agent.clock)
        spawn {
            guard (try? await clock.sleep(for: delay, tolerance: nil)) != nil else { return }
            input?.yield(next)
        }
    }

    // MARK: Directives

    private func perform(_ directives: [NotificationPlan.Directive]) async {
        for directive in directives {
            switch directive {
            case .notify(let replacing, let summary, let body, let withAction, let activity):
                guard let connection, plan.capabilities != nil else { plan.postFailed(activity: activity); continue }
                do {
                    let markup = plan.capabilities?.contains("body-markup") ?? false
                    let id = try await connection.notify(appName: "Handoff", replacing: replacing ?? 0, summary: summary,
                                                     body: markup ? Self.escapingMarkup(body) : body,
                                                     actions: withAction ? [NotificationPlan.defaultAction, "Continue"] : [], expireTimeout: 0)
                    logger.debug("notification posted", metadata: ["handoff.id": "\(activity)", "handoff.notification": "\(id)"])
                    await perform(plan.posted(activity: activity, serverID: id))
                } catch {
                    plan.postFailed(activity: activity)
                    serverLost("the notification server did not take a notification (\(error))")
                }
            case .close(let id):
                do { try await connection?.close(id) } catch {
                    logger.debug("cannot close a desktop notification", metadata: ["handoff.notification": "\(id)", "handoff.error": "\(error)"])
                }
            case .continueActivity(let id):
                logger.info("notification clicked: continuing", metadata: ["handoff.id": "\(id)"])
                // In the background: the click must not hold up the notifications meanwhile; the
                // outcome comes back as a `continued` or `continueFailed` event.
                spawn { [agent] in _ = await agent.continueActivity(id: id) }
            }
        }
    }

    private func closeAll() async {
        guard let connection else { return }
        for id in plan.shownServerIDs { try? await connection.close(id) }
        connection.disconnect()
        self.connection = nil
    }

    /// Escapes `&`, `<` and `>` for a server that reads markup in bodies (peer names are not markup).
    static func escapingMarkup(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
