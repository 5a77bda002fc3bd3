import HandoffCore
import HandoffTestSupport
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The typed control protocol: every request and event survives its wire form, and bad requests
/// get the errors the agent gave before it had types.
@Suite("Control protocol: typed requests, events and results")
struct ControlMessagesTests {
    static let activity = BenchmarkFixtures.activity(title: "Notes", userInfoBytes: 200)

    static let requests: [ControlRequest] = [
        .status, .peers, .list, .pairable, .trustList,
        .publish(activity),
        .resign(id: UUID()),
        .continueActivity(id: UUID(), idempotencyKey: nil),
        .continueActivity(id: UUID(), idempotencyKey: "retry-1"),
        .open(.init(peer: "kitchen", bundleID: "com.example.notes", target: .url(URL(string: "https://example.com/a?b=c")!))),
        .open(.init(peer: "kitchen", bundleID: "com.example.notes", target: .file(name: "list.txt", data: Array("milk\n".utf8)),
                    annotation: .dictionary(["k": .integer(1)]))),
        .pair(.accept), .pair(.peer("198.18.0.2:7200")),
        .faults(set: .object(["payloadDelayMs": .string("3000")]), clear: nil), .faults(set: nil, clear: .all),
        .faults(set: nil, clear: .named(["corruptFrame"])),
        .trustAdd(deviceID: "ABCDEFG-HIJKLMN", name: "laptop"), .trustAdd(deviceID: "ABCDEFG", name: nil), .trustRemove(deviceID: "ABCDEFG"),
        .trustAdd(deviceID: "ABCDEFG", name: nil, addresses: [PeerAddress(host: "h1", port: 7000), PeerAddress(host: "fe80::1%eth0", port: 7000)]),
        .registerApp(AppManifest(bundleID: "com.example.notes", teamID: "TEAM1", activityTypes: [BenchmarkFixtures.activityType])),
        .reply(replyID: UUID(), AppReply(handled: true)), .reply(replyID: UUID(), AppReply(accept: false)),
        .openStreams(continuationID: UUID()), .acceptStreams(streamID: UUID()),
    ]

    @Test("every request reads back from its wire form", arguments: requests)
    func requestRoundTrip(_ request: ControlRequest) throws {
        let wire = try JSONValue(parsing: request.json.serializedBytes)
        #expect(try ControlRequest(json: wire) == request)
        #expect(wire["command"]?.stringValue == request.command)
    }

    @Test("bad requests are refused with what to send instead",
          arguments: [
            (#"{"command":"continue"}"#, "continue needs \"id\", an activity UUID as printed by `handoff list`"),
            (#"{"command":"continue","id":"6A2B4C0E-59E4-4C36-8E0C-AF1E5B1C3D2A","idempotencyKey":""}"#, "continue: \"idempotencyKey\" must be a string of 1 to 200 bytes"),
            (#"{"command":"resign","id":"nope"}"#, "resign needs \"id\", an activity UUID as printed by publish"),
            (#"{"command":"publish"}"#, "publish needs an \"activity\" object"),
            (#"{"command":"open","peer":"x"}"#, "open needs \"peer\" and \"app\" (a bundle ID)"),
            (#"{"command":"open","peer":"x","app":"com.a.b","url":"relative/path"}"#, "open: relative/path is not an absolute URL"),
            (#"{"command":"pair"}"#, "pair needs \"peer\""),
            (#"{"command":"faults","clear":3}"#, "clear: must be \"all\" or a list of fault names"),
            (#"{"command":"trustAdd"}"#, "trustAdd needs \"deviceID\""),
            (#"{"command":"registerApp","app":{}}"#, "registerApp: invalid app manifest: bundleID must be reverse-DNS"),
            (#"{"command":"reply"}"#, "reply needs \"replyID\", from the event it answers"),
            (#"{"command":"fly"}"#, "unknown command \"fly\"; this agent knows status, peers, list"),
            (#"{"nothing":1}"#, "the request has no \"command\""),
          ])
    func badRequests(_ text: String, _ expected: String) throws {
        let error = #expect(throws: HandoffError.self) { try ControlRequest(json: try JSONValue(parsing: Array(text.utf8))) }
        #expect(error?.code == .userActivityHandoffFailed)
        #expect(error?.message.hasPrefix(expected) == true, "\(error?.message ?? "")")
    }

    static let continuing = AppEvent.Continuing(continuationID: UUID(), activityType: "com.example.notes.edit", peer: "kitchen")
    static let events: [AppEvent] = [
        .willContinue(continuing),
        .continueActivity(continuing, activity: activity, sourceApplication: "com.example.notes"),
        .continueActivity(continuing, activity: activity, sourceApplication: nil),
        .didFail(continuing, error: .remoteTimedOut("too slow")),
        .willSave(activityID: UUID()),
        .wasContinued(activityID: UUID(), continuationID: UUID(), peer: "kitchen"),
        .openURL(.init(url: URL(string: "https://example.com")!, peer: "kitchen", inboxFile: false)),
        .openURL(.init(url: URL(fileURLWithPath: "/home/u/Inbox/a.txt"), peer: "kitchen", inboxFile: true, sourceApplication: "com.a.b",
                       annotation: .string("note"))),
        .streamsRequested(activityID: UUID(), streamID: UUID()),
        .pairRequest(peer: "kitchen", deviceID: "ABC"),
        .pairCode(code: "123456", peer: "kitchen", deviceID: "ABC"),
    ]

    @Test("every event reads back from its wire form, with its replyID", arguments: events)
    func eventRoundTrip(_ event: AppEvent) throws {
        let replyID = UUID()
        let wire = try JSONValue(parsing: AppEventMessage(event, replyID: replyID).json.serializedBytes)
        #expect(AppEventMessage.isEvent(wire))
        #expect(AppEventMessage.replyID(of: wire) == replyID)
        #expect(AppEvent(json: wire) == event)
        #expect(wire["event"]?.stringValue == event.name)
    }

    @Test("an event this version does not know reads as nil, and keeps its replyID")
    func unknownEvent() throws {
        let wire = try JSONValue(parsing: Array(#"{"event":"teleport","replyID":"6A2B4C0E-59E4-4C36-8E0C-AF1E5B1C3D2A"}"#.utf8))
        #expect(AppEvent(json: wire) == nil)
        #expect(AppEventMessage.replyID(of: wire) == UUID(uuidString: "6A2B4C0E-59E4-4C36-8E0C-AF1E5B1C3D2A"))
    }

    @Test("results read back from their wire forms")
    func resultsRoundTrip() throws {
        let status = AgentStatus(
            name: "desk", deviceID: "ABC", registeredName: nil, pairedDevices: 1, pairing: false, agentID: "a1", port: 7200,
            serviceType: "_handoff._tcp", socketPath: "/run/h.sock", protocolVersion: 2, sequence: .max, current: UUID(),
            activities: [.init(id: UUID(), activityType: "com.example.notes.edit", title: nil, expired: true)], peers: 2,
            apps: [AppManifest(bundleID: "com.example.notes", teamID: "TEAM1", activityTypes: [])], streamPairs: 3)
        #expect(AgentStatus(json: try JSONValue(parsing: status.json.serializedBytes)) == status)
        let peer = PeerSummary(name: "kitchen", deviceID: nil, instanceName: "x1", agentID: "a2", host: "kitchen.local.",
                               addresses: ["198.18.0.2"], port: 7200, sequence: .max, current: nil, reachable: false)
        #expect([PeerSummary](json: try JSONValue(parsing: [peer].json.serializedBytes)) == [peer])
        let continued = ContinueResult(peer: "kitchen", continuationID: UUID(), activity: Self.activity.json, by: "handler",
                                       command: ["/bin/true"], replayed: true)
        #expect(ContinueResult(json: continued.json) == continued)
        #expect(continued.activityType == Self.activity.activityType.rawValue)
        let faults = FaultsReport(active: .object([:]), faults: [.init(name: "corruptFrame", value: nil, code: 4608, summary: "s")])
        #expect(FaultsReport(json: faults.json) == faults)
        #expect(TrustChange(json: TrustChange(deviceID: "A", name: "n", closedConnections: 2).json).closedConnections == 2)
    }

    @Test("the correlator hands each answer to its request, early or late, and ends the rest when closed")
    func correlator() async {
        let correlator = RequestCorrelator<Int, String>()
        #expect(correlator.open(1) && correlator.open(2) && correlator.open(3))
        #expect(correlator.resolve(1, with: "early"))
        #expect(await correlator.answer(for: 1) == "early")
        #expect(!correlator.resolve(1, with: "again"), "one answer per request")
        #expect(!correlator.resolve(9, with: "stray"), "an answer to no request is dropped")
        async let late = correlator.answer(for: 2)
        #expect(correlator.resolve(2, with: "late"))
        #expect(await late == "late")
        correlator.close(answering: "gone")
        #expect(await correlator.answer(for: 3) == "gone")
        #expect(!correlator.open(4), "closed: no new requests")
    }
}

@Suite("Control requests: search and deleteSaved")
struct SearchControlRequestTests {
    @Test("search and deleteSaved survive their wire form")
    func roundTrips() throws {
        for request in [ControlRequest.search(query: "budget 2026", devices: .all, limit: 7), .deleteSaved(.all),
                        .deleteSaved(.persistentIdentifiers(["a", "b"]))] {
            #expect(try ControlRequest(json: request.json) == request)
        }
        #expect(try ControlRequest(json: .object(["command": .string("search"), "query": .string("x")])) == .search(query: "x", devices: .local, limit: 20))
    }

    @Test("bad search and deleteSaved arguments say what to send", arguments: [
        (#"{"command":"search"}"#, "needs \"query\""),
        (#"{"command":"search","query":"x","devices":"some"}"#, "\"local\" or \"all\""),
        (#"{"command":"search","query":"x","limit":0}"#, "from 1 to 100"),
        (#"{"command":"deleteSaved"}"#, "persistentIdentifiers"),
        (#"{"command":"deleteSaved","persistentIdentifiers":[]}"#, "persistentIdentifiers"),
        (#"{"command":"deleteSaved","all":true,"persistentIdentifiers":["a"]}"#, "not both"),
        (#"{"command":"deleteSaved","persistentIdentifiers":[""]}"#, "non-empty"),
    ])
    func refusals(json: String, expected: String) throws {
        #expect(throws: HandoffError.self) { try ControlRequest(json: try JSONValue(parsing: Array(json.utf8))) }
        do { _ = try ControlRequest(json: try JSONValue(parsing: Array(json.utf8))) } catch { #expect("\(error)".contains(expected), "\(error)") }
    }
}

@Suite("Peer messages: search")
struct PeerSearchMessageTests {
    @Test("searchRequest and searchResults survive their frames; the device is left for the asker")
    func roundTrips() throws {
        let request = PeerMessage.searchRequest(PeerSearchRequest(query: "lisbon", limit: 5))
        #expect(try PeerMessage(frame: request.frame) == request)
        let result = SavedActivity(persistentIdentifier: "p", activityType: "com.example.a", title: "T", webpageURL: URL(string: "https://example.com/x"),
                                   targetContentIdentifier: "w/1", keywords: ["k"], bundleID: "com.example.a", device: "",
                                   savedAt: Date(timeIntervalSince1970: 1_800_000_000), expirationDate: Date(timeIntervalSince1970: 1_900_000_000), rank: -1.5)
        let results = PeerMessage.searchResults([result, result])
        #expect(try PeerMessage(frame: results.frame) == results)
    }

    @Test("results past one frame are cut from the worst end, never refused")
    func resultsFitOneFrame() throws {
        let big = SavedActivity(persistentIdentifier: nil, activityType: "com.example.a", title: String(repeating: "x", count: 4000), webpageURL: nil,
                                device: "", savedAt: Date(timeIntervalSince1970: 0))
        let frame = PeerMessage.searchResults(Array(repeating: big, count: 100)).frame
        #expect(frame.payload.count <= FrameLimits().maxFrameBytes)
        guard case .searchResults(let kept) = try PeerMessage(frame: frame) else { Issue.record("not results"); return }
        #expect(kept.count > 0 && kept.count < 100)
    }

    @Test("a searchRequest without a query or with a limit out of range is malformed")
    func refusals() {
        let empty = Frame(kind: .searchRequest, payload: PropertyListBinaryCoding.encode(["query": .string(""), "limit": .integer(5)]))
        #expect(throws: FrameError.self) { try PeerMessage(frame: empty) }
        let huge = Frame(kind: .searchRequest, payload: PropertyListBinaryCoding.encode(["query": .string("x"), "limit": .integer(1000)]))
        #expect(throws: FrameError.self) { try PeerMessage(frame: huge) }
    }

    @Test("the searchable text: title, sorted keywords, attribute strings in key order, URL")
    func searchableText() {
        var activity = Activity(activityType: ActivityType(rawValue: "com.example.a")!, title: "Title")
        activity.keywords = ["b", "a"]
        activity.contentAttributeSet = ["z": .string("last"), "a": .dictionary(["x": .array([.string("first"), .integer(3)])])]
        activity.webpageURL = URL(string: "https://example.com/p")
        let text = SearchableText(activity)
        #expect(text.title == "Title" && text.keywords == "a b" && text.content == "first\nlast" && text.webpageURL == "https://example.com/p")
    }
}
