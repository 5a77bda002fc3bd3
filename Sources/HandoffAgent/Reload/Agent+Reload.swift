import HandoffConfiguration
import HandoffCore

extension Agent {
    /// Applies a configuration read again (SIGHUP): its live keys take effect at once, the keys
    /// that need a restart keep their running values (``ConfigurationChange``), and `launchable`
    /// (the manifests in the new `appsDirectory`) replaces the apps the agent may start. Every
    /// component that copied a value at start is handed the new one here: the handlers and URL
    /// opener (``ActivityDispatcher``), the fetch limits and timeouts (``ContinuationClient``; idle
    /// connections, whose decoders have the old limits, are closed),
    /// the Inbox quota, the faults, and through ``liveConfiguration`` the log level, the peer
    /// connector's connect timeout and the desktop notifications. Returns what changed.
    ///
    /// The faults change only when the file's `faults` changed: faults set with `handoff fault`
    /// since then stay otherwise.
    @discardableResult
    public func reload(_ configuration: AgentConfiguration, launchable: [LaunchableApp]) -> ConfigurationChange {
        let change = ConfigurationChange(from: self.configuration, to: configuration)
        let running = change.running
        liveConfiguration.replace(with: running)
        dispatcher = ActivityDispatcher(configuration: running, runner: dispatcher.runner, logger: dispatcher.logger)
        let limits = Self.fetchLimits(running)
        if limits != client.limits {
            // An idle connection's frame decoder was made with the old limits.
            fetchPool.discardAll()
            client.limits = limits
        }
        client.timeouts = Self.fetchTimeouts(running)
        inboxQuota.limit = running.limits.maxInboxBytesPerDevice
        if change.changesLive("faults") { faults = running.faults }
        registry.launchable = launchable
        return change
    }

    /// The frame limits of fetching an activity from a peer (`limits.maxUserInfoBytes`).
    static func fetchLimits(_ configuration: AgentConfiguration) -> FrameLimits {
        FrameLimits(maxUserInfoBytes: configuration.limits.maxUserInfoBytes)
    }

    /// The deadlines of fetching an activity from a peer (`limits.connectTimeout`, `limits.fetchTimeout`).
    static func fetchTimeouts(_ configuration: AgentConfiguration) -> ContinuationTimeouts {
        ContinuationTimeouts(connect: configuration.limits.connectTimeout, fetch: configuration.limits.fetchTimeout)
    }
}
