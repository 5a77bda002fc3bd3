import Foundation
import HandoffCore
import Testing

@testable import HandoffAgent

@Suite("NotificationPlan: which notification is posted, replaced, closed or kept")
struct NotificationPlanTests {
    typealias Directive = NotificationPlan.Directive
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    let a = UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!
    let b = UUID(uuidString: "00000000-0000-0000-0000-00000000000B")!
    let c = UUID(uuidString: "00000000-0000-0000-0000-00000000000C")!

    func offered(_ id: UUID, peer: String = "laptop", title: String? = "Shopping list", type: String = "com.example.notes.edit") -> AgentEvent {
        AgentEvent(.activityOffered(OfferedActivity(id: id, peer: peer, activityType: type, title: title, offeredAt: t0)), at: t0)
    }

    func withdrawn(_ id: UUID, peer: String = "laptop") -> AgentEvent { AgentEvent(.activityWithdrawn(id: id, peer: peer), at: t0) }

    func notify(_ id: UUID, replacing: UInt32? = nil, title: String = "Shopping list", peer: String = "laptop", action: Bool = true) -> Directive {
        .notify(replacing: replacing, summary: "Continue \(title)", body: "from \(peer)", withAction: action, activity: id)
    }

    /// A plan with a server that supports actions, `a` from the laptop shown as notification 7.
    func showingA() -> NotificationPlan {
        var plan = NotificationPlan(enabled: true, paused: false)
        #expect(plan.serverAppeared(capabilities: ["actions", "body"]).isEmpty)
        #expect(plan.receive(offered(a)) == [notify(a)])
        #expect(plan.posted(activity: a, serverID: 7).isEmpty)
        return plan
    }

    @Test func anOfferPostsOneNotificationWithTheDefaultAction() {
        var plan = showingA()
        // The same activity again (its title changed, say) posts nothing more.
        #expect(plan.receive(offered(a)).isEmpty)
        #expect(plan.shownServerIDs == [7])
    }

    @Test func withoutATitleTheActivityTypeIsShown() {
        var plan = NotificationPlan(enabled: true, paused: false)
        _ = plan.serverAppeared(capabilities: ["actions"])
        #expect(plan.receive(offered(a, title: nil)) == [notify(a, title: "com.example.notes.edit")])
        #expect(plan.receive(offered(b, peer: "phone", title: "")) == [notify(b, title: "com.example.notes.edit", peer: "phone")])
    }

    @Test func withoutActionsCapabilityTheNotificationHasNoAction() {
        var plan = NotificationPlan(enabled: true, paused: false)
        _ = plan.serverAppeared(capabilities: ["body"])
        #expect(plan.receive(offered(a)) == [notify(a, action: false)])
    }

    @Test func aNewerActivityFromTheSameDeviceReplacesItsNotification() {
        var plan = showingA()
        // As OfferWatch reports it: the old one withdrawn, then the new one offered.
        #expect(plan.receive(withdrawn(a)).isEmpty)
        #expect(plan.hasUnsettledWithdrawals)
        #expect(plan.receive(offered(b, title: "Recipes")) == [notify(b, replacing: 7, title: "Recipes")])
        #expect(!plan.hasUnsettledWithdrawals)
        #expect(plan.settle().isEmpty)
        // The server keeps the ID of a replaced notification.
        #expect(plan.posted(activity: b, serverID: 7).isEmpty)
        #expect(plan.shownServerIDs == [7])
    }

    func continuing(_ id: UUID, appNotifies: Bool = false) -> AgentEvent {
        AgentEvent(.continuing(id: id, peer: "laptop", appNotifies: appNotifies), at: t0)
    }

    @Test func whileContinuingTheNotificationSaysSoWithoutAnAction() {
        var plan = showingA()
        let saysContinuing = Directive.notify(replacing: 7, summary: "Continuing Shopping list…", body: "from laptop", withAction: false, activity: a)
        #expect(plan.receive(continuing(a)) == [saysContinuing])
        #expect(plan.posted(activity: a, serverID: 7).isEmpty)
        #expect(plan.receive(continuing(a)).isEmpty, "once")
        #expect(plan.receive(AgentEvent(.continued(id: a, peer: "laptop", by: "app"), at: t0)) == [.close(7)])
    }

    @Test func anAppThatTellsThePersonItselfGetsNoContinuingNotification() {
        var plan = showingA()
        #expect(plan.receive(continuing(a, appNotifies: true)).isEmpty)
        #expect(plan.receive(continuing(b)).isEmpty, "an activity without a notification")
        #expect(plan.receive(AgentEvent(.continued(id: a, peer: "laptop", by: "app"), at: t0)) == [.close(7)])
    }

    @Test func aFailedContinuationGetsItsContinueNotificationBack() {
        var plan = showingA()
        _ = plan.receive(continuing(a))
        #expect(plan.receive(AgentEvent(.continueFailed(id: a, error: .handoffFailed("no")), at: t0)) == [notify(a, replacing: 7)])
        #expect(plan.posted(activity: a, serverID: 7).isEmpty)
        #expect(plan.actionInvoked(serverID: 7, key: NotificationPlan.defaultAction) == [.continueActivity(a)])
    }

    @Test func anotherDevicesActivityStacksBesideIt() {
        var plan = showingA()
        #expect(plan.receive(offered(b, peer: "phone")) == [notify(b, peer: "phone")])
        #expect(plan.posted(activity: b, serverID: 8).isEmpty)
        #expect(plan.shownServerIDs == [7, 8])
    }

    @Test func aWithdrawnActivitysNotificationClosesWhenNothingReplacesIt() {
        var plan = showingA()
        #expect(plan.receive(withdrawn(a)).isEmpty)
        #expect(plan.settle() == [.close(7)])
        #expect(plan.settle().isEmpty)
        #expect(plan.shownServerIDs.isEmpty)
    }

    @Test func aContinuedActivitysNotificationCloses() {
        var plan = showingA()
        #expect(plan.receive(AgentEvent(.continued(id: a, peer: "laptop", by: "handler"), at: t0)) == [.close(7)])
        // Continued from the command line, then its device withdraws it: nothing more to close.
        #expect(plan.receive(withdrawn(a)).isEmpty)
        #expect(plan.settle().isEmpty)
    }

    @Test func aClickContinuesTheActivityOnce() {
        var plan = showingA()
        #expect(plan.actionInvoked(serverID: 7, key: "default") == [.continueActivity(a)])
        #expect(plan.actionInvoked(serverID: 7, key: "default").isEmpty)
        // Other keys and other servers' IDs do nothing.
        #expect(plan.actionInvoked(serverID: 9, key: "default").isEmpty)
        #expect(plan.receive(AgentEvent(.continued(id: a, peer: "laptop", by: "handler"), at: t0)) == [.close(7)])
    }

    @Test func aFailedContinuationMayBeClickedAgain() {
        var plan = showingA()
        #expect(plan.actionInvoked(serverID: 7, key: "other").isEmpty)
        #expect(plan.actionInvoked(serverID: 7, key: "default") == [.continueActivity(a)])
        #expect(plan.receive(AgentEvent(.continueFailed(id: a, error: .handoffFailed("gone")), at: t0)).isEmpty)
        #expect(plan.actionInvoked(serverID: 7, key: "default") == [.continueActivity(a)])
    }

    @Test func aClickOnAWithdrawnActivityDoesNothing() {
        var plan = showingA()
        _ = plan.receive(withdrawn(a))
        #expect(plan.actionInvoked(serverID: 7, key: "default").isEmpty)
    }

    @Test func aDismissedNotificationIsForgottenNotClosedAgain() {
        var plan = showingA()
        plan.closed(serverID: 7, reason: 2)
        #expect(plan.receive(withdrawn(a)).isEmpty)
        #expect(plan.settle().isEmpty)
        #expect(plan.receive(AgentEvent(.continued(id: a, peer: "laptop", by: "handler"), at: t0)).isEmpty)
        // The device's next activity gets a new notification, replacing nothing.
        #expect(plan.receive(offered(b)) == [notify(b)])
    }

    @Test func pausingClosesAllAndPostsNoneUntilResumed() {
        var plan = showingA()
        _ = plan.receive(offered(b, peer: "phone"))
        _ = plan.posted(activity: b, serverID: 8)
        #expect(plan.receive(AgentEvent(.paused, at: t0)) == [.close(7), .close(8)])
        #expect(plan.receive(offered(c, peer: "tablet")).isEmpty)
        #expect(plan.receive(withdrawn(b, peer: "phone")).isEmpty)
        // Resumed: the offers still current get their notifications again.
        #expect(plan.receive(AgentEvent(.resumed, at: t0)) == [notify(a), notify(c, peer: "tablet")])
    }

    @Test func startingPausedPostsNothing() {
        var plan = NotificationPlan(enabled: true, paused: true)
        #expect(plan.serverAppeared(capabilities: ["actions"]).isEmpty)
        #expect(plan.receive(offered(a)).isEmpty)
    }

    @Test func turnedOffNeverPosts() {
        var plan = NotificationPlan(enabled: false, paused: false)
        #expect(plan.serverAppeared(capabilities: ["actions"]).isEmpty)
        #expect(plan.receive(offered(a)).isEmpty)
        #expect(plan.receive(AgentEvent(.resumed, at: t0)).isEmpty)
    }

    @Test func aReloadTurnsThemOffAndOnAgain() {
        var plan = showingA()
        // Off (notifications: false and a SIGHUP): what is shown closes, nothing new is posted.
        #expect(plan.setEnabled(false) == [.close(7)])
        #expect(plan.receive(offered(b, peer: "phone")).isEmpty)
        #expect(plan.setEnabled(false).isEmpty)
        // On again: the offers still current are shown.
        #expect(plan.setEnabled(true) == [notify(a), notify(b, peer: "phone")])
        #expect(plan.setEnabled(true).isEmpty)
    }

    @Test func aServerThatAppearsLaterShowsTheCurrentOffers() {
        var plan = NotificationPlan(enabled: true, paused: false)
        #expect(plan.receive(offered(a)).isEmpty)
        #expect(plan.receive(offered(b, peer: "phone")).isEmpty)
        _ = plan.receive(withdrawn(b, peer: "phone"))
        #expect(plan.serverAppeared(capabilities: ["actions"]) == [notify(a)])
    }

    @Test func aLostServerForgetsWhatItShowed() {
        var plan = showingA()
        plan.serverLost()
        #expect(plan.shownServerIDs.isEmpty)
        #expect(plan.receive(offered(b)).isEmpty)
        // The next server shows the device's newest activity, replacing nothing.
        #expect(plan.serverAppeared(capabilities: ["actions"]) == [notify(b)])
    }

    @Test func aNotificationWithdrawnWhileBeingPostedIsClosedWhenTheServerAnswers() {
        var plan = NotificationPlan(enabled: true, paused: false)
        _ = plan.serverAppeared(capabilities: ["actions"])
        _ = plan.receive(offered(a))
        _ = plan.receive(AgentEvent(.continued(id: a, peer: "laptop", by: "handler"), at: t0))
        #expect(plan.posted(activity: a, serverID: 11) == [.close(11)])
    }
}

@Suite("NotificationPlan: files received")
struct NotificationPlanFilesTests {
    @Test func filesReceivedPostANoticeWithoutActionThatStays() {
        var plan = NotificationPlan(enabled: true, paused: false)
        _ = plan.serverAppeared(capabilities: ["actions"])
        let received = ReceivedFiles(id: UUID(), peer: "h1", files: 3, bytes: 3 << 20, directory: "/d")
        let event = AgentEvent(.filesReceived(received), at: Date(timeIntervalSince1970: 0))
        #expect(plan.receive(event) == [.notify(replacing: nil, summary: "3 files from h1, 3.0 MiB", body: "in /d", withAction: false, activity: received.id)])
        // Its answer does not close it (an activity's notification that is gone would be).
        #expect(plan.posted(activity: received.id, serverID: 9).isEmpty)
        _ = plan.setEnabled(false)
        #expect(plan.receive(event).isEmpty, "nothing while notifications are off")
    }
}
