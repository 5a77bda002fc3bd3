import Synchronization

/// How opening a multiplexed connection to a peer ended.
public enum LinkOpening: Sendable {
    /// Open, hello exchanged, multiplexing agreed.
    case multiplexed(MultiplexedConnection)
    /// Open and hello exchanged, but the peer does not multiplex: the connection serves fetches
    /// one at a time (``IdleConnectionPool``).
    case plain(any FrameConnection)
    /// Not opened, and why.
    case failed(LinkFailure)
}

/// Why a multiplexed connection did not open: each fetch waiting for it turns this into its own
/// ``ContinuationStateMachine`` failure, so the code and message are those of a connection of
/// its own (``apply(to:)``).
public enum LinkFailure: Sendable {
    case connectFailed(String)
    case connectTimedOut(Duration)
    /// No hello back within the fetch deadline.
    case helloTimedOut(Duration)
    /// The source's first frame was not a hello we can speak with (an error refusing this
    /// device, or a hello with no common version).
    case answered(Frame)
    /// Closed without answering.
    case closed
    /// Broke before answering.
    case broke(any Error)

    /// The failure as `machine` (started, not yet connected) reports it.
    public func apply(to machine: inout ContinuationStateMachine) -> ContinuationStateMachine.Action {
        switch self {
        case .connectFailed(let reason): return machine.connectFailed(reason)
        case .connectTimedOut(let timeout): return machine.connectTimedOut(after: timeout)
        default: break
        }
        _ = machine.connected()
        switch self {
        case .helloTimedOut(let timeout): return machine.fetchTimedOut(after: timeout)
        case .answered(let frame): return machine.received(frame)
        case .closed: return machine.closed()
        case .broke(let error): return machine.receiveFailed(error)
        case .connectFailed, .connectTimedOut: return .none
        }
    }
}

/// The multiplexed connections kept to peers: at most one per peer, shared by every fetch to it,
/// and the endpoints found not to multiplex.
///
/// The one a fetch finds first is the peer's liveness connection, when liveness has one open that
/// agreed on multiplexing (``share(_:device:)``): one connection per pair of devices, up before
/// the first continue, so that no fetch pays a handshake. Without one (the peer is not watched
/// yet, or the client runs no liveness, as `handoff-bench` does), a fetch opens a connection of
/// the links' own to the endpoint: one caller opens it; the others that want it meanwhile wait
/// for that opening rather than open their own. A liveness connection shared later takes over
/// from it (``MultiplexedConnection/retire()``).
public final class MultiplexedLinks: Sendable {
    /// What a caller gets for an endpoint.
    public enum Link: Sendable {
        /// The shared connection.
        case multiplexed(MultiplexedConnection)
        /// The peer does not multiplex (or the opening this caller joined has just ended): fetch
        /// the way of a connection of its own.
        case plain
        /// The opening failed (the same failure for everyone who waited for it).
        case failed(LinkFailure)
        /// The caller was cancelled while it waited.
        case cancelled
    }

    private enum Slot {
        case opening(waiters: [UInt64: CheckedContinuation<Link, Never>])
        case open(MultiplexedConnection)
        case plain
    }

    private struct State {
        var slots: [PeerEndpoint: Slot] = [:]
        /// The liveness connections, by the device ID they are pinned to.
        var shared: [[UInt8]: MultiplexedConnection] = [:]
        var nextWaiter: UInt64 = 0

        /// The open liveness connection to the device `endpoint` is pinned to.
        func sharedConnection(for endpoint: PeerEndpoint) -> MultiplexedConnection? {
            guard let device = endpoint.expectedIdentity, let connection = shared[device], connection.isOpen else { return nil }
            return connection
        }
    }

    private let state = Mutex(State())
    /// Where openings, readers and closes run: they outlive the caller who started them.
    private let background: BackgroundSpawner
    /// Receives the connections of peers that do not multiplex (the idle pool).
    private let keepPlain: @Sendable (any FrameConnection, PeerEndpoint) -> Void

    /// - Parameters:
    ///   - background: runs each opening, each connection's reader and each close (the agent's
    ///     `BackgroundWork`).
    ///   - keepPlain: takes an open connection, hello exchanged, to a peer that does not
    ///     multiplex, for fetches one at a time.
    public init(background: BackgroundSpawner, keepPlain: @escaping @Sendable (any FrameConnection, PeerEndpoint) -> Void) {
        self.background = background
        self.keepPlain = keepPlain
    }

    /// The connection to `endpoint`: the open one, the one being opened once it is, or one that
    /// `open` opens now (in the background, so that no caller's cancellation cuts it short; when
    /// the background has stopped, the callers get ``Link/failed(_:)`` with ``LinkFailure/closed``).
    public func link(to endpoint: PeerEndpoint, open: @escaping @Sendable () async -> LinkOpening) async -> Link {
        let id: UInt64
        let opens: Bool
        do {
            let found = state.withLock { s -> (Link?, UInt64, Bool) in
                if let connection = s.sharedConnection(for: endpoint) { return (.multiplexed(connection), 0, false) }
                switch s.slots[endpoint] {
                case .open(let connection) where connection.isOpen: return (.multiplexed(connection), 0, false)
                case .plain: return (.plain, 0, false)
                case .opening:
                    s.nextWaiter += 1
                    return (nil, s.nextWaiter, false)
                case .open, nil:
                    s.slots[endpoint] = .opening(waiters: [:])
                    s.nextWaiter += 1
                    return (nil, s.nextWaiter, true)
                }
            }
            if let link = found.0 { return link }
            (id, opens) = (found.1, found.2)
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Link, Never>) in
                let settled = state.withLock { s -> Link? in
                    if Task.isCancelled { return .cancelled }
                    switch s.slots[endpoint] {
                    case .opening(var waiters):
                        waiters[id] = waiter
                        s.slots[endpoint] = .opening(waiters: waiters)
                        return nil
                    case .open(let connection): return .multiplexed(connection)
                    // Settled between the two looks: a failure is not kept, so this caller
                    // fetches the way of a connection of its own, which reports its own.
                    case .plain, nil: return .plain
                    }
                }
                // Started once the opener waits (its own result cannot pass it by), and even when
                // the opener was cancelled: the others may wait for it.
                if opens {
                    background.spawn({ self.opened(await open(), for: endpoint) },
                                     ifStopped: { self.opened(.failed(.closed), for: endpoint) })
                }
                if let settled { waiter.resume(returning: settled) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> CheckedContinuation<Link, Never>? in
                guard case .opening(var waiters) = s.slots[endpoint], let waiter = waiters.removeValue(forKey: id) else { return nil }
                s.slots[endpoint] = .opening(waiters: waiters)
                return waiter
            }
            waiter?.resume(returning: .cancelled)
        }
    }

    /// The open multiplexed connection to `endpoint`, if there is one (for a `continued` notice).
    public func openConnection(to endpoint: PeerEndpoint) -> MultiplexedConnection? {
        state.withLock { s in
            if let connection = s.sharedConnection(for: endpoint) { return connection }
            if case .open(let connection) = s.slots[endpoint], connection.isOpen { return connection }
            return nil
        }
    }

    /// How many multiplexed connections are open to `endpoint` (to all endpoints when nil): the
    /// links' own and the liveness connections shared.
    public func count(_ endpoint: PeerEndpoint? = nil) -> Int {
        state.withLock { s in
            let own = s.slots.filter { key, slot in
                guard endpoint == nil || key == endpoint, case .open(let connection) = slot else { return false }
                return connection.isOpen
            }.count
            let shared = endpoint.map { s.sharedConnection(for: $0) == nil ? 0 : 1 } ?? s.shared.values.filter(\.isOpen).count
            return own + shared
        }
    }

    /// Fetches to `device` go on `connection` from now on: the liveness connection, which agreed
    /// on multiplexing and whose reader passes the replies on (``MultiplexedConnection/received(_:)``).
    /// A connection the links opened to the device is retired: its fetches in flight finish, then
    /// it closes.
    public func share(_ connection: MultiplexedConnection, device: [UInt8]) {
        let retired = state.withLock { s -> [MultiplexedConnection] in
            s.shared[device] = connection
            var retired: [MultiplexedConnection] = []
            for (endpoint, slot) in s.slots where endpoint.expectedIdentity == device {
                guard case .open(let own) = slot else { continue }
                s.slots.removeValue(forKey: endpoint)
                retired.append(own)
            }
            return retired
        }
        for own in retired where own.retire() { background.spawn { await own.close() } }
    }

    /// The liveness connection to `device` ended (its reader ends its fetches in flight): the next
    /// fetch goes another way.
    public func unshare(_ connection: MultiplexedConnection, device: [UInt8]) {
        state.withLock { s in
            if s.shared[device] === connection { s.shared.removeValue(forKey: device) }
        }
    }

    /// Closes the connections to the endpoints that match and forgets which of them do not
    /// multiplex (a peer found unreachable; the agent stopping).
    public func discard(where matches: (PeerEndpoint) -> Bool) {
        let closing = state.withLock { s -> [MultiplexedConnection] in
            var closing: [MultiplexedConnection] = []
            for (endpoint, slot) in s.slots where matches(endpoint) {
                switch slot {
                case .open(let connection):
                    closing.append(connection)
                    s.slots.removeValue(forKey: endpoint)
                case .plain:
                    s.slots.removeValue(forKey: endpoint)
                case .opening:
                    break  // it settles by itself, within its deadlines
                }
            }
            return closing
        }
        for connection in closing { background.spawn { await connection.close() } }
    }

    private func opened(_ opening: LinkOpening, for endpoint: PeerEndpoint) {
        let link: Link
        let connection: MultiplexedConnection?
        switch opening {
        case .multiplexed(let c): (link, connection) = (.multiplexed(c), c)
        case .plain(let c):
            keepPlain(c, endpoint)
            (link, connection) = (.plain, nil)
        case .failed(let failure): (link, connection) = (.failed(failure), nil)
        }
        let (waiters, handed, superseded) = state.withLock { s -> ([CheckedContinuation<Link, Never>], Link, Bool) in
            guard case .opening(let waiters) = s.slots[endpoint] else { return ([], link, false) }
            if case .multiplexed = link, let shared = s.sharedConnection(for: endpoint) {
                // The liveness connection was shared meanwhile: it takes the fetches.
                s.slots.removeValue(forKey: endpoint)
                return (Array(waiters.values), .multiplexed(shared), true)
            }
            switch link {
            case .multiplexed(let c): s.slots[endpoint] = .open(c)
            case .plain: s.slots[endpoint] = .plain
            default: s.slots.removeValue(forKey: endpoint)
            }
            return (Array(waiters.values), link, false)
        }
        if let connection {
            background.spawn({
                await connection.run()
                self.ended(connection, at: endpoint)
            }, ifStopped: { self.ended(connection, at: endpoint) })
            if superseded, connection.retire() { background.spawn { await connection.close() } }
        }
        for waiter in waiters { waiter.resume(returning: handed) }
    }

    /// The connection's reader ended: the next fetch opens a new one.
    private func ended(_ connection: MultiplexedConnection, at endpoint: PeerEndpoint) {
        state.withLock { s in
            if case .open(let current) = s.slots[endpoint], current === connection { s.slots.removeValue(forKey: endpoint) }
        }
    }
}
