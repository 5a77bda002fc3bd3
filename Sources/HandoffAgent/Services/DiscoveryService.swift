import HandoffDiscovery
import Logging
import ServiceLifecycle

/// Feeds the browser's events into the agent.
public struct DiscoveryService: Service {
    let browser: ServiceBrowser
    let agent: Agent

    public init(browser: ServiceBrowser, agent: Agent) {
        self.browser = browser
        self.agent = agent
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            for await event in browser.events { await agent.handle(event) }
        }
    }
}
