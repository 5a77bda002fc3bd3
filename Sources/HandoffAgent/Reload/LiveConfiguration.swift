import HandoffConfiguration
import Logging
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The configuration the agent runs on now, which a reload (SIGHUP, ``Agent/reload(_:launchable:)``)
/// replaces. Shared by everything that reads the configuration at each use rather than copying
/// it at start: the agent, the daemon's peer connector (its connect timeout), the log handlers
/// (``LiveLevelLogHandler``) and the desktop notifications (``updates()``).
public final class LiveConfiguration: Sendable {
    private struct State {
        var configuration: AgentConfiguration
        var subscribers: [UUID: AsyncStream<AgentConfiguration>.Continuation] = [:]
    }

    private let state: Mutex<State>
    /// `logLevel`, read on every log call without copying the whole configuration.
    private let level: Atomic<UInt8>

    public init(_ configuration: AgentConfiguration) {
        state = Mutex(State(configuration: configuration))
        level = Atomic(Self.code(of: configuration.logLevel))
    }

    /// The configuration now.
    public var value: AgentConfiguration { state.withLock { $0.configuration } }

    /// `logLevel` now (info when the text names no level, which the configuration's checks refuse).
    public var logLevel: Logger.Level { Self.levels[Int(level.load(ordering: .relaxed))] }

    /// Replaces the configuration; every ``updates()`` subscriber gets the new one.
    func replace(with configuration: AgentConfiguration) {
        let subscribers = state.withLock { state in
            state.configuration = configuration
            return Array(state.subscribers.values)
        }
        level.store(Self.code(of: configuration.logLevel), ordering: .relaxed)
        for subscriber in subscribers { subscriber.yield(configuration) }
    }

    /// Each configuration a reload puts in place from now on (the newest only, if the reader is behind).
    public func updates() -> AsyncStream<AgentConfiguration> {
        let id = UUID.random()
        let (stream, continuation) = AsyncStream.makeStream(of: AgentConfiguration.self, bufferingPolicy: .bufferingNewest(1))
        state.withLock { $0.subscribers[id] = continuation }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) } }
        return stream
    }

    private static let levels = Logger.Level.allCases

    private static func code(of text: String) -> UInt8 {
        UInt8(levels.firstIndex(of: Logger.Level(rawValue: text) ?? .info)!)
    }
}
