#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffConfiguration
import HandoffDiscovery
import Logging
import ServiceLifecycle

/// Wide-area DNS-SD (`wideArea.*`, docs/NETWORKS.md): the registrar and the browser of the
/// configured domain, beside mDNS.
extension Agent {
    /// The configured domain's server, domain and key; nil when `wideArea` is not configured.
    static func wideAreaSettings(_ configuration: AgentConfiguration) -> (server: DNSServerAddress, domain: DNSName, key: TSIGKey)? {
        guard let wideArea = configuration.wideArea, let server = DNSServerAddress(wideArea.server),
            let domain = DNSName(wideArea.domain), let keyName = DNSName(wideArea.tsigKeyName)
        else { return nil }
        return (server, domain, TSIGKey(name: keyName, secret: wideArea.tsigSecret))
    }

    /// The registrar of the configured domain, nil when `wideArea` is not configured: it starts
    /// with `txtRecord` under `instanceName`, which is also its host name, kept across renames.
    static func wideAreaRegistrar(_ configuration: AgentConfiguration, instanceName: String, port: Int, txtRecord: [UInt8],
                                  logger: Logger, wallClock: @escaping @Sendable () -> Date) -> WideAreaRegistrar? {
        guard let (server, domain, key) = wideAreaSettings(configuration) else { return nil }
        let settings = WideAreaRegistrar.Settings(server: server, domain: domain, key: key, serviceType: configuration.serviceType,
                                                  hostName: instanceName, port: UInt16(port))
        return WideAreaRegistrar(settings: settings, advertisement: .init(instanceName: instanceName, txtRecord: txtRecord), logger: logger) {
            UInt64(max(0, wallClock().timeIntervalSince1970))
        }
    }

    /// A browser of the configured domain, or nil when `wideArea` is not configured.
    public nonisolated func makeWideAreaBrowser(logger: Logger) -> WideAreaBrowser? {
        guard let (server, domain, _) = Self.wideAreaSettings(configuration) else { return nil }
        return WideAreaBrowser(server: server, domain: domain, serviceType: configuration.serviceType, logger: logger)
    }
}

/// Feeds a wide-area browser's events into the agent, as ``DiscoveryService`` does for mDNS.
public struct WideAreaDiscoveryService: Service {
    let browser: WideAreaBrowser
    let agent: Agent

    public init(browser: WideAreaBrowser, agent: Agent) {
        self.browser = browser
        self.agent = agent
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            for await event in browser.events { await agent.handle(event) }
        }
    }
}
