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
    /// False: the hellos sent on pinned connections offer no multiplexing (nor say that this agent
    /// pushes its advertisement), so the agents reached answer as to a peer from before it (each
    /// fetch on a connection of its own), and their own hellos, unagreed, make them look the same
    /// to this agent: an old peer, as it sees it.
    public var offersMultiplexing = true

    /// A transport for an agent that proves `identity` on `network`, from `host`.
    public init(network: InMemoryNetwork, identity: ProvenPeerIdentity?, host: String? = nil) {
        self.network = network
        self.identity = identity
        self.host = host
    }

    public func connect(to endpoint: PeerEndpoint, limits: FrameLimits) async throws -> any FrameConnection {
        let connection = try network.connect(to: endpoint, from: identity, host: host, limits: limits, pinned: true)
        return offersMultiplexing ? connection : HelloWithoutMultiplexing(base: connection)
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

/// A connection whose outgoing hellos offer no multiplexing and no pushed advertisement (``InMemoryPeerTransport/offersMultiplexing``).
struct HelloWithoutMultiplexing: FrameConnection {
    let base: any FrameConnection

    func send(_ frames: [Frame]) async throws {
        try await base.send(frames.map { frame in
            guard case .hello(var hello)? = try? PeerMessage(frame: frame) else { return frame }
            hello.multiplexing = false
            hello.pushesAdvertisements = false
            return PeerMessage.hello(hello).frame
        })
    }

    func receive() async throws -> Frame? { try await base.receive() }
    func close() async { await base.close() }
}
