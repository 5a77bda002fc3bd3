import ArgumentParser
import CHandoffShims
import HandoffAgent
import HandoffConfiguration
import HandoffCore
import HandoffDiscovery
import HandoffTransport
import HandoffTrust
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `handoffd`: the agent that runs on every host.
@main
struct HandoffDaemon: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handoffd",
        abstract: "The handoff agent: advertises this host's activities over DNS-SD and continues peers' activities.",
        discussion: """
            Without --config it reads $XDG_CONFIG_HOME/handoff/handoffd.json (~/.config/handoff/handoffd.json) \
            if that exists; config/handoffd.json in the source lists every key and its default.
            SIGHUP (systemctl --user reload handoffd) reads the same file again: handlers, limits, urlOpener, logLevel, \
            notifications, faults, inboxDirectory, appsDirectory, security.pairingTimeout and security.urlSchemes change at once; \
            the other keys are logged as needing a restart and keep their values; a file with an error changes nothing.
            Exit status: 78 for a bad configuration, 73 when a file cannot be created, 69 when a service is unavailable, \
            75 when another handoffd runs.
            """,
        version: "handoffd \(HandoffVersion.description)")

    @Option(name: .long, help: "The JSON configuration file. Default: $XDG_CONFIG_HOME/handoff/handoffd.json if it exists, else every key has its default.")
    var config: String?

    @Flag(name: .customLong("check-config"), help: "Check the configuration and exit: 0 when it is valid, 78 (and what is wrong) otherwise.")
    var checkConfig = false

    mutating func run() async throws {
        // Two malloc arenas: glibc's default (8 per core) lets TLS relaying on the event loop
        // threads grow the RSS by 100+ MB that is never returned (measured: +165 MB over a 1 GiB
        // stream with the default, +10 MB with two).
        _ = handoff_limit_malloc_arenas(2)
        // One event loop thread (NIO's default is one per core): the agent's work is I/O, and on
        // one thread a relayed stream never hops between threads (the source agent's two stream
        // connections are accepted separately, and landed on different loops half the time).
        // Measured with `scripts/bench --short` (docs/BENCHMARKS.md): one stream 816 against
        // 672 MiB/s, 200 concurrent fetches p99 130 against 142 ms with 500 against 650 µs of
        // CPU each, continue latency the same.
        NIOSingletons.groupLoopCountSuggestion = 1
        // Swift concurrency's tasks run on that same thread (TasksOnEventLoop).
        let tasksOnEventLoop = TasksOnEventLoop.install()
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        // And their timers are that loop's (EventLoopClock): no Dispatch timer thread to wake.
        let clock = EventLoopClock(eventLoop: loop)
        // A handler's exit then wakes no thread of the agent's (ChildExitSignals).
        let childExitsUnblocked = await ChildExitSignals.unblock(on: loop)
        setenv("AVAHI_COMPAT_NOWARN", "1", 1)
        umask(0o077)  // everything the agent creates is private to its user
        signal(SIGPIPE, SIG_IGN)  // a handler that closes its stdin early must not kill the agent
        let environment = ProcessInfo.processInfo.environment
        let defaultSocket = DefaultPaths.controlSocket(environment: environment)
        let hostName = Self.hostName()
        let configOption = config
        let configurationPath = Self.configurationPath(option: configOption, environment: environment)
        let configuration: AgentConfiguration
        let launchable: [LaunchableApp]
        do {
            (configuration, launchable) = try Self.readConfiguration(path: configurationPath, hostName: hostName, defaultSocket: defaultSocket)
        } catch {
            Self.fail("\(error). Fix the \(error.key == "appsDirectory" ? "app manifest" : "config file") and start handoffd again.", code: 78)
        }
        if checkConfig {
            print("handoffd: \(configurationPath ?? "no config file (every key has its default)"): configuration OK")
            return
        }

        let underJournal = JournalStream.isConnected(environment: environment)
        let live = LiveConfiguration(configuration)
        LoggingSystem.bootstrap { label in
            // Peer names, titles and messages reach the log escaped (UntrustedText). Under
            // journald each line carries its syslog priority. The level is logLevel as a reload
            // left it.
            if underJournal { return EscapingLogHandler(LiveLevelLogHandler(JournalLogHandler(label: label), configuration: live)) }
            return EscapingLogHandler(LiveLevelLogHandler(StreamLogHandler.standardError(label: label), configuration: live))
        }
        var logger = Logger(label: "handoffd")
        logger[metadataKey: "handoff.agent"] = "\(configuration.name)"

        try await Self.refuseIfRunning(socketPath: configuration.socketPath)
        // A bare file name has no directory to make or check.
        let socketDirectory = configuration.socketPath.contains("/") ? PrivateDirectory.parent(of: configuration.socketPath) : ""
        if !socketDirectory.isEmpty {
            try? FileManager.default.createDirectory(atPath: socketDirectory, withIntermediateDirectories: true)
            // The same check as the clients make (they would refuse a socket here otherwise).
            do { try ControlSocketCheck.checkDirectory(ofSocket: configuration.socketPath) } catch {
                Self.fail("\(error). Use a private directory (config key socketPath), such as the default under $XDG_RUNTIME_DIR.", code: 73)
            }
        }

        let security: AgentSecurity
        do { security = try AgentSecurity.load(configuration) } catch {
            Self.fail("cannot load or create this device's identity in \(configuration.stateDirectory): \(error) (config key stateDirectory)", code: 73)
        }

        let peerServer = await Self.bindPeerListener(configuration, security: security, logger: logger)
        let controlServer: FrameServer
        do {
            controlServer = try await FrameServer.bind(.unix(path: configuration.socketPath), limits: ControlProtocol.limits)
        } catch {
            Self.fail("cannot create the control socket \(configuration.socketPath): \(error). Check the directory exists and is writable (config key socketPath).", code: 73)
        }
        let port = peerServer.port ?? configuration.port
        let agent = Agent(
            configuration: live, port: port,
            transport: TCPPeerConnector(connectTimeout: { live.value.limits.connectTimeout }, tls: security.clientTLS), logger: logger,
            launchable: launchable, security: security, clock: clock)
        let browser = ServiceBrowser(serviceType: configuration.serviceType, logger: logger)
        logger.info("handoffd started", metadata: [
            "handoff.port": "\(port)", "handoff.socket": "\(configuration.socketPath)", "handoff.agentID": "\(agent.agentID)",
            "handoff.deviceID": "\(security.identity.deviceID)", "handoff.instance": "\(agent.instanceName)",
            "handoff.tasksOnEventLoop": "\(tasksOnEventLoop)", "handoff.childExitsUnblocked": "\(childExitsUnblocked)",
        ])

        let sessionLogger = logger
        let notifier = SystemdNotifier(environment: environment)
        // Wide-area DNS-SD (wideArea.*): registered and browsed beside mDNS, stopped before it.
        var wideArea: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if let registrar = agent.wideAreaRegistrar, let wideAreaBrowser = agent.makeWideAreaBrowser(logger: logger) {
            wideArea = [.named("WideAreaBrowser", wideAreaBrowser), .named("WideAreaDiscoveryService", WideAreaDiscoveryService(browser: wideAreaBrowser, agent: agent)),
                        .named("WideAreaRegistrar", registrar)]
        }
        // ServiceGroup stops services in reverse order: the advertiser goes first, so peers get
        // the DNS-SD goodbye before anything else shuts down.
        let group = ServiceGroup(configuration: .init(
            services: [
                .named("BackgroundWork", agent.background),
                .named("ExpiryService", ExpiryService(agent: agent, clock: clock)),
                .named("ClipboardSyncService", ClipboardSyncService(agent: agent)),
                .named("ControlServer", FrameServerService(server: controlServer, logger: logger) { try await ControlSession.serve($0, agent: agent) }),
                .named("PeerServer", FrameServerService(server: peerServer, logger: logger) { try await PeerSession.serve($0, agent: agent, logger: sessionLogger) }),
                .named("ServiceBrowser", browser),
                .named("DiscoveryService", DiscoveryService(browser: browser, agent: agent)),
                .named("LivenessService", LivenessService(agent: agent, clock: clock, logger: logger)),
                .named("NotificationService", NotificationService(agent: agent, logger: logger)),
                // Seals the record again for a name Avahi renamed the service to.
                .named("RegisteredNameService", RegisteredNameService(agent: agent)),
                .named("ServiceAdvertiser", agent.advertiserService),
            ] + wideArea + [
                // The same file and parse as at start; a default file made since is read.
                .named("ReloadSignalService", ReloadSignalService(
                    agent: agent, notifier: notifier, logger: logger,
                    path: { Self.configurationPath(option: configOption, environment: environment) },
                    read: { path throws(ConfigurationError) in try Self.readConfiguration(path: path, hostName: hostName, defaultSocket: defaultSocket) })),
                // Last, so that it is the first told to shut down: STOPPING=1 comes first.
                .named("SystemdReadinessService", SystemdReadinessService(
                    notifier: notifier, clock: clock, logger: logger
                ) { [advertiser = agent.advertiserService] in advertiser.registeredName != nil }),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        do {
            try await group.run()
        } catch {
            logger.error("handoffd stopped after an error", metadata: ["handoff.error": "\(error)"])
            await agent.finishKeepingPublishedActivities()
            unlink(configuration.socketPath)
            throw ExitCode(1)
        }
        // The kept activities' file is written off the agent's actor: the last snapshot lands before the exit.
        await agent.finishKeepingPublishedActivities()
        unlink(configuration.socketPath)
        logger.info("handoffd stopped")
    }

    /// The configuration file: `--config`, else the default file if it exists, else none.
    static func configurationPath(option: String?, environment: [String: String]) -> String? {
        option ?? DefaultPaths.configFile(environment: environment).flatMap { FileManager.default.fileExists(atPath: $0) ? $0 : nil }
    }

    /// Reads and checks the configuration file at `path` (every key at its default without
    /// one) and the app manifests in its `appsDirectory`: at start, and again on SIGHUP.
    static func readConfiguration(path: String?, hostName: String, defaultSocket: String)
        throws(ConfigurationError) -> (AgentConfiguration, [LaunchableApp])
    {
        let configuration = try path.map { path throws(ConfigurationError) in
            try ConfigurationFile.load(path: path, defaultName: hostName, defaultSocketPath: defaultSocket)
        } ?? AgentConfiguration(name: hostName, socketPath: defaultSocket)
        return (configuration, try LaunchableApp.load(directory: configuration.appsDirectory))
    }

    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return "handoff" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return String(name.split(separator: ".").first ?? "handoff")
    }

    /// Refuses to start when another agent answers on the socket (a stale file is replaced).
    static func refuseIfRunning(socketPath: String) async throws {
        guard FileManager.default.fileExists(atPath: socketPath) else { return }
        if case .success = await ControlClient(socketPath: socketPath).call("status") {
            fail("another handoffd is already running with control socket \(socketPath). Stop it, or give this one another socketPath.", code: 75)
        }
    }

    static func fail(_ message: String, code: Int32) -> Never {
        let line = Array("handoffd: \(message)\n".utf8)
        _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        #if canImport(Glibc)
        Glibc.exit(code)
        #else
        Darwin.exit(code)
        #endif
    }
}
