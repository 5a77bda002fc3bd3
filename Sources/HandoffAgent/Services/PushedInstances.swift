import Synchronization

/// The DNS-SD instances whose advertisements reach this agent by push now: each one a peer pushed
/// a record for on a kept connection that subscribed to it (``LivenessService``). The discovery
/// service follows the set and tells the browser to keep no TXT query open for these instances
/// (``ServiceBrowser/receivesPushes(of:)``): with Avahi every dns_sd query is a thread and a
/// system-bus connection of its own, in the agent, the bus and avahi-daemon alike, and the push
/// brings a change before the query would.
public final class PushedInstances: Sendable {
    private let names = Mutex<Set<String>>([])
    private let sink: AsyncStream<Set<String>>.Continuation
    /// The set after each change (the newest only, if the reader is behind). For one reader.
    public let changes: AsyncStream<Set<String>>

    init() {
        (changes, sink) = AsyncStream.makeStream(of: Set<String>.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// The instances pushed now.
    public var current: Set<String> { names.withLock { $0 } }

    /// Replaces the set; the reader hears of it if it changed.
    func replace(with newNames: Set<String>) {
        names.withLock { names in
            guard names != newNames else { return }
            names = newNames
            sink.yield(newNames)
        }
    }
}
