import HandoffCore
import HandoffTransport
import Logging
import NIOCore
import NIOPosix
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

import Foundation

let quietLogger = Logger(label: "handoff.tests.transport") { _ in SwiftLogNoOpLogHandler() }

/// A bound server with its accept loop running; `stop()` closes the listener and ends the loop.
struct RunningServer {
    let server: FrameServer
    let task: Task<Void, any Error>

    static func start(
        _ address: FrameServer.Address, limits: FrameLimits = FrameLimits(), security: ListenerSecurity? = nil,
        handler: @escaping @Sendable (FrameServer.Connection) async throws -> Void
    ) async throws -> RunningServer {
        let server = try await FrameServer.bind(address, limits: limits, security: security)
        let task = Task { try await server.run(logger: quietLogger, handler: handler) }
        return RunningServer(server: server, task: task)
    }

    var endpoint: PeerEndpoint { PeerEndpoint(host: "127.0.0.1", port: server.port ?? -1) }

    func stop() async {
        await server.close()
        task.cancel()
        _ = await task.result
    }
}

/// Answers every frame with the same frame.
@Sendable func echo(_ connection: FrameServer.Connection) async throws {
    for try await frame in connection.inbound { try await connection.outbound.write(frame) }
}

/// A fresh directory under /tmp for Unix sockets (short paths: sun_path holds ~104 bytes).
func makeTemporaryDirectory() throws -> String {
    var template = Array("/tmp/handoff-unit-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    try #require(made != nil, "mkdtemp failed: errno \(errno)")
    return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
}

func removeDirectory(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
}

/// Sends raw bytes on a plain TCP connection (no framing), then reads until the server closes it.
/// Returns the bytes the server sent.
func rawExchange(host: String, port: Int, sending bytes: [UInt8]) async throws -> [UInt8] {
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .connect(host: host, port: port) { channel in
            channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
        }
    return try await channel.executeThenClose { inbound, outbound in
        try await outbound.write(ByteBuffer(bytes: bytes))
        var received: [UInt8] = []
        for try await var buffer in inbound { received += buffer.readBytes(length: buffer.readableBytes) ?? [] }
        return received
    }
}

@Suite("FrameServer and TCPPeerConnector over loopback", .timeLimit(.minutes(1)))
struct LoopbackTests {
    @Test("a client connects, sends frames and receives the echo")
    func echoOverTCP() async throws {
        let running = try await RunningServer.start(.tcp(host: "127.0.0.1", port: 0), handler: echo)
        let port = try #require(running.server.port)
        #expect(port > 0)

        let connector = TCPPeerConnector(connectTimeout: .seconds(2))
        let connection = try await connector.connect(to: running.endpoint, limits: FrameLimits())
        let frames = [
            Frame(kind: .hello, payload: Array("hello".utf8)),
            Frame(kind: .fetch, payload: []),
            Frame(kind: .userInfo, payload: patternBytes(3072, seed: 8)),
            Frame(kind: .activity, payload: patternBytes(60_000, seed: 9)),
        ]
        try await connection.send(frames)
        var echoed: [Frame] = []
        for _ in frames { echoed.append(try #require(try await connection.receive())) }
        #expect(echoed == frames)

        // A second exchange on the same connection.
        try await connection.send([Frame(kind: .error, payload: [42])])
        #expect(try await connection.receive() == Frame(kind: .error, payload: [42]))

        await connection.close()
        await running.stop()
    }

    @Test("several clients are served at once")
    func concurrentClients() async throws {
        let running = try await RunningServer.start(.tcp(host: "127.0.0.1", port: 0), handler: echo)
        let endpoint = running.endpoint
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<8 {
                group.addTask {
                    let connection = try await TCPPeerConnector(connectTimeout: .seconds(2)).connect(to: endpoint, limits: FrameLimits())
                    let frame = Frame(kind: .controlRequest, payload: patternBytes(100 + i, seed: UInt8(i)))
                    try await connection.send([frame])
                    #expect(try await connection.receive() == frame)
                    await connection.close()
                }
            }
            try await group.waitForAll()
        }
        await running.stop()
    }

    @Test("junk bytes close only that connection; the server keeps serving the next client")
    func junkClosesOnlyThatConnection() async throws {
        let running = try await RunningServer.start(.tcp(host: "127.0.0.1", port: 0), handler: echo)
        let endpoint = running.endpoint

        // A client that stays connected through the junk.
        let bystander = try await TCPPeerConnector(connectTimeout: .seconds(2)).connect(to: endpoint, limits: FrameLimits())
        try await bystander.send([Frame(kind: .hello, payload: [1])])
        #expect(try await bystander.receive() == Frame(kind: .hello, payload: [1]))

        // An HTTP client: 'G' is no frame kind. The server closes the connection without answering.
        let answer = try await rawExchange(host: "127.0.0.1", port: endpoint.port, sending: Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(answer.isEmpty)

        // A header declaring an oversized frame also closes only its connection.
        let oversized = try await rawExchange(host: "127.0.0.1", port: endpoint.port, sending: FrameHeader(kind: .activity, length: 1 << 30).bytes)
        #expect(oversized.isEmpty)

        // The bystander still works, and so does a new client.
        try await bystander.send([Frame(kind: .hello, payload: [2])])
        #expect(try await bystander.receive() == Frame(kind: .hello, payload: [2]))
        let next = try await TCPPeerConnector(connectTimeout: .seconds(2)).connect(to: endpoint, limits: FrameLimits())
        try await next.send([Frame(kind: .fetch, payload: [3])])
        #expect(try await next.receive() == Frame(kind: .fetch, payload: [3]))

        await bystander.close()
        await next.close()
        await running.stop()
    }

    @Test("a handler that throws closes only its own connection")
    func handlerErrorClosesOnlyItsConnection() async throws {
        struct Refused: Error {}
        let running = try await RunningServer.start(.tcp(host: "127.0.0.1", port: 0)) { connection in
            for try await frame in connection.inbound {
                if frame.kind == .error { throw Refused() }
                try await connection.outbound.write(frame)
            }
        }
        let connector = TCPPeerConnector(connectTimeout: .seconds(2))
        let failing = try await connector.connect(to: running.endpoint, limits: FrameLimits())
        try await failing.send([Frame(kind: .error, payload: [])])
        #expect(try await failing.receive() == nil)

        let fine = try await connector.connect(to: running.endpoint, limits: FrameLimits())
        try await fine.send([Frame(kind: .hello, payload: [7])])
        #expect(try await fine.receive() == Frame(kind: .hello, payload: [7]))
        await failing.close()
        await fine.close()
        await running.stop()
    }

    @Test("the client refuses an oversized userInfo from the server by its header")
    func clientRefusesOversizedUserInfo() async throws {
        let running = try await RunningServer.start(.tcp(host: "127.0.0.1", port: 0)) { connection in
            for try await _ in connection.inbound {
                try await connection.outbound.write(Frame(kind: .userInfo, payload: patternBytes(5000, seed: 1)))
            }
        }
        let connection = try await TCPPeerConnector(connectTimeout: .seconds(2))
            .connect(to: running.endpoint, limits: FrameLimits(maxUserInfoBytes: 4096))
        try await connection.send([Frame(kind: .fetch, payload: [])])
        await #expect(throws: FrameError.userInfoTooLarge(declared: 5000, limit: 4096)) {
            try await connection.receive()
        }
        await connection.close()
        await running.stop()
    }

    @Test("connecting to a closed port fails with \"connection refused\"")
    func connectionRefused() async throws {
        // Port 1 on loopback: nothing listens there. (A port freed by closing a test server
        // could be taken at once by another test running in parallel.)
        let port = 1

        let connector = TCPPeerConnector(connectTimeout: .seconds(2))
        do {
            let connection = try await connector.connect(to: PeerEndpoint(host: "127.0.0.1", port: port), limits: FrameLimits())
            await connection.close()
            Issue.record("connected to a closed port")
        } catch let error as PeerConnectError {
            #expect(error.description == "connection refused")
            #expect(error.reason == "connection refused")
        }
    }

    @Test("a refused connect carries the code connectionRefused and the socket's error")
    func connectionRefusedCode() async throws {
        let connector = TCPPeerConnector(connectTimeout: .seconds(2))
        await #expect { try await connector.connect(to: PeerEndpoint(host: "127.0.0.1", port: 1), limits: FrameLimits()) } throws: { error in
            (error as? PeerConnectError)?.code == .connectionRefused && (error as? PeerConnectError)?.underlying is IOError
        }
    }

    @Test("receive() returns nil after the server closed the connection")
    func receiveAfterPeerClosed() async throws {
        let running = try await RunningServer.start(.tcp(host: "127.0.0.1", port: 0)) { connection in
            // Answer one frame, then hang up.
            for try await frame in connection.inbound {
                try await connection.outbound.write(frame)
                return
            }
        }
        let connection = try await TCPPeerConnector(connectTimeout: .seconds(2)).connect(to: running.endpoint, limits: FrameLimits())
        try await connection.send([Frame(kind: .hello, payload: [1])])
        #expect(try await connection.receive() == Frame(kind: .hello, payload: [1]))
        #expect(try await connection.receive() == nil)
        // And again: the end is sticky.
        #expect(try await connection.receive() == nil)
        await connection.close()
        await running.stop()
    }

    @Test("close() ends a pending receive() promptly")
    func closeEndsPendingReceive() async throws {
        // A server that never answers.
        let running = try await RunningServer.start(.tcp(host: "127.0.0.1", port: 0)) { connection in
            for try await _ in connection.inbound {}
        }
        let connection = try await TCPPeerConnector(connectTimeout: .seconds(2)).connect(to: running.endpoint, limits: FrameLimits())
        let pending = Task { try await connection.receive() }
        await connection.close()
        switch await pending.result {
        case .success(let frame): #expect(frame == nil)
        case .failure: break  // throwing is allowed too
        }
        // After close, receive ends at once.
        do {
            #expect(try await connection.receive() == nil)
        } catch {
            // throwing is allowed too
        }
        await running.stop()
    }

    @Test("cancelling the task of a pending receive() ends it")
    func cancelEndsPendingReceive() async throws {
        let running = try await RunningServer.start(.tcp(host: "127.0.0.1", port: 0)) { connection in
            for try await _ in connection.inbound {}
        }
        let connection = try await TCPPeerConnector(connectTimeout: .seconds(2)).connect(to: running.endpoint, limits: FrameLimits())
        let pending = Task { try await connection.receive() }
        pending.cancel()
        switch await pending.result {
        case .success(let frame): #expect(frame == nil)
        case .failure(let error): #expect(error is CancellationError)
        }
        await connection.close()
        await running.stop()
    }

    @Test("frames that arrive before the reader asks are kept in order")
    func bufferedFramesInOrder() async throws {
        let running = try await RunningServer.start(.tcp(host: "127.0.0.1", port: 0)) { connection in
            for try await _ in connection.inbound {
                for i in 0..<5 { try await connection.outbound.write(Frame(kind: .activity, payload: [UInt8(i)])) }
                return
            }
        }
        let connection = try await TCPPeerConnector(connectTimeout: .seconds(2)).connect(to: running.endpoint, limits: FrameLimits())
        try await connection.send([Frame(kind: .fetch, payload: [])])
        var payloads: [[UInt8]] = []
        while let frame = try await connection.receive() { payloads.append(frame.payload) }
        #expect(payloads == [[0], [1], [2], [3], [4]])
        await connection.close()
        await running.stop()
    }
}

@Suite("Unix control socket", .timeLimit(.minutes(1)))
struct ControlSocketTests {
    /// Answers each request: `fail` with a coded error, anything else with `{"echo": command}`.
    @Sendable static func controlHandler(_ connection: FrameServer.Connection) async throws {
        for try await frame in connection.inbound {
            let result: Result<JSONValue, HandoffError>
            switch Result(catching: { () throws(HandoffError) in try ControlProtocol.decodeRequest(frame) }) {
            case .success(let (command, body)):
                if command == "fail" {
                    result = .failure(HandoffError(.userActivityHandoffUserInfoTooLarge, "too big: \(body["size"]?.int64Value ?? -1)"))
                } else {
                    result = .success(.object(["echo": .string(command), "arg": body["arg"] ?? .null]))
                }
            case .failure(let error):
                result = .failure(error)
            }
            try await connection.outbound.write(ControlProtocol.response(result))
        }
    }

    @Test("the socket file is created with mode 0600")
    func socketMode() async throws {
        let dir = try makeTemporaryDirectory()
        defer { removeDirectory(dir) }
        let path = dir + "/ctl.sock"
        let running = try await RunningServer.start(.unix(path: path), limits: ControlProtocol.limits, handler: Self.controlHandler)
        #expect(running.server.port == nil)
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & S_IFMT == S_IFSOCK)
        #expect(info.st_mode & 0o7777 == 0o600)
        await running.stop()
    }

    @Test("a stale socket file is replaced")
    func staleSocketReplaced() async throws {
        let dir = try makeTemporaryDirectory()
        defer { removeDirectory(dir) }
        let path = dir + "/ctl.sock"
        let first = try await FrameServer.bind(.unix(path: path), limits: ControlProtocol.limits)
        await first.close()
        let running = try await RunningServer.start(.unix(path: path), limits: ControlProtocol.limits, handler: Self.controlHandler)
        #expect(try await ControlClient(socketPath: path).call("status").get() == .object(["echo": .string("status"), "arg": .null]))
        await running.stop()
    }

    @Test("ControlClient returns the agent's value")
    func controlClientValue() async throws {
        let dir = try makeTemporaryDirectory()
        defer { removeDirectory(dir) }
        let path = dir + "/ctl.sock"
        let running = try await RunningServer.start(.unix(path: path), limits: ControlProtocol.limits, handler: Self.controlHandler)
        let client = ControlClient(socketPath: path)
        let result = await client.call("x", ["arg": .array([.integer(1), .string("two")])])
        #expect(try result.get() == .object(["echo": .string("x"), "arg": .array([.integer(1), .string("two")])]))
        // Large arguments fit in a control frame.
        let big = String(repeating: "a", count: 200_000)
        #expect(try await client.call("big", ["arg": .string(big)]).get()["arg"] == .string(big))
        await running.stop()
    }

    @Test("ControlClient returns the agent's coded error")
    func controlClientError() async throws {
        let dir = try makeTemporaryDirectory()
        defer { removeDirectory(dir) }
        let path = dir + "/ctl.sock"
        let running = try await RunningServer.start(.unix(path: path), limits: ControlProtocol.limits, handler: Self.controlHandler)
        let result = await ControlClient(socketPath: path).call("fail", ["size": .integer(9999)])
        guard case .failure(let error) = result else {
            Issue.record("expected a failure, got \(result)")
            await running.stop()
            return
        }
        #expect(error.code == .userActivityHandoffUserInfoTooLarge)
        #expect(error.code.rawValue == 4611)
        #expect(error.message == "too big: 9999")
        await running.stop()
    }

    @Test("an agent that closes without answering is reported")
    func controlClientNoAnswer() async throws {
        let dir = try makeTemporaryDirectory()
        defer { removeDirectory(dir) }
        let path = dir + "/ctl.sock"
        // Reads the request, then hangs up without answering.
        let running = try await RunningServer.start(.unix(path: path), limits: ControlProtocol.limits) { connection in
            for try await _ in connection.inbound { return }
        }
        let result = await ControlClient(socketPath: path).call("status")
        guard case .failure(let error) = result else {
            Issue.record("expected a failure, got \(result)")
            await running.stop()
            return
        }
        #expect(error.code == .userActivityHandoffFailed)
        #expect(error.message.contains("closed the connection"))
        await running.stop()
    }

    @Test("ControlClient against a missing socket: 4609, telling to start handoffd")
    func controlClientMissingSocket() async throws {
        let dir = try makeTemporaryDirectory()
        defer { removeDirectory(dir) }
        let path = dir + "/nobody-here.sock"
        let result = await ControlClient(socketPath: path).call("status")
        guard case .failure(let error) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(error.code.rawValue == 4609)
        #expect(error.code == .userActivityConnectionUnavailable)
        #expect(error.message.contains("Start handoffd"))
        #expect(error.message.contains(path))
    }

    @Test("ControlClient against a file that is not a socket: 4609")
    func controlClientNotASocket() async throws {
        let dir = try makeTemporaryDirectory()
        defer { removeDirectory(dir) }
        let path = dir + "/plain-file"
        #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8)))
        let result = await ControlClient(socketPath: path).call("status")
        guard case .failure(let error) = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(error.code.rawValue == 4609)
        #expect(error.message.contains("Start handoffd"))
    }

    @Test("binding a Unix socket in a missing directory fails")
    func bindInMissingDirectory() async throws {
        let dir = try makeTemporaryDirectory()
        defer { removeDirectory(dir) }
        await #expect(throws: (any Error).self) {
            let server = try await FrameServer.bind(.unix(path: dir + "/missing/ctl.sock"), limits: ControlProtocol.limits)
            await server.close()
        }
    }
}
