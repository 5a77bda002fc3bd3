import ServiceLifecycle

/// Withdraws expired activities from the advertisement: checks on a steady tick of `clock`.
public struct ExpiryService<C: Clock>: Service where C.Duration == Duration {
    let agent: Agent
    let clock: C
    let interval: Duration

    public init(agent: Agent, clock: C, interval: Duration = .milliseconds(500)) {
        self.agent = agent
        self.clock = clock
        self.interval = interval
    }

    public func run() async throws {
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            do { try await clock.sleep(for: interval) } catch { return }
            await agent.expireActivities()
        }
    }
}
