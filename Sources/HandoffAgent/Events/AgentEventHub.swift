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
/// events without saying so. Watchers on the control socket get each event before the
/// background subscribers (``subscribe(background:)``: the desktop notifications), so a client
/// waiting for it is not served after them.
public final class AgentEventHub: Sendable {
    /// How many unread events a subscriber may have.
    public static let bufferSize = 4096

    private struct Subscriber {
        var continuation: AsyncStream<AgentEvent>.Continuation
        var overflowed: OverflowFlag
    }

    /// The watchers and the background subscribers, each by subscription.
    private struct Subscribers {
        var watchers: [UUID: Subscriber] = [:]
        var background: [UUID: Subscriber] = [:]
    }

    private let subscribers = Mutex(Subscribers())

    public init() {}

    /// Starts a subscription: every event published from now on, in order. A `background`
    /// subscriber gets each event after the others.
    public func subscribe(background: Bool = false) -> AgentEventSubscription {
        let id = UUID.random()
        let (stream, continuation) = AsyncStream.makeStream(of: AgentEvent.self, bufferingPolicy: .bufferingOldest(Self.bufferSize))
        let flag = OverflowFlag()
        let subscriber = Subscriber(continuation: continuation, overflowed: flag)
        subscribers.withLock { subscribers in
            if background { subscribers.background[id] = subscriber } else { subscribers.watchers[id] = subscriber }
        }
        continuation.onTermination = { [weak self] _ in self?.remove(id) }
        return AgentEventSubscription(id: id, events: stream, flag: flag)
    }

    /// Ends a subscription: its sequence finishes.
    public func unsubscribe(_ id: UUID) {
        remove(id)?.continuation.finish()
    }

    /// How many subscribers there are now.
    public var count: Int { subscribers.withLock { $0.watchers.count + $0.background.count } }

    /// Hands events to every subscriber.
    public func publish(_ events: [AgentEvent]) {
        guard !events.isEmpty else { return }
        for (id, subscriber) in inDeliveryOrder() {
            for event in events {
                if case .dropped = subscriber.continuation.yield(event) {
                    subscriber.overflowed.set()
                    unsubscribe(id)
                    break
                }
            }
        }
    }

    /// The subscriptions in the order an event reaches them: the background ones last.
    var deliveryOrder: [UUID] { inDeliveryOrder().map(\.key) }

    private func inDeliveryOrder() -> [(key: UUID, value: Subscriber)] {
        subscribers.withLock { Array($0.watchers) + Array($0.background) }
    }

    @discardableResult
    private func remove(_ id: UUID) -> Subscriber? {
        subscribers.withLock { $0.watchers.removeValue(forKey: id) ?? $0.background.removeValue(forKey: id) }
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
