import HandoffAgent
import HandoffConfiguration
import Logging
import ServiceLifecycle
import UnixSignals

/// Reloads the configuration on SIGHUP (`systemctl --user reload handoffd`): reads the same file
/// as at start, with the same checks, and applies its live keys through ``Agent/reload(_:launchable:)``.
/// A key that needs a restart is logged at warning ("needs a restart: port (52123 -> 52200)") and
/// keeps its running value. A file that cannot be used (unreadable, not JSON, a bad value, a bad
/// app manifest) changes nothing and is logged at error with the file and the key. systemd is
/// told `RELOADING=1` before and `READY=1` after.
struct ReloadSignalService: Service {
    let agent: Agent
    let notifier: SystemdNotifier?
    let logger: Logger
    /// The file to read now (nil: none, every key at its default).
    let path: @Sendable () -> String?
    /// Reads and checks the file and the app manifests, as at start.
    let read: @Sendable (String?) throws(ConfigurationError) -> (AgentConfiguration, [LaunchableApp])

    func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            for await _ in hangups { await reload() }
        }
    }

    private func reload() async {
        notifier?.notify(SystemdNotifier.reloadingState(monotonicMicroseconds: SystemdNotifier.monotonicMicroseconds()))
        defer { notifier?.notify("READY=1") }
        let path = path()
        let file = path ?? "no config file (every key at its default)"
        let configuration: AgentConfiguration
        let launchable: [LaunchableApp]
        do { (configuration, launchable) = try read(path) } catch {
            logger.error("SIGHUP: \(file): \(error); nothing was reloaded, handoffd keeps running on its last good configuration", metadata: [
                "handoff.config": "\(file)", "handoff.key": "\(error.key)",
            ])
            return
        }
        let change = await agent.reload(configuration, launchable: launchable)
        for key in change.needingRestart {
            logger.warning("SIGHUP: \(file): needs a restart: \(key); handoffd keeps running on the old value until then", metadata: [
                "handoff.config": "\(file)", "handoff.key": "\(key.name)",
            ])
        }
        logger.notice("SIGHUP: configuration reloaded", metadata: [
            "handoff.config": "\(file)",
            "handoff.changed": "\(change.live.isEmpty ? "nothing" : change.live.map(\.name).joined(separator: ", "))",
        ])
    }
}
