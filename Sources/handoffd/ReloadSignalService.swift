import Logging
import ServiceLifecycle
import UnixSignals

/// Traps SIGHUP (`systemctl --user reload handoffd`), whose default action would end the agent
/// without a clean shutdown, and says that a restart applies a changed configuration.
struct ReloadSignalService: Service {
    let logger: Logger

    func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            for await _ in hangups {
                logger.notice("SIGHUP: the configuration is not reloaded live yet; restart handoffd to apply a changed one (systemctl --user restart handoffd)")
            }
        }
    }
}
