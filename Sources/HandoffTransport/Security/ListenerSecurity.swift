import HandoffCore
import HandoffTrust
import NIOCore
import Synchronization

/// How the peer listener protects itself before a connection is authenticated (the pre-auth
/// resource exhaustion of KDE Connect's CVE-2020-26164 is the attack): TLS, a handshake deadline,
/// caps and rates per address, and a small maximum frame.
public struct ListenerSecurity: Sendable {
    /// TLS with this device's identity.
    public var tls: PeerTLS
    /// A connection must be authenticated (TLS handshake, then a paired peer's hello, or an
    /// accepted pairing request) within this time, else it is closed.
    public var handshakeDeadline: Duration
    /// The largest frame payload before authentication.
    public var maxFrameBytesBeforeAuthentication: Int
    /// Caps and rates for connections not yet authenticated.
    public var admission: ConnectionAdmission<ContinuousClock.Instant>.Limits
    /// Open connections by device, so that unpairing can close them.
    public var registry: PeerConnectionRegistry
    /// Whether a device (proven by its certificate in the TLS handshake) is paired: its
    /// connection is authenticated as soon as the handshake completes, before any frame is read.
    public var isPaired: @Sendable (DeviceID) -> Bool
    /// The most connections one device (paired or not) may have open to this listener at once.
    /// A connection over it is closed as soon as its TLS handshake names the device.
    public var maxConnectionsPerDevice: Int
    /// Called for each connection closed for being over ``maxConnectionsPerDevice``, with the
    /// device and how many have been refused so far.
    public var onRefusedOverCap: @Sendable (DeviceID, Int) -> Void

    /// The default of ``maxConnectionsPerDevice`` (`security.maxConnectionsPerDevice`). A device
    /// needs one connection for liveness and one per continuation or stream in flight. Each held
    /// connection costs the agent up to about 250 KB (TLS state and one partly received 64 KiB
    /// frame; docs/RELIABILITY.md), so one device, even a compromised one, holds at most about
    /// 16 MB. Load tests that continue more at once raise it.
    public static let defaultMaxConnectionsPerDevice = 64

    public init(tls: PeerTLS, handshakeDeadline: Duration = .seconds(1), maxFrameBytesBeforeAuthentication: Int = 4096,
                admission: ConnectionAdmission<ContinuousClock.Instant>.Limits = .init(), registry: PeerConnectionRegistry,
                maxConnectionsPerDevice: Int = Self.defaultMaxConnectionsPerDevice,
                onRefusedOverCap: @escaping @Sendable (DeviceID, Int) -> Void = { _, _ in },
                isPaired: @escaping @Sendable (DeviceID) -> Bool) {
        self.isPaired = isPaired
        self.maxConnectionsPerDevice = maxConnectionsPerDevice
        self.onRefusedOverCap = onRefusedOverCap
        self.tls = tls
        self.handshakeDeadline = handshakeDeadline
        self.maxFrameBytesBeforeAuthentication = maxFrameBytesBeforeAuthentication
        self.admission = admission
        self.registry = registry
    }
}

/// The listener's admission state, shared by its connections, with the channels it may have to
/// close to make room for a newcomer (``ConnectionAdmission``).
final class AdmissionControl: Sendable {
    typealias Admission = ConnectionAdmission<ContinuousClock.Instant>
    private struct State {
        var admission: Admission
        var channels: [Admission.ConnectionID: any Channel] = [:]
    }
    private let state: Mutex<State>
    private let refusals = Atomic<Int>(0)
    private let evictions = Atomic<Int>(0)

    init(limits: Admission.Limits) {
        state = Mutex(State(admission: Admission(limits: limits)))
    }

    /// Decides on `channel` from `address`: its ID when admitted (a connection evicted to make
    /// room is closed), nil when refused.
    func admit(_ channel: any Channel, address: String) -> Admission.ConnectionID? {
        let (decision, evicted) = state.withLock { state -> (Admission.Decision, (any Channel)?) in
            let decision = state.admission.admit(address: address, now: .now)
            if let id = decision.admitted { state.channels[id] = channel }
            return (decision, decision.evicted.flatMap { state.channels.removeValue(forKey: $0) })
        }
        if case .refuse = decision { refusals.add(1, ordering: .relaxed) }
        if let evicted {
            evictions.add(1, ordering: .relaxed)
            evicted.close(promise: nil)
        }
        return decision.admitted
    }

    func authenticated(_ id: Admission.ConnectionID) {
        state.withLock { state in
            state.admission.authenticated(id)
            state.channels[id] = nil  // never evicted once authenticated
        }
    }

    func closed(_ id: Admission.ConnectionID) {
        state.withLock { state in
            state.admission.closed(id)
            state.channels[id] = nil
        }
    }

    /// Connections refused so far.
    var refusedCount: Int { refusals.load(ordering: .relaxed) }
    /// Connections closed so far to make room for newer ones.
    var evictedCount: Int { evictions.load(ordering: .relaxed) }
}

/// One connection's authentication: until ``authenticate()``, its frames are small and its
/// handshake deadline runs.
public final class AuthenticationGate: Sendable {
    let maxFrameBytesBeforeAuthentication: Int
    private let authenticated = Atomic<Bool>(false)
    private let onAuthenticate: @Sendable () -> Void

    init(maxFrameBytesBeforeAuthentication: Int, onAuthenticate: @escaping @Sendable () -> Void) {
        self.maxFrameBytesBeforeAuthentication = maxFrameBytesBeforeAuthentication
        self.onAuthenticate = onAuthenticate
    }

    var isAuthenticated: Bool { authenticated.load(ordering: .acquiring) }

    /// The peer proved who it is and may use the connection: full frame sizes, no deadline.
    public func authenticate() {
        guard authenticated.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        onAuthenticate()
    }
}
