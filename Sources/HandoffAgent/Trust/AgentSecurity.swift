import HandoffConfiguration
import HandoffCore
import HandoffTransport
import HandoffTrust
import Logging
import Synchronization

/// What the agent needs to take part only with paired devices: its identity (key pair,
/// certificate, device ID), TLS made from it, the paired devices as stored, and the registry of
/// open peer connections by device.
public struct AgentSecurity: Sendable {
    /// This device's key pair, certificate and device ID.
    public let identity: DeviceIdentity
    /// TLS 1.3 with that identity.
    public let tls: PeerTLS
    /// Open peer connections by device, so unpairing closes them.
    public let registry: PeerConnectionRegistry
    /// The paired devices and advertising keys as loaded at start.
    public let initialTrust: TrustStore
    /// The newest advertisement taken from each device, as loaded at start (replays of older
    /// ones are refused across restarts).
    public let initialSeen: SeenAdvertisements
    /// Whether handoff is paused here, as loaded at start (`handoff pause`).
    public let initialSettings: DeviceSettings
    /// Where the identity and the trust store live (`stateDirectory`); nil keeps them in memory.
    public let stateDirectory: String?
    /// The paired devices' IDs, readable from any thread (the listener checks them when a TLS
    /// handshake completes); the agent updates it with its trust store.
    public let paired: PairedDeviceSet

    public init(identity: DeviceIdentity, trust: TrustStore, seen: SeenAdvertisements = SeenAdvertisements(),
                settings: DeviceSettings = DeviceSettings(), stateDirectory: String?) throws {
        self.identity = identity
        self.tls = try PeerTLS(identity: identity)
        self.registry = PeerConnectionRegistry()
        self.initialTrust = trust
        self.initialSeen = seen
        self.initialSettings = settings
        self.stateDirectory = stateDirectory
        self.paired = PairedDeviceSet(trust.devices.map(\.deviceID))
    }

    /// Loads the identity, the paired devices, the seen advertisements and the settings from
    /// `configuration.stateDirectory`, creating them on first start.
    public static func load(_ configuration: AgentConfiguration) throws -> AgentSecurity {
        let directory = configuration.stateDirectory
        let identity = try DeviceIdentity.loadOrCreate(directory: directory, commonName: configuration.name)
        let trust = try TrustStore.load(directory: directory)
        let seen = try SeenAdvertisements.load(directory: directory)
        let settings = try DeviceSettings.load(directory: directory)
        return try AgentSecurity(identity: identity, trust: trust, seen: seen, settings: settings, stateDirectory: directory)
    }

    /// TLS for outgoing peer connections.
    public var clientTLS: PeerClientTLS { PeerClientTLS(tls: tls, registry: registry) }

    /// The peer listener's protection, from the configuration's `security.*` keys. Connections
    /// refused for being over a device's cap are logged: the first, then every hundredth.
    public func listenerSecurity(_ configuration: AgentConfiguration, logger: Logger) -> ListenerSecurity {
        let limits = configuration.security
        return ListenerSecurity(
            tls: tls, handshakeDeadline: limits.handshakeTimeout, maxFrameBytesBeforeAuthentication: 4096,
            admission: .init(maxUnauthenticated: limits.maxUnauthenticatedConnections,
                             maxUnauthenticatedPerAddress: limits.maxUnauthenticatedPerAddress,
                             ratePerSecond: Double(limits.connectionsPerSecondPerAddress),
                             burst: 2 * limits.connectionsPerSecondPerAddress),
            registry: registry, maxConnectionsPerDevice: limits.maxConnectionsPerDevice,
            onRefusedOverCap: { id, refused in
                guard refused == 1 || refused % 100 == 0 else { return }
                logger.warning("refused a peer connection: the device already has security.maxConnectionsPerDevice open", metadata: [
                    "handoff.device": "\(id.shortID)", "handoff.limit": "\(limits.maxConnectionsPerDevice)", "handoff.refusedSoFar": "\(refused)",
                ])
            },
            isPaired: { [paired] in paired.contains($0) })
    }
}

/// A set of device IDs shared between the agent and its listener's event loops.
public final class PairedDeviceSet: Sendable {
    private let ids: Mutex<Set<DeviceID>>

    init(_ ids: [DeviceID]) { self.ids = Mutex(Set(ids)) }

    /// Whether the device is paired.
    public func contains(_ id: DeviceID) -> Bool { ids.withLock { $0.contains(id) } }

    func replace(with new: [DeviceID]) { ids.withLock { $0 = Set(new) } }
}
