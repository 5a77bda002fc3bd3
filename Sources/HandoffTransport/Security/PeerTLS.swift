import HandoffCore
import HandoffTrust
import NIOCore
import NIOSSL
import NIOTLS
import Synchronization

/// TLS 1.3 with mutual authentication for every peer connection, from this device's identity.
///
/// Both sides present their self-signed certificate. Certificates are not checked against a CA:
/// a peer is who its certificate's SHA-256 says it is (its ``DeviceID``). The client pins the
/// device ID it expects (the one a paired peer's sealed advertisement named) and refuses any other
/// certificate during the handshake. The server accepts any certificate, so that an unpaired
/// device can pair, and the agent then decides what the device ID may do.
public struct PeerTLS: Sendable {
    let serverContext: NIOSSLContext
    let clientContext: NIOSSLContext
    /// This device's ID.
    public let localDeviceID: DeviceID

    public init(identity: DeviceIdentity) throws {
        let certificate = try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)
        let key = try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem)
        var server = TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
        server.minimumTLSVersion = .tlsv13
        server.certificateVerification = .noHostnameVerification  // a client certificate is required
        var client = TLSConfiguration.makeClientConfiguration()
        client.certificateChain = [.certificate(certificate)]
        client.privateKey = .privateKey(key)
        client.minimumTLSVersion = .tlsv13
        client.certificateVerification = .noHostnameVerification
        // No CA store: the verification callbacks below decide, by device ID alone. Without this
        // NIOSSL loads the system's CA bundle into each context at start-up: about 1.6 MB of
        // parsed certificates the agent keeps and never uses, and milliseconds of start-up CPU.
        server.trustRoots = .certificates([])
        client.trustRoots = .certificates([])
        // Closing waits this long for the peer's close_notify (NIOSSL's default is 5 s). A live
        // peer on the LAN answers within a millisecond; a dead one (crashed host, link down)
        // never does, and must not hold a failing continuation past its timeout.
        server.shutdownTimeout = Self.shutdownTimeout
        client.shutdownTimeout = Self.shutdownTimeout
        serverContext = try NIOSSLContext(configuration: server)
        clientContext = try NIOSSLContext(configuration: client)
        localDeviceID = identity.deviceID
    }

    /// How long closing a connection waits for the peer's TLS close_notify.
    public static let shutdownTimeout = TimeAmount.milliseconds(100)

    /// The device ID of a peer's leaf certificate.
    static func deviceID(of certificates: [NIOSSLCertificate]) -> DeviceID? {
        guard let leaf = certificates.first, let der = try? leaf.toDERBytes() else { return nil }
        return DeviceID(certificateDER: der)
    }

    /// A server-side handler: any client certificate completes the handshake. The agent's
    /// listener adds it with its own admission and pairing checks; on its own it gives the bare
    /// TLS 1.3 handshake a peer connection makes (the benchmarks' reference).
    public func makeServerHandler() -> NIOSSLServerHandler {
        NIOSSLServerHandler(context: serverContext, customVerificationCallback: { certificates, promise in
            promise.succeed(Self.deviceID(of: certificates) == nil ? .failed : .certificateVerified)
        })
    }

    /// A client-side handler that accepts only the certificate of `expected` (any when nil: when
    /// pairing, or when learning who answers at an address).
    public func makeClientHandler(expecting expected: DeviceID?) throws -> NIOSSLClientHandler {
        try NIOSSLClientHandler(context: clientContext, serverHostname: nil, customVerificationCallback: { certificates, promise in
            guard let presented = Self.deviceID(of: certificates) else { return promise.succeed(.failed) }
            promise.succeed(expected.map { $0 == presented } ?? true ? .certificateVerified : .failed)
        })
    }
}

/// The client side of TLS for peer connections: this device's TLS and where open connections are
/// recorded.
public struct PeerClientTLS: Sendable {
    public var tls: PeerTLS
    public var registry: PeerConnectionRegistry?

    public init(tls: PeerTLS, registry: PeerConnectionRegistry?) {
        self.tls = tls
        self.registry = registry
    }

    /// Adds TLS to a fresh client channel, pinned to `expected` (any certificate when nil).
    /// Returns the box that will hold the peer's device ID and a future that completes with the
    /// handshake.
    func addHandlers(to channel: any Channel, expecting expected: DeviceID?) throws -> (PeerIdentityBox, EventLoopFuture<Void>) {
        let box = PeerIdentityBox()
        let done = channel.eventLoop.makePromise(of: Void.self)
        try channel.pipeline.syncOperations.addHandler(tls.makeClientHandler(expecting: expected))
        try channel.pipeline.syncOperations.addHandler(PeerIdentityHandler(box: box, registry: registry, handshakeDone: done))
        return (box, done.futureResult)
    }

    /// The pinned device ID of an endpoint; an endpoint without one cannot be reached.
    static func expectedIdentity(of endpoint: PeerEndpoint) throws -> DeviceID {
        guard let bytes = endpoint.expectedIdentity, let id = try? DeviceID(bytes: bytes) else {
            throw PeerConnectError(.noPinnedIdentity, reason: "no device ID is known for \(endpoint); only paired peers can be reached")
        }
        return id
    }
}

/// Who is on the other end of one TLS connection, once the handshake is done.
public final class PeerIdentityBox: Sendable {
    private let value = Mutex<(id: DeviceID, certificateDER: [UInt8])?>(nil)

    /// The peer's device ID; nil until the handshake completes.
    public var deviceID: DeviceID? { value.withLock { $0?.id } }

    /// The certificate the peer presented, DER; its SHA-256 is ``deviceID``. Nil until the
    /// handshake completes.
    public var certificateDER: [UInt8]? { value.withLock { $0?.certificateDER } }

    /// Both at once, as recorded; nil until the handshake completes.
    var identity: (id: DeviceID, certificateDER: [UInt8])? { value.withLock { $0 } }

    func set(_ id: DeviceID, certificateDER: [UInt8]) { value.withLock { $0 = (id, certificateDER) } }
}

/// Records the peer's device ID when the TLS handshake completes (before any application data is
/// read) and registers the channel, so that unpairing can close it.
final class PeerIdentityHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    let box: PeerIdentityBox
    let registry: PeerConnectionRegistry?
    /// Succeeds when the handshake completes, fails when the connection fails first.
    let handshakeDone: EventLoopPromise<Void>?

    /// Called with the peer's device ID when the handshake completes.
    let onIdentified: (@Sendable (DeviceID) -> Void)?
    /// For an accepted connection: the most connections one device may have open to us. One over
    /// it is closed as soon as its handshake names the device, before any frame is read.
    let inboundCap: InboundCap?

    /// The per-device cap of a listener, and what to tell when a connection is over it.
    struct InboundCap: Sendable {
        var maxPerDevice: Int
        var onRefused: @Sendable (DeviceID) -> Void
    }

    init(box: PeerIdentityBox, registry: PeerConnectionRegistry?, handshakeDone: EventLoopPromise<Void>? = nil,
         inboundCap: InboundCap? = nil, onIdentified: (@Sendable (DeviceID) -> Void)? = nil) {
        self.box = box
        self.registry = registry
        self.handshakeDone = handshakeDone
        self.inboundCap = inboundCap
        self.onIdentified = onIdentified
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        handshakeDone?.fail(error)
        context.fireErrorCaught(error)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event,
            let certificate = try? context.pipeline.syncOperations.handler(type: NIOSSLHandler.self).peerCertificate,
            let der = try? certificate.toDERBytes()
        {
            let id = DeviceID(certificateDER: der)
            if let registry {
                guard registry.register(context.channel, for: id, inboundLimit: inboundCap?.maxPerDevice) else {
                    inboundCap?.onRefused(id)
                    handshakeDone?.fail(ChannelError.ioOnClosedChannel)
                    context.close(promise: nil)
                    return
                }
            }
            box.set(id, certificateDER: der)
            onIdentified?(id)
            handshakeDone?.succeed()
        }
        context.fireUserInboundEventTriggered(event)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // A connection that never became active (refused, timed out) ends here.
        handshakeDone?.fail(ChannelError.ioOnClosedChannel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let id = box.deviceID { registry?.unregister(context.channel, for: id) }
        handshakeDone?.fail(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }
}

/// The open peer connections of each device, in both directions, so that unpairing a device
/// closes its connections at once, and so that no device holds more than its share of the
/// listener (`security.maxConnectionsPerDevice`).
public final class PeerConnectionRegistry: Sendable {
    private struct Entry {
        var channel: any Channel
        /// Accepted by our listener (not opened by us).
        var inbound: Bool
    }

    private let channels = Mutex<[DeviceID: [ObjectIdentifier: Entry]]>([:])
    private let refusals = Atomic<Int>(0)

    public init() {}

    /// Records an open connection. With `inboundLimit` (an accepted connection), it is recorded
    /// only while the device has fewer accepted connections open than that: false means refused,
    /// and the caller closes it.
    func register(_ channel: any Channel, for id: DeviceID, inboundLimit: Int? = nil) -> Bool {
        let registered = channels.withLock { all in
            if let inboundLimit, (all[id]?.values.count(where: \.inbound) ?? 0) >= inboundLimit { return false }
            all[id, default: [:]][ObjectIdentifier(channel)] = Entry(channel: channel, inbound: inboundLimit != nil)
            return true
        }
        if !registered { refusals.add(1, ordering: .relaxed) }
        return registered
    }

    func unregister(_ channel: any Channel, for id: DeviceID) {
        channels.withLock { all in
            all[id]?.removeValue(forKey: ObjectIdentifier(channel))
            if all[id]?.isEmpty == true { all.removeValue(forKey: id) }
        }
    }

    /// How many connections a device has open now, in both directions.
    public func count(for id: DeviceID) -> Int { channels.withLock { $0[id]?.count ?? 0 } }

    /// How many connections were refused so far for being over a device's cap.
    public var refusedOverCap: Int { refusals.load(ordering: .relaxed) }

    /// Closes every open connection of a device. Returns how many.
    @discardableResult
    public func closeAll(for id: DeviceID) -> Int {
        let open = channels.withLock { $0.removeValue(forKey: id) ?? [:] }
        for entry in open.values { entry.channel.close(promise: nil) }
        return open.count
    }
}
