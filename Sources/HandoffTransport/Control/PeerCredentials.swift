import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The uid of the process at the other end of a connected Unix socket, as the kernel recorded it
/// when the connection was made: `SO_PEERCRED` on Linux, `LOCAL_PEERCRED` on Darwin. Both ends use
/// it: the agent to refuse other users' processes, the clients to refuse an agent of another user.
enum PeerCredentials {
    /// The layout of Linux's `struct ucred`, which Swift's Glibc module does not export.
    struct LinuxCredentials: Sendable {
        var pid: Int32
        var uid: UInt32
        var gid: UInt32
    }

    /// The layout of Darwin's `struct xucred` (its version, uid, group count and 16 groups).
    struct DarwinCredentials: Sendable {
        var version: UInt32
        var uid: UInt32
        var groupCount: Int16
        var groups: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32,
                     UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)
    }

    /// The peer's uid; nil when it cannot be learnt (the caller must then refuse the peer).
    static func uid(of channel: any Channel) -> EventLoopFuture<UInt32?> {
        guard let provider = channel as? any SocketOptionProvider else { return channel.eventLoop.makeSucceededFuture(nil) }
        #if os(Linux)
        // SO_PEERCRED is 17 on Linux.
        let credentials: EventLoopFuture<LinuxCredentials> = provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(17))
        return credentials.map { Optional($0.uid) }.recover { _ in nil }
        #elseif canImport(Darwin)
        // SOL_LOCAL is 0 and LOCAL_PEERCRED 1 on Darwin.
        let credentials: EventLoopFuture<DarwinCredentials> = provider.unsafeGetSocketOption(level: SocketOptionLevel(0), name: SocketOptionName(1))
        return credentials.map { Optional($0.uid) }.recover { _ in nil }
        #else
        return channel.eventLoop.makeSucceededFuture(nil)
        #endif
    }
}
