/// Reads a firewall listing (nftables' `nft list ruleset`, `iptables -S`) for rules that drop
/// mDNS (5353/udp) or the agent's TCP port. Conservative: a rule that names the port and drops
/// or rejects is reported as dropping; a drop that may catch the traffic without naming it
/// (a whole protocol, multicast, a chain whose policy is drop with no accept for the port) as
/// "may drop". Forward chains are skipped: they do not carry this host's own traffic.
public enum FirewallRules {
    /// What a rule does to the traffic looked for.
    public enum Effect: Sendable, Equatable {
        case drops
        case mayDrop
    }

    /// A rule that (may) drop the traffic: the rule as listed, and what it catches.
    public struct Match: Sendable, Equatable {
        /// `mDNS (5353/udp)` or `the agent's port (N/tcp)`.
        public var traffic: String
        public var effect: Effect
        /// The rule's line, trimmed.
        public var rule: String

        public init(traffic: String, effect: Effect, rule: String) {
            self.traffic = traffic
            self.effect = effect
            self.rule = rule
        }
    }

    /// The mDNS port.
    public static let mDNSPort = 5353

    /// The rules of `listing` that drop or may drop 5353/udp or `port`/tcp.
    public static func matches(in listing: String, port: Int?) -> [Match] {
        var targets: [(traffic: String, port: Int, proto: String, hints: [String])] = [
            ("mDNS (\(mDNSPort)/udp)", mDNSPort, "udp", ["224.0.0.251", "224.0.0.0/4", "ff02::fb", "multicast"]),
        ]
        if let port, port > 0 { targets.append(("the agent's port (\(port)/tcp)", port, "tcp", [])) }
        var matches: [Match] = []
        var chain = Chain()
        var chains: [Chain] = []
        for raw in listing.split(separator: "\n", omittingEmptySubsequences: true) {
            let line = String(raw.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
            let tokens = tokenize(line)
            guard let first = tokens.first else { continue }
            // nftables' structure.
            if first == "chain" {
                chains.append(chain)
                chain = Chain(name: tokens.dropFirst().first ?? "")
                continue
            }
            if first == "type", tokens.contains("hook") {
                chain.hook = tokens.firstIndex(of: "hook").flatMap { tokens.indices.contains($0 + 1) ? tokens[$0 + 1] : nil } ?? ""
                if let policy = tokens.firstIndex(of: "policy"), tokens.indices.contains(policy + 1), tokens[policy + 1].hasPrefix("drop") {
                    chain.policyDrop = line
                }
                continue
            }
            // iptables' structure: -P CHAIN POLICY, -A CHAIN rule.
            if first == "-p" || first == "-a" || first == "-n" {
                let name = tokens.dropFirst().first ?? ""
                if chain.name != name {
                    chains.append(chain)
                    chain = Chain(name: name, hook: name)
                }
                if first == "-p" {
                    if tokens.dropFirst(2).first == "drop" { chain.policyDrop = line }
                    continue
                }
            }
            guard chain.hook != "forward" else { continue }
            let ports = destinationPorts(tokens)
            let verdictDrop = tokens.contains("drop") || tokens.contains("reject")
            for target in targets {
                let otherProto = target.proto == "udp" ? "tcp" : "udp"
                let protoOK = !(tokens.contains(otherProto) && !tokens.contains(target.proto))
                if ports.contains(target.port), protoOK, tokens.contains("accept") { chain.accepted.insert(target.port) }
                guard verdictDrop, !line.contains("ct state invalid"), !tokens.contains("invalid") else { continue }
                if ports.contains(target.port) && protoOK {
                    matches.append(Match(traffic: target.traffic, effect: .drops, rule: line))
                } else if ports.isEmpty, tokens.contains(target.proto) || target.hints.contains(where: { line.lowercased().contains($0) }) {
                    matches.append(Match(traffic: target.traffic, effect: .mayDrop, rule: line))
                }
            }
        }
        chains.append(chain)
        for chain in chains where chain.hook == "input" || chain.hook == "output" {
            guard let policy = chain.policyDrop else { continue }
            for target in targets where !chain.accepted.contains(target.port) {
                matches.append(Match(traffic: target.traffic, effect: .mayDrop, rule: "chain \(chain.name): \(policy) (no rule accepts \(target.port)/\(target.proto))"))
            }
        }
        return matches
    }

    private struct Chain {
        var name = ""
        var hook = ""
        var policyDrop: String?
        var accepted: Set<Int> = []
    }

    /// The line in lower case, split at blanks, commas, braces and semicolons.
    private static func tokenize(_ line: String) -> [String] {
        line.lowercased().split(whereSeparator: { " \t,{};".contains($0) }).map(String.init)
    }

    /// The destination ports a rule names (`dport 5353`, `dport { 53, 5353 }`, `--dport 5353`,
    /// `--dports 1:6000`): a range names every port in it.
    private static func destinationPorts(_ tokens: [String]) -> PortSet {
        var ports = PortSet()
        var index = 0
        while index < tokens.count {
            let token = tokens[index]
            index += 1
            guard token == "dport" || token == "--dport" || token == "--dports" || token == "dports" else { continue }
            while index < tokens.count, let range = portRange(tokens[index]) {
                ports.ranges.append(range)
                index += 1
            }
        }
        return ports
    }

    private static func portRange(_ token: String) -> ClosedRange<Int>? {
        if let port = Int(token) { return port...port }
        for separator: Character in ["-", ":"] {
            let parts = token.split(separator: separator)
            if parts.count == 2, let low = Int(parts[0]), let high = Int(parts[1]), low <= high { return low...high }
        }
        return nil
    }

    private struct PortSet {
        var ranges: [ClosedRange<Int>] = []
        var isEmpty: Bool { ranges.isEmpty }
        func contains(_ port: Int) -> Bool { ranges.contains { $0.contains(port) } }
    }
}
