import HandoffConfiguration
import HandoffCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The apps on the control socket, as a pure value: who is registered on which connection,
/// which app gets an activity type, when to start one from `appsDirectory`, who waits for an app
/// to register, and which connection may answer which event. The agent feeds it what happens
/// and does what it says (sends the events, spawns the processes, resumes the waiters).
struct AppRegistry: Sendable {
    /// Identifies a caller waiting for an app to register.
    typealias WaiterID = UUID

    /// Where an activity of some type goes.
    enum Route: Sendable {
        /// To the app registered on this connection.
        case running(connection: UUID, manifest: AppManifest)
        /// To an app that is not running: start it, then route again.
        case launch(LaunchableApp)
        /// No app takes it.
        case none
    }

    /// Apps the agent may start (config `appsDirectory`).
    var launchable: [LaunchableApp]
    /// The registered apps, by control connection.
    private(set) var registered: [UUID: AppManifest] = [:]
    /// Single-flight, per-device rate-limited launches.
    private var launchGate = LaunchGate<AgentInstant>()
    /// Callers waiting for an app to register, by bundle ID.
    private var registrationWaiters: [String: [WaiterID]] = [:]
    /// The connection each event that awaits a reply went to, by reply ID.
    private var replyConnections: [UUID: UUID] = [:]
    /// Why each app being started was started, by bundle ID, until it registers.
    private var launchReasons: [String: LaunchOptions] = [:]

    init(launchable: [LaunchableApp]) {
        self.launchable = launchable
    }

    // MARK: Registration

    /// An app declares itself on `connection`: the callers waiting for it to resume, or why it
    /// is refused (``AppOwnership``).
    mutating func register(_ manifest: AppManifest, on connection: UUID) -> Result<[WaiterID], HandoffError> {
        if let refusal = AppOwnership.refusal(manifest, on: connection, registered: registered) { return .failure(refusal) }
        registered[connection] = manifest
        return .success(registrationWaiters.removeValue(forKey: manifest.identity.bundleID) ?? [])
    }

    /// A control connection closed: the app it was, if any, and the events sent to it that now
    /// get no answer.
    mutating func disconnected(_ connection: UUID) -> (app: AppManifest?, unanswered: [UUID]) {
        let app = registered.removeValue(forKey: connection)
        let unanswered = replyConnections.filter { $0.value == connection }.map(\.key)
        for id in unanswered { replyConnections.removeValue(forKey: id) }
        return (app, unanswered)
    }

    /// Whether an app with this bundle ID is registered.
    func isRegistered(_ bundleID: String) -> Bool {
        registered.values.contains { $0.identity.bundleID == bundleID }
    }

    /// The connection of the app with this bundle ID, if registered.
    func connection(of bundleID: String) -> UUID? {
        registered.first { $0.value.identity.bundleID == bundleID }?.key
    }

    // MARK: Routing and launching

    /// The app for an activity of `type` from `team`: a registered one that declares the type
    /// and belongs to the team (the first by bundle ID), else one in `appsDirectory` to start.
    func route(_ type: ActivityType, fromTeam team: String?) -> Route {
        route { $0.accepts(type, fromTeam: team) }
    }

    /// The app for a link's content of `type` (``HandoffLink``): one that declares the type, of
    /// any team, chosen as ``route(_:fromTeam:)`` chooses.
    func route(linkOf type: ActivityType) -> Route {
        route { $0.activityTypes.contains(type) }
    }

    private func route(to accepts: (AppManifest) -> Bool) -> Route {
        if let running = registered.sorted(by: { $0.value.identity.bundleID < $1.value.identity.bundleID }).first(where: { accepts($0.value) }) {
            return .running(connection: running.key, manifest: running.value)
        }
        guard let candidate = launchable.first(where: { accepts($0.manifest) }) else { return .none }
        return .launch(candidate)
    }

    /// The app in `appsDirectory` with this bundle ID, if any.
    func launchable(bundleID: String) -> LaunchableApp? {
        launchable.first { $0.manifest.identity.bundleID == bundleID }
    }

    /// A request to start `bundleID` for the peer device `device` (nil: this host's user). On
    /// `.launch` the caller starts it and reports ``launchEnded(_:)``.
    /// `options` say why; the app learns them when it registers (``takeLaunchOptions(for:)``).
    mutating func requestLaunch(_ bundleID: String, forDevice device: String?, options: LaunchOptions = .none,
                                now: AgentInstant) -> LaunchGate<AgentInstant>.Decision {
        let decision = launchGate.request(bundleID, forDevice: device, now: now)
        if case .launch = decision { launchReasons[bundleID] = options }
        return decision
    }

    /// A launch ended: the app registered, failed to start, or did not register in time.
    mutating func launchEnded(_ bundleID: String) {
        launchGate.finished(bundleID)
        launchReasons.removeValue(forKey: bundleID)
    }

    /// Why the app registering now was started: once, to the first registration after the launch.
    mutating func takeLaunchOptions(for bundleID: String) -> LaunchOptions {
        launchReasons.removeValue(forKey: bundleID) ?? .none
    }

    /// `waiter` waits for `bundleID` to register; false when it is registered already (no wait).
    mutating func awaitRegistration(of bundleID: String, by waiter: WaiterID) -> Bool {
        guard !isRegistered(bundleID) else { return false }
        registrationWaiters[bundleID, default: []].append(waiter)
        return true
    }

    /// The wait for `bundleID` is over (the launcher's time is up): every caller waiting for it.
    mutating func stopWaiting(for bundleID: String) -> [WaiterID] {
        registrationWaiters.removeValue(forKey: bundleID) ?? []
    }

    // MARK: Replies

    /// An event awaiting reply `id` goes to `connection`.
    mutating func expectReply(_ id: UUID, from connection: UUID) {
        replyConnections[id] = connection
    }

    /// A reply arrived, over `connection` (nil: not from a connection). Refused when the event
    /// went to another connection.
    mutating func replyArrived(_ id: UUID, over connection: UUID?) -> HandoffError? {
        if let connection, let owner = replyConnections[id], owner != connection { return AppOwnership.notYours(id, "answer") }
        replyConnections.removeValue(forKey: id)
        return nil
    }
}
