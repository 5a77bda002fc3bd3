import Logging
import ServiceLifecycle

/// Tells systemd (`Type=notify`) that handoffd is ready, and when it stops.
///
/// handoffd binds the peer listener and the control socket before its services start, so
/// `READY=1` waits only for the DNS-SD registration: it is sent once `isRegistered` says so, or
/// after `registrationWait` with a warning (without avahi-daemon the agent still serves the
/// control socket and static peers, and systemd would otherwise kill it at its start timeout).
/// `STOPPING=1` is sent when graceful shutdown begins; list this service last in the group, so
/// that it is the first one told to shut down.
public struct SystemdReadinessService<C: Clock>: Service where C.Duration == Duration {
    let notifier: SystemdNotifier?
    let clock: C
    let isRegistered: @Sendable () -> Bool
    let registrationWait: Duration
    let pollInterval: Duration
    let logger: Logger

    public init(
        notifier: SystemdNotifier?, clock: C, registrationWait: Duration = .seconds(10), pollInterval: Duration = .milliseconds(50),
        logger: Logger, isRegistered: @escaping @Sendable () -> Bool
    ) {
        self.notifier = notifier
        self.clock = clock
        self.isRegistered = isRegistered
        self.registrationWait = registrationWait
        self.pollInterval = pollInterval
        self.logger = logger
    }

    public func run() async throws {
        let deadline = clock.now.advanced(by: registrationWait)
        while !isRegistered(), !Task.isShuttingDownGracefully {
            guard clock.now < deadline else {
                logger.warning("The DNS-SD registration is not confirmed yet (is avahi-daemon running?); telling systemd the agent is ready anyway")
                break
            }
            do { try await clock.sleep(for: pollInterval) } catch { return }
        }
        if !Task.isShuttingDownGracefully { send("READY=1") }
        do { try await gracefulShutdown() } catch { return }
        send("STOPPING=1")
    }

    private func send(_ state: String) {
        guard let notifier else { return }
        if let error = notifier.notify(state) {
            logger.warning("Cannot notify systemd", metadata: [
                "handoff.notify.state": "\(state)", "handoff.notify.socket": "\(notifier.socketPath)", "handoff.errno": "\(error)",
            ])
        }
    }
}
