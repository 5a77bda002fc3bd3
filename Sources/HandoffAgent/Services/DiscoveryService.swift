import HandoffDiscovery
import Logging
import ServiceLifecycle

/// Feeds the browser's events into the agent, and tells the browser after each which instances
/// the agent can read, so that those keep their place in its table when unreadable instances
/// (anyone's) crowd it. Tells it as well which instances peers push their records for
/// (``Agent/pushedInstances``), so that it keeps no TXT query open for those, and, as soon as a
/// push names one, which instances the agent can read: one waiting for a turn is followed at once.
public struct DiscoveryService: Service {
    let browser: ServiceBrowser
    let agent: Agent

    public init(browser: ServiceBrowser, agent: Agent) {
        self.browser = browser
        self.agent = agent
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    for await names in agent.pushedInstances.changes {
                        browser.receivesPushes(of: names)
                        browser.pin(await agent.readableInstanceNames)
                    }
                }
                for await event in browser.events {
                    await agent.handle(event)
                    browser.pin(await agent.readableInstanceNames)
                }
                group.cancelAll()
            }
        }
    }
}

extension Agent {
    /// The instances whose advertisements this agent opened: its paired peers' and its own (under
    /// the name it was started with and the name it is registered under now).
    var readableInstanceNames: Set<String> {
        Set(directory.all.map(\.instanceName)).union([instanceName, sealedInstanceName])
    }
}
