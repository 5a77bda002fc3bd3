import HandoffConfiguration
import Logging
import Synchronization
import Testing

@testable import HandoffAgent

/// Counts the entries that reach it.
private struct CountingHandler: LogHandler {
    let count: Counter
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) { count.value.add(1, ordering: .relaxed) }
}

private final class Counter: Sendable {
    let value = Atomic(0)
    var now: Int { value.load(ordering: .relaxed) }
}

@Suite("LiveLevelLogHandler: a reload's logLevel reaches loggers already made")
struct LiveLevelLogHandlerTests {
    @Test("a logger made at info logs debug once a reload sets logLevel debug, and not after it is set back")
    func followsReloads() {
        var configuration = AgentConfiguration(name: "h1", socketPath: "/tmp/h1.sock")
        let live = LiveConfiguration(configuration)
        let count = Counter()
        let logger = Logger(label: "test") { _ in LiveLevelLogHandler(CountingHandler(count: count), configuration: live) }
        logger.debug("dropped at info")
        logger.info("kept")
        #expect(count.now == 1)
        configuration.logLevel = "debug"
        live.replace(with: configuration)
        logger.debug("kept at debug")
        #expect(count.now == 2)
        configuration.logLevel = "error"
        live.replace(with: configuration)
        logger.warning("dropped at error")
        #expect(count.now == 2)
    }

    @Test("setting one logger's level overrides the configuration's for that logger")
    func override() {
        let live = LiveConfiguration(AgentConfiguration(name: "h1", socketPath: "/tmp/h1.sock"))
        let count = Counter()
        var logger = Logger(label: "test") { _ in LiveLevelLogHandler(CountingHandler(count: count), configuration: live) }
        logger.logLevel = .trace
        logger.trace("kept")
        #expect(count.now == 1)
    }
}
