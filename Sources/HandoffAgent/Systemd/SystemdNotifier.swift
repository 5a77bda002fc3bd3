#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tells systemd about the service's state, as `sd_notify(3)` does: one datagram such as
/// `READY=1` or `STOPPING=1` to the socket named in `$NOTIFY_SOCKET` (a leading `@` names a
/// socket in the abstract namespace). Nothing is sent when the variable is unset (not started by
/// systemd with `Type=notify`).
public struct SystemdNotifier: Sendable {
    /// The socket's path as given in `NOTIFY_SOCKET`.
    public let socketPath: String

    /// The notifier for `environment`'s `NOTIFY_SOCKET`, or nil when it is unset or unusable.
    public init?(environment: [String: String]) {
        guard let path = environment["NOTIFY_SOCKET"], path.hasPrefix("/") || path.hasPrefix("@") else { return nil }
        self.init(socketPath: path)
    }

    /// A notifier for an explicit socket path (`@name` for the abstract namespace).
    public init(socketPath: String) { self.socketPath = socketPath }

    /// Sends `state` (e.g. `READY=1`) in one datagram; returns the errno on failure.
    @discardableResult
    public func notify(_ state: String) -> Int32? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketPath.utf8)
        let abstract = path.first == UInt8(ascii: "@")
        if abstract { path[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity else { return ENAMETOOLONG }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        // An abstract name is exactly its bytes; a path name includes its terminating NUL.
        let length = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + path.count + (abstract ? 0 : 1)

        #if canImport(Glibc)
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let descriptor = socket(AF_UNIX, SOCK_DGRAM, 0)
        #endif
        guard descriptor >= 0 else { return errno }
        defer { close(descriptor) }
        let bytes = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                sendto(descriptor, bytes, bytes.count, Int32(MSG_NOSIGNAL), socketAddress, socklen_t(length))
            }
        }
        return sent == bytes.count ? nil : errno
    }

    /// The state that starts a reload (`systemctl reload`): `RELOADING=1` with the monotonic
    /// clock's time in microseconds (`MONOTONIC_USEC`), as systemd.service(5) asks; `READY=1`
    /// ends it.
    public static func reloadingState(monotonicMicroseconds: UInt64) -> String {
        "RELOADING=1\nMONOTONIC_USEC=\(monotonicMicroseconds)"
    }

    /// `CLOCK_MONOTONIC` now, in microseconds (``reloadingState(monotonicMicroseconds:)``).
    public static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
    }
}
