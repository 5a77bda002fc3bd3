#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Exactly-once continuations: remembers, by the caller's idempotency key, which continuations
/// ran and what they gave, so that a retry after a lost reply gets the first answer instead of
/// running a handler a second time (Apple warns against repeating an action such as a payment).
///
/// A pure value: the shell passes the time. Keys are kept for `retention` after they finish, at
/// most `capacity` of them (the oldest go first). A continuation that failed before any handler
/// ran is forgotten at once, so a retry tries again.
public struct IdempotencyLedger<Value: Sendable, Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// What to do with a continuation request that carries a key.
    public enum Decision: Sendable {
        /// New key: run it, then call ``finish(_:value:handlerStarted:now:)``.
        case run
        /// The same key is running now: wait for its value.
        case wait
        /// The same key finished: answer with its value, run nothing.
        case replay(Value)
        /// The key was used for another activity: refuse.
        case conflict(activityID: UUID)
    }

    private enum State: Sendable {
        case running
        case finished(Value, at: Instant)
    }

    private struct Entry: Sendable {
        var activityID: UUID
        var state: State
    }

    /// The most keys kept.
    public let capacity: Int
    /// How long a finished key is kept.
    public let retention: Duration
    private var entries: [String: Entry] = [:]
    /// Keys in the order they were first seen, for eviction.
    private var order: [String] = []

    public init(capacity: Int = 4096, retention: Duration = .seconds(24 * 3600)) {
        self.capacity = max(1, capacity)
        self.retention = retention
    }

    /// How many keys are remembered now (running or finished).
    public var count: Int { entries.count }

    /// Looks a key up before running a continuation of `activityID`.
    public mutating func begin(_ key: String, activityID: UUID, now: Instant) -> Decision {
        expire(now: now)
        if let entry = entries[key] {
            guard entry.activityID == activityID else { return .conflict(activityID: entry.activityID) }
            switch entry.state {
            case .running: return .wait
            case .finished(let value, _): return .replay(value)
            }
        }
        entries[key] = Entry(activityID: activityID, state: .running)
        order.append(key)
        evict()
        return .run
    }

    /// Records how a continuation ended. When no handler started (the fetch failed, say), the key
    /// is forgotten so that a retry runs; otherwise its value is kept for replays.
    public mutating func finish(_ key: String, value: Value, handlerStarted: Bool, now: Instant) {
        guard let entry = entries[key] else { return }
        if handlerStarted {
            entries[key] = Entry(activityID: entry.activityID, state: .finished(value, at: now))
        } else {
            entries[key] = nil
            order.removeAll { $0 == key }
        }
    }

    private mutating func expire(now: Instant) {
        var dropped = false
        for (key, entry) in entries {
            if case .finished(_, let at) = entry.state, at.advanced(by: retention) <= now {
                entries[key] = nil
                dropped = true
            }
        }
        if dropped { order.removeAll { entries[$0] == nil } }
    }

    private mutating func evict() {
        var index = 0
        while entries.count > capacity, index < order.count {
            // Running keys stay: their callers are waiting.
            if case .finished? = entries[order[index]]?.state {
                entries[order[index]] = nil
                order.remove(at: index)
            } else {
                index += 1
            }
        }
    }
}
