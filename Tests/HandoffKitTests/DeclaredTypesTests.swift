import Foundation
import HandoffAgent
import HandoffKit
import Testing

/// An app publishes only the activity types its manifest declares, as on Apple's platforms
/// (issue 20, item 4); the CLI, without a manifest, any type but the reserved ones.
@Suite("Publishing: an app only the types it declares", .timeLimit(.minutes(1)))
struct DeclaredTypesTests {
    @Test("an undeclared type is refused, naming the type, the app and what to add; NSUserActivityTypeBrowsingWeb needs no declaration")
    func undeclaredRefused() async throws {
        let host = try await AgentHarness.start(name: "h")
        let manifest = AppManifest(bundleID: "com.example.notes", teamID: "TEAM1", activityTypes: [ContinuationLifecycleTests.notes])
        let app = HandoffApplication(manifest: manifest, socketPath: host.socketPath, delegate: RecordingAppDelegate("A", log: CallLog()))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await host.run() }
            group.addTask { try await app.run() }
            try await app.waitUntilConnected()

            let undeclared = UserActivity(activityType: "com.example.notes.share", application: app)
            let error = try #require(await #expect(throws: HandoffError.self) { try await undeclared.becomeCurrent() })
            #expect(error.message.contains("com.example.notes.share"))
            #expect(error.message.contains("com.example.notes may not publish"))
            #expect(error.message.contains("declares only com.example.notes.edit"))
            #expect(error.message.contains("Add \"com.example.notes.share\" to activityTypes"))
            #expect(await host.agent.lookUp(id: undeclared.identifier) == nil)

            let declared = UserActivity(activityType: "com.example.notes.edit", application: app)
            try await declared.becomeCurrent()
            let web = UserActivity(activityType: "NSUserActivityTypeBrowsingWeb", application: app)
            web.webpageURL = URL(string: "https://example.com/")
            try await web.becomeCurrent()
            #expect(await host.agent.lookUp(id: web.identifier) != nil)

            // Without an app (the CLI), any type but the reserved clipboard type.
            _ = try await host.agent.publish(Activity(activityType: ActivityType(rawValue: "org.example.anything")!))
            await #expect(throws: HandoffError.self) { try await host.agent.publish(Activity(activityType: .clipboard)) }
            group.cancelAll()
        }
    }
}

@Suite("UserActivity(): the first declared type")
struct FirstDeclaredTypeTests {
    @Test("UserActivity() takes the first type the manifest declares; none, or no application, is a clear error")
    func firstDeclared() throws {
        let types = [ActivityType(rawValue: "com.example.notes.edit")!, ActivityType(rawValue: "com.example.notes.view")!]
        let app = HandoffApplication(manifest: AppManifest(bundleID: "com.example.notes", teamID: "TEAM1", activityTypes: types),
                                     socketPath: "/nonexistent", delegate: RecordingAppDelegate("A", log: CallLog()))
        #expect(try UserActivity(application: app).activityType == "com.example.notes.edit")

        let bare = HandoffApplication(manifest: AppManifest(bundleID: "com.example.bare", teamID: "TEAM1", activityTypes: []),
                                      socketPath: "/nonexistent", delegate: RecordingAppDelegate("B", log: CallLog()))
        let error = try #require(#expect(throws: HandoffError.self) { try UserActivity(application: bare) })
        #expect(error.message.contains("com.example.bare declares no activity type"))
    }
}
