import HandoffCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The activities local apps have published, held until resigned or expired. Pure state: the
/// agent owns one and advertises ``current(at:)`` with ``sequence``.
public struct ActivityStore: Sendable {
    private var activities: [UUID: Activity] = [:]
    /// Publication order, oldest first; the newest offered one is current.
    private var order: [UUID] = []
    /// Bumped on every change of the set, so peers can tell advertisements apart.
    public private(set) var sequence: UInt64 = 0

    public init() {}

    /// Makes an activity current (replacing one with the same ID).
    public mutating func publish(_ activity: Activity) {
        activities[activity.id] = activity
        order.removeAll { $0 == activity.id }
        order.append(activity.id)
        sequence += 1
    }

    /// Stops offering an activity. Returns it, or nil if no activity has that ID.
    @discardableResult
    public mutating func resign(id: UUID) -> Activity? {
        guard let removed = activities.removeValue(forKey: id) else { return nil }
        order.removeAll { $0 == id }
        sequence += 1
        return removed
    }

    /// The activity with this ID, if held.
    public func activity(id: UUID) -> Activity? { activities[id] }

    /// Every held activity, oldest first.
    public var all: [Activity] { order.compactMap { activities[$0] } }

    /// The most recently published activity that is still offered at `now`.
    public func current(at now: Date) -> Activity? {
        order.reversed().lazy.compactMap { activities[$0] }.first { $0.isOffered(at: now) }
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
