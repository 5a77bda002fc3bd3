import Foundation
import HandoffCore
import HandoffTransport
import HandoffTrust
import NIOCore
import NIOPosix
import Synchronization
import Testing

/// TLS between two identities on loopback: pinning, the pre-authentication limits and admission.
@Suite("TLS on loopback", .timeLimit(.minutes(1)))
struct TLSLoopbackTests {
    static func identity(_ name: String) throws -> DeviceIdentity {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("handoff-tls-\(name)-\(UUID().uuidString.prefix(8))").path
        return try DeviceIdentity.loadOrCreate(directory: directory, commonName: name)
    }

    static let server = try! identity("server")
    static let client = try! identity("client")
    static let stranger = try! identity("stranger")

    /// A listener that pairs only `client`, answering each frame with one saying who sent it. The
    /// handshake deadline is long unless a test is about it: on a loaded machine (the whole suite
    /// runs in parallel on 2 cores) an unpaired client's exchange once took more than 5 s.
    static func listener(handshake: Duration = .seconds(60), admission: ConnectionAdmission<ContinuousClock.Instant>.Limits = .init(),
                         registry: PeerConnectionRegistry = PeerConnectionRegistry(),
                         maxPerDevice: Int = ListenerSecurity.defaultMaxConnectionsPerDevice,
                         onRefusedOverCap: @escaping @Sendable (DeviceID, Int) -> Void = { _, _ in }) async throws -> RunningServer {
        let security = ListenerSecurity(
            tls: try PeerTLS(identity: server), handshakeDeadline: handshake, maxFrameBytesBeforeAuthentication: 4096,
            admission: admission, registry: registry, maxConnectionsPerDevice: maxPerDevice, onRefusedOverCap: onRefusedOverCap,
            isPaired: { $0 == client.deviceID })
        return try await RunningServer.start(.tcp(host: "127.0.0.1", port: 0), limits: FrameLimits(maxUserInfoBytes: 0), security: security) { connection in
            for try await _ in connection.inbound {
                let who = connection.peerIdentity?.deviceID?.description ?? "nobody"
                try await connection.outbound.write(Frame(kind: .streamData, payload: Array(who.utf8)))
            }
        }
    }

    static func connector(_ identity: DeviceIdentity, registry: PeerConnectionRegistry? = nil) throws -> TCPPeerConnector {
        TCPPeerConnector(connectTimeout: .seconds(2), tls: PeerClientTLS(tls: try PeerTLS(identity: identity), registry: registry))
    }

    @Test("a client pinned to the server's device ID connects, and each side learns the other's")
    func pinnedConnects() async throws {
        let running = try await Self.listener()
        var endpoint = running.endpoint
        endpoint.expectedIdentity = Self.server.deviceID.bytes
        let connection = try await Self.connector(Self.client).connect(to: endpoint, limits: FrameLimits(maxUserInfoBytes: 0))
        try await connection.send([Frame(kind: .streamData, payload: Array(repeating: 7, count: 10_000))])
        let answer = try #require(try await connection.receive())
        #expect(String(decoding: answer.payload, as: UTF8.self) == Self.client.deviceID.description)
        #expect((connection as? ChannelFrameConnection)?.peerIdentity?.deviceID == Self.server.deviceID)
        await connection.close()
        await running.stop()
    }

    @Test("a server whose certificate is not the pinned one is refused during the handshake")
    func impostorRefused() async throws {
        let running = try await Self.listener()
        var endpoint = running.endpoint
        endpoint.expectedIdentity = Self.stranger.deviceID.bytes
        await #expect { try await Self.connector(Self.client).connect(to: endpoint, limits: FrameLimits()) } throws: { error in
            "\(error)".contains("did not present the certificate") && "\(error)".contains(Self.stranger.deviceID.shortID)
        }
        await running.stop()
    }

    @Test("without a pinned device ID a TLS connector refuses to connect")
    func unpinnedRefused() async throws {
        let running = try await Self.listener()
        await #expect { try await Self.connector(Self.client).connect(to: running.endpoint, limits: FrameLimits()) } throws: { error in
            "\(error)".contains("only paired peers can be reached")
        }
        await running.stop()
    }

    @Test("a refused TLS connect carries its code: wrongCertificate for an impostor, noPinnedIdentity without a pin")
    func refusalCodes() async throws {
        let running = try await Self.listener()
        var impostor = running.endpoint
        impostor.expectedIdentity = Self.stranger.deviceID.bytes
        await #expect { try await Self.connector(Self.client).connect(to: impostor, limits: FrameLimits()) } throws: { error in
            (error as? PeerConnectError)?.code == .wrongCertificate && (error as? PeerConnectError)?.underlying != nil
        }
        await #expect { try await Self.connector(Self.client).connect(to: running.endpoint, limits: FrameLimits()) } throws: { error in
            (error as? PeerConnectError)?.code == .noPinnedIdentity
        }
        await running.stop()
    }

    @Test("an unpaired device may send only small frames")
    func unpairedFrameLimit() async throws {
        let running = try await Self.listener()
        let connection = try await Self.connector(Self.stranger).connectUnpinned(to: running.endpoint, limits: FrameLimits())
        #expect(connection.peerIdentity?.deviceID == Self.server.deviceID)
        try await connection.send([Frame(kind: .streamData, payload: Array(repeating: 1, count: 100))])
        let small = try #require(try await connection.receive())
        #expect(String(decoding: small.payload, as: UTF8.self) == Self.stranger.deviceID.description)
        try? await connection.send([Frame(kind: .streamData, payload: Array(repeating: 1, count: 5000))])
        #expect(try await connection.receive() == nil, "the server closes on a 5000-byte frame before authentication")
        await running.stop()
    }

    @Test("a connection that does not authenticate within the handshake deadline is closed")
    func handshakeDeadline() async throws {
        let running = try await Self.listener(handshake: .milliseconds(200))
        // Plain TCP: no TLS handshake ever starts.
        let raw = try await TCPPeerConnector(connectTimeout: .seconds(2)).connect(to: running.endpoint, limits: FrameLimits())
        #expect(try await raw.receive() == nil)
        // The paired client is authenticated by its handshake and outlives the deadline.
        var endpoint = running.endpoint
        endpoint.expectedIdentity = Self.server.deviceID.bytes
        let paired = try await Self.connector(Self.client).connect(to: endpoint, limits: FrameLimits(maxUserInfoBytes: 0))
        try await Task.sleep(for: .milliseconds(400))
        try await paired.send([Frame(kind: .streamData, payload: [1])])
        #expect(try await paired.receive() != nil)
        await paired.close()
        await running.stop()
    }

    @Test("over the per-address cap, a connection is closed as soon as it is accepted")
    func perAddressCap() async throws {
        let running = try await Self.listener(admission: .init(maxUnauthenticated: 64, maxUnauthenticatedPerAddress: 2, ratePerSecond: 1000, burst: 1000))
        var held: [any FrameConnection] = []
        for _ in 0..<2 { held.append(try await TCPPeerConnector(connectTimeout: .seconds(2)).connect(to: running.endpoint, limits: FrameLimits())) }
        let third = try await TCPPeerConnector(connectTimeout: .seconds(2)).connect(to: running.endpoint, limits: FrameLimits())
        #expect(try await third.receive() == nil)
        for connection in held { await connection.close() }
        await running.stop()
    }

    @Test("over the per-device cap, a paired device's connection is closed after TLS; others and later ones are not")
    func perDeviceCap() async throws {
        let registry = PeerConnectionRegistry()
        let refused = Mutex<[(DeviceID, Int)]>([])
        let running = try await Self.listener(registry: registry, maxPerDevice: 2, onRefusedOverCap: { id, count in
            refused.withLock { $0.append((id, count)) }
        })
        var endpoint = running.endpoint
        endpoint.expectedIdentity = Self.server.deviceID.bytes
        func connectAndAsk() async throws -> (any FrameConnection, Frame?) {
            let connection = try await Self.connector(Self.client).connect(to: endpoint, limits: FrameLimits(maxUserInfoBytes: 0))
            try? await connection.send([Frame(kind: .streamData, payload: [1])])
            return (connection, try? await connection.receive())
        }
        var held: [any FrameConnection] = []
        for _ in 0..<2 {
            let (connection, answer) = try await connectAndAsk()
            #expect(answer != nil)
            held.append(connection)
        }
        #expect(registry.count(for: Self.client.deviceID) == 2)
        let (third, answer) = try await connectAndAsk()
        #expect(answer == nil, "the third connection of one device is closed before any frame is answered")
        #expect(registry.refusedOverCap == 1)
        #expect(refused.withLock { $0.map(\.0) } == [Self.client.deviceID])
        #expect(registry.count(for: Self.client.deviceID) == 2)
        await third.close()

        // Another device has its own allowance.
        let stranger = try await Self.connector(Self.stranger).connectUnpinned(to: running.endpoint, limits: FrameLimits())
        try await stranger.send([Frame(kind: .streamData, payload: [1])])
        #expect(try await stranger.receive() != nil)
        await stranger.close()

        // Once one closes, the device may open another.
        await held.removeFirst().close()
        for _ in 0..<100 where registry.count(for: Self.client.deviceID) > 1 { try await Task.sleep(for: .milliseconds(10)) }
        let (again, answered) = try await connectAndAsk()
        #expect(answered != nil)
        for connection in held + [again] { await connection.close() }
        await running.stop()
    }

    @Test("closing a device's connections in the registry cuts them at once")
    func registryCloses() async throws {
        let registry = PeerConnectionRegistry()
        let running = try await Self.listener(registry: registry)
        var endpoint = running.endpoint
        endpoint.expectedIdentity = Self.server.deviceID.bytes
        let connection = try await Self.connector(Self.client).connect(to: endpoint, limits: FrameLimits(maxUserInfoBytes: 0))
        try await connection.send([Frame(kind: .streamData, payload: [1])])
        _ = try await connection.receive()
        #expect(registry.count(for: Self.client.deviceID) == 1)
        #expect(registry.closeAll(for: Self.client.deviceID) == 1)
        #expect(try await connection.receive() == nil)
        await running.stop()
    }
}
