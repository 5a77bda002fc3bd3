import HandoffCore
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// This agent's sealed advertisement, pushed to the paired devices that subscribe on their
/// liveness connection (those that know it by address, and those whose hello says they take
/// pushes, docs/PROTOCOL.md "Pushed advertisements"): each subscriber gets the record advertised
/// now, then every new one, in one frame rather than at DNS-SD's next announcement.
///
/// Only the newest record matters: a subscriber that has not sent the last one yet gets the
/// newer one in its place (``AsyncStream`` buffering the newest one), so a slow peer costs one
/// record of memory, never a queue.
public final class AdvertisementFeed: Sendable {
    /// One sealed advertisement: the instance name it is sealed for and its TXT record.
    public struct Record: Sendable, Equatable {
        public var instanceName: String
        public var txtRecord: [UInt8]
    }

    private struct State {
        var current: Record
        var subscribers: [Subscriber] = []

        /// Forgets the subscribers that have stopped iterating.
        mutating func prune() { subscribers.removeAll { $0.ended.value.load(ordering: .acquiring) } }
    }

    /// One subscriber: its stream's continuation, and whether it has stopped iterating.
    private struct Subscriber: Sendable {
        var continuation: AsyncStream<Record>.Continuation
        var ended: EndedFlag
    }

    /// Set by a stream's `onTermination`, which must not take the feed's lock: it runs while the
    /// Swift runtime holds the subscribing task's status lock (its cancellation), and a `yield`
    /// under the feed's lock needs that task's status lock to resume it. Taking the lock there
    /// deadlocked an agent (a peer session cancelled while an activity was published).
    private final class EndedFlag: Sendable {
        let value = Atomic<Bool>(false)
    }

    private let state: Mutex<State>

    /// A feed whose first record is `current`.
    init(current: Record) {
        state = Mutex(State(current: current))
    }

    /// The record now, then each new one, until the subscriber stops iterating.
    public func subscribe() -> AsyncStream<Record> {
        let (stream, continuation) = AsyncStream.makeStream(of: Record.self, bufferingPolicy: .bufferingNewest(1))
        let ended = EndedFlag()
        continuation.onTermination = { _ in ended.value.store(true, ordering: .releasing) }
        state.withLock {
            $0.prune()
            continuation.yield($0.current)
            $0.subscribers.append(Subscriber(continuation: continuation, ended: ended))
        }
        return stream
    }

    /// The record advertised now.
    public var current: Record { state.withLock { $0.current } }

    /// How many peers are subscribed now.
    public var subscriberCount: Int {
        state.withLock {
            $0.prune()
            return $0.subscribers.count
        }
    }

    /// A new record is advertised: every subscriber gets it.
    func publish(_ record: Record) {
        state.withLock {
            $0.current = record
            $0.prune()
            for subscriber in $0.subscribers { subscriber.continuation.yield(record) }
        }
    }
}
