import HandoffCore
import HandoffTransport
import NIOCore
import Testing

@Suite("Dual stack: one IPv6 listener for both families; a peer's next address after a refused one")
struct DualStackTests {
    @Test("a listener on :: serves IPv4 clients (as v4-mapped) and IPv6 clients")
    func dualStackListenerServesBothFamilies() async throws {
        let running = try await RunningServer.start(.tcp(host: "::", port: 0), handler: echo)
        let port = try #require(running.server.port)
        for host in ["127.0.0.1", "::1"] {
            let connection = try await TCPPeerConnector(connectTimeout: .seconds(2)).connect(to: PeerEndpoint(host: host, port: port), limits: FrameLimits())
            try await connection.send([Frame(kind: .hello, payload: Array(host.utf8))])
            #expect(try await connection.receive() == Frame(kind: .hello, payload: Array(host.utf8)), "over \(host)")
            await connection.close()
        }
        await running.stop()
    }

    @Test("connecting tries the endpoint's next address when the first refuses")
    func aRefusedAddressFallsBackToTheNext() async throws {
        let running = try await RunningServer.start(.tcp(host: "127.0.0.1", port: 0), handler: echo)
        let port = try #require(running.server.port)
        // Nothing listens at [::1]:port (the server is IPv4 only): refused, then 127.0.0.1.
        let endpoint = PeerEndpoint(host: "::1", port: port, fallbackHosts: ["127.0.0.1"])
        let connection = try await TCPPeerConnector(connectTimeout: .seconds(2)).connect(to: endpoint, limits: FrameLimits())
        try await connection.send([Frame(kind: .hello, payload: [6])])
        #expect(try await connection.receive() == Frame(kind: .hello, payload: [6]))
        await connection.close()
        await running.stop()
    }

    @Test("when every address refuses, the failure is the last one's")
    func everyAddressRefused() async throws {
        let endpoint = PeerEndpoint(host: "::1", port: 1, fallbackHosts: ["127.0.0.1"])
        await #expect { try await TCPPeerConnector(connectTimeout: .seconds(2)).connect(to: endpoint, limits: FrameLimits()) } throws: { error in
            (error as? PeerConnectError)?.code == .connectionRefused
        }
    }
}
