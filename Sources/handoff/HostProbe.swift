import HandoffCore

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Gathers what `handoff doctor` checks on this host outside the agent (``HostObservations``):
/// interfaces from `getifaddrs` and `/sys/class/net/NAME/flags`, the firewall tools' listings,
/// systemd-resolved's MulticastDNS setting, and `avahi-daemon --check` for when the agent does not
/// answer. Only reads; judging is ``DoctorVerdicts``'.
enum HostProbe {
    static func observe() -> HostObservations {
        HostObservations(interfaces: interfaces(), firewalls: firewalls(), resolvedMulticastDNS: resolvedMulticastDNS())
    }

    /// `avahi-daemon --check`: true when it runs, false when not, nil when it is not installed.
    static func avahiDaemonRunning() -> Bool? {
        run("avahi-daemon", ["--check"]).map { $0.status == 0 }
    }

    static func interfaces() -> [HostObservations.Interface] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return [] }
        defer { freeifaddrs(list) }
        var order: [String] = []
        var found: [String: HostObservations.Interface] = [:]
        var cursor = list
        while let entry = cursor?.pointee {
            cursor = entry.ifa_next
            let name = String(cString: entry.ifa_name)
            let flags = sysFlags(name) ?? UInt32(entry.ifa_flags)
            if found[name] == nil {
                order.append(name)
                found[name] = HostObservations.Interface(name: name, up: flags & UInt32(IFF_UP) != 0, loopback: flags & UInt32(IFF_LOOPBACK) != 0,
                                                         multicast: flags & UInt32(IFF_MULTICAST) != 0, addresses: [])
            }
            if let address = entry.ifa_addr, let text = numericHost(address) { found[name]?.addresses.append(text) }
        }
        return order.compactMap { found[$0] }
    }

    /// `/sys/class/net/NAME/flags` (hexadecimal), which is what the kernel says now.
    private static func sysFlags(_ name: String) -> UInt32? {
        guard let text = try? String(contentsOfFile: "/sys/class/net/\(name)/flags", encoding: .utf8) else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return UInt32(trimmed.hasPrefix("0x") ? String(trimmed.dropFirst(2)) : trimmed, radix: 16)
    }

    private static func numericHost(_ address: UnsafeMutablePointer<sockaddr>) -> String? {
        let family = Int32(address.pointee.sa_family)
        guard family == AF_INET || family == AF_INET6 else { return nil }
        let length = socklen_t(family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(address, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else { return nil }
        return String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func firewalls() -> [HostObservations.Firewall] {
        [
            HostObservations.Firewall(tool: "nftables", listing: listing("nft", ["list", "ruleset"])),
            HostObservations.Firewall(tool: "iptables", listing: listing("iptables", ["-S"])),
            HostObservations.Firewall(tool: "ip6tables", listing: listing("ip6tables", ["-S"])),
            HostObservations.Firewall(tool: "firewalld", listing: firewalld()),
            HostObservations.Firewall(tool: "ufw", listing: listing("ufw", ["status"])),
        ]
    }

    private static func firewalld() -> HostObservations.FirewallListing {
        guard let state = run("firewall-cmd", ["--state"]) else { return .notInstalled }
        // Not running: it filters nothing.
        guard state.status == 0 else { return .notInstalled }
        return listing("firewall-cmd", ["--list-all"])
    }

    private static func listing(_ tool: String, _ arguments: [String]) -> HostObservations.FirewallListing {
        guard let result = run(tool, arguments) else { return .notInstalled }
        guard result.status == 0 else {
            let words = result.output.split(separator: "\n").first.map(String.init) ?? "exit status \(result.status)"
            return .unreadable(words)
        }
        return .listed(result.output)
    }

    /// systemd-resolved's global MulticastDNS setting (`resolvectl mdns`), nil when it does not run.
    static func resolvedMulticastDNS() -> String? {
        guard let result = run("resolvectl", ["mdns"]), result.status == 0 else { return nil }
        // "Global: yes" then "Link 2 (eth0): no" lines.
        for line in result.output.split(separator: "\n") where line.hasPrefix("Global:") {
            return line.dropFirst("Global:".count).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }

    /// Runs a tool found in PATH, /usr/sbin or /sbin; its exit status and its output (standard
    /// output and error). Nil when the tool is not installed.
    static func run(_ tool: String, _ arguments: [String]) -> (status: Int32, output: String)? {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin"]
        guard let executable = path.map({ "\($0)/\(tool)" }).first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
