import HandoffCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `handoff pair --accept` as a pure decision: the one pairing window a device may have open.
///
/// What happens goes in (a request to open, a device that asks to pair, the end of its exchange,
/// the requesting control connection closing, the timer), with the time as an input; what to do
/// comes out (``Directive``): advertise again (the advertisement shows the window), set the
/// window's timer, close the pairing connection, answer the waiting `handoff pair --accept`.
/// The agent executes them and decides nothing.
///
/// The rules: one window at a time (a second request is refused, the first stays open); a window
/// takes one pairing attempt (a second device is turned away); it closes when its attempt ends,
/// when the control connection that opened it closes or its caller stops waiting (cancelled),
/// or at its timer (`security.pairingTimeout` after it opened), whichever is first; a close that
/// names a window no longer open changes nothing.
struct PairingWindowState<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The open window.
    struct Window: Sendable, Equatable {
        /// Chosen by the caller of ``PairingWindowState/open(_:owner:name:timeout:now:)``.
        let id: UUID
        /// The control connection that asked for the window: its closing cancels the window.
        let owner: UUID
        /// How long the window stays open (in the message of a timeout).
        let timeout: Duration
        /// When the window times out.
        let closesAt: Instant
        /// Whether a device has started pairing (one attempt per window).
        var claimed = false
    }

    /// What the agent does.
    enum Directive: Sendable, Equatable {
        /// Advertise again: the advertisement shows whether a window is open (its pairing name).
        case advertise
        /// Call ``PairingWindowState/timerFired(_:now:)`` with `window` once `at` has come.
        case scheduleTimer(window: UUID, at: Instant)
        /// Close the connection of the device that claimed `window`.
        case closeConnection(window: UUID)
        /// Answer the `handoff pair --accept` waiting on `window` with `result`.
        case answer(window: UUID, Result<TrustChange, HandoffError>)
    }

    /// The open window, if any.
    private(set) var window: Window?

    /// `handoff pair --accept` from control connection `owner` on the device named `name`: opens
    /// window `id` until `timeout` has passed from `now`, unless one is open already (then `id`
    /// is answered at once with why, and the open window stays as it is).
    mutating func open(_ id: UUID, owner: UUID, name: String, timeout: Duration, now: Instant) -> [Directive] {
        guard window == nil else {
            return [.answer(window: id, .failure(.handoffFailed("\(name) is already accepting a pairing; finish or cancel that one first")))]
        }
        let closesAt = now.advanced(by: timeout)
        window = Window(id: id, owner: owner, timeout: timeout, closesAt: closesAt)
        return [.advertise, .scheduleTimer(window: id, at: closesAt)]
    }

    /// A device asks to pair: it takes the open window, which takes no other device after it.
    /// Nil when no window is open, or its attempt was taken already.
    mutating func claim() -> Window? {
        guard var open = window, !open.claimed else { return nil }
        open.claimed = true
        window = open
        return open
    }

    /// The pairing on window `id` ended with `result`: the window closes, and its caller gets
    /// the result. Nothing when `id` is not the open window.
    mutating func close(_ id: UUID, with result: Result<TrustChange, HandoffError>) -> [Directive] {
        guard let open = window, open.id == id else { return [] }
        window = nil
        return (open.claimed ? [.closeConnection(window: id)] : []) + [.answer(window: id, result), .advertise]
    }

    /// Control connection `connection` closed: the window it opened, if any, is cancelled.
    mutating func connectionClosed(_ connection: UUID) -> [Directive] {
        guard let open = window, open.owner == connection else { return [] }
        return close(open.id, with: .failure(.handoffFailed("pairing was cancelled")))
    }

    /// The caller waiting on window `id` stopped waiting (its task was cancelled): the window
    /// closes, as when its connection closes.
    mutating func callerLeft(_ id: UUID) -> [Directive] {
        close(id, with: .failure(.handoffFailed("pairing was cancelled")))
    }

    /// The timer of window `id` fired at `now`: the window times out if it is still open and its
    /// time has come (a timer that fires early, or for a window already closed, changes nothing).
    mutating func timerFired(_ id: UUID, now: Instant) -> [Directive] {
        guard let open = window, open.id == id, now >= open.closesAt else { return [] }
        return close(id, with: .failure(.remoteTimedOut("no device completed pairing within \(open.timeout); nothing was stored")))
    }
}
