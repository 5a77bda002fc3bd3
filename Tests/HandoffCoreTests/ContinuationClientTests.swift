import HandoffCore
import HandoffTestSupport
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `ContinuationClient` end to end over the in-memory transport, with its deadlines measured on a
/// `ManualClock`: no sockets, no real time.
@Suite("ContinuationClient: fetching an activity with clock-driven deadlines")
struct ContinuationClientTests {
    static let endpoint = PeerEndpoint(host: "192.0.2.10", port: 7_654)
    static let timeouts = ContinuationTimeouts(connect: .seconds(2), fetch: .seconds(5))

    static func client(_ connector: InMemoryConnector, clock: ManualClock, limits: FrameLimits = FrameLimits()) -> ContinuationClient<ManualClock> {
        ContinuationClient(connector: connector, clock: clock, hello: Fixtures.hello(), limits: limits, timeouts: timeouts)
    }

    static func fetch(_ client: ContinuationClient<ManualClock>) async -> Result<Activity, HandoffError> {
        await client.fetch(Fixtures.request, from: endpoint, peerName: "Desktop")
    }

    /// The error of a failed fetch, recording an issue if it succeeded.
    static func failure(_ result: Result<Activity, HandoffError>, sourceLocation: SourceLocation = #_sourceLocation) -> HandoffError? {
        switch result {
        case .failure(let error): return error
        case .success(let activity):
            Issue.record("expected a failure, got \(activity)", sourceLocation: sourceLocation)
            return nil
        }
    }

    static func activity(userInfo: UserInfo = ["noteID": .integer(42)], requiredUserInfoKeys: Set<String>? = nil) -> Activity {
        Activity(id: Fixtures.activityID, activityType: Fixtures.notesEdit, title: "Shopping list",
                 userInfo: userInfo, requiredUserInfoKeys: requiredUserInfoKeys, webpageURL: URL(string: "https://example.com/notes/42"))
    }

    // MARK: Success

    @Test("success end to end: the activity arrives with a userInfo of every type, identical")
    func successEveryType() async throws {
        let clock = ManualClock()
        let held = Self.activity(userInfo: Fixtures.everyTypeUserInfo)
        let connector = InMemoryConnector(source: .agent(InMemoryActivityTable([held])))
        let result = await Self.fetch(Self.client(connector, clock: clock))

        let activity = try result.get()
        expectIdentical(activity.userInfo, Fixtures.everyTypeUserInfo)
        var withoutUserInfo = activity
        withoutUserInfo.userInfo = [:]
        var expected = held
        expected.userInfo = [:]
        #expect(withoutUserInfo == expected)

        #expect(connector.attempts == [Self.endpoint])
        let connection = try #require(connector.connections.first)
        #expect(connection.framesFromClient == [PeerMessage.hello(Fixtures.hello()).frame, PeerMessage.fetch(Fixtures.request).frame])
        #expect(connection.isClosedByClient, "the client closes the connection when done")
        #expect(clock.sleeperCount == 0, "both deadline timers were cancelled")
        #expect(clock.now == .zero, "no time had to pass")
    }

    @Test("only the requiredUserInfoKeys cross the wire")
    func requiredKeysOnly() async throws {
        let clock = ManualClock()
        let held = Self.activity(userInfo: ["keep": .string("yes"), "drop": .data(Data(count: 100))], requiredUserInfoKeys: ["keep", "absent"])
        let connector = InMemoryConnector(source: .agent(InMemoryActivityTable([held])))
        let activity = try await Self.fetch(Self.client(connector, clock: clock)).get()
        #expect(activity.userInfo == ["keep": .string("yes")])
        #expect(activity.requiredUserInfoKeys == ["keep", "absent"])
    }

    @Test("a userInfo exactly at maxUserInfoBytes is accepted")
    func userInfoAtLimit() async throws {
        let clock = ManualClock()
        // Encoded: tag + count (5) + key length + "k" (5) + data tag + length (5) + payload.
        let payload = 3_072 - 15
        let held = Self.activity(userInfo: ["k": .data(Data(count: payload))])
        #expect(PropertyListBinaryCoding.encode(held.userInfo).count == 3_072)
        let connector = InMemoryConnector(source: .agent(InMemoryActivityTable([held])))
        let activity = try await Self.fetch(Self.client(connector, clock: clock)).get()
        #expect(activity.userInfo == held.userInfo)
    }

    // MARK: Connect failures: 4609

    @Test("a refused connection is 4609")
    func connectionRefused() async throws {
        let clock = ManualClock()
        let connector = InMemoryConnector(.fail(InMemoryTransportError.connectionRefused(Self.endpoint)))
        let error = try #require(Self.failure(await Self.fetch(Self.client(connector, clock: clock))))
        #expect(error.code == .userActivityConnectionUnavailable)
        #expect(error.message.contains("cannot connect to Desktop: connection refused by 192.0.2.10:7654"))
        #expect(clock.sleeperCount == 0)
    }

    @Test("a hanging connect fails with 4609 when the connect timeout passes, and not before")
    func connectTimeout() async throws {
        let clock = ManualClock()
        let connector = InMemoryConnector(.hangUntilCancelled)
        let client = Self.client(connector, clock: clock)
        let task = Task { await Self.fetch(client) }

        try await clock.waitForSleeper(until: .zero.advanced(by: .seconds(2)))
        try await connector.waitForPendingConnects(count: 1)

        clock.advance(by: .seconds(2) - .nanoseconds(1))
        #expect(clock.sleeperCount == 1, "the connect deadline has not passed yet")
        #expect(connector.pendingConnectCount == 1, "the connect is still pending")

        clock.advance(by: .nanoseconds(1))
        let error = try #require(Self.failure(await task.value))
        #expect(error.code == .userActivityConnectionUnavailable)
        #expect(error.code.rawValue == 4609)
        #expect(error.message.contains("no connection to Desktop within 2 s (limits.connectTimeout)"))
        #expect(connector.pendingConnectCount == 0, "the connect attempt was cancelled")
        #expect(clock.sleeperCount == 0)
    }

    // MARK: Fetch deadline: 4610

    @Test("a source that holds its reply back fails with 4610 when the fetch timeout passes, and not before",
          arguments: [0, 1, 2])
    func fetchTimeout(framesBeforeHoldingBack: Int) async throws {
        let clock = ManualClock()
        var source = InMemorySource.agent(InMemoryActivityTable([Self.activity()]))
        source.holdBackAfterFrames = framesBeforeHoldingBack
        let connector = InMemoryConnector(source: source)
        let client = Self.client(connector, clock: clock)
        let task = Task { await Self.fetch(client) }

        // Only the fetch deadline remains: the connect deadline timer was cancelled.
        let fetchDeadline = ManualClock.Instant.zero.advanced(by: .seconds(5))
        try await clock.waitForSleepers("only the fetch deadline") { $0 == [fetchDeadline] }

        clock.advance(by: .seconds(5) - .nanoseconds(1))
        #expect(clock.sleeperCount == 1, "the fetch deadline has not passed yet")
        let connection = try #require(connector.connections.first)
        #expect(!connection.isClosedByClient)

        clock.advance(by: .nanoseconds(1))
        let error = try #require(Self.failure(await task.value))
        #expect(error.code == .userActivityRemoteApplicationTimedOut)
        #expect(error.code.rawValue == 4610)
        #expect(error.message.contains("Desktop did not send the activity within 5 s (limits.fetchTimeout)"))
        #expect(connection.isClosedByClient, "the connection is closed on timeout")
        #expect(connection.heldBackFrames.count == 3 - framesBeforeHoldingBack)
        #expect(clock.sleeperCount == 0)
    }

    // MARK: Refusals from the source or the transport

    @Test("an oversized userInfo is 4611, refused by its header")
    func userInfoTooLarge() async throws {
        let clock = ManualClock()
        let held = Self.activity(userInfo: ["photo": .data(Data(count: 4_000))])
        let connector = InMemoryConnector(source: .agent(InMemoryActivityTable([held])))
        let error = try #require(Self.failure(await Self.fetch(Self.client(connector, clock: clock))))
        #expect(error.code == .userActivityHandoffUserInfoTooLarge)
        #expect(error.code.rawValue == 4611)
        #expect(error.message.contains("over limits.maxUserInfoBytes (3072)"))
        #expect(error.message.contains("\(PropertyListBinaryCoding.encode(held.userInfo).count) bytes"))
    }

    @Test("the client's own limit decides what is too large")
    func clientLimitDecides() async throws {
        let clock = ManualClock()
        let held = Self.activity(userInfo: ["photo": .data(Data(count: 4_000))])
        let connector = InMemoryConnector(source: .agent(InMemoryActivityTable([held])))
        let roomy = Self.client(connector, clock: clock, limits: FrameLimits(maxUserInfoBytes: 8_192))
        #expect(try await Self.fetch(roomy).get().userInfo == held.userInfo)

        let tight = Self.client(connector, clock: clock, limits: FrameLimits(maxUserInfoBytes: 16))
        let small = Self.activity(userInfo: ["a": .string(String(repeating: "x", count: 20))])
        connector.setBehavior(.source(.agent(InMemoryActivityTable([small]))))
        #expect(Self.failure(await Self.fetch(tight))?.code == .userActivityHandoffUserInfoTooLarge)
    }

    @Test("a resigned activity is 4608")
    func resignedActivity() async throws {
        let clock = ManualClock()
        let table = InMemoryActivityTable([Self.activity()])
        table.resign(Fixtures.activityID)
        let connector = InMemoryConnector(source: .agent(table))
        let error = try #require(Self.failure(await Self.fetch(Self.client(connector, clock: clock))))
        #expect(error.code == .userActivityHandoffFailed)
        #expect(error.code.rawValue == 4608)
        #expect(error.message.contains("it was resigned"))
    }

    @Test("an expired activity is 4608")
    func expiredActivity() async throws {
        let clock = ManualClock()
        var held = Self.activity()
        held.expirationDate = InMemorySource.defaultNow.addingTimeInterval(-1)
        let connector = InMemoryConnector(source: .agent(InMemoryActivityTable([held])))
        let error = try #require(Self.failure(await Self.fetch(Self.client(connector, clock: clock))))
        #expect(error.code == .userActivityHandoffFailed)
        #expect(error.message.contains("it expired"))
    }

    @Test("the source closing mid-transfer is 4608", arguments: [1, 2])
    func sourceClosesMidTransfer(framesBeforeClosing: Int) async throws {
        let clock = ManualClock()
        var source = InMemorySource.agent(InMemoryActivityTable([Self.activity()]))
        source.closeAfterFrames = framesBeforeClosing
        let connector = InMemoryConnector(source: source)
        let error = try #require(Self.failure(await Self.fetch(Self.client(connector, clock: clock))))
        #expect(error.code == .userActivityHandoffFailed)
        #expect(error.message.contains("closed the connection before the activity arrived"))
        #expect(clock.sleeperCount == 0)
    }

    @Test("a source that closes before its hello (it refused the session) is 4609")
    func sourceClosesBeforeHello() async throws {
        let clock = ManualClock()
        var source = InMemorySource.agent(InMemoryActivityTable([Self.activity()]))
        source.closeAfterFrames = 0
        let connector = InMemoryConnector(source: source)
        let error = try #require(Self.failure(await Self.fetch(Self.client(connector, clock: clock))))
        #expect(error.code == .userActivityConnectionUnavailable)
        #expect(error.message.contains("closed the connection without answering"))
        #expect(clock.sleeperCount == 0)
    }

    @Test("a source with no common protocol version is 4609")
    func versionMismatch() async throws {
        let clock = ManualClock()
        let source = InMemorySource.agent(InMemoryActivityTable([Self.activity()]), hello: PeerHello(versions: [3], agentID: "s", name: "Desktop"))
        let connector = InMemoryConnector(source: source)
        let error = try #require(Self.failure(await Self.fetch(Self.client(connector, clock: clock))))
        #expect(error.code == .userActivityConnectionUnavailable)
        #expect(error.message.contains("Desktop speaks protocol versions [3]"), "the source's explanation: \(error.message)")
    }

    @Test("a peer that answers with junk is 4608", arguments: [
        ("garbage hello", Frame(kind: .hello, payload: [0xFF, 0xFF]).bytes),
        ("unknown frame kind", Frame(kind: FrameKind(rawValue: 0x66), payload: []).bytes),
        ("a fetch instead of a hello", PeerMessage.fetch(Fixtures.request).frame.bytes),
        ("an HTTP response", Array("HTTP/1.1 400 Bad Request\r\n\r\n".utf8)),
        ("a frame too large for its kind", FrameHeader(kind: .activity, length: 1 << 30).bytes),
    ])
    func junkReply(_ what: String, _ bytes: [UInt8]) async throws {
        let clock = ManualClock()
        let connector = InMemoryConnector(source: .raw(bytes))
        let error = try #require(Self.failure(await Self.fetch(Self.client(connector, clock: clock))))
        #expect(error.code == .userActivityHandoffFailed, "\(what)")
        #expect(error.message.contains("Desktop sent invalid data"), "\(what): \(error.message)")
    }

    @Test("a source that sends a different activity than the one asked for is 4608")
    func wrongActivity() async throws {
        let clock = ManualClock()
        var source = InMemorySource.agent(InMemoryActivityTable([Self.activity()]))
        source.rewrite = { frame in
            guard frame.kind == .activity else { return frame.bytes }
            return PeerMessage.activity(Activity(id: Fixtures.otherID, activityType: Fixtures.notesEdit)).frame.bytes
        }
        let connector = InMemoryConnector(source: source)
        let error = try #require(Self.failure(await Self.fetch(Self.client(connector, clock: clock))))
        #expect(error.code == .userActivityHandoffFailed)
        #expect(error.message.contains("asked for \(Fixtures.activityID)"))
    }

    @Test("a source error code in Apple's range is reported as is")
    func sourceErrorCodePassesThrough() async throws {
        let clock = ManualClock()
        let connector = InMemoryConnector(source: .frames([
            PeerMessage.hello(InMemorySource.defaultHello).frame,
            PeerMessage.error(code: 4610, message: "the app did not save in time").frame,
        ]))
        let error = try #require(Self.failure(await Self.fetch(Self.client(connector, clock: clock))))
        #expect(error.code == .userActivityRemoteApplicationTimedOut)
        #expect(error.message.contains("the app did not save in time"))
    }

    // MARK: Cancellation

    @Test("cancelling a fetch while it connects ends it without crashing the process")
    func cancelWhileConnecting() async {
        // Run in a child process: if the fetch traps, only the child dies and this test fails
        // (with the signal) instead of the whole test run.
        await #expect(processExitsWith: .success) {
            let clock = ManualClock()
            // The connect ignores cancellation until released, so the deadline timer is the first
            // child task to finish once the fetch is cancelled.
            let connector = InMemoryConnector(.hangUntilReleased)
            let client = ContinuationClient(
                connector: connector, clock: clock, hello: PeerHello(agentID: "c", name: "Laptop"),
                limits: FrameLimits(), timeouts: ContinuationTimeouts(connect: .seconds(2), fetch: .seconds(5)))
            let request = FetchRequest(activityID: UUID(), continuationID: UUID())
            let task = Task { await client.fetch(request, from: PeerEndpoint(host: "192.0.2.10", port: 7_654), peerName: "Desktop") }
            try await clock.waitForSleepers(count: 1)
            try await connector.waitForPendingConnects(count: 1)
            task.cancel()
            try await clock.waitForSleepers("the timer to see the cancellation") { $0.isEmpty }
            for _ in 0..<10_000 { await Task.yield() }
            connector.releasePendingConnects()
            guard case .failure = await task.value else { preconditionFailure("a cancelled fetch must not succeed") }
        }
    }
}
