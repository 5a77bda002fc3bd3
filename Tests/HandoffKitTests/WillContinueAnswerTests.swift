import Foundation
import HandoffAgent
import HandoffKit
import Testing

/// `willContinueUserActivity(withType:)`'s return value reaches the agent (issue 20, item 4): the
/// `continuing` event says whether the app tells the person itself, which keeps the agent's own
/// "Continuing…" notification away (NotificationPlanTests). And a restoration handler called
/// after `continue` returned still restores (Apple: the handler may be kept and called later).
@Suite("HandoffKit: willContinue's answer and late restoration", .timeLimit(.minutes(1)))
struct WillContinueAnswerTests {
    static let notes = ContinuationLifecycleTests.notes

    /// An app that answers `willContinue` with `notifies`, and keeps its restoration handler to
    /// call it after `continue` returned.
    final class Delegate: HandoffApplicationDelegate, UserActivityRestoring, @unchecked Sendable {
        let notifies: Bool
        let log: CallLog
        private let lock = NSLock()
        private var kept: RestorationHandler?

        init(notifies: Bool, log: CallLog) {
            self.notifies = notifies
            self.log = log
        }

        func willContinueUserActivity(withType activityType: String) async -> Bool { notifies }

        func `continue`(_ userActivity: UserActivity, restorationHandler: @escaping RestorationHandler) async -> Bool {
            lock.withLock { kept = restorationHandler }
            log.add("continue returned")
            return true
        }

        /// Calls the kept handler, as an app does once it loaded the content.
        func restoreLate() {
            lock.withLock { kept }?([self])
        }

        func restoreUserActivityState(_ activity: UserActivity) async {
            log.add("restore:\(activity.title ?? "")")
        }

        func didUpdate(_ userActivity: UserActivity) async { log.add("didUpdate") }
    }

    /// Continues one activity from "src" into an app on "dst" answering `notifies`; returns the
    /// `continuing` event and the continuing app's delegate, after `body` ran.
    func continuing(notifies: Bool, _ body: @Sendable (Delegate) async throws -> Void = { _ in }) async throws -> AgentEvent.Kind? {
        let source = try await AgentHarness.start(name: "src")
        let destination = try await AgentHarness.start(name: "dst")
        let log = CallLog()
        let manifest = AppManifest(bundleID: "com.example.notes", teamID: "TEAM1", activityTypes: [Self.notes])
        let appS = HandoffApplication(manifest: manifest, socketPath: source.socketPath, delegate: RecordingAppDelegate("S", log: log))
        let delegate = Delegate(notifies: notifies, log: log)
        let appC = HandoffApplication(manifest: manifest, socketPath: destination.socketPath, delegate: delegate)
        let subscription = destination.agent.events.subscribe()
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await source.run() }
            group.addTask { try await destination.run() }
            for app in [appS, appC] { group.addTask { try await app.run() } }
            for app in [appS, appC] { try await app.waitUntilConnected() }
            let activity = UserActivity(activityType: Self.notes.rawValue, application: appS)
            activity.title = "Groceries"
            try await activity.becomeCurrent()
            await source.introduce(to: destination)
            #expect(try await destination.agent.continueActivity(id: activity.identifier).get().by == "app")
            var event: AgentEvent.Kind?
            for await next in subscription.events {
                if case .continuing(let id, _, _) = next.kind, id == activity.identifier { event = next.kind; break }
            }
            try await body(delegate)
            group.cancelAll()
            return event
        }
    }

    @Test("an app that answers true tells the person itself: continuing has appNotifies")
    func appNotifies() async throws {
        guard case .continuing(_, let peer, let appNotifies)? = try await continuing(notifies: true) else { Issue.record("no continuing event"); return }
        #expect(peer == "src")
        #expect(appNotifies)
    }

    @Test("an app that answers false leaves it to the agent")
    func agentNotifies() async throws {
        guard case .continuing(_, _, let appNotifies)? = try await continuing(notifies: false) else { Issue.record("no continuing event"); return }
        #expect(!appNotifies)
    }

    @Test("a restoration handler called after continue returned (and after didUpdate) still restores its objects")
    func lateRestore() async throws {
        _ = try await continuing(notifies: false) { delegate in
            let own = { delegate.log.all.filter { !$0.hasPrefix("S:") } }
            for _ in 0..<200 where !own().contains("didUpdate") { try await Task.sleep(for: .milliseconds(10)) }
            #expect(own() == ["continue returned", "didUpdate"], "nothing restored yet")
            delegate.restoreLate()
            for _ in 0..<200 where own().count < 3 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(own() == ["continue returned", "didUpdate", "restore:Groceries"])
        }
    }
}
