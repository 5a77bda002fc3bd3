import HandoffCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The activities local apps have published, held until resigned or expired. Pure state: the
/// agent owns one and advertises ``current(at:)`` with ``sequence``.
public struct ActivityStore: Sendable {
    /// The app that published an activity, and its control connection.
    public struct Owner: Sendable, Hashable {
        public var identity: AppIdentity
        public var connectionID: UUID

        public init(identity: AppIdentity, connectionID: UUID) {
            self.identity = identity
            self.connectionID = connectionID
        }
    }

    private var activities: [UUID: Activity] = [:]
    private var owners: [UUID: Owner] = [:]
    /// Publication order, oldest first; the newest offered one is current.
    private var order: [UUID] = []
    /// Bumped on every change of the set, so peers can tell advertisements apart.
    public private(set) var sequence: UInt64 = 0

    public init() {}

    /// Makes an activity current (replacing one with the same ID), published by `owner` (nil:
    /// not by an app, e.g. the CLI). An activity held for another owner is not replaced
    /// (``mayChange(_:by:)``): returns false and changes nothing.
    @discardableResult
    public mutating func publish(_ activity: Activity, owner: Owner? = nil) -> Bool {
        guard mayChange(activity.id, by: owner?.connectionID) else { return false }
        activities[activity.id] = activity
        owners[activity.id] = owner
        order.removeAll { $0 == activity.id }
        order.append(activity.id)
        sequence += 1
        return true
    }

    /// Whether the control connection `connectionID` (nil: a connection without a registered
    /// app, such as the CLI's) may replace or resign activity `id`: an app's activity only over
    /// the app's own connection, an activity published without an app only without one. True
    /// when no such activity is held.
    public func mayChange(_ id: UUID, by connectionID: UUID?) -> Bool {
        guard activities[id] != nil else { return true }
        return owners[id]?.connectionID == connectionID
    }

    /// Stops offering an activity. Returns it, or nil if no activity has that ID.
    @discardableResult
    public mutating func resign(id: UUID) -> Activity? {
        guard let removed = activities.removeValue(forKey: id) else { return nil }
        owners.removeValue(forKey: id)
        order.removeAll { $0 == id }
        sequence += 1
        return removed
    }

    /// The activity with this ID, if held.
    public func activity(id: UUID) -> Activity? { activities[id] }

    /// The app that published an activity.
    public func owner(of id: UUID) -> Owner? { owners[id] }

    /// Replaces a held activity's contents (after its app saved it), keeping its place and owner.
    /// Returns false when the activity is no longer held.
    @discardableResult
    public mutating func update(_ activity: Activity) -> Bool {
        guard activities[activity.id] != nil else { return false }
        activities[activity.id] = activity
        sequence += 1
        return true
    }

    /// Resigns every activity published over a control connection (its app went away).
    public mutating func resignAll(ownedBy connectionID: UUID) -> [Activity] {
        let ids = owners.filter { $0.value.connectionID == connectionID }.map(\.key)
        return ids.compactMap { resign(id: $0) }
    }

    /// Every held activity, oldest first.
    public var all: [Activity] { order.compactMap { activities[$0] } }

    /// The most recently published activity that has not expired at `now`, if it is eligible for
    /// handoff; never a clipboard item, which is advertised beside it (``clipboardItem(at:)``).
    /// As on Apple's platforms, when the newest activity is not eligible nothing is current: an
    /// older eligible one is not advertised in its place.
    public func current(at now: Date) -> Activity? {
        let newest = order.reversed().lazy.compactMap { activities[$0] }
            .first { !$0.isExpired(at: now) && !$0.activityType.isClipboard }
        return newest.flatMap { $0.isOffered(at: now) ? $0 : nil }
    }

    /// The clipboard item (`handoff copy`) still offered at `now`.
    public func clipboardItem(at now: Date) -> Activity? {
        order.reversed().lazy.compactMap { activities[$0] }.first { $0.isOffered(at: now) && $0.activityType.isClipboard }
    }

    /// Drops expired activities; returns them.
    public mutating func removeExpired(at now: Date) -> [Activity] {
        let expired = all.filter { $0.isExpired(at: now) }
        for activity in expired { resign(id: activity.id) }
        return expired
    }

    /// The earliest expiration date after `now`, to schedule the next check.
    public func nextExpiration(after now: Date) -> Date? {
        activities.values.compactMap(\.expirationDate).filter { $0 > now }.min()
    }
}
