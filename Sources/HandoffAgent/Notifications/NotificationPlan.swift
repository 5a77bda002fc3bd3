import HandoffCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Which desktop notifications the agent shows, replaces and closes (issue 17, "Desktop
/// notifications"). Pure, without clock or I/O: the agent's events and the notification server's
/// answers go in, directives come out, and ``NotificationService`` performs them.
///
/// - A reachable paired device offering a new current activity gets one notification,
///   "Continue TITLE" from PEER, whose default action (a click) continues the activity here.
/// - A newer activity from the same device replaces that notification (`replaces_id`).
/// - While an activity is being continued here, its notification becomes "Continuing TITLE…",
///   without an action, unless the app continuing it tells the person itself
///   (`willContinueUserActivity(withType:)` returned true, `continuing`'s `appNotifies`). A
///   failed continuation gets its "Continue" notification back.
/// - An activity withdrawn or continued closes its notification; a click continues it once.
/// - A notification the user dismissed is forgotten, not closed again.
/// - While paused, or with `notifications: false`, none is shown.
///
/// A device's newer activity arrives as `activityWithdrawn` of the old one, then
/// `activityOffered` of the new one. So that the new one replaces the old one's notification in
/// place, a withdrawal only marks the notification for closing; ``settle()`` closes what is still
/// marked. The shell calls it once no event has followed for a moment.
public struct NotificationPlan: Sendable, Equatable {
    /// The server's number for a notification (`Notify`'s answer, `replaces_id`).
    public typealias ServerID = UInt32

    /// The action key that a click on the notification invokes (the specification's default action).
    public static let defaultAction = "default"

    /// What the shell does.
    public enum Directive: Sendable, Equatable {
        /// `Notify`: post a notification, in place of `replacing` when set; with the default
        /// action (labelled "Continue") when `withAction`. Answer with ``posted(activity:serverID:)``.
        case notify(replacing: ServerID?, summary: String, body: String, withAction: Bool, activity: UUID)
        /// `CloseNotification`.
        case close(ServerID)
        /// Continue the activity here (the user clicked its notification).
        case continueActivity(UUID)
    }

    /// The notification shown for one device's newest activity.
    struct Shown: Sendable, Equatable {
        var activity: UUID
        /// Nil while `Notify` has not answered.
        var serverID: ServerID?
        /// The activity was withdrawn; the notification closes at ``settle()`` unless a newer
        /// activity of the device replaces it first.
        var withdrawn = false
        /// It says "Continuing…" (the activity is being continued here).
        var continuing = false
    }

    /// Whether notifications are on (config `notifications`, changed by a reload).
    public private(set) var enabled: Bool
    /// Whether handoff is paused (`handoff pause`).
    public private(set) var paused: Bool
    /// The server's capabilities while one is there; nil without a server.
    public private(set) var capabilities: Set<String>?
    /// Each reachable device's newest activity on offer, by device name.
    private var offers: [String: OfferedActivity] = [:]
    /// The notifications shown, by device name.
    private(set) var shown: [String: Shown] = [:]
    /// Activities whose notification was clicked and whose continuation has not ended.
    private var clicked: Set<UUID> = []
    /// Notices without an action (a send's files arrived) whose `Notify` has not answered.
    private var notices: Set<UUID> = []

    public init(enabled: Bool, paused: Bool) {
        self.enabled = enabled
        self.paused = paused
    }

    /// Whether notifications may be posted now.
    private var posting: Bool { enabled && !paused && capabilities != nil }

    /// Whether a withdrawal waits for ``settle()``.
    public var hasUnsettledWithdrawals: Bool { shown.values.contains { $0.withdrawn } }

    /// The server's notification IDs of what is shown (to close on shutdown).
    public var shownServerIDs: [ServerID] { shown.values.compactMap(\.serverID).sorted() }

    // MARK: The server

    /// A notification server answered `GetCapabilities`: the current activities get their
    /// notifications.
    public mutating func serverAppeared(capabilities: [String]) -> [Directive] {
        self.capabilities = Set(capabilities)
        return postCurrentOffers()
    }

    /// The server or the bus went away: what it showed is gone with it.
    public mutating func serverLost() {
        capabilities = nil
        shown.removeAll()
    }

    /// `Notify` answered for `activity`'s notification.
    public mutating func posted(activity: UUID, serverID: ServerID) -> [Directive] {
        if notices.remove(activity) != nil { return [] }
        guard let peer = shown.first(where: { $0.value.activity == activity })?.key else {
            // Withdrawn and closed while the server was answering.
            return [.close(serverID)]
        }
        shown[peer]?.serverID = serverID
        return []
    }

    /// `Notify` failed for `activity`: nothing is shown for it.
    public mutating func postFailed(activity: UUID) {
        notices.remove(activity)
        if let peer = shown.first(where: { $0.value.activity == activity })?.key { shown.removeValue(forKey: peer) }
    }

    /// `ActionInvoked`: a click (``defaultAction``) continues the activity, once.
    public mutating func actionInvoked(serverID: ServerID, key: String) -> [Directive] {
        guard key == Self.defaultAction, let entry = shown.values.first(where: { $0.serverID == serverID }),
            !entry.withdrawn, clicked.insert(entry.activity).inserted
        else { return [] }
        return [.continueActivity(entry.activity)]
    }

    /// `NotificationClosed`: expired, dismissed by the user or closed by the agent. The
    /// notification is forgotten; nothing closes it again.
    public mutating func closed(serverID: ServerID, reason: UInt32) {
        if let peer = shown.first(where: { $0.value.serverID == serverID })?.key { shown.removeValue(forKey: peer) }
    }

    /// A reload turned notifications on (the current offers are shown) or off (what is shown closes).
    public mutating func setEnabled(_ on: Bool) -> [Directive] {
        guard on != enabled else { return [] }
        enabled = on
        return on ? postCurrentOffers() : close { _ in true }
    }

    // MARK: The agent's events

    /// An event of the agent's (``AgentEventHub``).
    public mutating func receive(_ event: AgentEvent) -> [Directive] {
        switch event.kind {
        case .activityOffered(let offered):
            offers[offered.peer] = offered
            return post(offered)
        case .activityWithdrawn(let id, let peer):
            if offers[peer]?.id == id { offers.removeValue(forKey: peer) }
            clicked.remove(id)
            if shown[peer]?.activity == id { shown[peer]?.withdrawn = true }
            return []
        case .continued(let id, _, _):
            clicked.remove(id)
            for (peer, activity) in offers where activity.id == id { offers.removeValue(forKey: peer) }
            return close { $0.activity == id }
        case .continuing(let id, let peer, let appNotifies):
            guard !appNotifies, posting, let offered = offers[peer], offered.id == id,
                  let entry = shown[peer], entry.activity == id, !entry.withdrawn, !entry.continuing
            else { return [] }
            shown[peer]?.continuing = true
            return [.notify(replacing: entry.serverID, summary: "Continuing \(Self.title(of: offered))…", body: "from \(peer)",
                            withAction: false, activity: id)]
        case .continueFailed(let id, _):
            // The notification stays (if the server kept it), or comes back from "Continuing…",
            // and a click may try again.
            clicked.remove(id)
            guard let peer = shown.first(where: { $0.value.activity == id && $0.value.continuing })?.key,
                  let offered = offers[peer] else { return [] }
            // Marked withdrawn so that post() replaces it rather than keeping it.
            shown[peer]?.withdrawn = true
            return post(offered)
        case .paused:
            paused = true
            return close { _ in true }
        case .resumed:
            paused = false
            return postCurrentOffers()
        case .peerReachable, .peerUnreachable:
            // An unreachable device's activities are withdrawn first.
            return []
        case .filesReceived(let received):
            // A notice without an action, shown until the user or the server closes it.
            guard posting else { return [] }
            notices.insert(received.id)
            return [.notify(replacing: nil, summary: received.summary, body: "in \(received.directory)", withAction: false, activity: received.id)]
        }
    }

    /// Closes the notifications of withdrawn activities that no newer activity replaced.
    public mutating func settle() -> [Directive] {
        close { $0.withdrawn }
    }

    // MARK: Inside

    private mutating func post(_ offered: OfferedActivity) -> [Directive] {
        guard posting, let capabilities else { return [] }
        let previous = shown[offered.peer]
        if let previous, previous.activity == offered.id, !previous.withdrawn { return [] }
        shown[offered.peer] = Shown(activity: offered.id, serverID: previous?.serverID)
        return [.notify(replacing: previous?.serverID, summary: "Continue \(Self.title(of: offered))", body: "from \(offered.peer)",
                        withAction: capabilities.contains("actions"), activity: offered.id)]
    }

    /// What a notification calls an activity: its title, else its type.
    private static func title(of offered: OfferedActivity) -> String {
        offered.title.flatMap { $0.isEmpty ? nil : $0 } ?? offered.activityType
    }

    private mutating func postCurrentOffers() -> [Directive] {
        offers.keys.sorted().flatMap { post(offers[$0]!) }
    }

    private mutating func close(where matches: (Shown) -> Bool) -> [Directive] {
        var directives: [Directive] = []
        for peer in shown.keys.sorted() where matches(shown[peer]!) {
            if let serverID = shown.removeValue(forKey: peer)?.serverID { directives.append(.close(serverID)) }
        }
        return directives
    }
}
