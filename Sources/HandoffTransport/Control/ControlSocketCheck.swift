import HandoffCore
import HandoffTrust
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What every client of the agent's control socket (the `handoff` CLI, HandoffKit apps and their
/// stream connections) checks before it sends a byte, and what the agent checks of its own socket
/// directory: one implementation for both ends.
///
/// - The socket's directory must be this user's (``PrivateDirectory``): a real directory, not a
///   symbolic link, owned by this uid, not writable by other users, and of mode 0700 when it sits
///   in a directory others may write to (such as `/tmp/handoff-UID`, the default when
///   `XDG_RUNTIME_DIR` is unset). Otherwise another user could have made it and listen there.
/// - The process listening must run as this uid (`SO_PEERCRED` of the connected socket); an
///   unknown uid is refused too.
public enum ControlSocketCheck {
    /// The mode bits the socket's directory must not have: none for group and other when its
    /// parent is writable by others (`/tmp`), else no write for group and other.
    public static func forbiddenBits(forDirectory directory: String) -> UInt32 {
        var parent = stat()
        let shared = lstat(PrivateDirectory.parent(of: directory), &parent) == 0 && UInt32(parent.st_mode) & 0o002 != 0
        return shared ? PrivateDirectory.privateMode : PrivateDirectory.noOtherWrite
    }

    /// Throws ``ControlSocketError`` unless the directory holding `socketPath` is this user's.
    public static func checkDirectory(ofSocket socketPath: String) throws(ControlSocketError) {
        let directory = PrivateDirectory.parent(of: socketPath)
        do {
            try PrivateDirectory.check(directory, forbidding: forbiddenBits(forDirectory: directory), purpose: "the control socket's directory")
        } catch {
            var reason = "\(error) (--socket, HANDOFF_SOCKET or the agent's config key socketPath)"
            if directory == "/tmp/handoff-\(getuid())" {
                reason += "; it is the default only because XDG_RUNTIME_DIR is unset: set XDG_RUNTIME_DIR, or remove \(directory) and start handoffd again"
            }
            throw ControlSocketError(socketPath: socketPath, reason: reason)
        }
    }

    /// Throws ``ControlSocketError`` unless the process at the other end of `channel` (connected)
    /// runs as this user.
    static func checkServer(_ channel: any Channel, socketPath: String) async throws(ControlSocketError) {
        let uid = (try? await PeerCredentials.uid(of: channel).get()) ?? nil
        guard let uid else {
            throw ControlSocketError(socketPath: socketPath, reason: "the uid of the process listening at \(socketPath) cannot be learnt (SO_PEERCRED), so it was not trusted")
        }
        guard uid == getuid() else {
            throw ControlSocketError(socketPath: socketPath, reason: "the process listening at \(socketPath) runs as uid \(uid), not as this user (uid \(getuid())): it is not your agent. Nothing was sent. Start your own handoffd and point --socket or HANDOFF_SOCKET at its socketPath")
        }
    }
}

/// The control socket failed a ``ControlSocketCheck``: nothing was sent to it.
public struct ControlSocketError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The socket path.
    public var socketPath: String
    /// What was wrong, and what to do.
    public var reason: String

    public init(socketPath: String, reason: String) {
        self.socketPath = socketPath
        self.reason = reason
    }

    public var description: String { reason }
}
