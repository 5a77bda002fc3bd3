import Foundation
import HandoffAgent
import HandoffKit
import Testing

/// State preservation and restoration with a real agent in this process: saved when run() ends,
/// restored inside the next run() before any event, only with the delegate's consent.
@Suite("HandoffKit state preservation and restoration", .timeLimit(.minutes(1)))
struct StateRestorationTests {
    static let notes = ActivityType(rawValue: "com.example.notes.edit")!
    static let manifest = AppManifest(bundleID: "com.example.notes", teamID: "TEAM1", activityTypes: [notes])

    func withAgents(_ body: @Sendable (AgentHarness, AgentHarness) async throws -> Void) async throws {
        let source = try await AgentHarness.start(name: "src")
        let destination = try await AgentHarness.start(name: "dst")
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await source.run() }
            group.addTask { try await destination.run() }
            try await body(source, destination)
            group.cancelAll()
        }
    }

    @Test("state saved when run() ends is restored in the next run(), before the first continue")
    func saveOnQuitRestoreBeforeContinue() async throws {
        let path = try temporaryStateDirectory() + "/apps/com.example.notes/restoration.plist"
        try await withAgents { source, destination in
            let log = CallLog()
            let first = HandoffApplication(manifest: Self.manifest, socketPath: destination.socketPath,
                                           delegate: RestoringAppDelegate("C1", log: log), restorationStatePath: path)
            await first.registerStateRestoring(Draft("draft1", log: log, text: "milk"), identifierPath: ["window", "draft"])
            try await whileRunning(first) { try await waitFor("C1:didFinishLaunching", in: log) }
            #expect(log.all == ["C1:willFinishLaunching", "C1:didFinishLaunching", "C1:shouldSave", "C1:willEncode"])
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)

            // The source publishes; the second run starts and a continue is asked for at once.
            let s = RecordingAppDelegate("S", log: CallLog())
            let appS = HandoffApplication(manifest: Self.manifest, socketPath: source.socketPath, delegate: s)
            let draft = Draft("draft2", log: log)
            let second = HandoffApplication(manifest: Self.manifest, socketPath: destination.socketPath,
                                            delegate: RestoringAppDelegate("C2", log: log), restorationStatePath: path)
            await second.registerStateRestoring(draft, identifierPath: ["window", "draft"])
            try await whileRunning(appS) {
                let activity = UserActivity(activityType: Self.notes.rawValue, application: appS)
                activity.title = "Groceries"
                try await activity.becomeCurrent()
                await source.introduce(to: destination)
                try await whileRunning(second) {
                    let result = try await destination.agent.continueActivity(id: activity.identifier).get()
                    #expect(result.by == "app")
                    try await waitFor("C2:continue:Groceries", in: log)
                }
            }
            let c2 = log.all.filter { $0.hasPrefix("C2:") || $0.hasPrefix("draft2:") }
            #expect(Array(c2.prefix(7)) == ["C2:willFinishLaunching", "C2:shouldRestore", "draft2:decode:milk:typed", "C2:didDecode:C1",
                                            "C2:didFinishLaunching", "C2:willContinue", "C2:continue:Groceries"], "\(c2)")
            #expect(draft.text == "milk")
        }
    }

    @Test("shouldSave and shouldRestore veto; saveApplicationState() saves when asked")
    func vetoes() async throws {
        let path = try temporaryStateDirectory() + "/restoration.plist"
        try await withAgents { _, destination in
            let log = CallLog()
            let refusing = HandoffApplication(manifest: Self.manifest, socketPath: destination.socketPath,
                                              delegate: RestoringAppDelegate("A", log: log, saves: false), restorationStatePath: path)
            try await whileRunning(refusing) {
                let saved = try await refusing.saveApplicationState()
                #expect(saved == false)
            }
            #expect(!FileManager.default.fileExists(atPath: path), "shouldSave returned false: nothing is written")
            #expect(!log.all.contains("A:willEncode"))

            let saving = HandoffApplication(manifest: Self.manifest, socketPath: destination.socketPath,
                                            delegate: RestoringAppDelegate("B", log: log, restores: false), restorationStatePath: path)
            await saving.registerStateRestoring(Draft("draftB", log: log, text: "eggs"), identifierPath: ["draft"])
            try await whileRunning(saving) {
                let saved = try await saving.saveApplicationState()
                #expect(saved, "saved on request, while running")
                #expect(FileManager.default.fileExists(atPath: path))
            }

            let declining = HandoffApplication(manifest: Self.manifest, socketPath: destination.socketPath,
                                               delegate: RestoringAppDelegate("C", log: log, saves: false, restores: false), restorationStatePath: path)
            let draft = Draft("draftC", log: log)
            await declining.registerStateRestoring(draft, identifierPath: ["draft"])
            try await whileRunning(declining) { try await waitFor("C:didFinishLaunching", in: log) }
            #expect(log.all.filter { $0.hasPrefix("C:") || $0.hasPrefix("draftC:") }
                == ["C:willFinishLaunching", "C:shouldRestore", "C:didFinishLaunching", "C:shouldSave"])
            #expect(draft.text == "")
        }
    }

    @Test("a corrupt state file is moved aside and the app starts fresh")
    func corruptFile() async throws {
        let dir = try temporaryStateDirectory()
        let path = dir + "/restoration.plist"
        let garbage = Data("not a property list".utf8)
        try garbage.write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        try await withAgents { _, destination in
            let log = CallLog()
            let app = HandoffApplication(manifest: Self.manifest, socketPath: destination.socketPath,
                                         delegate: RestoringAppDelegate("A", log: log, saves: false), restorationStatePath: path)
            let draft = Draft("draft", log: log)
            await app.registerStateRestoring(draft, identifierPath: ["draft"])
            try await whileRunning(app) { try await waitFor("A:didFinishLaunching", in: log) }
            #expect(log.all == ["A:willFinishLaunching", "A:didFinishLaunching", "A:shouldSave"], "no restoration from a corrupt file")
            #expect(!FileManager.default.fileExists(atPath: path))
            let aside = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix("restoration.plist.unreadable-") }
            #expect(aside.count == 1)
            #expect(try Data(contentsOf: URL(fileURLWithPath: dir + "/" + aside[0])) == garbage, "moved aside, not deleted")
        }
    }
}
