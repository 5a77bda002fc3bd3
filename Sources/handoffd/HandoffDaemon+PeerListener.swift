import HandoffAgent
import HandoffConfiguration
import HandoffCore
import HandoffTransport
import Logging
import NIOCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension HandoffDaemon {
    /// Binds the peer listener at the configured address and port.
    ///
    /// - The default address, `::`, is dual-stack: IPv4 peers arrive as `::ffff:a.b.c.d`. On a
    ///   host without IPv6 (`net.ipv6.conf.all.disable_ipv6` = 1, or a bind that fails with
    ///   EAFNOSUPPORT or EADDRNOTAVAIL) the listener binds `0.0.0.0` instead, with a notice.
    /// - When the port is taken (another agent of another user, or any other program), it binds
    ///   any free port, with a warning: the port is advertised over DNS-SD, so peers still find
    ///   it, but a firewall rule for the fixed port no longer matches.
    static func bindPeerListener(_ configuration: AgentConfiguration, security: AgentSecurity, logger: Logger) async -> FrameServer {
        var host = configuration.listenAddress
        if host == AgentConfiguration.dualStackListenAddress && !ipv6Available() {
            logger.notice("IPv6 is disabled on this host; listening for peers on IPv4 only", metadata: ["handoff.listen": "0.0.0.0"])
            host = "0.0.0.0"
        }
        do {
            return try await bindPeerListener(host: host, configuration, security: security, logger: logger)
        } catch let error as IOError
            where host == AgentConfiguration.dualStackListenAddress && [EAFNOSUPPORT, EADDRNOTAVAIL].contains(error.errnoCode)
        {
            logger.notice("Cannot listen on IPv6; listening for peers on IPv4 only", metadata: ["handoff.error": "\(error)"])
            do { return try await bindPeerListener(host: "0.0.0.0", configuration, security: security, logger: logger) } catch {
                fail("cannot listen for peers on 0.0.0.0:\(configuration.port): \(error). Choose another port (config key port) or stop what uses it.", code: 69)
            }
        } catch {
            fail("cannot listen for peers on \(PeerEndpoint(host: host, port: configuration.port)): \(error). Choose another port (config key port) or stop what uses it.", code: 69)
        }
    }

    /// Binds at `host`, on the configured port or, when it is taken, any free one.
    private static func bindPeerListener(host: String, _ configuration: AgentConfiguration, security: AgentSecurity, logger: Logger) async throws -> FrameServer {
        func bind(port: Int) async throws -> FrameServer {
            try await FrameServer.bind(
                .tcp(host: host, port: port), limits: FrameLimits(maxFrameBytes: 64 * 1024, maxUserInfoBytes: 0),
                security: security.listenerSecurity(configuration, logger: logger))
        }
        do {
            return try await bind(port: configuration.port)
        } catch let error as IOError where error.errnoCode == EADDRINUSE && configuration.port != 0 {
            do {
                let server = try await bind(port: 0)
                logger.warning("The peer port is taken; listening on another one, which a firewall rule for the configured port does not cover", metadata: [
                    "handoff.port.configured": "\(configuration.port)", "handoff.port": "\(server.port ?? 0)",
                ])
                return server
            } catch {
                fail("cannot listen for peers on \(host), at port \(configuration.port) (taken) or any other: \(error).", code: 69)
            }
        }
    }

    /// Whether the host has IPv6: not when `/proc/sys/net/ipv6/conf/all/disable_ipv6` says 1
    /// (or when the kernel has no IPv6 at all, and the file is missing).
    static func ipv6Available() -> Bool {
        guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv6/conf/all/disable_ipv6", encoding: .utf8) else { return false }
        return text.split(whereSeparator: \.isWhitespace) != ["1"]
    }
}
