import Foundation
import HandoffAgent
import HandoffTestSupport
import Synchronization
import XCTest

/// What a command printed and how it ended.
struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Drives `scripts/lab`: simulated hosts in network namespaces, each with its own D-Bus,
/// avahi-daemon and handoffd. Everything stays inside namespaces the lab created.
final class LabDriver: @unchecked Sendable {
    let name: String
    let packageRoot: URL
    let binDirectory: URL
    let hosts: Int
    /// How the hosts are connected (one link, or two subnets and a router).
    let topology: LabTopology
    /// An IPv6-only lab (`scripts/lab up N --ipv6-only`): fd00:198:18::K and fe80::K on each
    /// host's eth0, no IPv4, avahi-daemon over IPv6. One link only.
    let ipv6Only: Bool

    init(hosts: Int, topology: LabTopology = .oneLink, ipv6Only: Bool = false) throws {
        self.hosts = hosts
        self.topology = topology
        self.ipv6Only = ipv6Only
        self.name = "it\(Int.random(in: 1000...9999))"
        packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        if let dir = ProcessInfo.processInfo.environment["HANDOFF_BIN_DIR"] {
            binDirectory = URL(fileURLWithPath: dir)
        } else {
            // The test bundle sits next to the executables in the build folder.
            binDirectory = Bundle.main.bundleURL.deletingLastPathComponent()
        }
        guard getuid() == 0 else {
            throw LabError("the integration tests build simulated hosts with network namespaces and need root; run them as root (scripts/test does)")
        }
        for tool in ["handoffd", "handoff"] where !FileManager.default.isExecutableFile(atPath: binDirectory.appendingPathComponent(tool).path) {
            throw LabError("\(tool) not found in \(binDirectory.path); build first (swift build) or set HANDOFF_BIN_DIR")
        }
    }

    var handoffd: String { binDirectory.appendingPathComponent("handoffd").path }
    var handoffCLI: String { binDirectory.appendingPathComponent("handoff").path }

    /// Runs a command and waits for it; output goes through temporary files (no pipe deadlock).
    @discardableResult
    func run(_ argv: [String], environment: [String: String] = [:]) throws -> CommandResult {
        var env = ProcessInfo.processInfo.environment
        env["HANDOFFD"] = handoffd
        env.merge(environment) { $1 }
        let outPath = NSTemporaryDirectory() + "lab-\(UUID().uuidString).out"
        let errPath = NSTemporaryDirectory() + "lab-\(UUID().uuidString).err"
        defer {
            try? FileManager.default.removeItem(atPath: outPath)
            try? FileManager.default.removeItem(atPath: errPath)
        }
        // posix_spawn + waitpid: Foundation's Process sometimes never notices a child's exit here.
        let handle = try HarnessProcess.spawn(argv, environment: env, stdout: .file(outPath), stderr: .file(errPath))
        let status: Int32
        switch HarnessProcess.wait(handle) {
        case .exited(let code): status = code
        case .signalled(let signal): status = 128 + signal
        case .waitFailed: status = -1
        }
        let outURL = URL(fileURLWithPath: outPath)
        let errURL = URL(fileURLWithPath: errPath)
        return CommandResult(
            status: status,
            stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
    }

    /// `scripts/lab --name NAME ARGS...`; throws if it fails.
    @discardableResult
    func lab(_ args: String...) throws -> CommandResult { try lab(args) }

    @discardableResult
    func lab(_ args: [String], environment: [String: String] = [:]) throws -> CommandResult {
        let result = try run([packageRoot.appendingPathComponent("scripts/lab").path, "--name", name] + args, environment: environment)
        guard result.status == 0 else { throw LabError("lab \(args.joined(separator: " ")) failed (\(result.status)): \(result.stderr)\(result.stdout)") }
        return result
    }

    /// Runs a command on a host.
    @discardableResult
    func exec(_ host: String, _ argv: [String]) throws -> CommandResult {
        try run([packageRoot.appendingPathComponent("scripts/lab").path, "--name", name, "exec", host, "--"] + argv)
    }

    /// Runs the `handoff` CLI on a host.
    @discardableResult
    func handoff(_ host: String, _ args: String...) throws -> CommandResult {
        try exec(host, [handoffCLI] + args)
    }

    /// The host's state directory (`scripts/lab path`, asked once per host: it never moves).
    func path(_ host: String) throws -> String {
        if let known = paths.withLock({ $0[host] }) { return known }
        let path = try lab("path", host).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        paths.withLock { $0[host] = path }
        return path
    }
    private let paths = Mutex<[String: String]>([:])

    func up() throws { try lab(["up", "\(hosts)"] + topology.upArguments + (ipv6Only ? ["--ipv6-only"] : [])) }

    /// The host's address (`scripts/lab ip`); with `linkLocal`, in an IPv6-only lab, its
    /// link-local address with the scope, `fe80::K%eth0`.
    func address(_ host: String, linkLocal: Bool = false) throws -> String {
        try lab(["ip", host] + (linkLocal ? ["--link-local"] : [])).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
    func down() { _ = try? lab("down") }

    /// Writes a config for a host and (re)starts its agent with it; `environment` is added to
    /// the agent's. The agent has no session bus (no desktop notifications) unless
    /// `environment` gives one in `DBUS_SESSION_BUS_ADDRESS`: a test run from a desktop never
    /// notifies that desktop.
    ///
    /// The agent listens on an ephemeral port (`port: 0`) unless the config names one, or
    /// `defaultPort` asks for the product's default (52123): a restarted agent then comes back
    /// at a new endpoint, as the tests were written for. (A rotated advertising key no longer
    /// depends on it: liveness tells the paired devices a new key at once, InMemoryKeyAnnouncementTests.)
    func startAgent(_ host: String, config: [String: Any] = [:], environment: [String: String] = [:], defaultPort: Bool = false) throws {
        var full = config
        if full["port"] == nil, !defaultPort { full["port"] = 0 }
        let dir = try path(host)
        full["name"] = host
        full["socketPath"] = "\(dir)/handoff.sock"
        full["inboxDirectory"] = "\(dir)/apps"
        if full["stateDirectory"] == nil { full["stateDirectory"] = "\(dir)/state" }
        let data = try JSONSerialization.data(withJSONObject: full, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        let file = "\(dir)/test-config.json"
        try data.write(to: URL(fileURLWithPath: file))
        try lab("agent", "stop", host)
        try lab(["agent", "start", host, "--config", file], environment: ["DBUS_SESSION_BUS_ADDRESS": ""].merging(environment) { $1 })
    }

    /// Pairs the hosts' agents with each other by device ID (`scripts/lab trust`), as
    /// provisioning does; the pairing persists in each host's state directory.
    func pair(_ hosts: String...) throws {
        try lab(["trust"] + hosts)
    }

    /// The process ID of a host's agent, from its pid file.
    func agentPID(_ host: String) throws -> String {
        try String(contentsOfFile: "\(try path(host))/handoffd.pid", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// How many of a host's agent's threads have a name starting with `prefix` (`dnssd-browser`:
    /// the browser's poller and, with Avahi's dns_sd library, one thread per ref it holds).
    func agentThreads(_ host: String, named prefix: String) throws -> Int {
        let pid = try agentPID(host)
        return try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").filter { task in
            (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8))?.hasPrefix(prefix) == true
        }.count
    }

    /// The resident set of a host's agent, in KiB.
    func agentRSS(_ host: String) throws -> Int {
        let pid = try agentPID(host)
        guard let kib = try Self.statusNumbers("/proc/\(pid)/status")["VmRSS"] else { throw LabError("no VmRSS for \(host)'s agent (pid \(pid))") }
        return kib
    }

    /// How many times a host's agent's main thread has been switched out, voluntarily or not.
    func agentMainThreadSwitches(_ host: String) throws -> Int {
        let pid = try agentPID(host)
        let numbers = try Self.statusNumbers("/proc/\(pid)/task/\(pid)/status")
        guard let voluntary = numbers["voluntary_ctxt_switches"], let forced = numbers["nonvoluntary_ctxt_switches"] else {
            throw LabError("no context switches for \(host)'s agent's main thread (pid \(pid))")
        }
        return voluntary + forced
    }

    /// The numeric fields of a `/proc` status file, by name (the first number of each line).
    private static func statusNumbers(_ path: String) throws -> [String: Int] {
        var numbers: [String: Int] = [:]
        for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":"),
                let number = line[line.index(after: colon)...].split(whereSeparator: \.isWhitespace).first.flatMap({ Int($0) }) else { continue }
            numbers[String(line[..<colon])] = number
        }
        return numbers
    }

    /// A host's device ID, from `handoff status --json`.
    func deviceID(_ host: String) throws -> String {
        let status = try JSONSerialization.jsonObject(with: Data(try handoff(host, "status", "--json").stdout.utf8)) as? [String: Any]
        guard let id = status?["deviceID"] as? String else { throw LabError("no device ID from \(host)'s agent") }
        return id
    }

    func stopAgent(_ host: String) throws { try lab("agent", "stop", host) }
    func killAgent(_ host: String) throws { try lab("agent", "kill", host) }

    /// Starts a program on a host in the background, its output in `log`; returns its PID.
    func startBackground(_ host: String, _ argv: [String], log: String) throws -> Int32 {
        let command = argv.map { "'\($0.replacingOccurrences(of: "'", with: "'\\''"))'" }.joined(separator: " ")
        let result = try exec(host, ["sh", "-c", "\(command) > '\(log)' 2>&1 & echo $!"])
        guard result.status == 0, let pid = Int32(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw LabError("could not start \(argv[0]) on \(host): \(result.stderr)")
        }
        return pid
    }

    /// Polls `condition` every 50 ms until it holds or `timeout` passes; returns the time it took.
    @discardableResult
    func waitUntil(_ what: String, timeout: TimeInterval, _ condition: () throws -> Bool) throws -> TimeInterval {
        let start = Date()
        while Date().timeIntervalSince(start) < timeout {
            if try condition() { return Date().timeIntervalSince(start) }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw LabError("timed out after \(timeout) s waiting for \(what)")
    }

    /// `handoff status --json` on a host, parsed, once its agent's DNS-SD registration is confirmed
    /// (`registeredName` is set): a peer may list its activities sooner, pushed on the kept
    /// connection, before Avahi has finished probing the name.
    func registeredStatus(_ host: String, timeout: TimeInterval = 10) throws -> [String: Any] {
        var status: [String: Any] = [:]
        _ = try waitUntil("\(host)'s DNS-SD registration", timeout: timeout) {
            let result = try handoff(host, "status", "--json")
            status = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any] ?? [:]
            return status["registeredName"] is String
        }
        return status
    }

    /// The TCP connections established now between the agents of `host` and `peer`, whichever
    /// side dialled (a pair shares one, docs/PROTOCOL.md "One connection per pair of devices"),
    /// as `ss` in `host`'s namespace shows them: each by its two ends (the queue columns move,
    /// the ends do not). `ports`: the two agents' peer ports.
    func connectionsBetween(_ host: String, ports: (own: Int, peer: Int)) throws -> [String] {
        let filter = "( sport = :\(ports.own) or dport = :\(ports.peer) )"
        let out = try exec(host, ["ss", "-tnH", "state", "established", filter]).stdout
        return out.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            return fields.count > 3 ? "\(fields[2]) \(fields[3])" : nil
        }
    }

    /// ``connectionsBetween(_:ports:)`` on h2, with h1's agent at `h1Port`.
    func connectionsBetweenH2AndH1(h1Port: Int) throws -> [String] {
        guard let h2Port = try registeredStatus("h2")["port"] as? Int else { throw LabError("h2's status has no port") }
        return try connectionsBetween("h2", ports: (own: h2Port, peer: h1Port))
    }

    /// `handoff list --json` on a host, parsed.
    func offered(on host: String) throws -> [[String: Any]] {
        let result = try handoff(host, "list", "--json")
        guard result.status == 0, let data = result.stdout.data(using: .utf8),
            let list = try JSONSerialization.jsonObject(with: data) as? [[String: Any]]
        else { throw LabError("handoff list failed on \(host): \(result.stderr)") }
        return list
    }

    /// Publishes on `host`, returns the activity ID.
    func publish(_ host: String, _ args: String...) throws -> String {
        let result = try exec(host, [handoffCLI, "publish", "--json"] + args)
        guard result.status == 0, let data = result.stdout.data(using: .utf8),
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any], let id = object["id"] as? String
        else { throw LabError("publish failed on \(host): \(result.status) \(result.stderr)\(result.stdout)") }
        return id
    }

    /// Waits until `host` lists activity `id`; returns the time it took.
    @discardableResult
    func waitUntilListed(_ id: String, on host: String, timeout: TimeInterval = 5) throws -> TimeInterval {
        try waitUntil("\(id) listed on \(host)", timeout: timeout) { try offered(on: host).contains { $0["id"] as? String == id } }
    }

    /// `handoff continue ID --json` on a host: the exit status and the parsed JSON.
    func continueActivity(_ id: String, on host: String) throws -> (status: Int32, json: [String: Any]) {
        let result = try handoff(host, "continue", id, "--json")
        guard let data = result.stdout.data(using: .utf8), let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw LabError("continue printed no JSON (\(result.status)): \(result.stdout) \(result.stderr)")
        }
        return (result.status, object)
    }
}

struct LabError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Dictionary where Key == String, Value == Any {
    /// The NSUserActivity error code in a `{"error": {...}}` response.
    var errorCode: Int? { (self["error"] as? [String: Any])?["code"] as? Int }
}
