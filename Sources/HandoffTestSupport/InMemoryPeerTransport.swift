import HandoffCore
import HandoffTransport

/// The in-memory ``PeerTransport`` of one agent on an ``InMemoryNetwork``: pinned, unpinned and
/// stream connections to the other agents' listeners, with the identity checks TLS makes (a
/// pinned connect reaches only the device it names). Connects happen at once: there is no
/// connect timeout to wait for.
public struct InMemoryPeerTransport: PeerTransport {
    /// The network the agent is on.
    public let network: InMemoryNetwork
    /// What the agent proves when it connects (its certificate); nil for none.
    public let identity: ProvenPeerIdentity?
    /// The agent's own address, which the listeners it connects to see as the remote address.
    public let host: String?

    /// A transport for an agent that proves `identity` on `network`, from `host`.
    public init(network: InMemoryNetwork, identity: ProvenPeerIdentity?, host: String? = nil) {
        self.network = network
        self.identity = identity
        self.host = host
    }

    public func connect(to endpoint: PeerEndpoint, limits: FrameLimits) async throws -> any FrameConnection {
        try network.connect(to: endpoint, from: identity, host: host, limits: limits, pinned: true)
    }

    public func connectUnpinned(to endpoint: PeerEndpoint, limits: FrameLimits) async throws -> InMemoryPeerConnection {
        try network.connect(to: endpoint, from: identity, host: host, limits: limits, pinned: false)
    }

    /// A stream connection: NIO channels joined by pipes, set up as on TCP (without TLS), so the
    /// agents relay continuation streams by joining their splices, with backpressure.
    public func connectStream(to endpoint: PeerEndpoint, limits: FrameLimits, options: PeerStreamOptions) async throws -> ChannelStreamConnection {
        try await network.connectStream(to: endpoint, from: identity, limits: limits, options: options)
    }
}
