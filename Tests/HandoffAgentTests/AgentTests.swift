import Foundation
import HandoffConfiguration
import HandoffCore
import HandoffDiscovery
import HandoffTestSupport
import HandoffTransport
import HandoffTrust
import Synchronization
import Testing

@testable import HandoffAgent

/// A connector that refuses every connection, counting the attempts.
final class RefusingConnector: PeerConnector {
    struct Refused: Error, CustomStringConvertible {
        var description: String { "connection refused" }
    }

    private let endpoints = Mutex<[PeerEndpoint]>([])

    var attempts: [PeerEndpoint] { endpoints.withLock { $0 } }

    func connect(to endpoint: PeerEndpoint, limits: FrameLimits) async throws -> any FrameConnection {
        endpoints.withLock { $0.append(endpoint) }
        throw Refused()
    }
}

/// The transport of the unit tests' agents: pinned connections (fetches) through the test's
/// connector, unpinned and stream connections over TCP with the agent's TLS.
struct UnitTestTransport: PeerTransport {
    let pinned: any PeerConnector
    let tcp: TCPPeerConnector

    init(pinned: any PeerConnector, configuration: AgentConfiguration, security: AgentSecurity) {
        self.pinned = pinned
        tcp = TCPPeerConnector(connectTimeout: configuration.limits.connectTimeout, tls: security.clientTLS)
    }

    func connect(to endpoint: PeerEndpoint, limits: FrameLimits) async throws -> any FrameConnection {
        try await pinned.connect(to: endpoint, limits: limits)
    }

    func connectUnpinned(to endpoint: PeerEndpoint, limits: FrameLimits) async throws -> ChannelFrameConnection {
        try await tcp.connectUnpinned(to: endpoint, limits: limits)
    }

    func connectStream(to endpoint: PeerEndpoint, limits: FrameLimits, options: PeerStreamOptions) async throws -> ChannelStreamConnection {
        try await tcp.connectStream(to: endpoint, limits: limits, options: options)
    }
}

/// The peer that unit tests' advertisements come from: paired with every agent `makeAgent` makes.
enum TestPeer {
    /// The peer's identity: its key signs its advertisements.
    static let peerIdentity: DeviceIdentity = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("handoff-unit-peer-\(UUID().uuidString.prefix(8))").path
        return try! DeviceIdentity.loadOrCreate(directory: directory, commonName: "test peer")
    }()
    static var deviceID: DeviceID { peerIdentity.deviceID }
    static let key = AdvertisingKey.random()
    /// Sealing timestamps, increasing (older ones would be refused as replays).
    static let clock = Atomic<UInt64>(1_000)

    /// An agent's identity, made once for all unit tests.
    static let identity: DeviceIdentity = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("handoff-unit-\(UUID().uuidString.prefix(8))").path
        return try! DeviceIdentity.loadOrCreate(directory: directory, commonName: "unit-host")
    }()

    /// Seals a plain advertisement as the test peer, for the instance `instanceName`.
    static func seal(_ plaintext: [UInt8], instanceName: String) -> [UInt8] {
        let timestamp = clock.add(1, ordering: .relaxed).newValue
        return seal(plaintext, instanceName: instanceName, timestamp: timestamp)
    }

    /// Seals as the test peer with a given timestamp (and, to forge, another identity or key).
    static func seal(_ plaintext: [UInt8], instanceName: String, timestamp: UInt64, key: AdvertisingKey = key,
                     signer: DeviceIdentity = peerIdentity) -> [UInt8] {
        SealedAdvertisement.txtRecord(sealing: plaintext, timestamp: timestamp, instanceName: instanceName, key: key, identity: signer)
    }
}

func makeAgent(connector: any PeerConnector = RefusingConnector(), clock: any Clock<Duration> = ContinuousClock(),
               configure: (inout AgentConfiguration) -> Void = { _ in }) -> Agent {
    SIGPIPEWatch.install()
    var configuration = AgentConfiguration(name: "unit-host", socketPath: "/tmp/handoff-unit-unused.sock")
    configuration.serviceType = "_handoffunit._tcp"
    configure(&configuration)
    let trust = TrustStore(devices: [PairedDevice(deviceID: TestPeer.deviceID, name: "test peer", advertisingKey: TestPeer.key,
                                                  publicKey: TestPeer.peerIdentity.publicKey)])
    let security = try! AgentSecurity(identity: TestPeer.identity, trust: trust, stateDirectory: nil)
    return Agent(configuration: configuration, port: 7123, transport: UnitTestTransport(pinned: connector, configuration: configuration, security: security),
                 logger: quietLogger, security: security, clock: clock)
        .runningBackgroundWork()
}

extension Agent {
    /// The wire forms of the agent's views, as `handoff status/peers/list --json` print them
    /// (the agent itself renders no JSON; the mapping is HandoffCore's).
    func statusJSON() -> JSONValue { status().json }
    func peersJSON() -> JSONValue { peers().json }
    func listJSON() -> JSONValue { offered().json }

    /// Runs the agent's background service (continuations, timers) for the rest of the test
    /// process, as handoffd's service group does.
    nonisolated func runningBackgroundWork() -> Agent {
        let work = background
        Task { try? await work.run() }
        return self
    }
}

func peerService(name: String, agentID: String, seq: UInt64, offering activity: Activity?, addresses: [String] = ["127.0.0.1"], port: UInt16 = 7200) -> DiscoveredService {
    DiscoveredService(
        instanceName: name, serviceType: "_handoffunit._tcp", domain: "local.", hostTarget: "\(name).local.", port: port,
        txtRecord: TestPeer.seal(Sample.txt(agent: agentID, seq: seq, current: activity), instanceName: name), addresses: addresses, interfaceIndex: 2)
}

extension Result {
    var error: Failure? { if case .failure(let e) = self { e } else { nil } }
}

@Suite("Agent (no network)", .timeLimit(.minutes(1)))
struct AgentTests {
    @Test("a new agent reports its identity and nothing held")
    func initialStatus() async throws {
        let agent = makeAgent()
        let status = await agent.statusJSON()
        #expect(status["name"] == .string("unit-host"))
        #expect(status["agentID"] == .string(agent.agentID))
        #expect(status["port"] == .integer(7123))
        #expect(status["serviceType"] == .string("_handoffunit._tcp"))
        #expect(status["socketPath"] == .string("/tmp/handoff-unit-unused.sock"))
        #expect(status["protocolVersion"] == .integer(2))
        #expect(status["sequence"] == .integer(0))
        #expect(status["current"] == .null)
        #expect(status["activities"] == .array([]))
        #expect(status["peers"] == .integer(0))
        #expect(status["registeredName"] == .null)
        #expect(await agent.peersJSON() == .array([]))
        #expect(await agent.listJSON() == .array([]))
        #expect(agent.hello.agentID == agent.agentID)
        #expect(agent.hello.name == "unit-host")
        #expect(agent.agentID.count == 32)
    }

    @Test("two agents have different IDs")
    func distinctIDs() {
        #expect(makeAgent().agentID != makeAgent().agentID)
    }

    @Test("publish makes an activity current; status lists it")
    func publish() async throws {
        let agent = makeAgent()
        let a = Sample.activity(1, title: "Notes")
        #expect(try await agent.publish(a) == a.id)
        let status = await agent.statusJSON()
        #expect(status["current"] == .string(a.id.uuidString))
        #expect(status["sequence"] == .integer(1))
        #expect(status["activities"] == .array([.object([
            "id": .string(a.id.uuidString), "activityType": .string("com.example.notes.edit"),
            "title": .string("Notes"), "expired": .bool(false),
        ])]))
        #expect(await agent.lookUp(id: a.id) == a)
    }

    @Test("a newer publication is current; resigning it falls back")
    func publishResign() async throws {
        let agent = makeAgent()
        let a = Sample.activity(1), b = Sample.activity(2)
        _ = try await agent.publish(a)
        _ = try await agent.publish(b)
        #expect(await agent.statusJSON()["current"] == .string(b.id.uuidString))
        try await agent.resign(id: b.id)
        let status = await agent.statusJSON()
        #expect(status["current"] == .string(a.id.uuidString))
        #expect(status["sequence"] == .integer(3))
        #expect(status["activities"]?.arrayValue?.count == 1)
        #expect(await agent.lookUp(id: b.id) == nil)
    }

    @Test("resigning an unknown activity is 4608 pointing at handoff status")
    func resignUnknown() async {
        let agent = makeAgent()
        do {
            try await agent.resign(id: Sample.id(42))
            Issue.record("resigned an unknown activity")
        } catch {
            #expect(error.code.rawValue == 4608)
            #expect(error.message.contains(Sample.id(42).uuidString))
            #expect(error.message.contains("handoff status"))
        }
    }

    @Test("expireActivities drops expired activities")
    func expire() async throws {
        let agent = makeAgent()
        let now = Date()
        let keep = Activity(activityType: Sample.notesEdit, title: "keep")
        let expiring = Activity(activityType: Sample.notesEdit, title: "expiring", expirationDate: now.addingTimeInterval(3600))
        _ = try await agent.publish(keep)
        _ = try await agent.publish(expiring)
        #expect(await agent.statusJSON()["current"] == .string(expiring.id.uuidString))
        await agent.expireActivities(now: now.addingTimeInterval(3601))
        let status = await agent.statusJSON()
        #expect(status["current"] == .string(keep.id.uuidString))
        #expect(status["activities"]?.arrayValue?.count == 1)
        #expect(await agent.lookUp(id: expiring.id) == nil)
    }

    @Test("an expired but not yet removed activity is marked expired and is not current")
    func expiredMarked() async throws {
        let agent = makeAgent()
        let past = Activity(activityType: Sample.notesEdit, expirationDate: Date().addingTimeInterval(-10))
        _ = try await agent.publish(past)
        let status = await agent.statusJSON()
        #expect(status["current"] == .null)
        #expect(status["activities"]?.arrayValue?.first?["expired"] == .bool(true))
    }

    @Test("continuing an activity no peer offers is 4608")
    func continueUnknown() async {
        let connector = RefusingConnector()
        let agent = makeAgent(connector: connector)
        let result = await agent.continueActivity(id: Sample.id(5))
        let error = result.error
        #expect(error?.code.rawValue == 4608)
        #expect(error?.message.contains("handoff list") == true)
        #expect(connector.attempts.isEmpty)
    }

    @Test("a discovered peer is listed with its offered activity")
    func discoveredPeerListed() async throws {
        let agent = makeAgent()
        let offered = Sample.activity(3, type: Sample.mapsView, title: "Map")
        await agent.handle(.resolved(peerService(name: "kitchen", agentID: "peer-kitchen", seq: 9, offering: offered)))

        let peers = try #require(await agent.peersJSON().arrayValue)
        #expect(peers.count == 1)
        #expect(peers.first?["name"] == .string("kitchen"))
        #expect(peers.first?["agentID"] == .string("peer-kitchen"))
        #expect(peers.first?["host"] == .string("kitchen.local."))
        #expect(peers.first?["addresses"] == .array([.string("127.0.0.1")]))
        #expect(peers.first?["port"] == .integer(7200))
        #expect(peers.first?["sequence"] == .integer(9))
        #expect(peers.first?["current"] == .string(offered.id.uuidString))

        // Issue 17 added offeredAt (when this agent first saw it on offer) to list's answer.
        let listed = try #require(await agent.listJSON().arrayValue)
        guard case .object(var row)? = listed.first else { Issue.record("\(listed)"); return }
        #expect(row.removeValue(forKey: "offeredAt")?.stringValue.flatMap(AgentEvent.parseTime) != nil)
        #expect(listed.count == 1)
        #expect(row == [
            "id": .string(offered.id.uuidString), "peer": .string("kitchen"),
            "activityType": .string("com.example.maps.view"), "title": .string("Map"),
        ])
        #expect(await agent.statusJSON()["peers"] == .integer(1))
    }

    @Test("the agent's own advertisement and foreign services are not peers")
    func ownAndForeignIgnored() async {
        let agent = makeAgent()
        await agent.handle(.resolved(peerService(name: "unit-host", agentID: agent.agentID, seq: 1, offering: Sample.activity(1))))
        await agent.handle(.resolved(DiscoveredService(
            instanceName: agent.instanceName, serviceType: "_handoffunit._tcp", domain: "local.", hostTarget: "unit-host.local.", port: 7123,
            txtRecord: await agent.advertisedTXTRecord, addresses: ["127.0.0.1"], interfaceIndex: 2)))
        await agent.handle(.resolved(DiscoveredService(
            instanceName: "printer", serviceType: "_handoffunit._tcp", domain: "local.", hostTarget: "printer.local.", port: 631,
            txtRecord: [8] + Array("rp=queue".utf8), addresses: ["127.0.0.1"], interfaceIndex: 2)))
        #expect(await agent.peersJSON() == .array([]))
        #expect(await agent.listJSON() == .array([]))
    }

    @Test("continuing a peer's activity when the peer cannot be reached is 4609")
    func continueConnectFails() async throws {
        let connector = RefusingConnector()
        let agent = makeAgent(connector: connector)
        let offered = Sample.activity(4)
        await agent.handle(.resolved(peerService(name: "kitchen", agentID: "peer-kitchen", seq: 1, offering: offered, port: 7201)))

        let error = try #require(await agent.continueActivity(id: offered.id).error)
        #expect(error.code.rawValue == 4609)
        #expect(error.code == .userActivityConnectionUnavailable)
        // The device's name as stored when pairing ("test peer"), not the one it advertises ("kitchen").
        #expect(error.message.contains("test peer"))
        #expect(error.message.contains("connection refused"))
        #expect(connector.attempts == [PeerEndpoint(host: "127.0.0.1", port: 7201, expectedIdentity: TestPeer.deviceID.bytes)])
    }

    @Test("continuing the activity of a peer that left is 4609 saying it left")
    func continueAfterPeerLeft() async throws {
        let connector = RefusingConnector()
        let agent = makeAgent(connector: connector)
        let offered = Sample.activity(5)
        await agent.handle(.resolved(peerService(name: "kitchen", agentID: "peer-kitchen", seq: 1, offering: offered)))
        await agent.handle(.removed(instanceName: "kitchen"))
        // Anyone can send a goodbye: the paired peer stays until liveness finds it gone.
        #expect(await agent.listJSON().arrayValue?.count == 1)
        await agent.setReachability(TestPeer.deviceID, reachable: false, lastHeard: nil)
        #expect(await agent.peersJSON() == .array([]))
        #expect(await agent.listJSON() == .array([]))

        let error = try #require(await agent.continueActivity(id: offered.id).error)
        #expect(error.code.rawValue == 4609)
        #expect(error.message.contains("kitchen"))
        #expect(error.message.contains("left the network"))
        #expect(connector.attempts.isEmpty, "no connection is attempted to a peer that left")

        // When it comes back (and liveness watches it afresh), the activity can be continued
        // again (and fails only at connect).
        await agent.handle(.resolved(peerService(name: "kitchen", agentID: "peer-kitchen", seq: 1, offering: offered)))
        await agent.setReachability(TestPeer.deviceID, reachable: true, lastHeard: nil)
        let again = try #require(await agent.continueActivity(id: offered.id).error)
        #expect(again.code.rawValue == 4609)
        #expect(!again.message.contains("left the network"))
        #expect(connector.attempts.count == 1)
    }

    @Test("removing an unknown service changes nothing")
    func removeUnknown() async {
        let agent = makeAgent()
        await agent.handle(.removed(instanceName: "ghost"))
        #expect(await agent.peersJSON() == .array([]))
        #expect(await agent.continueActivity(id: Sample.id(1)).error?.code.rawValue == 4608)
    }

    @Test("an activity that arrives with another type than the one advertised runs no handler (4608)")
    func typeMismatchRunsNothing() async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        let advertised = Sample.activity(6, title: "Groceries")
        // The source serves, under the advertised ID, an activity of another type.
        var served = advertised
        served.activityType = Sample.mapsView
        let connector = InMemoryConnector(source: .agent(InMemoryActivityTable([served]), now: Date()))
        let agent = makeAgent(connector: connector) {
            $0.handlers = [.init(activityTypes: ["*"], command: shell(#"touch "$1""#, dir.file("ran")))]
        }
        await agent.handle(.resolved(peerService(name: "kitchen", agentID: "peer-kitchen", seq: 1, offering: advertised)))

        let error = try #require(await agent.continueActivity(id: advertised.id).error)
        #expect(error.code.rawValue == 4608)
        #expect(error.message.contains("not the \(Sample.notesEdit.rawValue) it advertised"), "\(error.message)")
        #expect(!dir.exists("ran"), "no handler ran")
    }

    @Test("continuing through an in-memory source runs the handler and reports who took it")
    func continueDelivers() async throws {
        let dir = try ScratchDirectory()
        defer { dir.remove() }
        var offered = Sample.activity(6, title: "Groceries")
        offered.userInfo = trickyUserInfo
        let table = InMemoryActivityTable([offered])
        let connector = InMemoryConnector(source: .agent(table, now: Date()))
        let command = shell(#"cat > "$1""#, dir.file("in.json"))
        let agent = makeAgent(connector: connector) {
            $0.handlers = [.init(activityTypes: [Sample.notesEdit.rawValue], command: command)]
        }
        await agent.handle(.resolved(peerService(name: "kitchen", agentID: "peer-kitchen", seq: 1, offering: offered)))

        let value = try await agent.continueActivity(id: offered.id).get().json  // the wire form
        #expect(value["handled"] == .bool(true))
        #expect(value["by"] == .string("handler"))
        #expect(value["command"] == .array(command.map { .string($0) }))
        #expect(value["peer"] == .string("test peer"), "the name stored when pairing, not the advertised \"kitchen\"")
        #expect(value["continuationID"]?.stringValue.flatMap(UUID.init(uuidString:)) != nil)
        let returned = try Activity(json: try #require(value["activity"]))
        #expect(returned.id == offered.id)

        let received = try Activity(json: try JSONValue(parsing: try #require(dir.contents("in.json"))))
        #expect(PropertyListValue.dictionary(received.userInfo).isIdentical(to: .dictionary(offered.userInfo)))
        // The fetch, then the `continued` notification that lets the source's app know, on the
        // same connection, which the agent keeps for the next continuation.
        #expect(connector.attempts == [PeerEndpoint(host: "127.0.0.1", port: 7200, expectedIdentity: TestPeer.deviceID.bytes)])
        let connection = try #require(connector.connections.first)
        #expect(connection.framesFromClient.map(\.kind) == [.hello, .fetch, .continued])

        // A second continuation reuses it: the fetch alone, no new connection, no second hello.
        _ = try await agent.continueActivity(id: offered.id).get()
        #expect(connector.attempts.count == 1)
        #expect(connection.framesFromClient.map(\.kind) == [.hello, .fetch, .continued, .fetch, .continued])
        #expect(!connection.isClosedByClient)

        // The source drops the idle connection (its agent restarted, say): the next continuation
        // finds it closed before any answer and fetches again on a fresh connection, no error.
        connection.closeFromSource()
        _ = try await agent.continueActivity(id: offered.id).get()
        #expect(connector.attempts.count == 2)
        #expect(connector.connections.last?.framesFromClient.map(\.kind) == [.hello, .fetch, .continued])
    }

    @Test("continuing an activity with no handler and no URL is 4608 telling to add a handler")
    func continueWithoutHandler() async throws {
        let offered = Sample.activity(7)
        let connector = InMemoryConnector(source: .agent(InMemoryActivityTable([offered]), now: Date()))
        let agent = makeAgent(connector: connector)
        await agent.handle(.resolved(peerService(name: "kitchen", agentID: "peer-kitchen", seq: 1, offering: offered)))
        let error = try #require(await agent.continueActivity(id: offered.id).error)
        #expect(error.code.rawValue == 4608)
        #expect(error.message.contains("Add a handler"))
    }

    @Test("a userInfo over the agent's maxUserInfoBytes is 4611")
    func continueUserInfoTooLarge() async throws {
        var offered = Sample.activity(8)
        offered.userInfo = ["blob": .data(Data(repeating: 7, count: 5000))]
        let connector = InMemoryConnector(source: .agent(InMemoryActivityTable([offered]), now: Date()))
        let agent = makeAgent(connector: connector) {
            $0.handlers = [.init(activityTypes: ["*"], command: ["/bin/true"])]
        }
        await agent.handle(.resolved(peerService(name: "kitchen", agentID: "peer-kitchen", seq: 1, offering: offered)))
        let error = try #require(await agent.continueActivity(id: offered.id).error)
        #expect(error.code.rawValue == 4611)
    }
}

@Suite("ControlSession.execute", .timeLimit(.minutes(1)))
struct ControlSessionTests {
    func execute(_ command: String, _ body: [String: JSONValue] = [:], agent: Agent) async -> Result<JSONValue, HandoffError> {
        var members = body
        members["command"] = .string(command)
        do throws(HandoffError) {
            return await ControlSession.execute(try ControlRequest(json: .object(members)), agent: agent)
        } catch {
            return .failure(error)
        }
    }

    @Test("publish then status, list, peers and resign")
    func publishAndResign() async throws {
        let agent = makeAgent()
        let activity: JSONValue = .object([
            "activityType": .string("com.example.notes.edit"),
            "title": .string("Shopping"),
            "userInfo": .object(["count": .integer(3)]),
        ])
        let published = try await execute("publish", ["activity": activity], agent: agent).get()
        let idText = try #require(published["id"]?.stringValue)
        let id = try #require(UUID(uuidString: idText))
        #expect(await agent.lookUp(id: id)?.title == "Shopping")
        #expect(await agent.lookUp(id: id)?.userInfo == ["count": .integer(3)])

        let status = try await execute("status", agent: agent).get()
        #expect(status["current"] == .string(idText))
        #expect(try await execute("peers", agent: agent).get() == .array([]))
        #expect(try await execute("list", agent: agent).get() == .array([]))

        #expect(try await execute("resign", ["id": .string(idText)], agent: agent).get() == .object(["resigned": .string(id.uuidString)]))
        #expect(await agent.lookUp(id: id) == nil)
        // Resigning twice: 4608.
        #expect(await execute("resign", ["id": .string(idText)], agent: agent).error?.code.rawValue == 4608)
    }

    @Test("publish keeps an ID given by the app")
    func publishWithID() async throws {
        let agent = makeAgent()
        let id = Sample.id(77)
        let activity: JSONValue = .object(["id": .string(id.uuidString), "activityType": .string("com.example.notes.edit")])
        #expect(try await execute("publish", ["activity": activity], agent: agent).get() == .object(["id": .string(id.uuidString)]))
    }

    @Test("publish with an invalid activity names the field", arguments: [
        (#"{"title": "no type"}"#, "activityType"),
        (#"{"activityType": "notes"}"#, "activityType"),
        (#"{"activityType": "com.example.a", "webpageURL": "not a url"}"#, "webpageURL"),
        (#"{"activityType": "com.example.a", "expirationDate": "yesterday"}"#, "expirationDate"),
        (#"{"activityType": "com.example.a", "id": "1234"}"#, "id"),
        (#"{"activityType": "com.example.a", "title": 5}"#, "title"),
        (#"{"activityType": "com.example.a", "isEligibleForHandoff": "yes"}"#, "isEligibleForHandoff"),
    ])
    func publishInvalid(json: String, field: String) async throws {
        let agent = makeAgent()
        let result = await execute("publish", ["activity": try JSONValue(parsing: json)], agent: agent)
        let error = try #require(result.error)
        #expect(error.code.rawValue == 4608)
        #expect(error.message.contains(field), "\(error.message)")
        #expect(error.message.contains("cannot publish"))
        #expect(await agent.statusJSON()["activities"] == .array([]))
    }

    @Test("publish without an activity object is refused")
    func publishWithoutActivity() async throws {
        let agent = makeAgent()
        let error = try #require(await execute("publish", agent: agent).error)
        #expect(error.code.rawValue == 4608)
        #expect(error.message.contains("activity"))
        let notObject = try #require(await execute("publish", ["activity": .string("x")], agent: agent).error)
        #expect(notObject.code.rawValue == 4608)
    }

    @Test("publishing an already expired activity is refused")
    func publishExpired() async throws {
        let agent = makeAgent()
        let activity: JSONValue = .object([
            "activityType": .string("com.example.notes.edit"),
            "expirationDate": .string("2001-01-01T00:00:00Z"),
        ])
        let error = try #require(await execute("publish", ["activity": activity], agent: agent).error)
        #expect(error.code.rawValue == 4608)
        #expect(error.message.contains("expirationDate"))
        #expect(await agent.statusJSON()["activities"] == .array([]))
    }

    @Test("resign with a malformed or missing id is refused")
    func resignMalformed() async throws {
        let agent = makeAgent()
        for body: [String: JSONValue] in [["id": .string("not-a-uuid")], ["id": .integer(5)], [:]] {
            let error = try #require(await execute("resign", body, agent: agent).error)
            #expect(error.code.rawValue == 4608)
            #expect(error.message.contains("resign needs \"id\""), "\(error.message)")
        }
    }

    @Test("continue with a malformed id is refused; with an unknown one it is 4608")
    func continueMalformed() async throws {
        let agent = makeAgent()
        let malformed = try #require(await execute("continue", ["id": .string("xyz")], agent: agent).error)
        #expect(malformed.code.rawValue == 4608)
        #expect(malformed.message.contains("continue needs \"id\""))
        let unknown = try #require(await execute("continue", ["id": .string(Sample.id(3).uuidString)], agent: agent).error)
        #expect(unknown.code.rawValue == 4608)
    }

    @Test("an unknown command is refused, listing the known ones")
    func unknownCommand() async throws {
        let agent = makeAgent()
        let error = try #require(await execute("frobnicate", agent: agent).error)
        #expect(error.code.rawValue == 4608)
        #expect(error.message.contains("frobnicate"))
        for known in ["status", "peers", "list", "publish", "resign", "continue"] {
            #expect(error.message.contains(known))
        }
    }

    @Test("a sealed advertisement older than one already seen from the device is a replay and ignored")
    func replayIgnored() async {
        let agent = makeAgent()
        func service(seq: UInt64, timestamp: UInt64, offering activity: Activity?) -> DiscoveredService {
            let plaintext = Sample.txt(agent: "peer-kitchen", seq: seq, current: activity)
            return DiscoveredService(
                instanceName: "kitchen", serviceType: "_handoffunit._tcp", domain: "local.", hostTarget: "kitchen.local.", port: 7200,
                txtRecord: TestPeer.seal(plaintext, instanceName: "kitchen", timestamp: timestamp),
                addresses: ["127.0.0.1"], interfaceIndex: 2)
        }
        let current = Sample.activity(1, title: "Now")
        await agent.handle(.resolved(service(seq: 2, timestamp: UInt64.max - 10, offering: current)))
        await agent.handle(.resolved(service(seq: 1, timestamp: UInt64.max - 20, offering: Sample.activity(2, title: "Old"))))
        #expect(await agent.listJSON().arrayValue?.map { $0["id"] } == [.string(current.id.uuidString)])
    }

    @Test("an advertisement sealed with a key of no paired device is not a peer")
    func unknownKeyIgnored() async {
        let agent = makeAgent()
        let plaintext = Sample.txt(agent: "peer-stranger", seq: 1, current: Sample.activity(3))
        await agent.handle(.resolved(DiscoveredService(
            instanceName: "stranger", serviceType: "_handoffunit._tcp", domain: "local.", hostTarget: "stranger.local.", port: 7300,
            txtRecord: TestPeer.seal(plaintext, instanceName: "stranger", timestamp: 1, key: .random()),
            addresses: ["127.0.0.1"], interfaceIndex: 2)))
        #expect(await agent.peersJSON() == .array([]))
        #expect(await agent.listJSON() == .array([]))
        // A plain (unsealed) record is not one either.
        await agent.handle(.resolved(DiscoveredService(
            instanceName: "plain", serviceType: "_handoffunit._tcp", domain: "local.", hostTarget: "plain.local.", port: 7301,
            txtRecord: plaintext, addresses: ["127.0.0.1"], interfaceIndex: 2)))
        #expect(await agent.listJSON() == .array([]))
    }

    @Test("trust add and remove: the paired device's advertisements are read, then forgotten, and the key rotates")
    func trustAddRemove() async throws {
        let agent = makeAgent()
        await agent.handle(.resolved(peerService(name: "kitchen", agentID: "peer-kitchen", seq: 1, offering: Sample.activity(4))))
        #expect(await agent.listJSON().arrayValue?.count == 1)
        let keyBefore = await agent.advertisingKey
        let removed = try await agent.trustRemove(TestPeer.deviceID)
        #expect(removed.closedConnections == 0)
        #expect(await agent.listJSON() == .array([]))
        #expect(await agent.advertisingKey != keyBefore)
        await #expect(throws: HandoffError.self) { try await agent.trustRemove(TestPeer.deviceID) }
        await #expect(throws: HandoffError.self) { try await agent.trustAdd(agent.deviceID, name: nil) }
        _ = try await agent.trustAdd(TestPeer.deviceID, name: "kitchen", advertisingKey: TestPeer.key)
        // The key opens its records, but its signatures cannot be checked before its certificate is known.
        await agent.handle(.resolved(peerService(name: "kitchen", agentID: "peer-kitchen", seq: 2, offering: Sample.activity(4))))
        #expect(await agent.listJSON() == .array([]))
        _ = try await agent.trustAdd(TestPeer.deviceID, name: "kitchen", certificateDER: TestPeer.peerIdentity.certificateDER)
        await agent.handle(.resolved(peerService(name: "kitchen", agentID: "peer-kitchen", seq: 3, offering: Sample.activity(4))))
        #expect(await agent.listJSON().arrayValue?.count == 1)
    }
}
