import Foundation
import HandoffAgent
import HandoffConfiguration
import HandoffKit
import Testing

/// Links that last (``HandoffLink``), continued by a real agent in this process into real apps
/// linked against HandoffKit: long after the original activity is gone, on another agent.
@Suite("HandoffKit continuation from a link", .timeLimit(.minutes(1)))
struct LinkContinuationTests {
    static let notes = ActivityType(rawValue: "com.example.notes.edit")!

    /// Agent "dst" with app C (`handles` says what its continue returns), its config set by `configure`.
    func withApp(handles: Bool = true, configure: @escaping (inout AgentConfiguration) -> Void = { _ in },
                 _ body: @Sendable (AgentHarness, CallLog, RecordingAppDelegate) async throws -> Void) async throws {
        let destination = try await AgentHarness.start(name: "dst", configure: configure)
        let log = CallLog()
        let c = RecordingAppDelegate("C", log: log, handles: handles)
        let appC = HandoffApplication(manifest: AppManifest(bundleID: "com.example.notes", teamID: "TEAM1", activityTypes: [Self.notes]),
                                      socketPath: destination.socketPath, delegate: c)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await destination.run() }
            group.addTask { try await appC.run() }
            try await appC.waitUntilConnected()
            try await body(destination, log, c)
            group.cancelAll()
        }
    }

    @Test("a link made on one agent continues on another into the app declaring the type, after the activity is gone")
    func linkReachesApp() async throws {
        let source = try await AgentHarness.start(name: "src")
        let held = Activity(activityType: Self.notes, title: "Groceries", userInfo: ["text": .string("milk")],
                            targetContentIdentifier: "notes/7", persistentIdentifier: "note-7")
        let id = try await source.agent.publish(held)
        let link = try await source.agent.link(to: .held(String(id.uuidString.prefix(8)))).get()
        #expect(!link.link.contains("milk"))
        try await source.agent.resign(id: id)
        try await withApp { destination, log, c in
            let result = try await destination.agent.continueLink(link.link).get()
            #expect(result.by == "app")
            #expect(result.app == "com.example.notes")
            #expect(result.peer == Agent.linkPeerName)
            for _ in 0..<200 where !log.all.contains("C:restore") { try await Task.sleep(for: .milliseconds(10)) }
            #expect(log.all.prefix(3) == ["C:willContinue:com.example.notes.edit", "C:continue:Groceries", "C:restore"])
            let received = try #require(c.received.activity)
            #expect(received.persistentIdentifier == "note-7")
            #expect(received.targetContentIdentifier == "notes/7")
            #expect(received.userInfo.isEmpty)
        }
    }

    @Test("--persistent-id links a held, else a saved, activity by its persistent identifier; an unknown one is a clear error")
    func linkByPersistentIdentifier() async throws {
        let source = try await AgentHarness.start(name: "src")
        _ = try await source.agent.publish(Activity(activityType: Self.notes, persistentIdentifier: "n1", webpageURL: URL(string: "https://example.com/n/1")))
        let link = try await source.agent.link(to: .saved(persistentIdentifier: "n1")).get()
        #expect(try HandoffLink(parsing: link.link).webpageURL?.absoluteString == "https://example.com/n/1")
        let missing = await source.agent.link(to: .saved(persistentIdentifier: "gone"))
        #expect(throws: HandoffError.self) { try missing.get() }
        // Resigned, but saved for search: the link comes from the saved activity.
        let searchable = Activity(activityType: Self.notes, title: "Budget", targetContentIdentifier: "docs/budget",
                                  persistentIdentifier: "budget", isEligibleForSearch: true)
        try await source.agent.resign(id: try await source.agent.publish(searchable))
        await source.agent.saveForSearch(searchable, bundleID: "com.example.notes")
        let saved = try HandoffLink(parsing: try await source.agent.link(to: .saved(persistentIdentifier: "budget")).get().link)
        #expect(saved == (try HandoffLink(activityType: Self.notes, persistentIdentifier: "budget", targetContentIdentifier: "docs/budget", title: "Budget")))
        let noContent = try await source.agent.publish(Activity(activityType: Self.notes, title: "only a title"))
        let refused = await source.agent.link(to: .held(noContent.uuidString))
        #expect((try? refused.get()) == nil)
    }

    @Test("when the app cannot find the content, the link's webpageURL opens through urlOpener")
    func declinedFallsBackToURL() async throws {
        let opened = FileManager.default.temporaryDirectory.appendingPathComponent("link-url-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: opened) }
        try await withApp(handles: false, configure: { $0.urlOpener = ["sh", "-c", "echo \"$1\" > '\(opened)'", "sh"] }) { destination, log, _ in
            let link = try HandoffLink(activityType: Self.notes, persistentIdentifier: "deleted-note", webpageURL: URL(string: "https://example.com/notes/7"))
            let result = try await destination.agent.continueLink(link.text).get()
            #expect(result.by == "urlOpener")
            #expect((try? String(contentsOfFile: opened, encoding: .utf8)) == "https://example.com/notes/7\n")
            #expect(log.all.contains("C:continue:"))
        }
    }

    @Test("without a webpageURL, a link no app takes fails with 4608 saying why and what to do; it never runs a handler")
    func clearErrorWithoutURL() async throws {
        let ran = FileManager.default.temporaryDirectory.appendingPathComponent("link-handler-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: ran) }
        let handler = AgentConfiguration.Handler(activityTypes: [Self.notes.rawValue, "com.other.view"], command: ["sh", "-c", "cat > '\(ran)'"])
        try await withApp(handles: false, configure: { $0.handlers = [handler] }) { destination, log, _ in
            let declined = await destination.agent.continueLink(try HandoffLink(activityType: Self.notes, persistentIdentifier: "gone").text)
            guard case .failure(let error) = declined else { Issue.record("continued: \(declined)"); return }
            #expect(error.code == .userActivityHandoffFailed)
            #expect(error.message.contains("the app com.example.notes could not find the content"), "\(error.message)")
            #expect(error.message.contains("no webpageURL"))
            for _ in 0..<200 where !log.all.contains("C:didFail:4608") { try await Task.sleep(for: .milliseconds(10)) }
            #expect(log.all.contains("C:didFail:4608"))

            let other = await destination.agent.continueLink(try HandoffLink(activityType: ActivityType(rawValue: "com.other.view")!, persistentIdentifier: "x").text)
            guard case .failure(let error) = other else { Issue.record("continued: \(other)"); return }
            #expect(error.message.contains("no app on dst declares com.other.view"), "\(error.message)")
            #expect(error.message.contains("Install or start the app"))
            #expect(!FileManager.default.fileExists(atPath: ran), "a link must never run a configured handler")

            let bad = await destination.agent.continueLink("x-handoff:continue?v=1&type=com.other.view&userInfo=x")
            guard case .failure(let error) = bad else { Issue.record("continued: \(bad)"); return }
            #expect(error.message.contains("unknown item \"userInfo\""))
        }
    }
}
