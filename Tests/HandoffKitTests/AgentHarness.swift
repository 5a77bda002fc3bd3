import Foundation
import HandoffAgent
import HandoffConfiguration
import HandoffDiscovery
import HandoffKit
import HandoffTransport
import Logging

/// A real agent in this process: its peer listener on 127.0.0.1, its control socket in a temp
/// directory, no DNS-SD (peers are introduced with ``introduce(_:)``).
final class AgentHarness: Sendable {
    let agent: Agent
    let socketPath: String
    let port: Int
    let name: String
    private let peerServer: FrameServer
    private let controlServer: FrameServer

    static func start(name: String, configure: (inout AgentConfiguration) -> Void = { _ in }) async throws -> AgentHarness {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hk-\(UUID().uuidString.prefix(8))").path
        // Mode 0700: clients refuse a control socket in a directory others can read in /tmp.
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var configuration = AgentConfiguration(name: name, socketPath: dir + "/agent.sock")
        configuration.stateDirectory = dir + "/state"
        configure(&configuration)
        let security = try AgentSecurity.load(configuration)
        var logger = Logger(label: "test.\(name)")
        logger.logLevel = .warning
        let peerServer = try await FrameServer.bind(.tcp(host: "127.0.0.1", port: 0), limits: FrameLimits(maxUserInfoBytes: 0),
                                                    security: security.listenerSecurity(configuration, logger: logger))
        let controlServer = try await FrameServer.bind(.unix(path: configuration.socketPath), limits: ControlProtocol.limits)
        let port = peerServer.port!
        let agent = Agent(configuration: configuration, port: port,
                          transport: TCPPeerConnector(connectTimeout: configuration.limits.connectTimeout, tls: security.clientTLS),
                          logger: logger, security: security)
        return AgentHarness(agent: agent, socketPath: configuration.socketPath, port: port, name: name,
                            peerServer: peerServer, controlServer: controlServer)
    }

    private init(agent: Agent, socketPath: String, port: Int, name: String, peerServer: FrameServer, controlServer: FrameServer) {
        self.agent = agent
        self.socketPath = socketPath
        self.port = port
        self.name = name
        self.peerServer = peerServer
        self.controlServer = controlServer
    }

    /// Serves peers and the control socket until cancelled.
    func run() async throws {
        let agent = self.agent
        let logger = Logger(label: "test.\(name)")
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await self.peerServer.run(logger: logger) { try await PeerSession.serve($0, agent: agent, logger: logger) } }
            group.addTask { try await self.controlServer.run(logger: logger) { try await ControlSession.serve($0, agent: agent) } }
            group.addTask { try await agent.background.run() }
        }
    }

    /// Pairs the two agents, as `handoff trust add` with the advertising keys and certificates would.
    func pair(with other: AgentHarness) async throws {
        _ = try await agent.trustAdd(other.agent.deviceID, name: other.name, advertisingKey: await other.agent.advertisingKey,
                                     certificateDER: other.agent.security.identity.certificateDER)
        _ = try await other.agent.trustAdd(agent.deviceID, name: name, advertisingKey: await agent.advertisingKey,
                                           certificateDER: agent.security.identity.certificateDER)
    }

    /// Tells `other` about this agent's current advertisement, as DNS-SD would (pairing the two
    /// first, when they are not).
    func introduce(to other: AgentHarness) async {
        if await !other.agent.isPaired(agent.deviceID) { try! await pair(with: other) }
        let txt = await agent.advertisedTXTRecord
        await other.agent.handle(.resolved(DiscoveredService(
            instanceName: agent.instanceName, serviceType: "_handoff._tcp", domain: "local.", hostTarget: "localhost.",
            port: UInt16(port), txtRecord: txt, addresses: ["127.0.0.1"], interfaceIndex: 1)))
    }
}

/// Records callbacks in order, as "who:what" strings.
final class CallLog: Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var entries: [String] = []
    func add(_ entry: String) { lock.lock(); entries.append(entry); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return entries }
}

/// An app delegate that records every callback.
final class RecordingAppDelegate: HandoffApplicationDelegate, UserActivityDelegate, UserActivityRestoring {
    let name: String
    let log: CallLog
    let handles: Bool
    let saveDelay: Duration
    let received = Received()

    final class Received: @unchecked Sendable {
        private let lock = NSLock()
        private var _activity: UserActivity?
        var activity: UserActivity? {
            get { lock.lock(); defer { lock.unlock() }; return _activity }
            set { lock.lock(); _activity = newValue; lock.unlock() }
        }
    }

    init(_ name: String, log: CallLog, handles: Bool = true, saveDelay: Duration = .zero) {
        self.name = name
        self.log = log
        self.handles = handles
        self.saveDelay = saveDelay
    }

    func willContinueUserActivity(withType activityType: String) async -> Bool {
        log.add("\(name):willContinue:\(activityType)")
        return false
    }

    func `continue`(_ userActivity: UserActivity, restorationHandler: @escaping RestorationHandler) async -> Bool {
        log.add("\(name):continue:\(userActivity.title ?? "")")
        received.activity = userActivity
        restorationHandler([self])
        return handles
    }

    func restoreUserActivityState(_ activity: UserActivity) async {
        log.add("\(name):restore")
    }

    func didFailToContinueUserActivity(withType activityType: String, error: HandoffError) async {
        log.add("\(name):didFail:\(error.code.rawValue)")
    }

    func didUpdate(_ userActivity: UserActivity) async {
        log.add("\(name):didUpdate")
    }

    func userActivityWillSave(_ activity: UserActivity) async {
        log.add("\(name):willSave")
        if saveDelay > .zero { try? await Task.sleep(for: saveDelay) }
        activity.addUserInfoEntries(from: ["saved": .bool(true)])
    }

    func userActivityWasContinued(_ activity: UserActivity) async {
        log.add("\(name):wasContinued")
    }
}
