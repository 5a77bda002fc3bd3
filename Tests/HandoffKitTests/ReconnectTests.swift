import Foundation
import HandoffAgent
import HandoffKit
import Synchronization
import Testing

@testable import HandoffKit

/// HandoffKit after an agent restart: the app connects again, registers again and makes its
/// current activities current again, with the same IDs; the calls made while the agent was away
/// are applied then. A real agent in this process, stopped and started again on the same socket.
@Suite("HandoffKit: reconnecting after an agent restart", .timeLimit(.minutes(1)))
struct ReconnectTests {
    /// Counts the launches: the delegate hears nothing of the restart.
    final class LaunchCountingDelegate: HandoffApplicationDelegate {
        let launches = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
        func `continue`(_ userActivity: UserActivity, restorationHandler: @escaping RestorationHandler) async -> Bool { false }
        func didFinishLaunching(options: LaunchOptions) async -> Bool {
            launches.add(1, ordering: .relaxed)
            return true
        }
        func didFailToContinueUserActivity(withType activityType: String, error: HandoffError) async { failures.add(1, ordering: .relaxed) }
    }

    static let type = "com.example.notes.edit"
    static let manifest = AppManifest(bundleID: "com.example.notes", teamID: "TEAM1", activityTypes: [ActivityType(rawValue: type)!])

    /// Waits (at most about 5 s) until `condition` holds.
    static func eventually(_ condition: () async -> Bool) async throws {
        for _ in 0..<500 where !(await condition()) { try await Task.sleep(for: .milliseconds(10)) }
    }

    @Test("after a restart the app's activities are current again with their IDs; calls made meanwhile are applied")
    func republishesAfterRestart() async throws {
        let first = try await AgentHarness.start(name: "solo")
        let socket = first.socketPath
        let state = (socket as NSString).deletingLastPathComponent + "/state"
        let firstRun = Task { try await first.run() }
        let delegate = LaunchCountingDelegate()
        let app = HandoffApplication(manifest: Self.manifest, socketPath: socket, delegate: delegate)
        let appRun = Task { try await app.run() }
        try await app.waitUntilConnected()

        func activity(_ title: String) -> UserActivity {
            let activity = UserActivity(activityType: Self.type, application: app)
            activity.title = title
            activity.userInfo = ["title": .string(title)]
            return activity
        }
        let resigned = activity("resigned while away"), kept = activity("kept")
        try await resigned.becomeCurrent()
        try await kept.becomeCurrent()
        #expect(await first.agent.status().current == kept.identifier)

        firstRun.cancel()
        _ = await firstRun.result
        // Made while the agent is away (or while the app is noticing it): none throws.
        try await resigned.resignCurrent()
        let later = activity("made current while away")
        try await later.becomeCurrent()
        let deleted = Task { try await app.deleteAllSavedUserActivities() }  // needs an answer: waits for the agent

        let second = try await AgentHarness.start(name: "solo") {
            $0.socketPath = socket
            $0.stateDirectory = state
        }
        let secondRun = Task { try await second.run() }
        try await Self.eventually { await second.agent.status().activities.count == 2 }
        let status = await second.agent.status()
        #expect(status.activities.map(\.id) == [kept.identifier, later.identifier], "same IDs, in the same order, without the resigned one")
        #expect(status.current == later.identifier)
        #expect(status.apps.map(\.identity.bundleID) == ["com.example.notes"], "registered again")
        #expect(await second.agent.lookUp(id: kept.identifier)?.userInfo["title"] == .string("kept"))
        try await deleted.value
        #expect(delegate.launches.load(ordering: .relaxed) == 1, "no second launch")
        #expect(delegate.failures.load(ordering: .relaxed) == 0)

        // Resigning now goes to the new agent.
        try await kept.resignCurrent()
        #expect(await second.agent.lookUp(id: kept.identifier) == nil)

        // run() ends when asked to, even while reconnecting.
        secondRun.cancel()
        _ = await secondRun.result
        try await Task.sleep(for: .milliseconds(100))
        appRun.cancel()
        _ = try await appRun.value
    }

    @Test("a request that needs the agent's answer fails with 4609 when the agent does not come back in time; run() still ends")
    func answerWaitIsLimited() async throws {
        let agent = try await AgentHarness.start(name: "solo")
        let agentRun = Task { try await agent.run() }
        let app = HandoffApplication(manifest: Self.manifest, socketPath: agent.socketPath, delegate: LaunchCountingDelegate())
        await app.limitReconnectWait(to: .milliseconds(200))
        let appRun = Task { try await app.run() }
        try await app.waitUntilConnected()
        agentRun.cancel()
        _ = await agentRun.result
        try await Self.eventually { await app.reconnection.isReconnecting }
        do {
            try await app.deleteAllSavedUserActivities()
            Issue.record("deleteAllSavedUserActivities succeeded without an agent")
        } catch {
            #expect(error.code == .userActivityConnectionUnavailable)
            #expect(error.message.contains("did not come back within"), "\(error.message)")
        }
        appRun.cancel()
        _ = try await appRun.value
    }

    @Test("the wait before each attempt doubles from 50 ms to at most 2 s, and starts again after a reconnect")
    func backoff() {
        var backoff = ReconnectBackoff()
        let waits = (0..<8).map { _ in backoff.next() }
        #expect(waits == [.milliseconds(50), .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800),
                          .milliseconds(1600), .seconds(2), .seconds(2)])
        backoff.reset()
        #expect(backoff.next() == .milliseconds(50))
    }
}
