import HandoffCore
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Hands the agent's events (``AgentEvent``) to everyone watching: `handoff watch` and apps on
/// the control socket, and the desktop notifications. Each subscriber has its own buffer of
/// ``bufferSize`` events; a subscriber that falls that far behind is dropped (its sequence ends
/// with ``AgentEventSubscription/overflowed`` set) rather than slowing the agent or skipping
/// events without saying so.
public final class AgentEventHub: Sendable {
    /// How many unread events a subscriber may have.
    public static let bufferSize = 4096

    private struct Subscriber {
        var continuation: AsyncStream<AgentEvent>.Continuation
        var overflowed: OverflowFlag
    }

    private let subscribers = Mutex<[UUID: Subscriber]>([:])

    public init() {}

    /// Starts a subscription: every event published from now on, in order.
    public func subscribe() -> AgentEventSubscription {
        let id = UUID.random()
        let (stream, continuation) = AsyncStream.makeStream(of: AgentEvent.self, bufferingPolicy: .bufferingOldest(Self.bufferSize))
        let flag = OverflowFlag()
        subscribers.withLock { $0[id] = Subscriber(continuation: continuation, overflowed: flag) }
        continuation.onTermination = { [weak self] _ in self?.remove(id) }
        return AgentEventSubscription(id: id, events: stream, flag: flag)
    }

    /// Ends a subscription: its sequence finishes.
    public func unsubscribe(_ id: UUID) {
        remove(id)?.continuation.finish()
    }

    /// How many subscribers there are now.
    public var count: Int { subscribers.withLock { $0.count } }

    /// Hands events to every subscriber.
    public func publish(_ events: [AgentEvent]) {
        guard !events.isEmpty else { return }
        let current = subscribers.withLock { Array($0) }
        for (id, subscriber) in current {
            for event in events {
                if case .dropped = subscriber.continuation.yield(event) {
                    subscriber.overflowed.set()
                    unsubscribe(id)
                    break
                }
            }
        }
    }

    @discardableResult
    private func remove(_ id: UUID) -> Subscriber? {
        subscribers.withLock { $0.removeValue(forKey: id) }
    }
}

/// One subscriber's events (``AgentEventHub/subscribe()``).
public struct AgentEventSubscription: Sendable {
    /// Identifies the subscription (``AgentEventHub/unsubscribe(_:)``).
    public let id: UUID
    /// The events, in the order the agent learnt them; ends on unsubscribe or overflow.
    public let events: AsyncStream<AgentEvent>
    let flag: OverflowFlag

    /// Whether the sequence ended because the subscriber fell ``AgentEventHub/bufferSize`` events behind.
    public var overflowed: Bool { flag.isSet }
}

/// Set once a subscriber's buffer overflowed.
final class OverflowFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}
