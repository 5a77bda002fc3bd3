import Foundation
import HandoffAgent
import HandoffTestSupport
import Logging
import ServiceLifecycle
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

private struct BindFailed: Error { let errno: Int32 }

/// A datagram socket bound where systemd's would be, reading what a notifier sends.
private final class NotifySocket: Sendable {
    let descriptor: Int32
    let name: String  // as NOTIFY_SOCKET gives it
    let path: String?

    init(abstract: Bool) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let unique = "handoff-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        var bytes: [UInt8]
        if abstract {
            name = "@" + unique
            path = nil
            bytes = [0] + Array(unique.utf8)
        } else {
            path = NSTemporaryDirectory() + unique
            name = path!
            bytes = Array(path!.utf8) + [0]
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) } }
        guard bound == 0 else { throw BindFailed(errno: errno) }
    }

    /// The next datagram, waiting up to 10 s without blocking a thread of the cooperative pool
    /// (the service under test runs there).
    func receive() async -> String? {
        var buffer = [UInt8](repeating: 0, count: 256)
        for _ in 0..<2000 {
            let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count >= 0 { return String(decoding: buffer.prefix(count), as: UTF8.self) }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return nil
    }

    deinit {
        close(descriptor)
        if let path { unlink(path) }
    }
}

@Suite("systemd readiness: READY=1 and STOPPING=1 as datagrams to NOTIFY_SOCKET")
struct SystemdNotifierTests {
    @Test("a datagram reaches a socket named by a path or in the abstract namespace", arguments: [false, true])
    func sendsDatagram(abstract: Bool) async throws {
        let socket = try NotifySocket(abstract: abstract)
        let notifier = try #require(SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.name]))
        #expect(notifier.notify("READY=1") == nil)
        #expect(await socket.receive() == "READY=1")
    }

    @Test("no NOTIFY_SOCKET, or a relative one, means no notifier; a missing socket is an error, not a crash")
    func withoutSocket() {
        #expect(SystemdNotifier(environment: [:]) == nil)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": "relative"]) == nil)
        #expect(SystemdNotifier(socketPath: "/nonexistent/notify").notify("READY=1") != nil)
    }

    @Test("READY=1 waits for the DNS-SD registration; STOPPING=1 comes when graceful shutdown begins")
    func readyAfterRegistrationThenStopping() async throws {
        let socket = try NotifySocket(abstract: false)
        let clock = ManualClock()
        let registered = Atomic<Bool>(false)
        let service = SystemdReadinessService(
            notifier: SystemdNotifier(socketPath: socket.name), clock: clock, registrationWait: .seconds(10),
            pollInterval: .milliseconds(50), logger: Logger(label: "test")
        ) { registered.load(ordering: .relaxed) }
        let group = ServiceGroup(services: [service], logger: Logger(label: "test"))
        async let running: Void = group.run()
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: .milliseconds(50))  // still not registered: polls again
        try await clock.waitForSleepers(count: 1)
        registered.store(true, ordering: .relaxed)
        clock.advance(by: .milliseconds(50))
        #expect(await socket.receive() == "READY=1")
        await group.triggerGracefulShutdown()
        try await running
        #expect(await socket.receive() == "STOPPING=1")
    }

    @Test("without a registration, READY=1 comes after registrationWait")
    func readyAfterWait() async throws {
        let socket = try NotifySocket(abstract: true)
        let clock = ManualClock()
        let service = SystemdReadinessService(
            notifier: SystemdNotifier(socketPath: socket.name), clock: clock, registrationWait: .seconds(1),
            pollInterval: .milliseconds(500), logger: Logger(label: "test")
        ) { false }
        let group = ServiceGroup(services: [service], logger: Logger(label: "test"))
        async let running: Void = group.run()
        for _ in 0..<2 {
            try await clock.waitForSleepers(count: 1)
            clock.advance(by: .milliseconds(500))
        }
        #expect(await socket.receive() == "READY=1")
        await group.triggerGracefulShutdown()
        try await running
        #expect(await socket.receive() == "STOPPING=1")
    }
}
