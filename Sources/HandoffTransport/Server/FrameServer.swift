import HandoffCore
import HandoffTrust
import Logging
import NIOCore
import NIOPosix
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A listening socket whose connections carry frames: the agent's TCP listener for peers and its
/// Unix control socket. Each connection runs in its own child task; an error on one connection
/// closes only that connection.
public struct FrameServer: Sendable {
    /// Where to listen.
    public enum Address: Sendable, Hashable, CustomStringConvertible {
        case tcp(host: String, port: Int)
        /// A Unix domain socket; the file is created with mode 0600 and replaced if stale.
        case unix(path: String)

        public var description: String {
            switch self {
            case .tcp(let host, let port): "tcp \(host):\(port)"
            case .unix(let path): "unix \(path)"
            }
        }
    }

    /// One accepted connection.
    public struct Connection: Sendable {
        /// Frames from the client.
        public var inbound: NIOAsyncChannelInboundStream<Frame>
        /// Frames to the client.
        public var outbound: NIOAsyncChannelOutboundWriter<Frame>
        /// The client's address (nil for Unix sockets).
        public var remoteAddress: SocketAddress?
        /// The peer's device ID, once TLS is up (nil without TLS).
        public var peerIdentity: PeerIdentityBox?
        /// Lifts the pre-authentication limits (nil without TLS).
        public var gate: AuthenticationGate?
        /// The uid of the process at the other end of a Unix socket (SO_PEERCRED); nil for TCP,
        /// and nil when it could not be learnt (a control session then refuses the connection).
        public var peerUID: UInt32?
        /// Closes the connection at once (both directions).
        public var close: @Sendable () -> Void = {}
        /// The connection's end of a relayed stream pair, should it come to carry one (it passes
        /// every frame on to `inbound` until joined).
        public var splice: StreamSplice
        /// Where fault injection puts its decorators when not in `splice`'s channel pipeline
        /// (``ConnectionFaultSite``); nil for the connections a FrameServer accepts.
        public var faultSite: (any ConnectionFaultSite)? = nil
    }

    /// An accepted connection as the initializer prepared it.
    struct Accepted: Sendable {
        /// Nil for a connection refused at admission (already closed).
        var channel: NIOAsyncChannel<Frame, Frame>?
        var identity: PeerIdentityBox?
        var gate: AuthenticationGate?
        var peerUID: UInt32?
        var splice: StreamSplice?
    }

    let channel: NIOAsyncChannel<Accepted, Never>
    /// Accepted connections not yet taken by ``run(logger:handler:)``. NIO requires every
    /// connection to be closed through `executeThenClose`; when the accept loop is cancelled,
    /// these are closed that way instead of being dropped.
    let unclaimed: UnclaimedConnections
    /// The bound address (with the port chosen when 0 was asked for).
    public let address: Address
    /// The bound TCP port (useful when 0 was asked for), nil for Unix sockets.
    public var port: Int? { channel.channel.localAddress?.port }

    /// Binds a listener. Frames over `limits` close their connection. With `security` (the peer
    /// listener), connections speak TLS and are held to its pre-authentication limits.
    public static func bind(_ address: Address, limits: FrameLimits, security: ListenerSecurity? = nil,
                            group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> FrameServer {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: 4096)
            .serverChannelOption(.maxMessagesPerRead, value: 64)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.recvAllocator, value: FrameReads.recvAllocator)
            .childChannelOption(.maxMessagesPerRead, value: StreamSplice.maxMessagesPerRead)
        let unclaimed = UnclaimedConnections()
        let admission = security.map { AdmissionControl(limits: $0.admission) }
        let isUnix = if case .unix = address { true } else { false }
        let initializer: @Sendable (any Channel) -> EventLoopFuture<Accepted> = { channel in
            let uid: EventLoopFuture<UInt32?> = isUnix ? PeerCredentials.uid(of: channel) : channel.eventLoop.makeSucceededFuture(nil)
            return uid.flatMapThrowing { uid in
                var identity: PeerIdentityBox?
                var gate: AuthenticationGate?
                if let security, let admission {
                    guard let secured = try Self.secure(channel, security: security, admission: admission, limits: limits) else {
                        return Accepted(channel: nil)
                    }
                    (identity, gate) = secured
                } else {
                    try channel.pipeline.syncOperations.addFrameCodec(limits: limits)
                }
                let (connection, splice) = try Self.wrapAccepted(channel)
                unclaimed.add(connection)
                return Accepted(channel: connection, identity: identity, gate: gate, peerUID: uid, splice: splice)
            }
        }
        let channel: NIOAsyncChannel<Accepted, Never>
        switch address {
        case .tcp(let host, let port):
            // An IPv6 listener takes IPv4 peers too (as ::ffff:a.b.c.d), whatever the host's
            // net.ipv6.bindv6only says.
            let dualStack = host.contains(":") ? bootstrap.serverChannelOption(ChannelOptions.Types.SocketOption(level: .ipv6, name: .ipv6_v6only), value: 0) : bootstrap
            channel = try await dualStack.bind(host: host, port: port, childChannelInitializer: initializer)
        case .unix(let path):
            channel = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true, childChannelInitializer: initializer)
            guard chmod(path, 0o600) == 0 else {
                try? await channel.channel.close()
                throw FrameServerError(message: "cannot set mode 0600 on control socket \(path): errno \(errno)")
            }
        }
        // Port 0 asks for any port: name the one bound (logs say where connections arrived).
        var bound = address
        if case .tcp(let host, 0) = address, let port = channel.channel.localAddress?.port { bound = .tcp(host: host, port: port) }
        return FrameServer(channel: channel, unclaimed: unclaimed, address: bound)
    }

    /// Sets up a peer connection: admission (a refused one is closed at once: nil), TLS, the
    /// device ID recorder with its per-device cap, the handshake deadline and the size-gated
    /// frame codec.
    private static func secure(_ channel: any Channel, security: ListenerSecurity, admission: AdmissionControl, limits: FrameLimits) throws
        -> (PeerIdentityBox, AuthenticationGate)?
    {
        let address = channel.remoteAddress?.ipAddress ?? "unknown"
        guard let admitted = admission.admit(channel, address: address) else {
            channel.close(promise: nil)
            return nil
        }
        let box = PeerIdentityBox()
        let deadline = channel.eventLoop.scheduleTask(in: TimeAmount(security.handshakeDeadline)) { channel.close(promise: nil) }
        let gate = AuthenticationGate(maxFrameBytesBeforeAuthentication: security.maxFrameBytesBeforeAuthentication) {
            deadline.cancel()
            admission.authenticated(admitted)
        }
        channel.closeFuture.whenComplete { _ in
            deadline.cancel()
            admission.closed(admitted)
        }
        let sync = channel.pipeline.syncOperations
        try sync.addHandler(security.tls.makeServerHandler())
        let cap = PeerIdentityHandler.InboundCap(maxPerDevice: security.maxConnectionsPerDevice) { [registry = security.registry] id in
            security.onRefusedOverCap(id, registry.refusedOverCap)
        }
        try sync.addHandler(PeerIdentityHandler(box: box, registry: security.registry, inboundCap: cap, onIdentified: { id in
            if security.isPaired(id) { gate.authenticate() }
        }))
        try sync.addFrameCodec(limits: limits, gate: gate)
        return (box, gate)
    }

    /// Accepts connections until the task is cancelled or the listener closes, running `handler`
    /// for each in a child task. Returns once every connection has finished.
    public func run(logger: Logger, handler: @escaping @Sendable (Connection) async throws -> Void) async throws {
        do {
            try await accept(logger: logger, handler: handler)
        } catch is CancellationError {
            // Cancelled (graceful shutdown): a normal end, not a failure.
        } catch {
            await closeUnclaimed()
            throw error
        }
        await closeUnclaimed()
    }

    /// Closes connections accepted but never handed to the handler, as NIO requires.
    private func closeUnclaimed() async {
        for connection in unclaimed.takeAll() {
            try? await connection.executeThenClose { _, _ in }
        }
    }

    private func accept(logger: Logger, handler: @escaping @Sendable (Connection) async throws -> Void) async throws {
        try await withThrowingDiscardingTaskGroup { group in
            try await channel.executeThenClose { inbound in
                for try await accepted in inbound {
                    guard let client = accepted.channel, let splice = accepted.splice else { continue }
                    unclaimed.remove(client)
                    group.addTask {
                        let remote = client.channel.remoteAddress
                        do {
                            try await Self.serve(client, accepted, splice: splice, handler: handler)
                        } catch is CancellationError {
                            // Shutting down: not worth a log line per connection.
                        } catch {
                            logger.info("closed connection after an error", metadata: [
                                "handoff.listener": "\(address)", "handoff.remote": "\(remote.map { "\($0)" } ?? "local")",
                                "handoff.error": "\(error)",
                            ])
                        }
                    }
                }
            }
        }
    }

    /// Puts an accepted connection's splice and async channel on `channel`, after its frame
    /// codec: the end of every connection a FrameServer accepts (and of the in-process ones,
    /// ``PipeChannels``).
    static func wrapAccepted(_ channel: any Channel) throws -> (NIOAsyncChannel<Frame, Frame>, StreamSplice) {
        let splice = try StreamSplice.add(to: channel)
        return (try NIOAsyncChannel<Frame, Frame>(wrappingChannelSynchronously: channel, configuration: Self.connectionConfiguration), splice)
    }

    /// Serves one accepted connection with `handler`, and closes it as NIO requires.
    static func serve(_ client: NIOAsyncChannel<Frame, Frame>, _ accepted: Accepted, splice: StreamSplice,
                      handler: @escaping @Sendable (Connection) async throws -> Void) async throws {
        let remote = client.channel.remoteAddress
        try await client.executeThenClose { clientInbound, clientOutbound in
            let connection = Connection(
                inbound: clientInbound, outbound: clientOutbound, remoteAddress: remote,
                peerIdentity: accepted.identity, gate: accepted.gate, peerUID: accepted.peerUID,
                close: { client.channel.close(promise: nil) },
                splice: splice)
            try await Self.serve(connection, closed: client.channel.closeFuture, handler: handler)
        }
    }

    /// Each connection buffers at most two decoded frames (64 KiB each at most) for its session,
    /// then stops reading until the session takes one: a peer that pipelines frames while its
    /// session waits (for an app, a person, a stream's acceptance) holds at most 2 frames here, the
    /// frame being decoded and the socket buffers, not NIO's default of 10 frames.
    static let connectionConfiguration = NIOAsyncChannel<Frame, Frame>.Configuration(
        backPressureStrategy: .init(lowWatermark: 1, highWatermark: 2))

    /// Runs `handler` for one connection, and cancels it when the connection closes: whatever the
    /// session waits for on the peer's behalf (an app's answer, a stream's acceptance, a person)
    /// ends with the connection, instead of at its own deadline.
    static func serve(_ connection: Connection, closed: EventLoopFuture<Void>,
                      handler: @escaping @Sendable (Connection) async throws -> Void) async throws {
        let (closeSignal, signal) = AsyncStream<Never>.makeStream()
        closed.whenComplete { _ in signal.finish() }
        try await withThrowingTaskGroup(of: Void.self) { session in
            session.addTask { try await handler(connection) }
            session.addTask { for await _ in closeSignal {} }  // ends when the channel closes (or on cancellation)
            defer { session.cancelAll() }
            try await session.next()
        }
    }

    /// Stops accepting.
    public func close() async {
        try? await channel.channel.close()
    }
}

/// Connections accepted by NIO that the accept loop has not taken yet.
final class UnclaimedConnections: Sendable {
    private let connections = Mutex<[ObjectIdentifier: NIOAsyncChannel<Frame, Frame>]>([:])

    func add(_ connection: NIOAsyncChannel<Frame, Frame>) {
        connections.withLock { $0[ObjectIdentifier(connection.channel)] = connection }
    }

    func remove(_ connection: NIOAsyncChannel<Frame, Frame>) {
        _ = connections.withLock { $0.removeValue(forKey: ObjectIdentifier(connection.channel)) }
    }

    func takeAll() -> [NIOAsyncChannel<Frame, Frame>] {
        connections.withLock { all in
            defer { all = [:] }
            return Array(all.values)
        }
    }
}

/// A listener that could not be set up.
public struct FrameServerError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
