/// The pure part of `handoff doctor`: each check's verdict from what was observed. No I/O; the
/// CLI gathers ``HostObservations`` and asks the agent for its ``AgentDiagnosis``.
public enum DoctorVerdicts {
    /// How far a paired device's clock may be ahead of this one's before doctor warns, in
    /// milliseconds. Sealed advertisements need no common clock (each device's timestamps only
    /// grow, ``SeenAdvertisements``), but activities' expiration dates and "last heard" times do;
    /// a record sealed in the future says the other clock is ahead at least that much.
    public static let clockToleranceMilliseconds: Int64 = 30_000

    /// Every check's finding, in a fixed order: the agent, avahi-daemon, the agent's own service,
    /// interfaces, firewalls, systemd-resolved, then each paired device.
    ///
    /// - Parameters:
    ///   - agent: the agent's answer to `diagnose`, or why it did not answer.
    ///   - avahiRunningWithoutAgent: when the agent did not answer, whether `avahi-daemon --check`
    ///     found avahi-daemon running (nil: not known).
    public static func findings(agent: Result<AgentDiagnosis, HandoffError>, avahiRunningWithoutAgent: Bool? = nil,
                                host: HostObservations) -> [DoctorFinding] {
        var findings: [DoctorFinding] = []
        let diagnosis = try? agent.get()
        switch agent {
        case .success(let diagnosis):
            findings.append(DoctorFinding(check: "agent", status: .ok, detail: "handoffd answers on its control socket (peer port \(diagnosis.port))"))
        case .failure(let error):
            findings.append(DoctorFinding(check: "agent", status: .fail, detail: "no agent answers: \(error.message)",
                                          fix: "start handoffd (systemctl --user start handoffd), or pass --socket with the socket it uses"))
        }
        findings.append(avahi(diagnosis?.avahi, runningWithoutAgent: avahiRunningWithoutAgent))
        if let diagnosis { findings.append(ownService(diagnosis)) }
        findings.append(interfaces(host.interfaces))
        findings.append(contentsOf: firewalls(host.firewalls, port: diagnosis?.port))
        findings.append(resolved(host.resolvedMulticastDNS))
        for device in diagnosis?.devices ?? [] { findings.append(contentsOf: pairedDevice(device)) }
        return findings
    }

    /// The exit status: 0 when nothing fails, 1 otherwise.
    public static func exitStatus(_ findings: [DoctorFinding]) -> Int32 {
        findings.contains { $0.status == .fail } ? 1 : 0
    }

    static func avahi(_ state: AgentDiagnosis.AvahiState?, runningWithoutAgent: Bool?) -> DoctorFinding {
        let fix = "start avahi-daemon (sudo systemctl enable --now avahi-daemon); it needs the D-Bus system bus"
        switch state {
        case .running?:
            return DoctorFinding(check: "avahi", status: .ok, detail: "avahi-daemon is on the system bus and running")
        case .state(let state)?:
            let name = [0: "invalid", 1: "registering", 3: "collision", 4: "failure"][state] ?? "\(state)"
            return DoctorFinding(check: "avahi", status: state == 1 ? .warn : .fail, detail: "avahi-daemon is on the system bus in state \(name), not running",
                                 fix: state == 1 ? "wait a few seconds and run doctor again" : "restart avahi-daemon (sudo systemctl restart avahi-daemon) and read its log")
        case .unavailable(let reason)?:
            return DoctorFinding(check: "avahi", status: .fail, detail: "avahi-daemon does not answer on the system bus: \(reason)", fix: fix)
        case nil:
            switch runningWithoutAgent {
            case true?: return DoctorFinding(check: "avahi", status: .ok, detail: "avahi-daemon --check finds it running (its D-Bus state needs the agent)")
            case false?: return DoctorFinding(check: "avahi", status: .fail, detail: "avahi-daemon --check finds it not running", fix: fix)
            case nil: return DoctorFinding(check: "avahi", status: .warn, detail: "not checked: the agent does not answer and avahi-daemon is not installed here", fix: fix)
            }
        }
    }

    static func ownService(_ diagnosis: AgentDiagnosis) -> DoctorFinding {
        guard let name = diagnosis.registeredName else {
            return DoctorFinding(check: "own-service", status: .fail, detail: "the agent has no DNS-SD registration",
                                 fix: "check avahi-daemon (above) and the agent's log for the registration error")
        }
        if diagnosis.ownServiceVisible, diagnosis.avahi == .running {
            return DoctorFinding(check: "own-service", status: .ok, detail: "\(name) shows up in a browse of _handoff._tcp")
        }
        return DoctorFinding(check: "own-service", status: .fail, detail: "\(name) is registered but does not show up in this agent's browse of _handoff._tcp",
                             fix: "check avahi-daemon, the interfaces and the firewall (above); avahi-browse -rt _handoff._tcp shows what avahi sees")
    }

    static func interfaces(_ interfaces: [HostObservations.Interface]) -> DoctorFinding {
        let usable = interfaces.filter { $0.up && !$0.loopback && $0.multicast && !$0.addresses.isEmpty }
        if !usable.isEmpty {
            let list = usable.map { "\($0.name) (\($0.addresses.joined(separator: ", ")))" }.joined(separator: "; ")
            return DoctorFinding(check: "interfaces", status: .ok, detail: "multicast and an address on \(list)")
        }
        let others = interfaces.filter { !$0.loopback }.map { interface in
            var missing: [String] = []
            if !interface.up { missing.append("down") }
            if !interface.multicast { missing.append("no MULTICAST flag") }
            if interface.addresses.isEmpty { missing.append("no address") }
            return "\(interface.name): \(missing.joined(separator: ", "))"
        }
        let saw = others.isEmpty ? "no interface but loopback" : others.joined(separator: "; ")
        return DoctorFinding(check: "interfaces", status: .fail, detail: "no interface is up with multicast and an address (\(saw))",
                             fix: "bring the LAN interface up with an address (ip link set DEV up multicast on; DHCP or ip addr add)")
    }

    static func firewalls(_ firewalls: [HostObservations.Firewall], port: Int?) -> [DoctorFinding] {
        var findings: [DoctorFinding] = []
        var readable: [String] = []
        var unreadable: [String] = []
        for firewall in firewalls {
            switch firewall.listing {
            case .notInstalled: continue
            case .unreadable(let why): unreadable.append("\(firewall.tool): \(why)")
            case .listed(let text):
                readable.append(firewall.tool)
                findings.append(contentsOf: firewallListing(tool: firewall.tool, text, port: port))
            }
        }
        let portText = port.map { " or \($0)/tcp" } ?? ""
        if findings.isEmpty {
            if !unreadable.isEmpty {
                findings.append(DoctorFinding(check: "firewall", status: .warn, detail: "cannot read \(unreadable.joined(separator: "; "))",
                                              fix: "listing rules needs root: read them with sudo nft list ruleset (or sudo iptables -S) and look for drops of 5353/udp\(portText); sudo handoff doctor would not reach your agent, which answers only its own user"))
            } else {
                let what = readable.isEmpty ? "no firewall tool is installed" : "\(readable.joined(separator: ", ")): no rule drops 5353/udp\(portText)"
                findings.append(DoctorFinding(check: "firewall", status: .ok, detail: what))
            }
        }
        return findings
    }

    static func firewallListing(tool: String, _ text: String, port: Int?) -> [DoctorFinding] {
        let portFix = port.map { " and \($0)/tcp" } ?? ""
        switch tool {
        case "firewalld", "ufw":
            let lowered = text.lowercased()
            guard tool == "firewalld" || lowered.contains("status: active") else { return [] }
            var missing: [String] = []
            if !(lowered.contains("mdns") || lowered.contains("5353/udp") || lowered.contains("handoff")) { missing.append("mDNS (5353/udp)") }
            if let port, !(lowered.contains("\(port)/tcp") || lowered.contains("handoff")) { missing.append("\(port)/tcp") }
            guard !missing.isEmpty else { return [] }
            let fix = tool == "ufw" ? "sudo ufw allow mdns; sudo ufw allow handoff (scripts/install ships the profile), or ufw allow 5353/udp\(portFix)"
                : "sudo firewall-cmd --permanent --add-service=mdns --add-service=handoff && sudo firewall-cmd --reload"
            return [DoctorFinding(check: "firewall", status: .warn, detail: "\(tool) is active and allows no \(missing.joined(separator: " nor "))", fix: fix)]
        default:
            return FirewallRules.matches(in: text, port: port).map { match in
                DoctorFinding(check: "firewall", status: match.effect == .drops ? .fail : .warn,
                              detail: "\(tool): \(match.effect == .drops ? "drops" : "may drop") \(match.traffic): \(match.rule)",
                              fix: "remove that rule or accept 5353/udp\(portFix) before it")
            }
        }
    }

    static func resolved(_ setting: String?) -> DoctorFinding {
        switch setting?.lowercased() {
        case nil:
            return DoctorFinding(check: "resolved", status: .ok, detail: "systemd-resolved does not run here")
        case "yes"?:
            return DoctorFinding(check: "resolved", status: .warn, detail: "systemd-resolved answers multicast DNS (MulticastDNS=yes) beside avahi-daemon",
                                 fix: "set MulticastDNS=no (or resolve) in /etc/systemd/resolved.conf and restart systemd-resolved")
        case let value?:
            return DoctorFinding(check: "resolved", status: .ok, detail: "systemd-resolved's MulticastDNS is \(value): avahi-daemon answers alone")
        }
    }

    static func pairedDevice(_ device: AgentDiagnosis.Device) -> [DoctorFinding] {
        let prefix = "peer \(device.name)"
        var findings: [DoctorFinding] = []
        if device.seenOverDNSSD {
            findings.append(DoctorFinding(check: "\(prefix): dns-sd", status: .ok,
                                          detail: "seen over DNS-SD at \(device.addresses.joined(separator: ", ")):\(device.port.map(String.init) ?? "?")"))
        } else if device.reachedByAddress {
            // Across subnets or a VPN this is how it should be; on one LAN, multicast is lost somewhere.
            let at = "\(device.addresses.joined(separator: ", ")):\(device.port.map(String.init) ?? "?")"
            let reached = device.atStoredAddress ? "at its stored address \(at)" : "at \(at), where it connected from"
            findings.append(DoctorFinding(check: "\(prefix): dns-sd", status: .warn,
                                          detail: "no record of \(device.name) over DNS-SD; reached \(reached) instead",
                                          fix: "nothing to do if it is on another subnet or a VPN; on one LAN, check multicast filtering (run doctor there too)"))
        } else {
            findings.append(DoctorFinding(check: "\(prefix): dns-sd", status: .fail, detail: "no record of \(device.name) (\(device.deviceID)) over DNS-SD",
                                          fix: "check that its agent runs and that both hosts are on one LAN without multicast filtering (run doctor there too); across subnets, give its address: handoff trust add \(device.deviceID) --address HOST[:PORT]"))
        }
        switch (device.probe, device.reachable) {
        case (.accepted, _):
            findings.append(DoctorFinding(check: "\(prefix): reachable", status: .ok, detail: "a pinned TLS connection opened"))
            findings.append(DoctorFinding(check: "\(prefix): tls", status: .ok, detail: "TLS and pairing accepted (hello and ping answered)"))
        case (.refused(let reason), _):
            findings.append(DoctorFinding(check: "\(prefix): reachable", status: .ok, detail: "an agent answers at its address"))
            findings.append(DoctorFinding(check: "\(prefix): tls", status: .fail, detail: "TLS or pairing refused: \(reason)",
                                          fix: "pair again (handoff trust remove, then handoff pair); the device may have a new identity or have unpaired this one"))
        case (.unreachable(let reason), let reachable):
            let liveness = reachable ? "" : "; liveness finds it unreachable too"
            findings.append(DoctorFinding(check: "\(prefix): reachable", status: .fail, detail: "cannot connect: \(reason)\(liveness)",
                                          fix: "check its link and that its firewall accepts its agent's port"))
            findings.append(DoctorFinding(check: "\(prefix): tls", status: .warn, detail: "not tried: no connection"))
        case (.notTried, _):
            findings.append(DoctorFinding(check: "\(prefix): reachable", status: .fail, detail: "no address known (not seen over DNS-SD, none stored)",
                                          fix: "see the dns-sd check above"))
        }
        if let ahead = device.clockAheadMilliseconds {
            let seconds = Double(ahead) / 1000
            if ahead > clockToleranceMilliseconds {
                findings.append(DoctorFinding(check: "\(prefix): clock", status: .warn,
                                              detail: "its clock is ahead of this one by at least \(Int(seconds)) s (its newest record is sealed in the future)",
                                              fix: "run NTP on both hosts (timedatectl set-ntp true)"))
            } else {
                findings.append(DoctorFinding(check: "\(prefix): clock", status: .ok, detail: "its newest record is not sealed in the future beyond \(clockToleranceMilliseconds / 1000) s"))
            }
        }
        return findings
    }
}
