import Foundation
import HandoffAgent
import HandoffKit
import Testing

/// NSUserActivity's saved-activity class methods: an app's `isEligibleForSearch` activities are
/// saved by its agent, and the app deletes its own, never another's.
@Suite("HandoffKit: saved activities", .timeLimit(.minutes(1)))
struct SavedActivitiesTests {
    final class QuietDelegate: HandoffApplicationDelegate {
        func `continue`(_ userActivity: UserActivity, restorationHandler: @escaping RestorationHandler) async -> Bool { false }
    }

    @Test("deleteSavedUserActivities(withPersistentIdentifiers:) and deleteAllSavedUserActivities() delete only the app's own")
    func appDeletesItsOwn() async throws {
        let host = try await AgentHarness.start(name: "solo")
        let manifest = AppManifest(bundleID: "com.example.notes", teamID: "TEAM1", activityTypes: [ActivityType(rawValue: "com.example.notes.edit")!])
        let app = HandoffApplication(manifest: manifest, socketPath: host.socketPath, delegate: QuietDelegate())
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await host.run() }
            group.addTask { try await app.run() }
            try await app.waitUntilConnected()
            func titles() async throws -> [String] {
                try await host.agent.search("note", devices: .local, limit: 20).get().results.compactMap(\.title).sorted()
            }
            for (n, id) in ["n1", "n2", "n3"].enumerated() {
                let activity = UserActivity(activityType: "com.example.notes.edit", application: app)
                activity.title = "Note \(n + 1)"
                activity.isEligibleForSearch = true
                activity.persistentIdentifier = id
                try await activity.becomeCurrent()
            }
            // One saved without an app (handoff publish), with the same identifier as the app's n1.
            var other = Activity(activityType: ActivityType(rawValue: "com.example.notes.edit")!, title: "Note from the CLI", persistentIdentifier: "n1")
            other.isEligibleForSearch = true
            await host.agent.saveForSearch(other, bundleID: nil)
            #expect(try await titles() == ["Note 1", "Note 2", "Note 3", "Note from the CLI"])

            try await app.deleteSavedUserActivities(withPersistentIdentifiers: ["n1"])
            #expect(try await titles() == ["Note 2", "Note 3", "Note from the CLI"])
            // (UserActivity's class methods call these on the running application: a global, which
            // other suites running in parallel would race for.)
            try await app.deleteAllSavedUserActivities()
            #expect(try await titles() == ["Note from the CLI"], "the app deletes only what it saved")
            group.cancelAll()
        }
    }
}
