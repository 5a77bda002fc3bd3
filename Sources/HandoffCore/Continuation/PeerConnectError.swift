/// Why a connection to a peer could not be opened: a stable ``Code`` to act on, the words for
/// the user (``reason``, such as "connection refused") and the error underneath.
///
/// Code that reacts to a failure switches on ``code``; the text is only for people.
public struct PeerConnectError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a value to switch on. Codes may be added; their names do not change.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Hashable, Sendable {
            case connectionRefused, timedOut, socketFailed, noPinnedIdentity, wrongCertificate, handshakeFailed, other
        }
        private let value: Value

        private init(_ value: Value) { self.value = value }

        /// Nothing listens at the address (`ECONNREFUSED`): on a LAN, the host is up and no agent
        /// runs there.
        public static let connectionRefused = Code(.connectionRefused)
        /// The connection was not set up within the connect timeout.
        public static let timedOut = Code(.timedOut)
        /// The socket failed otherwise (no route to the host, the network is down, …).
        public static let socketFailed = Code(.socketFailed)
        /// The endpoint carries no device ID to pin: only paired peers can be reached. Nothing
        /// was sent.
        public static let noPinnedIdentity = Code(.noPinnedIdentity)
        /// An agent answered, but the TLS handshake of a connection pinned to a device failed: it
        /// did not present that device's certificate (an impostor, or a device that made a new
        /// identity).
        public static let wrongCertificate = Code(.wrongCertificate)
        /// An agent answered, but the TLS handshake of an unpinned connection failed.
        public static let handshakeFailed = Code(.handshakeFailed)
        /// Any other failure.
        public static let other = Code(.other)

        /// The code's name, as written above ("connectionRefused").
        public var description: String { value.rawValue }
    }

    /// What went wrong.
    public var code: Code
    /// Why, in a few words for the user ("connection refused").
    public var reason: String
    /// The error the transport raised, if any.
    public var underlying: (any Error)?

    public init(_ code: Code, reason: String, underlying: (any Error)? = nil) {
        self.code = code
        self.reason = reason
        self.underlying = underlying
    }

    /// The ``reason``: what users see.
    public var description: String { reason }
}
