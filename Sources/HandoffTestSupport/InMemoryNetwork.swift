import HandoffCore
import HandoffTransport
import Synchronization

/// A network of whole agents in one process: each agent listens at an address of its own
/// (``listen(host:port:identity:limits:)``) and reaches the others through an
/// ``InMemoryPeerTransport`` (``transport(identity:)``). Nothing touches a socket.
///
/// A listener hands each accepted connection to its ``Listener/connections`` stream, for the
/// test's agent to serve (its `PeerSession`, as the daemon's listener would). Stream connections
/// (continuation streams, `open`) are NIO channels joined by pipes (``PipeChannels``), set up as
/// on TCP, so that the agents' relay joins their splices as between hosts; a listener hands them
/// to its ``Listener/streams``.
public final class InMemoryNetwork: Sendable {
    /// A connection a listener accepted: the listening agent's end, and who connected.
    public struct Accepted: Sendable {
        /// The listening agent's end; its ``InMemoryPeerConnection/provenIdentity`` is the
        /// connecting agent's (nil for a transport without an identity).
        public var connection: InMemoryPeerConnection
        /// The connecting agent's address, for logs.
        public var remote: String
        /// The connecting agent's host, when its transport has one (``InMemoryPeerTransport/host``):
        /// what a socket's remote address would say.
        public var remoteHost: String?
    }

    /// A stream connection a listener accepted: the listening agent's end, set up as its
    /// listener sets up a connection it accepts, and who connected.
    public struct AcceptedStream: Sendable {
        /// The listening agent's end, to serve.
        public var connection: PipeChannels.Served
        /// The identity the connecting agent proved (nil for a transport without one).
        public var identity: ProvenPeerIdentity?
    }

    /// An agent's listening address.
    public final class Listener: Sendable {
        /// The host it listens at.
        public let host: String
        /// The port it listens at.
        public let port: Int
        /// The identity the listener proves to whoever connects (its certificate).
        public let identity: ProvenPeerIdentity
        /// Each accepted connection, in order; finishes when the listener stops.
        public let connections: AsyncStream<Accepted>
        let sink: AsyncStream<Accepted>.Continuation
        /// Each accepted stream connection, in order; finishes when the listener stops.
        public let streams: AsyncStream<AcceptedStream>
        let streamSink: AsyncStream<AcceptedStream>.Continuation
        let limits: FrameLimits
        /// The listener's ends of the connections it accepted, for ``InMemoryNetwork/takeDown(host:port:)``.
        let accepted = Mutex<[InMemoryPeerConnection]>([])
        /// The listener's ends of the stream connections it accepted, likewise.
        let acceptedStreams = Mutex<[PipeChannels.Served]>([])

        init(host: String, port: Int, identity: ProvenPeerIdentity, limits: FrameLimits) {
            self.host = host
            self.port = port
            self.identity = identity
            self.limits = limits
            (connections, sink) = AsyncStream.makeStream(of: Accepted.self)
            (streams, streamSink) = AsyncStream.makeStream(of: AcceptedStream.self)
        }

        /// Stops accepting connections.
        func stop() {
            sink.finish()
            streamSink.finish()
        }

        /// How many connections it has accepted so far (stream connections aside): each one a
        /// connect, TLS handshake and hello on TCP.
        public var acceptedCount: Int { accepted.withLock(\.count) }

        /// How many of the connections it accepted are still open.
        public var openCount: Int { accepted.withLock { $0.filter { !$0.isClosed }.count } }

        /// Breaks every connection it accepted (both ends read the end), as a link that drops;
        /// it goes on accepting.
        public func breakConnections() {
            for connection in accepted.withLock({ $0 }) { connection.closeNow() }
        }

        /// The endpoint that reaches this listener, pinned to its identity.
        public var endpoint: PeerEndpoint { PeerEndpoint(host: host, port: port, expectedIdentity: identity.deviceID) }
    }

    private struct Address: Hashable {
        var host: String
        var port: Int
    }

    private let listeners = Mutex<[Address: Listener]>([:])

    public init() {}

    /// Listens at `host`:`port` as the device `identity`; frames from connecting agents are held
    /// to `limits` (the peer listener's).
    public func listen(host: String, port: Int, identity: ProvenPeerIdentity, limits: FrameLimits) -> Listener {
        let listener = Listener(host: host, port: port, identity: identity, limits: limits)
        let replaced = listeners.withLock { $0.updateValue(listener, forKey: Address(host: host, port: port)) }
        replaced?.stop()
        return listener
    }

    /// Stops the listener at `host`:`port`: later connects there are refused (as to a host where
    /// no agent runs); connections already open stay.
    public func stopListening(host: String, port: Int) {
        let listener = listeners.withLock { $0.removeValue(forKey: Address(host: host, port: port)) }
        listener?.stop()
    }

    /// Takes the host at `host`:`port` off the network, as a host that goes away: its listener
    /// stops, and every connection it accepted breaks (both ends read the end).
    public func takeDown(host: String, port: Int) {
        let listener = listeners.withLock { $0.removeValue(forKey: Address(host: host, port: port)) }
        listener?.stop()
        for connection in listener?.accepted.withLock({ $0 }) ?? [] { connection.closeNow() }
        for connection in listener?.acceptedStreams.withLock({ $0 }) ?? [] { connection.close() }
    }

    /// A transport for an agent that proves `identity` when it connects.
    public func transport(identity: ProvenPeerIdentity?, host: String? = nil) -> InMemoryPeerTransport {
        InMemoryPeerTransport(network: self, identity: identity, host: host)
    }

    /// Opens a connection to the listener at `endpoint`, or refuses.
    ///
    /// - Throws: `PeerConnectError` `.connectionRefused` when nothing listens there,
    ///   `.noPinnedIdentity` for a pinned connect to an endpoint without an identity,
    ///   `.wrongCertificate` when the listener is another device than the one pinned.
    func connect(to endpoint: PeerEndpoint, from identity: ProvenPeerIdentity?, host: String? = nil, limits: FrameLimits,
                 pinned: Bool) throws -> InMemoryPeerConnection {
        let listener = try listener(at: endpoint, pinned: pinned)
        let (client, server) = InMemoryPeerConnection.pair((identity, limits), (listener.identity, listener.limits))
        let remote = identity.map { "in-memory:" + $0.deviceID.prefix(4).map { String($0, radix: 16) }.joined() } ?? "in-memory"
        listener.accepted.withLock { $0.append(server) }
        guard case .enqueued = listener.sink.yield(Accepted(connection: server, remote: remote, remoteHost: host)) else {
            throw PeerConnectError(.connectionRefused, reason: "connection refused")
        }
        return client
    }

    /// Opens a stream connection to the pinned listener at `endpoint` (pipes between two NIO
    /// channels, set up as on TCP: ``PipeChannels/peerStream(limits:listenerLimits:options:group:)``),
    /// or refuses as ``connect(to:from:limits:pinned:)`` does.
    func connectStream(to endpoint: PeerEndpoint, from identity: ProvenPeerIdentity?, limits: FrameLimits,
                       options: PeerStreamOptions) async throws -> ChannelStreamConnection {
        let listener = try listener(at: endpoint, pinned: true)
        let (client, server) = try await PipeChannels.peerStream(limits: limits, listenerLimits: listener.limits, options: options)
        listener.acceptedStreams.withLock { $0.append(server) }
        guard case .enqueued = listener.streamSink.yield(AcceptedStream(connection: server, identity: identity)) else {
            server.close()
            client.close()
            throw PeerConnectError(.connectionRefused, reason: "connection refused")
        }
        return client
    }

    /// The listener at `endpoint`, after the identity checks TLS would make; else why not.
    private func listener(at endpoint: PeerEndpoint, pinned: Bool) throws -> Listener {
        guard let listener = listeners.withLock({ $0[Address(host: endpoint.host, port: endpoint.port)] }) else {
            throw PeerConnectError(.connectionRefused, reason: "connection refused")
        }
        if pinned {
            guard let expected = endpoint.expectedIdentity else {
                throw PeerConnectError(.noPinnedIdentity, reason: "\(endpoint) has no device ID to pin; only paired peers can be reached")
            }
            guard expected == listener.identity.deviceID else {
                throw PeerConnectError(.wrongCertificate, reason: "the peer at \(endpoint) did not present the certificate of the device it was pinned to")
            }
        }
        return listener
    }
}
