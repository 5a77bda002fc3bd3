import Foundation
import HandoffCore
import NIOCore
import Testing

@testable import HandoffAgent

/// One control connection as the agent sees it, with the frames the agent writes to it.
struct TestLink {
    let link: ControlLink
    let sent: NIOAsyncChannelOutboundWriter<Frame>.TestSink

    init() {
        let (writer, sink) = NIOAsyncChannelOutboundWriter<Frame>.makeTestingWriter()
        link = ControlLink(outbound: writer)
        sent = sink
    }

    /// The next frame the agent sent on this connection, as JSON.
    func next() async throws -> JSONValue {
        var iterator = sent.makeAsyncIterator()
        let frame = try #require(await iterator.next())
        return try JSONValue(parsing: frame.payload)
    }
}

/// Same-user processes cannot take over each other's apps, activities or replies (review
/// finding 17): each is bound to the control connection that made it.
@Suite("App ownership on the control socket", .timeLimit(.minutes(1)))
struct AppOwnershipTests {
    static let notes = AppManifest(bundleID: "com.example.notes", teamID: "TEAM1", activityTypes: [ActivityType(rawValue: "com.example.notes.edit")!])
    static let evil = AppManifest(bundleID: "aaa.evil", teamID: "TEAM1", activityTypes: [ActivityType(rawValue: "com.example.notes.edit")!])

    func execute(_ command: String, _ body: [String: JSONValue] = [:], agent: Agent, on link: TestLink?) async -> Result<JSONValue, HandoffError> {
        var members = body
        members["command"] = .string(command)
        do throws(HandoffError) {
            return await ControlSession.execute(try ControlRequest(json: .object(members)), agent: agent, link: link?.link)
        } catch {
            return .failure(error)
        }
    }

    func register(_ manifest: AppManifest, agent: Agent, on link: TestLink) async -> Result<JSONValue, HandoffError> {
        await execute("registerApp", ["app": manifest.json], agent: agent, on: link)
    }

    @Test("a bundle ID registered on a live connection is refused to another until that one closes")
    func bundleIDRegisteredOnce() async throws {
        let agent = makeAgent()
        let (first, second) = (TestLink(), TestLink())
        _ = try await register(Self.notes, agent: agent, on: first).get()
        let refused = try #require(await register(Self.notes, agent: agent, on: second).error)
        #expect(refused.code.rawValue == 4608)
        #expect(refused.message.contains("com.example.notes is already registered by another running process"), "\(refused.message)")
        #expect(await second.link.manifest == nil)
        #expect(await agent.statusJSON()["apps"]?.arrayValue?.count == 1)
        // The same connection may register again (a retry); once it closes, another may.
        _ = try await register(Self.notes, agent: agent, on: first).get()
        await agent.controlConnectionClosed(first.link)
        _ = try await register(Self.notes, agent: agent, on: second).get()
    }

    @Test("a connection that registered one app cannot become another")
    func oneAppPerConnection() async throws {
        let agent = makeAgent()
        let link = TestLink()
        _ = try await register(Self.notes, agent: agent, on: link).get()
        let refused = try #require(await register(Self.evil, agent: agent, on: link).error)
        #expect(refused.message.contains("already the app com.example.notes"), "\(refused.message)")
        #expect(await link.link.manifest == Self.notes)
    }

    @Test("publish with the ID of another app's activity is refused, from another app and from the CLI")
    func publishCannotReplaceAnotherAppsActivity() async throws {
        let agent = makeAgent()
        let (owner, other, cli) = (TestLink(), TestLink(), TestLink())
        _ = try await register(Self.notes, agent: agent, on: owner).get()
        _ = try await register(Self.evil, agent: agent, on: other).get()
        let activity: JSONValue = .object(["activityType": .string("com.example.notes.edit"), "title": .string("Mine")])
        let id = try #require(try await execute("publish", ["activity": activity], agent: agent, on: owner).get()["id"]?.stringValue)
        let hijack: JSONValue = .object(["id": .string(id), "activityType": .string("com.example.notes.edit"), "title": .string("Stolen")])
        for link in [other, cli] {
            let refused = try #require(await execute("publish", ["activity": hijack], agent: agent, on: link).error)
            #expect(refused.message.contains("another app (another control connection) published it"), "\(refused.message)")
        }
        let held = try #require(UUID(uuidString: id))
        #expect(await agent.lookUp(id: held)?.title == "Mine")
        // Its own connection may update it.
        let update: JSONValue = .object(["id": .string(id), "activityType": .string("com.example.notes.edit"), "title": .string("Mine, v2")])
        _ = try await execute("publish", ["activity": update], agent: agent, on: owner).get()
        #expect(await agent.lookUp(id: held)?.title == "Mine, v2")
    }

    @Test("resign of another app's activity is refused; an activity the CLI published stays the CLI's")
    func resignOnlyByOwner() async throws {
        let agent = makeAgent()
        let (owner, other, cli) = (TestLink(), TestLink(), TestLink())
        _ = try await register(Self.notes, agent: agent, on: owner).get()
        _ = try await register(Self.evil, agent: agent, on: other).get()
        let activity: JSONValue = .object(["activityType": .string("com.example.notes.edit")])
        let id = try #require(try await execute("publish", ["activity": activity], agent: agent, on: owner).get()["id"]?.stringValue)
        for link in [other, cli] {
            let refused = try #require(await execute("resign", ["id": .string(id)], agent: agent, on: link).error)
            #expect(refused.message.contains("cannot resign activity"), "\(refused.message)")
        }
        #expect(await agent.lookUp(id: UUID(uuidString: id)!) != nil)
        _ = try await execute("resign", ["id": .string(id)], agent: agent, on: owner).get()
        #expect(await agent.lookUp(id: UUID(uuidString: id)!) == nil)

        // Published by the CLI (no app): another CLI connection may resign it, an app may not.
        let cliID = try #require(try await execute("publish", ["activity": activity], agent: agent, on: cli).get()["id"]?.stringValue)
        #expect(await execute("resign", ["id": .string(cliID)], agent: agent, on: other).error != nil)
        _ = try await execute("resign", ["id": .string(cliID)], agent: agent, on: TestLink()).get()
    }

    @Test("a reply is accepted only from the connection the event was sent to")
    func replyOnlyFromTheAskedConnection() async throws {
        let agent = makeAgent()
        let (asked, other) = (TestLink(), TestLink())
        _ = try await register(Self.notes, agent: agent, on: asked).get()
        _ = try await register(Self.evil, agent: agent, on: other).get()
        let answer = Task { await agent.ask(asked.link, .willSave(activityID: UUID()), timeout: .seconds(30)) }
        let event = try await asked.next()
        let replyID = try #require(event["replyID"]?.stringValue)
        let refused = try #require(await execute("reply", ["replyID": .string(replyID), "result": .object(["handled": .bool(false)])], agent: agent, on: other).error)
        #expect(refused.message.contains("answers an event sent to another connection"), "\(refused.message)")
        _ = try await execute("reply", ["replyID": .string(replyID), "result": .object(["handled": .bool(true)])], agent: agent, on: asked).get()
        #expect(await answer.value == AppReply(handled: true), "the genuine reply, not the forged one")
    }

    @Test("a question whose asker is cancelled (its connection closed) stops waiting at once, long before its timeout")
    func askEndsWhenCancelled() async throws {
        let agent = makeAgent()
        let asked = TestLink()
        _ = try await register(Self.notes, agent: agent, on: asked).get()
        let answer = Task { await agent.ask(asked.link, .willSave(activityID: UUID()), timeout: .seconds(3600)) }
        _ = try await asked.next()  // the event went out; no reply comes
        answer.cancel()
        #expect(await answer.value == nil)
    }

    @Test("the rules as a pure function")
    func refusalRules() {
        let (a, b) = (UUID(), UUID())
        #expect(AppOwnership.refusal(Self.notes, on: a, registered: [:]) == nil)
        #expect(AppOwnership.refusal(Self.notes, on: a, registered: [a: Self.notes]) == nil)
        #expect(AppOwnership.refusal(Self.notes, on: b, registered: [a: Self.notes]) != nil)
        #expect(AppOwnership.refusal(Self.evil, on: a, registered: [a: Self.notes]) != nil)
        #expect(AppOwnership.refusal(Self.evil, on: b, registered: [a: Self.notes]) == nil)
    }
}
