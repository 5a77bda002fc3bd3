/// Where a peer agent listens.
public struct PeerEndpoint: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// The device ID (SHA-256 of its certificate) the peer must present; connections to a peer
    /// whose certificate differs are refused during the TLS handshake.
    public var expectedIdentity: [UInt8]?

    public init(host: String, port: Int, expectedIdentity: [UInt8]? = nil) {
        self.host = host
        self.port = port
        self.expectedIdentity = expectedIdentity
    }

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

/// Opens connections to peer agents.
public protocol PeerConnector: Sendable {
    /// Connects to a peer; the returned connection refuses frames over `limits`.
    func connect(to endpoint: PeerEndpoint, limits: FrameLimits) async throws -> any FrameConnection
}
