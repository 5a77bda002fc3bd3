import HandoffCore
import HandoffTestSupport
import Testing

/// The in-memory network that whole agents run on in tests: the identity checks TLS makes, frame
/// limits, and byte budgets, as on TCP.
@Suite("In-memory network of agents (test support)")
struct InMemoryNetworkTests {
    static let alpha = ProvenPeerIdentity(deviceID: Array(repeating: 0xA1, count: 32), certificateDER: [1, 2, 3])
    static let bravo = ProvenPeerIdentity(deviceID: Array(repeating: 0xB2, count: 32), certificateDER: [4, 5, 6])

    static func listening() -> (InMemoryNetwork, InMemoryNetwork.Listener) {
        let network = InMemoryNetwork()
        return (network, network.listen(host: "10.0.0.1", port: 7000, identity: alpha, limits: FrameLimits(maxUserInfoBytes: 0)))
    }

    static func code(_ body: () async throws -> Void) async -> PeerConnectError.Code? {
        do { try await body() } catch let error as PeerConnectError { return error.code } catch { return nil }
        return nil
    }

    @Test("a pinned connect reaches only the device it names; an unpinned one reports who answered")
    func identityChecks() async throws {
        let (network, listener) = Self.listening()
        let transport = network.transport(identity: Self.bravo)
        var accepted = listener.connections.makeAsyncIterator()

        _ = try await transport.connect(to: listener.endpoint, limits: FrameLimits())
        #expect(await accepted.next()?.connection.provenIdentity == Self.bravo, "the listener learns who connected")

        var impostor = listener.endpoint
        impostor.expectedIdentity = Self.bravo.deviceID
        #expect(await Self.code { _ = try await transport.connect(to: impostor, limits: FrameLimits()) } == .wrongCertificate)
        #expect(await Self.code { _ = try await transport.connect(to: PeerEndpoint(host: "10.0.0.1", port: 7000), limits: FrameLimits()) }
                == .noPinnedIdentity)
        #expect(await Self.code { _ = try await transport.connect(to: PeerEndpoint(host: "10.0.0.9", port: 7000, expectedIdentity: Self.alpha.deviceID),
                                                                  limits: FrameLimits()) } == .connectionRefused)

        let unpinned = try await transport.connectUnpinned(to: PeerEndpoint(host: "10.0.0.1", port: 7000), limits: FrameLimits())
        #expect(unpinned.provenIdentity == Self.alpha)
    }

    @Test("frames cross in order; each end's limits refuse by header; close ends both directions")
    func framesAndLimits() async throws {
        let (network, listener) = Self.listening()
        let client = try await network.transport(identity: nil).connectUnpinned(to: listener.endpoint, limits: FrameLimits())
        var accepted = listener.connections.makeAsyncIterator()
        let server = try #require(await accepted.next()).connection

        let hello = PeerMessage.hello(PeerHello(agentID: "a", name: "A")).frame
        try await client.send([hello, PeerMessage.ping(sequence: 1).frame])
        #expect(try await server.receive() == hello)
        #expect(try await server.receive()?.kind == .ping)

        // The listener takes no userInfo: refused by its header, as the TCP codec refuses it.
        try await client.send([Frame(kind: .userInfo, payload: [0xD0])])
        await #expect(throws: FrameError.self) { _ = try await server.receive() }

        await client.close()
        #expect(try await client.receive() == nil)
        await #expect(throws: InMemoryTransportError.sendOnClosedConnection) { try await server.send([hello]) }
    }

    @Test("a byte budget cuts the connection mid-frame: the reader gets what came before, then truncatedFrame")
    func byteBudget() async throws {
        let (network, listener) = Self.listening()
        let client = try await network.transport(identity: nil).connectUnpinned(to: listener.endpoint, limits: FrameLimits())
        var accepted = listener.connections.makeAsyncIterator()
        let server = try #require(await accepted.next()).connection

        let pong = PeerMessage.pong(sequence: 1).frame
        try await server.send([pong])
        server.limitOutbound(toBytes: 3)
        try await server.send([pong])
        #expect(try await client.receive() == pong)
        await #expect(throws: InMemoryTransportError.truncatedFrame) { _ = try await client.receive() }
        #expect(server.isClosed)
    }

    @Test("taking a host down refuses new connections and breaks the open ones")
    func takeDown() async throws {
        let (network, listener) = Self.listening()
        let transport = network.transport(identity: Self.bravo)
        let open = try await transport.connect(to: listener.endpoint, limits: FrameLimits())
        network.takeDown(host: "10.0.0.1", port: 7000)
        #expect(try await open.receive() == nil)
        #expect(await Self.code { _ = try await transport.connect(to: listener.endpoint, limits: FrameLimits()) } == .connectionRefused)
    }
}
