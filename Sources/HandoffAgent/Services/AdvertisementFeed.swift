import HandoffCore
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// This agent's sealed advertisement, for the paired devices that know it by address rather than
/// over DNS-SD: each subscriber (a `subscribe` on a paired device's liveness connection) gets the
/// record advertised now, then every new one.
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
        var subscribers: [UUID: AsyncStream<Record>.Continuation] = [:]
    }

    private let state: Mutex<State>

    /// A feed whose first record is `current`.
    init(current: Record) {
        state = Mutex(State(current: current))
    }

    /// The record now, then each new one, until the subscriber stops iterating.
    public func subscribe() -> AsyncStream<Record> {
        let id = UUID()
        let (stream, continuation) = AsyncStream.makeStream(of: Record.self, bufferingPolicy: .bufferingNewest(1))
        state.withLock {
            continuation.yield($0.current)
            $0.subscribers[id] = continuation
        }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) } }
        return stream
    }

    /// The record advertised now.
    public var current: Record { state.withLock { $0.current } }

    /// How many peers are subscribed now.
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// A new record is advertised: every subscriber gets it.
    func publish(_ record: Record) {
        state.withLock {
            $0.current = record
            for continuation in $0.subscribers.values { continuation.yield(record) }
        }
    }
}
