import Foundation
import HandoffAgent
import HandoffKit
import Testing

/// The whole lifecycle between two real agents in this process (TCP on loopback, Unix control
/// sockets) with real apps linked against HandoffKit.
@Suite("HandoffKit continuation lifecycle", .timeLimit(.minutes(1)))
struct ContinuationLifecycleTests {
    static let notes = ActivityType(rawValue: "com.example.notes.edit")!

    /// Source agent "src" with app S (team TEAM1); continuing agent "dst" with app C (TEAM1) and a
    /// competitor X (TEAM2) declaring the same type.
    func withTwoHosts(sourceFetchTimeout: Double = 2, saveDelay: Duration = .zero,
                      _ body: @Sendable (AgentHarness, AgentHarness, HandoffApplication, CallLog, RecordingAppDelegate) async throws -> Void) async throws {
        let source = try await AgentHarness.start(name: "src") { $0.limits.fetchTimeout = .milliseconds(Int64(sourceFetchTimeout * 1000)) }
        let destination = try await AgentHarness.start(name: "dst") { $0.limits.fetchTimeout = .seconds(3) }
        let log = CallLog()
        let s = RecordingAppDelegate("S", log: log, saveDelay: saveDelay)
        let appS = HandoffApplication(manifest: AppManifest(bundleID: "com.example.notes", teamID: "TEAM1", activityTypes: [Self.notes]),
                                      socketPath: source.socketPath, delegate: s)
        let appC = HandoffApplication(manifest: AppManifest(bundleID: "com.example.notes", teamID: "TEAM1", activityTypes: [Self.notes]),
                                      socketPath: destination.socketPath, delegate: RecordingAppDelegate("C", log: log))
        let appX = HandoffApplication(manifest: AppManifest(bundleID: "com.rival.notes", teamID: "TEAM2", activityTypes: [Self.notes]),
                                      socketPath: destination.socketPath, delegate: RecordingAppDelegate("X", log: log))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await source.run() }
            group.addTask { try await destination.run() }
            for app in [appS, appC, appX] { group.addTask { try await app.run() } }
            for app in [appS, appC, appX] { try await app.waitUntilConnected() }
            try await body(source, destination, appS, log, s)
            group.cancelAll()
        }
    }

    @Test("callbacks arrive in Apple's order on both hosts, and only the same team's app gets them")
    func wholeLifecycle() async throws {
        try await withTwoHosts { source, destination, appS, log, s in
            let activity = UserActivity(activityType: Self.notes.rawValue, application: appS)
            activity.title = "Groceries"
            activity.userInfo = ["text": .string("milk"), "cursor": .integer(4)]
            activity.needsSave = true
            activity.delegate = s
            try await activity.becomeCurrent()
            await source.introduce(to: destination)

            let result = await destination.agent.continueActivity(id: activity.identifier)
            let value = try result.get()
            #expect(value.by == "app")
            #expect(value.app == "com.example.notes")
            // wasContinued travels back to the source host, and the restoration handler's calls
            // follow `continue`'s return: give them a moment.
            for _ in 0..<200 where !(log.all.contains("S:wasContinued") && log.all.contains("C:didUpdate")) {
                try await Task.sleep(for: .milliseconds(10))
            }
            // Each host's callbacks in Apple's order. Across hosts only causality orders them: the
            // source saves before the continuing app gets the activity; its wasContinued travels
            // back on its own and may come before or after the continuing app's restore.
            let all = log.all
            #expect(all.filter { $0.hasPrefix("C:") } == ["C:willContinue:com.example.notes.edit", "C:continue:Groceries", "C:restore", "C:didUpdate"])
            #expect(all.filter { $0.hasPrefix("S:") } == ["S:willSave", "S:wasContinued"])
            #expect(all.firstIndex(of: "S:willSave")! < all.firstIndex(of: "C:continue:Groceries")!, "\(all)")
            #expect(!log.all.contains { $0.hasPrefix("X:") }, "another team's app must get nothing")
        }
    }

    @Test("the continuing app receives the saved userInfo")
    func savedStateArrives() async throws {
        try await withTwoHosts { source, destination, appS, log, s in
            let activity = UserActivity(activityType: Self.notes.rawValue, application: appS)
            activity.userInfo = ["text": .string("milk")]
            activity.needsSave = true
            activity.delegate = s
            try await activity.becomeCurrent()
            await source.introduce(to: destination)
            _ = try await destination.agent.continueActivity(id: activity.identifier).get()
            #expect(activity.needsSave == false)
        }
    }

    @Test("a willSave slower than the source's fetchTimeout fails with 4610 and didFail")
    func slowWillSave() async throws {
        try await withTwoHosts(sourceFetchTimeout: 0.3, saveDelay: .seconds(1)) { source, destination, appS, log, s in
            let activity = UserActivity(activityType: Self.notes.rawValue, application: appS)
            activity.needsSave = true
            activity.delegate = s
            try await activity.becomeCurrent()
            await source.introduce(to: destination)
            let result = await destination.agent.continueActivity(id: activity.identifier)
            guard case .failure(let error) = result else { Issue.record("expected a failure, got \(result)"); return }
            #expect(error.code == .userActivityRemoteApplicationTimedOut)
            // didFail reaches the app as an event; give it a moment.
            for _ in 0..<200 where !log.all.contains("C:didFail:4610") { try await Task.sleep(for: .milliseconds(10)) }
            #expect(log.all.contains("C:didFail:4610"))
            #expect(!log.all.contains { $0.hasPrefix("C:continue") })
        }
    }

    @Test("when the app declines, the webpageURL opens through urlOpener")
    func declinedFallsBackToURL() async throws {
        let opened = FileManager.default.temporaryDirectory.appendingPathComponent("url-\(UUID().uuidString.prefix(8))").path
        let source = try await AgentHarness.start(name: "src")
        let destination = try await AgentHarness.start(name: "dst") { $0.urlOpener = ["sh", "-c", "echo \"$1\" > '\(opened)'", "sh"] }
        let log = CallLog()
        let appS = HandoffApplication(manifest: AppManifest(bundleID: "com.example.notes", teamID: "TEAM1", activityTypes: [Self.notes]),
                                      socketPath: source.socketPath, delegate: RecordingAppDelegate("S", log: log))
        let appC = HandoffApplication(manifest: AppManifest(bundleID: "com.example.notes", teamID: "TEAM1", activityTypes: [Self.notes]),
                                      socketPath: destination.socketPath, delegate: RecordingAppDelegate("C", log: log, handles: false))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await source.run() }
            group.addTask { try await destination.run() }
            group.addTask { try await appS.run() }
            group.addTask { try await appC.run() }
            try await appS.waitUntilConnected()
            try await appC.waitUntilConnected()
            let activity = UserActivity(activityType: Self.notes.rawValue, application: appS)
            activity.webpageURL = URL(string: "https://example.com/notes/7")
            try await activity.becomeCurrent()
            await source.introduce(to: destination)
            let result = try await destination.agent.continueActivity(id: activity.identifier).get()
            #expect(result.by == "urlOpener")
            #expect((try? String(contentsOfFile: opened, encoding: .utf8)) == "https://example.com/notes/7\n")
            #expect(log.all.contains("C:continue:"))
            group.cancelAll()
        }
        try? FileManager.default.removeItem(atPath: opened)
    }

    @Test("an activity published without an app (CLI) goes to no app")
    func noTeamNoApp() async throws {
        try await withTwoHosts { source, destination, _, log, _ in
            let id = try await source.agent.publish(Activity(activityType: Self.notes, title: "from the CLI"))
            await source.introduce(to: destination)
            let result = await destination.agent.continueActivity(id: id)
            guard case .failure(let error) = result else { Issue.record("expected no handler"); return }
            #expect(error.code == .userActivityHandoffFailed)
            #expect(log.all.isEmpty)
        }
    }

    @Test("when the source app quits, its activities are resigned")
    func appQuitResigns() async throws {
        let source = try await AgentHarness.start(name: "src")
        let log = CallLog()
        let app = HandoffApplication(manifest: AppManifest(bundleID: "com.example.notes", teamID: "TEAM1", activityTypes: [Self.notes]),
                                     socketPath: source.socketPath, delegate: RecordingAppDelegate("S", log: log))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await source.run() }
            let appTask = Task { try await app.run() }
            try await app.waitUntilConnected()
            let activity = UserActivity(activityType: Self.notes.rawValue, application: app)
            try await activity.becomeCurrent()
            #expect(await source.agent.lookUp(id: activity.identifier) != nil)
            appTask.cancel()
            _ = await appTask.result
            for _ in 0..<200 where await source.agent.lookUp(id: activity.identifier) != nil { try await Task.sleep(for: .milliseconds(10)) }
            #expect(await source.agent.lookUp(id: activity.identifier) == nil)
            group.cancelAll()
        }
    }

    @Test("becomeCurrent without a running application says what to do")
    func noApplication() async {
        let activity = UserActivity(activityType: "com.example.notes.edit")
        await #expect(throws: HandoffError.self) { try await activity.becomeCurrent() }
    }
}
