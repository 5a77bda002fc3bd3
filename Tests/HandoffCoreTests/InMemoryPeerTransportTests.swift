import HandoffCore
import HandoffTestSupport
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

@Suite("In-memory peer transport (test support)")
struct InMemoryPeerTransportTests {
    static let endpoint = PeerEndpoint(host: "192.0.2.1", port: 1)

    static func connect(_ source: InMemorySource, limits: FrameLimits = FrameLimits()) async throws -> any FrameConnection {
        try await InMemoryConnector(source: source).connect(to: endpoint, limits: limits)
    }

    @Test("the source runs the real source state machine")
    func realSource() async throws {
        let activity = Activity(id: Fixtures.activityID, activityType: Fixtures.notesEdit, userInfo: ["a": .integer(1)])
        let connection = try await Self.connect(.agent(InMemoryActivityTable([activity])))
        try await connection.send([PeerMessage.hello(Fixtures.hello()).frame, PeerMessage.fetch(Fixtures.request).frame])
        var messages: [PeerMessage] = []
        for _ in 0..<3 { messages.append(try PeerMessage(frame: try #require(await connection.receive()))) }
        var fields = activity
        fields.userInfo = [:]
        #expect(messages == [
            .hello(PeerHello(versions: [2], agentID: InMemorySource.defaultHello.agentID, name: InMemorySource.defaultHello.name)),
            .activity(fields), .userInfo(["a": .integer(1)]),
        ])
    }

    @Test("close() unblocks a pending receive(), which returns nil")
    func closeUnblocksReceive() async throws {
        var source = InMemorySource.agent(InMemoryActivityTable())
        source.holdBackAfterFrames = 0
        let connection = try await Self.connect(source)
        let receiving = Task { try await connection.receive() }
        // Let the receive start waiting (whether or not it has, close must end it).
        for _ in 0..<100 { await Task.yield() }
        await connection.close()
        #expect(try await receiving.value == nil)
        #expect(try await connection.receive() == nil)
        await #expect(throws: InMemoryTransportError.sendOnClosedConnection) { try await connection.send([]) }
    }

    @Test("a cancelled receive() throws CancellationError")
    func cancelledReceive() async throws {
        let connection = try await Self.connect(.raw([]))
        let receiving = Task { try await connection.receive() }
        receiving.cancel()
        await #expect(throws: CancellationError.self) { try await receiving.value }
    }

    @Test("frames from the source go through FrameParser with the client's limits")
    func clientLimits() async throws {
        let connection = try await Self.connect(.raw(FrameHeader(kind: .userInfo, length: 0xFFFF_FFFF).bytes), limits: FrameLimits())
        await #expect(throws: FrameError.userInfoTooLarge(declared: 0xFFFF_FFFF, limit: 3_072)) { try await connection.receive() }
        await #expect(throws: FrameError.userInfoTooLarge(declared: 0xFFFF_FFFF, limit: 3_072)) { try await connection.receive() }
    }

    @Test("a source closing after N frames delivers those frames, then nil")
    func closeAfterFrames() async throws {
        var source = InMemorySource.agent(InMemoryActivityTable([Activity(id: Fixtures.activityID, activityType: Fixtures.notesEdit)]))
        source.closeAfterFrames = 2
        let connection = try await Self.connect(source)
        try await connection.send([PeerMessage.hello(Fixtures.hello()).frame, PeerMessage.fetch(Fixtures.request).frame])
        #expect(try await connection.receive()?.kind == .hello)
        #expect(try await connection.receive()?.kind == .activity)
        #expect(try await connection.receive() == nil)
    }

    @Test("raw bytes arrive split into frames, then the connection closes")
    func rawBytes() async throws {
        let frames = [Frame(kind: .hello, payload: [1]), Frame(kind: .error, payload: [2, 3])]
        let connection = try await Self.connect(.frames(frames, thenClose: true))
        #expect(try await connection.receive() == frames[0])
        #expect(try await connection.receive() == frames[1])
        #expect(try await connection.receive() == nil)
    }

    @Test("a source that closes with an error tells why")
    func sourceCloseReason() async throws {
        let connector = InMemoryConnector(source: .agent(InMemoryActivityTable()))
        let connection = try await connector.connect(to: Self.endpoint, limits: FrameLimits())
        try await connection.send([PeerMessage.fetch(Fixtures.request).frame])
        #expect(try await connection.receive() == nil)
        #expect(connector.connections.first?.sourceCloseReasons == ["unexpected fetch frame"])
    }

    @Test("a failing connector throws its error and records the attempt")
    func failingConnector() async {
        let connector = InMemoryConnector(.fail(InMemoryTransportError.connectionRefused(Self.endpoint)))
        await #expect(throws: InMemoryTransportError.connectionRefused(Self.endpoint)) {
            try await connector.connect(to: Self.endpoint, limits: FrameLimits())
        }
        #expect(connector.attempts == [Self.endpoint])
    }

    @Test("a hanging connect ends with CancellationError when cancelled")
    func hangingConnect() async throws {
        let connector = InMemoryConnector(.hangUntilCancelled)
        let task = Task { try await connector.connect(to: Self.endpoint, limits: FrameLimits()) }
        try await connector.waitForPendingConnects(count: 1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(connector.pendingConnectCount == 0)
    }
}
