/// Where a peer agent listens.
public struct PeerEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// The device ID (SHA-256 of its certificate) the peer must present; connections to a peer
    /// whose certificate differs are refused during the TLS handshake.
    public var expectedIdentity: [UInt8]?
    /// More addresses of the same peer, tried in order when connecting to `host` fails (a
    /// discovered peer's other addresses, in ``IPAddressText/connectionOrder(_:)``).
    public var fallbackHosts: [String]

    public init(host: String, port: Int, expectedIdentity: [UInt8]? = nil, fallbackHosts: [String] = []) {
        self.host = host
        self.port = port
        self.expectedIdentity = expectedIdentity
        self.fallbackHosts = fallbackHosts
    }

    /// The endpoint of a peer known by its addresses (in the order to try them), or by its host
    /// name when none is known.
    public init(addresses: [String], orHost hostName: String, port: Int, expectedIdentity: [UInt8]? = nil) {
        self.init(host: addresses.first ?? hostName, port: port, expectedIdentity: expectedIdentity,
                  fallbackHosts: Array(addresses.dropFirst()))
    }

    /// `host`, then `fallbackHosts`.
    public var hosts: [String] { [host] + fallbackHosts }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// A connection that carries frames to and from a peer agent. Transports implement it: TCP with
/// SwiftNIO in the agent, in-memory pipes in tests.
public protocol FrameConnection: Sendable {
    /// Sends frames in order.
    func send(_ frames: [Frame]) async throws
    /// The next frame, or nil when the peer closed the connection. Throws ``FrameError`` when a
    /// header is refused (for example `.userInfoTooLarge`, before the payload is read).
    func receive() async throws -> Frame?
    /// Closes the connection; a pending ``receive()`` then returns nil or throws.
    func close() async
}

/// A connection whose outgoing bytes a fault can cut short (`faults.dropAfterBytes`).
public protocol OutboundLimiting: Sendable {
    /// From now on, lets `budget` more bytes of frames out, then closes the connection mid-frame.
    func limitOutbound(toBytes budget: Int) async
}

/// Opens pinned connections to peer agents: the part of ``PeerTransport`` that fetches and
/// liveness probes need (``ContinuationClient`` takes only this).
public protocol PeerConnector: Sendable {
    /// Connects to a peer that must prove it is `endpoint.expectedIdentity`; the returned
    /// connection refuses frames over `limits`.
    func connect(to endpoint: PeerEndpoint, limits: FrameLimits) async throws -> any FrameConnection
}

/// The one way the agent reaches peers, as grpc-swift's `ClientTransport` is a client's: every
/// peer connection (fetch, liveness, continuation streams, `open`, pairing and key exchange)
/// is opened here. TCP with TLS in the daemon (HandoffTransport's `TCPPeerConnector`); in-memory
/// pipes between whole agents in tests (HandoffTestSupport's `InMemoryPeerTransport`).
///
/// - Pinned connections (``PeerConnector/connect(to:limits:)``) reach only the device named by
///   the endpoint's `expectedIdentity`: fetches, `continued` notices, liveness probes.
/// - Unpinned connections (``connectUnpinned(to:limits:)``) reach whatever device answers, and
///   report the identity it proved: pairing, and learning a paired device's advertising key.
/// - Stream connections (``connectStream(to:limits:options:)``) are pinned and carry, after the
///   `streamOpen` or `open` handshake, a stream of data frames with backpressure: continuation
///   streams and `open` transfers.
///
/// Each implementation names its own connection types, so that its callers may use what they
/// offer beyond the protocol; through `any PeerTransport` they are the protocols'.
public protocol PeerTransport: PeerConnector {
    /// What ``connectUnpinned(to:limits:)`` returns.
    associatedtype Unpinned: UnpinnedFrameConnection
    /// What ``connectStream(to:limits:options:)`` returns.
    associatedtype Stream: PeerStreamConnection

    /// Connects to whatever device answers at `endpoint`. The caller must check
    /// ``UnpinnedFrameConnection/provenIdentity`` before trusting anything the peer says.
    func connectUnpinned(to endpoint: PeerEndpoint, limits: FrameLimits) async throws -> Unpinned

    /// Connects to the peer `endpoint.expectedIdentity` for a stream of frames: the handshake,
    /// then data in both directions, each write waiting while the peer has not read enough.
    func connectStream(to endpoint: PeerEndpoint, limits: FrameLimits, options: PeerStreamOptions) async throws -> Stream
}

/// The identity a peer proved when its connection was set up (in TLS: the certificate it
/// presented, and its SHA-256, the device ID).
public struct ProvenPeerIdentity: Sendable, Hashable {
    /// The device ID: the SHA-256 of ``certificateDER``.
    public var deviceID: [UInt8]
    /// The certificate the peer presented, DER.
    public var certificateDER: [UInt8]

    /// The identity of the device whose certificate is `certificateDER` and ID `deviceID`.
    public init(deviceID: [UInt8], certificateDER: [UInt8]) {
        self.deviceID = deviceID
        self.certificateDER = certificateDER
    }
}

/// A connection to whatever device answered (``PeerTransport/connectUnpinned(to:limits:)``).
public protocol UnpinnedFrameConnection: FrameConnection {
    /// The identity the peer proved; nil when it proved none (a transport without TLS).
    var provenIdentity: ProvenPeerIdentity? { get }
}
