import HandoffCore
import HandoffTrust
import NIOCore
import NIOPosix
import NIOSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension PeerConnectError {
    /// What NIO or TLS raised while connecting to a peer, as a ``PeerConnectError`` with its code
    /// and the words users see. `expected` is the device the connection was pinned to (nil for an
    /// unpinned one).
    init(connecting error: any Error, expected: DeviceID?) {
        if let error = error as? PeerConnectError {
            self = error
        } else if let error = error as? NIOConnectionError {
            // Every address failed: the first one's reason.
            if let first = error.connectionErrors.first {
                self.init(socket: first.error)
            } else {
                self.init(.other, reason: "\(error)", underlying: error)
            }
        } else if error is NIOSSLError || error is BoringSSLError {
            if let expected {
                self.init(.wrongCertificate, reason: "the peer did not present the certificate of device \(expected.shortID) (\(error)); it may be an impostor, or it made a new identity and must be paired again",
                          underlying: error)
            } else {
                self.init(.handshakeFailed, reason: "TLS handshake failed: \(error)", underlying: error)
            }
        } else {
            self.init(socket: error)
        }
    }

    /// A failure below TLS: the socket's error, a connect timeout, or anything else.
    private init(socket error: any Error) {
        if let error = error as? PeerConnectError {
            self = error
        } else if let io = error as? IOError {
            let code: Code = switch io.errnoCode {
            case ECONNREFUSED: .connectionRefused
            case ETIMEDOUT: .timedOut
            default: .socketFailed
            }
            self.init(code, reason: String(cString: strerror(io.errnoCode)).lowercased(), underlying: io)
        } else if let channel = error as? ChannelError, case .connectTimeout = channel {
            self.init(.timedOut, reason: "connect timed out", underlying: channel)
        } else {
            self.init(.other, reason: "\(error)", underlying: error)
        }
    }
}
