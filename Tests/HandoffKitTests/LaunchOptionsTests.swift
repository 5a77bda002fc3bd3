import Foundation
import HandoffAgent
import HandoffConfiguration
import HandoffKit
import Testing

/// An app the agent starts for a continuation learns why (its launch options), and refusing the
/// launch refuses the continuation with a clear error. The agent's launch command only marks that
/// it ran; the test then starts the app in this process, as the launched process would.
@Suite("HandoffKit launch options", .timeLimit(.minutes(1)))
struct LaunchOptionsTests {
    static let notes = ActivityType(rawValue: "com.example.notes.edit")!
    static let manifest = AppManifest(bundleID: "com.example.notes", teamID: "TEAM1", activityTypes: [notes])

    /// Publishes on a source agent, continues on a destination agent whose only way to the
    /// notes app is launching it, and starts the app with `delegate` once the launch ran.
    func continueIntoLaunchedApp(_ delegate: RestoringAppDelegate) async throws -> Result<ContinueResult, HandoffError> {
        let source = try await AgentHarness.start(name: "src")
        let destination = try await AgentHarness.start(name: "dst")
        let marker = try temporaryStateDirectory() + "/launched"
        _ = await destination.agent.reload(destination.agent.configuration,
                                           launchable: [LaunchableApp(manifest: Self.manifest, launch: ["/bin/sh", "-c", "touch \(marker)"])])
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await source.run() }
            group.addTask { try await destination.run() }
            let appS = HandoffApplication(manifest: Self.manifest, socketPath: source.socketPath, delegate: RecordingAppDelegate("S", log: CallLog()))
            var result: Result<ContinueResult, HandoffError>!
            try await whileRunning(appS) {
                let activity = UserActivity(activityType: Self.notes.rawValue, application: appS)
                activity.title = "Groceries"
                try await activity.becomeCurrent()
                await source.introduce(to: destination)
                let continuing = Task { await destination.agent.continueActivity(id: activity.identifier) }
                for _ in 0..<500 where !FileManager.default.fileExists(atPath: marker) { try await Task.sleep(for: .milliseconds(10)) }
                let launched = HandoffApplication(manifest: Self.manifest, socketPath: destination.socketPath, delegate: delegate,
                                                  restorationStatePath: marker + ".state")
                try await whileRunning(launched) {
                    result = await continuing.value
                    try await waitFor("C:didFinishLaunching", in: delegate.log)
                }
            }
            group.cancelAll()
            return result
        }
    }

    @Test("the launched app's options carry the activity type and the continuation it was started for")
    func launchedForAContinuation() async throws {
        let delegate = RestoringAppDelegate("C", log: CallLog(), saves: false)
        let result = try await continueIntoLaunchedApp(delegate).get()
        #expect(result.by == "app")
        let options = try #require(delegate.launchOptions)
        #expect(options.userActivityType == Self.notes.rawValue)
        #expect(options.continuationID == result.continuationID)
        #expect(!options.opensResource)
        #expect(delegate.log.all.prefix(4) == ["C:willFinishLaunching", "C:didFinishLaunching", "C:willContinue", "C:continue:Groceries"])
    }

    @Test("a launch hook returning false refuses the continuation: 4608, and no continue reaches the app")
    func declinedLaunch() async throws {
        let delegate = RestoringAppDelegate("C", log: CallLog(), saves: false, acceptsLaunch: false)
        let result = try await continueIntoLaunchedApp(delegate)
        guard case .failure(let error) = result else {
            Issue.record("continued into an app that declined its launch: \(result)")
            return
        }
        #expect(error.code == .userActivityHandoffFailed)
        #expect(error.message.contains("declined to continue"), "\(error)")
        #expect(delegate.log.all == ["C:willFinishLaunching", "C:didFinishLaunching", "C:shouldSave"] || delegate.log.all == ["C:willFinishLaunching", "C:didFinishLaunching"],
                "\(delegate.log.all)")
    }

    @Test("an app started for `handoff open` gets the URL in its options; declining the launch refuses the open with 4608",
          arguments: [true, false])
    func launchedForAnOpen(accepts: Bool) async throws {
        let sender = try await AgentHarness.start(name: "src")
        let receiver = try await AgentHarness.start(name: "dst")
        let marker = try temporaryStateDirectory() + "/launched"
        _ = await receiver.agent.reload(receiver.agent.configuration,
                                        launchable: [LaunchableApp(manifest: Self.manifest, launch: ["/bin/sh", "-c", "touch \(marker)"])])
        let delegate = RestoringAppDelegate("C", log: CallLog(), saves: false, acceptsLaunch: accepts)
        let url = URL(string: "https://example.com/list?id=7")!
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await sender.run() }
            group.addTask { try await receiver.run() }
            await receiver.introduce(to: sender)
            let opening = Task {
                await sender.agent.open(OpenRequest(bundleID: Self.manifest.identity.bundleID, url: url), file: [], onPeer: "dst")
            }
            for _ in 0..<500 where !FileManager.default.fileExists(atPath: marker) { try await Task.sleep(for: .milliseconds(10)) }
            let launched = HandoffApplication(manifest: Self.manifest, socketPath: receiver.socketPath, delegate: delegate,
                                              restorationStatePath: marker + ".state")
            let result = try await { () async throws -> Result<OpenResult, HandoffError> in
                var result: Result<OpenResult, HandoffError>!
                try await whileRunning(launched) { result = await opening.value }
                return result
            }()
            group.cancelAll()
            let options = try #require(delegate.launchOptions)
            #expect(options.opensResource)
            #expect(options.url == url)
            if accepts {
                #expect(try result.get().handled)
                #expect(delegate.log.all.contains("C:open:\(url.absoluteString)"))
            } else {
                guard case .failure(let error) = result else { Issue.record("opened in an app that declined its launch"); return }
                #expect(error.code == .userActivityHandoffFailed)
                #expect(error.message.contains("declined to continue"), "\(error)")
                #expect(!delegate.log.all.contains { $0.hasPrefix("C:open") })
            }
        }
    }
}
