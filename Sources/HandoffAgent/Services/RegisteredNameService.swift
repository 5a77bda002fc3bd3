import HandoffDiscovery
import ServiceLifecycle

/// Seals the advertisement again as soon as DNS-SD registers the agent's service under another
/// instance name. Avahi renames a registered service by itself on a name conflict (`"X"` →
/// `"X #2"`), and the record's signature binds the instance name (docs/PROTOCOL.md), so peers
/// take nothing from the service under its new name until the record is sealed for it: this
/// makes that window one dns_sd round trip (register reply, `DNSServiceUpdateRecord`), rather
/// than until the next change of the advertisement.
public struct RegisteredNameService: Service {
    let names: AsyncStream<String>
    let agent: Agent

    /// Follows the names `agent`'s own advertiser registers (``ServiceAdvertiser/registeredNames``).
    public init(agent: Agent) {
        self.init(names: agent.advertiser.registeredNames, agent: agent)
    }

    /// Follows `names` (tests).
    init(names: AsyncStream<String>, agent: Agent) {
        self.names = names
        self.agent = agent
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            for await name in names { await agent.registered(as: name) }
        }
        // The names end when the advertiser stops, which at a shutdown may be before the group
        // tells this service: it ends with the group, never before it (a service that returns
        // first fails the group, which then cancels the others, whose goodbyes are lost).
        try? await gracefulShutdown()
    }
}

extension Agent {
    /// DNS-SD registered this agent's service under `name`: from now on the advertisement is
    /// sealed for that name, and sealed again at once if it was sealed for another.
    func registered(as name: String) {
        guard name != sealedInstanceName else { return }
        logger.info("sealing the advertisement for the instance name DNS-SD registered", metadata: [
            "handoff.registered.name": "\(name)", "handoff.sealed.name": "\(sealedInstanceName)",
        ])
        sealedInstanceName = name
        refreshAdvertisement()
    }
}
