import HandoffCore
import Testing

@Suite("DoctorVerdicts: each check's verdict from what doctor observed")
struct DoctorVerdictsTests {
    static let eth0 = HostObservations.Interface(name: "eth0", up: true, loopback: false, multicast: true, addresses: ["10.0.0.1"])
    static let lo = HostObservations.Interface(name: "lo", up: true, loopback: true, multicast: false, addresses: ["127.0.0.1"])
    static let healthyHost = HostObservations(interfaces: [lo, eth0], firewalls: [.init(tool: "nftables", listing: .listed(""))],
                                              resolvedMulticastDNS: nil)
    static let h1 = AgentDiagnosis.Device(name: "h1", deviceID: "AAAA", seenOverDNSSD: true, addresses: ["10.0.0.1"], port: 4711, reachable: true,
                                          probe: .accepted, clockAheadMilliseconds: -1200)
    static let healthyAgent = AgentDiagnosis(avahi: .running, registeredName: "handoff-1", ownServiceVisible: true, port: 4711, devices: [h1])

    func status(_ findings: [DoctorFinding], _ check: String) -> DoctorFinding.Status? {
        findings.first { $0.check == check }?.status
    }

    @Test func aHealthyHostIsAllOkAndExitsZero() {
        let findings = DoctorVerdicts.findings(agent: .success(Self.healthyAgent), host: Self.healthyHost)
        #expect(findings.allSatisfy { $0.status == .ok }, "\(findings)")
        #expect(findings.map(\.check) == ["agent", "avahi", "own-service", "interfaces", "firewall", "resolved",
                                          "peer h1: dns-sd", "peer h1: reachable", "peer h1: tls", "peer h1: clock"])
        #expect(DoctorVerdicts.exitStatus(findings) == 0)
    }

    @Test func anInterfaceWithOnlyIPv6AddressesIsUsable() {
        let ipv6Only = HostObservations.Interface(name: "eth0", up: true, loopback: false, multicast: true,
                                                  addresses: ["fd00:198:18::1", "fe80::1%eth0"])
        let host = HostObservations(interfaces: [Self.lo, ipv6Only], firewalls: Self.healthyHost.firewalls, resolvedMulticastDNS: nil)
        let findings = DoctorVerdicts.findings(agent: .success(Self.healthyAgent), host: host)
        #expect(status(findings, "interfaces") == .ok)
        #expect(findings.first { $0.check == "interfaces" }?.detail.contains("fd00:198:18::1") == true)
    }

    @Test func noAgentFailsAndFallsBackToAvahiDaemonCheck() {
        let findings = DoctorVerdicts.findings(agent: .failure(.connectionUnavailable("no socket")), avahiRunningWithoutAgent: true, host: Self.healthyHost)
        #expect(status(findings, "agent") == .fail)
        #expect(status(findings, "avahi") == .ok)
        #expect(status(findings, "own-service") == nil)
        #expect(DoctorVerdicts.exitStatus(findings) == 1)
        let stopped = DoctorVerdicts.findings(agent: .failure(.connectionUnavailable("no socket")), avahiRunningWithoutAgent: false, host: Self.healthyHost)
        #expect(status(stopped, "avahi") == .fail)
    }

    @Test func avahiNotOnTheBusFailsAvahiAndOwnService() {
        var agent = Self.healthyAgent
        agent.avahi = .unavailable("org.freedesktop.Avahi is not on the system bus")
        let findings = DoctorVerdicts.findings(agent: .success(agent), host: Self.healthyHost)
        #expect(status(findings, "avahi") == .fail)
        #expect(status(findings, "own-service") == .fail)
        agent.avahi = .state(1)
        #expect(status(DoctorVerdicts.findings(agent: .success(agent), host: Self.healthyHost), "avahi") == .warn)
    }

    @Test func ownServiceNotInTheBrowseFails() {
        var agent = Self.healthyAgent
        agent.ownServiceVisible = false
        #expect(status(DoctorVerdicts.findings(agent: .success(agent), host: Self.healthyHost), "own-service") == .fail)
        agent.registeredName = nil
        #expect(status(DoctorVerdicts.findings(agent: .success(agent), host: Self.healthyHost), "own-service") == .fail)
    }

    @Test func noInterfaceWithMulticastAndAnAddressFails() {
        var host = Self.healthyHost
        host.interfaces = [Self.lo, .init(name: "eth0", up: false, loopback: false, multicast: true, addresses: [])]
        let finding = DoctorVerdicts.findings(agent: .success(Self.healthyAgent), host: host).first { $0.check == "interfaces" }
        #expect(finding?.status == .fail)
        #expect(finding?.detail.contains("eth0: down, no address") == true, "\(String(describing: finding))")
    }

    @Test func firewallDroppingMDNSOrThePortFailsQuotingTheRule() {
        var host = Self.healthyHost
        host.firewalls = [.init(tool: "nftables", listing: .listed("""
            table inet lab {
            \tchain input {
            \t\ttype filter hook input priority filter; policy accept;
            \t\tudp dport 5353 drop
            \t\ttcp dport { 22, 4711 } reject
            \t}
            }
            """))]
        let findings = DoctorVerdicts.findings(agent: .success(Self.healthyAgent), host: host).filter { $0.check == "firewall" }
        #expect(findings.count == 2)
        #expect(findings.allSatisfy { $0.status == .fail })
        #expect(findings[0].detail.contains("mDNS (5353/udp): udp dport 5353 drop"), "\(findings)")
        #expect(findings[1].detail.contains("4711/tcp"), "\(findings)")
    }

    @Test func unreadableFirewallWarnsAndSaysHowToReadIt() {
        var host = Self.healthyHost
        host.firewalls = [.init(tool: "nftables", listing: .unreadable("Operation not permitted")), .init(tool: "ufw", listing: .notInstalled)]
        let finding = DoctorVerdicts.findings(agent: .success(Self.healthyAgent), host: host).first { $0.check == "firewall" }
        #expect(finding?.status == .warn)
    }

    @Test func activeUfwWithoutMDNSWarns() {
        var host = Self.healthyHost
        host.firewalls = [.init(tool: "ufw", listing: .listed("Status: active\n\nTo Action From\n22/tcp ALLOW Anywhere\n"))]
        #expect(status(DoctorVerdicts.findings(agent: .success(Self.healthyAgent), host: host), "firewall") == .warn)
        host.firewalls = [.init(tool: "ufw", listing: .listed("Status: active\n5353/udp ALLOW Anywhere\n4711/tcp ALLOW Anywhere\n"))]
        #expect(status(DoctorVerdicts.findings(agent: .success(Self.healthyAgent), host: host), "firewall") == .ok)
        host.firewalls = [.init(tool: "ufw", listing: .listed("Status: inactive\n"))]
        #expect(status(DoctorVerdicts.findings(agent: .success(Self.healthyAgent), host: host), "firewall") == .ok)
    }

    @Test func resolvedAnsweringMulticastDNSWarns() {
        var host = Self.healthyHost
        host.resolvedMulticastDNS = "yes"
        #expect(status(DoctorVerdicts.findings(agent: .success(Self.healthyAgent), host: host), "resolved") == .warn)
        host.resolvedMulticastDNS = "no"
        #expect(status(DoctorVerdicts.findings(agent: .success(Self.healthyAgent), host: host), "resolved") == .ok)
    }

    @Test func aPairedDeviceCutOffFailsReachability() {
        var agent = Self.healthyAgent
        agent.devices[0].reachable = false
        agent.devices[0].probe = .unreachable("timed out at 10.0.0.1:4711")
        let findings = DoctorVerdicts.findings(agent: .success(agent), host: Self.healthyHost)
        #expect(status(findings, "peer h1: dns-sd") == .ok)
        #expect(status(findings, "peer h1: reachable") == .fail)
        #expect(findings.first { $0.check == "peer h1: reachable" }?.detail.contains("liveness finds it unreachable") == true)
        #expect(DoctorVerdicts.exitStatus(findings) == 1)
    }

    @Test func aPairedDeviceThatRefusesTLSFailsTheTLSCheck() {
        var agent = Self.healthyAgent
        agent.devices[0].probe = .refused("wrong certificate")
        let findings = DoctorVerdicts.findings(agent: .success(agent), host: Self.healthyHost)
        #expect(status(findings, "peer h1: reachable") == .ok)
        #expect(status(findings, "peer h1: tls") == .fail)
    }

    @Test func aPairedDeviceNotSeenOverDNSSDFails() {
        var agent = Self.healthyAgent
        agent.devices[0] = .init(name: "h1", deviceID: "AAAA", seenOverDNSSD: false, addresses: [], port: nil, reachable: false, probe: .notTried,
                                 clockAheadMilliseconds: nil)
        let findings = DoctorVerdicts.findings(agent: .success(agent), host: Self.healthyHost)
        #expect(status(findings, "peer h1: dns-sd") == .fail)
        #expect(status(findings, "peer h1: reachable") == .fail)
        #expect(status(findings, "peer h1: clock") == nil)
    }

    @Test func aPairedDeviceReachedAtItsStoredAddressOnlyWarns() {
        var agent = Self.healthyAgent
        agent.devices[0] = .init(name: "h1", deviceID: "AAAA", seenOverDNSSD: false, reachedByAddress: true, addresses: ["192.0.2.1"], port: 52123,
                                 reachable: true, probe: .accepted, clockAheadMilliseconds: 0)
        let findings = DoctorVerdicts.findings(agent: .success(agent), host: Self.healthyHost)
        #expect(status(findings, "peer h1: dns-sd") == .warn)
        #expect(findings.first { $0.check == "peer h1: dns-sd" }?.detail.contains("192.0.2.1:52123") == true)
        #expect(status(findings, "peer h1: reachable") == .ok)
        // Reached where it connected from (its announce), not at an address it was given: said so.
        agent.devices[0].atStoredAddress = false
        let elsewhere = DoctorVerdicts.findings(agent: .success(agent), host: Self.healthyHost).first { $0.check == "peer h1: dns-sd" }
        #expect(elsewhere?.status == .warn)
        #expect(elsewhere?.detail.contains("reached at 192.0.2.1:52123, where it connected from") == true)
        #expect(elsewhere?.detail.contains("stored") == false)
    }

    @Test func aClockAheadBeyondTheToleranceWarns() {
        var agent = Self.healthyAgent
        agent.devices[0].clockAheadMilliseconds = DoctorVerdicts.clockToleranceMilliseconds + 1
        #expect(status(DoctorVerdicts.findings(agent: .success(agent), host: Self.healthyHost), "peer h1: clock") == .warn)
        agent.devices[0].clockAheadMilliseconds = DoctorVerdicts.clockToleranceMilliseconds
        #expect(status(DoctorVerdicts.findings(agent: .success(agent), host: Self.healthyHost), "peer h1: clock") == .ok)
    }

    @Test func theDiagnosisAndFindingsRoundTripThroughJSON() throws {
        var agent = Self.healthyAgent
        agent.devices.append(.init(name: "h3", deviceID: "BBBB", seenOverDNSSD: false, reachedByAddress: true, atStoredAddress: false, addresses: ["10.0.0.3"], port: 1, reachable: false,
                                   probe: .refused("no pong"), clockAheadMilliseconds: nil))
        agent.avahi = .unavailable("gone")
        #expect(AgentDiagnosis(json: try JSONValue(parsing: agent.json.serialized)) == agent)
        let finding = DoctorFinding(check: "firewall", status: .warn, detail: "d", fix: "f")
        #expect(DoctorFinding(json: finding.json) == finding)
        #expect(try ControlRequest(json: ControlRequest.diagnose.json) == .diagnose)
    }
}

@Suite("FirewallRules: which listed rules drop mDNS or the agent's port")
struct FirewallRulesTests {
    @Test func nftablesRulesNamingThePortsDrop() {
        let listing = """
            table inet filter {
            \tchain input {
            \t\ttype filter hook input priority filter; policy accept;
            \t\tct state invalid drop
            \t\tip saddr 192.0.2.1 tcp dport 22 drop
            \t\tudp dport { 53, 5353 } counter packets 3 bytes 300 drop
            \t\ttcp dport 4000-5000 reject with tcp reset
            \t}
            }
            """
        let matches = FirewallRules.matches(in: listing, port: 4711)
        #expect(matches.map(\.effect) == [.drops, .drops], "\(matches)")
        #expect(matches[0].rule == "udp dport { 53, 5353 } counter packets 3 bytes 300 drop")
        #expect(matches[1].traffic == "the agent's port (4711/tcp)")
    }

    @Test func broadDropsMayDrop() {
        let listing = """
            table ip lab {
            \tchain in {
            \t\ttype filter hook input priority 0; policy accept;
            \t\tip daddr 224.0.0.251 drop
            \t}
            \tchain fwd {
            \t\ttype filter hook forward priority 0; policy drop;
            \t\tudp dport 5353 drop
            \t}
            }
            """
        let matches = FirewallRules.matches(in: listing, port: 4711)
        #expect(matches == [.init(traffic: "mDNS (5353/udp)", effect: .mayDrop, rule: "ip daddr 224.0.0.251 drop")], "forward chains are skipped: \(matches)")
    }

    @Test func aDropPolicyWithoutAnAcceptMayDrop() {
        let listing = """
            table inet filter {
            \tchain input {
            \t\ttype filter hook input priority filter; policy drop;
            \t\tudp dport 5353 accept
            \t}
            }
            """
        let matches = FirewallRules.matches(in: listing, port: 4711)
        #expect(matches.count == 1)
        #expect(matches.first?.traffic == "the agent's port (4711/tcp)")
        #expect(matches.first?.effect == .mayDrop)
    }

    @Test func iptablesRules() {
        let listing = """
            -P INPUT ACCEPT
            -P FORWARD DROP
            -A INPUT -p udp -m udp --dport 5353 -j DROP
            -A INPUT -p tcp -m multiport --dports 4700:4800 -j REJECT --reject-with tcp-reset
            -A INPUT -p tcp -m tcp --dport 22 -j ACCEPT
            """
        let matches = FirewallRules.matches(in: listing, port: 4711)
        #expect(matches.map(\.effect) == [.drops, .drops], "\(matches)")
        let policy = FirewallRules.matches(in: "-P INPUT DROP\n-A INPUT -p tcp --dport 4711 -j ACCEPT\n", port: 4711)
        #expect(policy.map(\.traffic) == ["mDNS (5353/udp)"], "\(policy)")
    }

    @Test func aCleanRulesetMatchesNothing() {
        #expect(FirewallRules.matches(in: "", port: 4711).isEmpty)
        #expect(FirewallRules.matches(in: "table inet filter {\n\tchain input {\n\t\ttype filter hook input priority 0; policy accept;\n\t}\n}\n", port: 4711).isEmpty)
    }
}
