import HandoffCore
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

@Suite("Peer messages: frame encoding")
struct PeerMessageTests {
    static func decode(_ frame: Frame) throws(FrameError) -> PeerMessage { try PeerMessage(frame: frame) }

    static func frame(_ kind: FrameKind, _ fields: UserInfo) -> Frame {
        Frame(kind: kind, payload: PropertyListBinaryCoding.encode(fields))
    }

    static func activityWithoutUserInfo() -> Activity {
        var activity = Fixtures.fullActivity()
        activity.userInfo = [:]
        return activity
    }

    @Test("every message round-trips through its frame", arguments: [
        PeerMessage.hello(PeerHello(agentID: "A1B2", name: "Kitchen iMac")),
        .hello(PeerHello(versions: [1, 2, 65_535], agentID: "", name: "名前 😀")),
        .hello(PeerHello(agentID: "A1B2", name: "Kitchen iMac", multiplexing: true, pushesAdvertisements: true)),
        .fetch(FetchRequest(activityID: Fixtures.activityID, continuationID: Fixtures.continuationID)),
        .activity(activityWithoutUserInfo()),
        .activity(Activity(id: Fixtures.otherID, activityType: .browsingWeb, webpageURL: URL(string: "https://example.com"))),
        .userInfo([:]),
        .userInfo(["a": .integer(1), "b": .array([.string("x")])]),
        .error(code: 4608, message: "activity was resigned"),
        .error(code: 4611, message: ""),
        .error(code: -1, message: "négatif"),
        .ping(sequence: 0),
        .ping(sequence: 42),
        .pong(sequence: 42),
        .subscribe,
        .advertisement(instanceName: "handoff-0123456789ab", txtRecord: [3, 0x76, 0x3d, 0x32]),
        .announce(port: 52123, instanceName: "handoff-0123456789ab", txtRecord: [3, 0x76, 0x3d, 0x32]),
        .goodbye,
    ])
    func roundTrip(_ message: PeerMessage) throws {
        #expect(try Self.decode(message.frame) == message)
    }

    @Test("each message travels in the frame kind of the protocol")
    func kinds() {
        #expect(PeerMessage.hello(Fixtures.hello()).frame.kind == .hello)
        #expect(PeerMessage.fetch(Fixtures.request).frame.kind == .fetch)
        #expect(PeerMessage.activity(Self.activityWithoutUserInfo()).frame.kind == .activity)
        #expect(PeerMessage.userInfo([:]).frame.kind == .userInfo)
        #expect(PeerMessage.error(code: 4608, message: "x").frame.kind == .error)
    }

    @Test("a userInfo message with every property-list type round-trips exactly")
    func everyTypeUserInfo() throws {
        guard case .userInfo(let back) = try Self.decode(PeerMessage.userInfo(Fixtures.everyTypeUserInfo).frame) else {
            Issue.record("not a userInfo message")
            return
        }
        expectIdentical(back, Fixtures.everyTypeUserInfo)
    }

    @Test("an activity frame never carries userInfo")
    func activityFrameLeavesUserInfoOut() throws {
        let frame = PeerMessage.activity(Fixtures.fullActivity()).frame
        let fields = try PropertyListBinaryCoding.decodeUserInfo(frame.payload)
        #expect(fields["userInfo"] == nil)
        #expect(try Self.decode(frame) == .activity(Self.activityWithoutUserInfo()))
    }

    @Test("the hello payload names the protocol")
    func helloPayload() throws {
        let fields = try PropertyListBinaryCoding.decodeUserInfo(PeerMessage.hello(Fixtures.hello()).frame.payload)
        #expect(fields["protocol"] == .string("handoff"))
        #expect(fields["versions"] == .array([.integer(2)]))
        #expect(fields["advertisementPush"] == nil, "said only when true: an old peer sees the hello it knows")
    }

    @Test("a source says it pushes its advertisement only to a watcher whose hello says it too (an old watcher is answered as before)",
          arguments: [true, false])
    func pushAnswered(watcherPushes: Bool) throws {
        var source = SourceSessionStateMachine(hello: PeerHello(agentID: "s", name: "Desktop", multiplexing: true, pushesAdvertisements: true))
        let hello = PeerHello(agentID: "w", name: "Laptop", pushesAdvertisements: watcherPushes)
        guard case .send(let frames) = source.received(PeerMessage.hello(hello).frame), case .hello(let answer)? = try frames.first.map(Self.decode) else {
            Issue.record("no hello answered")
            return
        }
        #expect(answer.pushesAdvertisements == watcherPushes)
    }

    @Test("version negotiation picks the highest common version")
    func negotiation() {
        #expect(Fixtures.hello([1, 2, 3]).negotiatedVersion(with: Fixtures.hello([2, 3, 4])) == 3)
        #expect(Fixtures.hello([1]).negotiatedVersion(with: Fixtures.hello([1])) == 1)
        #expect(Fixtures.hello([1]).negotiatedVersion(with: Fixtures.hello([2])) == nil)
        #expect(PeerHello.supportedVersions == [2])
    }

    static let validHello: UserInfo = [
        "protocol": .string("handoff"), "versions": .array([.integer(1)]), "agentID": .string("a"), "name": .string("n"),
    ]

    static func replacing(_ fields: UserInfo, _ key: String, with value: PropertyListValue?) -> UserInfo {
        var copy = fields
        copy[key] = value
        return copy
    }

    @Test("malformed payloads are refused as FrameError.malformed of that kind", arguments: [
        (FrameKind.hello, [0xFF] as [UInt8], "garbage bytes"),
        (.hello, [], "empty payload"),
        (.fetch, PropertyListBinaryCoding.encode(.array([])), "an array, not a dictionary"),
        (.error, PropertyListBinaryCoding.encode(.string("x")), "a string, not a dictionary"),
        (.userInfo, PropertyListBinaryCoding.encode(.integer(1)), "an integer, not a dictionary"),
        (.userInfo, PropertyListBinaryCoding.encode([:]) + [0x00], "trailing bytes"),
        (.hello, frame(.hello, replacing(validHello, "protocol", with: .string("http"))).payload, "wrong protocol name"),
        (.hello, frame(.hello, replacing(validHello, "protocol", with: nil)).payload, "no protocol name"),
        (.hello, frame(.hello, replacing(validHello, "versions", with: .array([]))).payload, "no versions"),
        (.hello, frame(.hello, replacing(validHello, "versions", with: .array([.integer(0)]))).payload, "version 0"),
        (.hello, frame(.hello, replacing(validHello, "versions", with: .array([.integer(65_536)]))).payload, "version too large"),
        (.hello, frame(.hello, replacing(validHello, "versions", with: .array([.string("1")]))).payload, "version as a string"),
        (.hello, frame(.hello, replacing(validHello, "versions", with: .integer(1))).payload, "versions not an array"),
        (.hello, frame(.hello, replacing(validHello, "agentID", with: nil)).payload, "no agentID"),
        (.hello, frame(.hello, replacing(validHello, "name", with: .integer(3))).payload, "name not a string"),
        (.fetch, frame(.fetch, ["activityID": .uuid(Fixtures.activityID)]).payload, "no continuationID"),
        (.fetch, frame(.fetch, ["activityID": .string("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"), "continuationID": .uuid(Fixtures.continuationID)]).payload,
         "activityID as a string"),
        (.activity, frame(.activity, ["id": .uuid(Fixtures.activityID), "activityType": .string("not reverse dns")]).payload, "invalid activityType"),
        (.activity, frame(.activity, ["id": .uuid(Fixtures.activityID)]).payload, "missing activityType"),
        (.activity, frame(.activity, ["activityType": .string("com.a.b")]).payload, "missing id"),
        (.error, frame(.error, ["code": .integer(4608)]).payload, "no message"),
        (.error, frame(.error, ["code": .string("4608"), "message": .string("m")]).payload, "code as a string"),
    ] as [(FrameKind, [UInt8], String)])
    func malformed(_ kind: FrameKind, _ payload: [UInt8], _ what: String) {
        let error = #expect(throws: FrameError.self, "\(what)") { try Self.decode(Frame(kind: kind, payload: payload)) }
        guard case .malformed(let errorKind, let reason)? = error else {
            Issue.record("\(what): expected .malformed, got \(String(describing: error))")
            return
        }
        #expect(errorKind == kind)
        #expect(!reason.isEmpty)
    }

    @Test("a hello from another protocol says so")
    func foreignHello() {
        let error = #expect(throws: FrameError.self) {
            try Self.decode(Self.frame(.hello, Self.replacing(Self.validHello, "protocol", with: .string("http"))))
        }
        #expect(error == .malformed(kind: .hello, reason: "not a handoff hello"))
    }

    @Test("control frames and unknown kinds are not peer messages", arguments: [FrameKind.controlRequest, .controlResponse, FrameKind(rawValue: 0x42)])
    func notPeerMessages(_ kind: FrameKind) {
        let error = #expect(throws: FrameError.self) { try Self.decode(Self.frame(kind, [:])) }
        #expect(error == .unexpected(kind: kind, expecting: "a peer message"))
    }

    @Test("an error code too large for Int is clamped, not a crash")
    func hugeErrorCode() throws {
        let message = try Self.decode(Self.frame(.error, ["code": .integer(.max), "message": .string("m")]))
        #expect(message == .error(code: Int(clamping: Int64.max), message: "m"))
    }

    @Test("unknown fields from a newer peer are ignored")
    func unknownFieldsIgnored() throws {
        var fields = Self.validHello
        fields["capabilities"] = .array([.string("streams")])
        #expect(try Self.decode(Self.frame(.hello, fields)) == .hello(PeerHello(versions: [1], agentID: "a", name: "n")))
    }

    @Test("ping and pong are tiny frames of their own kinds, and a missing sequence is malformed")
    func pingPong() throws {
        #expect(PeerMessage.ping(sequence: 7).frame.kind == .ping)
        #expect(PeerMessage.pong(sequence: 7).frame.kind == .pong)
        #expect(PeerMessage.ping(sequence: 7).frame.bytes.count <= 32)
        #expect(throws: FrameError.malformed(kind: .ping, reason: "missing seq")) { try Self.decode(Self.frame(.ping, [:])) }
        #expect(throws: FrameError.malformed(kind: .pong, reason: "missing seq")) { try Self.decode(Self.frame(.pong, ["seq": .string("1")])) }
    }

    @Test("an advertisement needs an instance name a DNS-SD label can hold and a TXT record")
    func advertisementFields() {
        let txt: UserInfo = ["txtRecord": .data(Data([1, 0x61]))]
        #expect(throws: FrameError.malformed(kind: .advertisement, reason: "instanceName must be 1 to 63 bytes")) {
            try Self.decode(Self.frame(.advertisement, txt.merging(["instanceName": .string(String(repeating: "x", count: 64))]) { $1 }))
        }
        #expect(throws: FrameError.malformed(kind: .advertisement, reason: "instanceName must be 1 to 63 bytes")) {
            try Self.decode(Self.frame(.advertisement, txt))
        }
        #expect(throws: FrameError.malformed(kind: .advertisement, reason: "missing txtRecord")) {
            try Self.decode(Self.frame(.advertisement, ["instanceName": .string("h1"), "txtRecord": .data(Data())]))
        }
        #expect(PeerMessage.subscribe.frame.kind == .subscribe)
    }

    @Test("an announce carries a port of 1 to 65535 beside the advertisement's fields")
    func announceFields() {
        let fields: UserInfo = ["instanceName": .string("h1"), "txtRecord": .data(Data([1, 0x61]))]
        for port: Int64 in [0, 65536, -1] {
            #expect(throws: FrameError.malformed(kind: .announce, reason: "port must be 1 to 65535")) {
                try Self.decode(Self.frame(.announce, fields.merging(["port": .integer(port)]) { $1 }))
            }
        }
        #expect(throws: FrameError.malformed(kind: .announce, reason: "port must be 1 to 65535")) { try Self.decode(Self.frame(.announce, fields)) }
        #expect(throws: FrameError.malformed(kind: .announce, reason: "missing txtRecord")) {
            try Self.decode(Self.frame(.announce, ["instanceName": .string("h1"), "port": .integer(7000)]))
        }
        #expect(PeerMessage.announce(port: 7000, instanceName: "h1", txtRecord: [1]).frame.kind == .announce)
    }
}
