#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The continuing side of one handoff, as a pure state machine: it turns connection events into
/// the next step and decides every failure's NSUserActivity code.
///
/// | event | result |
/// |---|---|
/// | connect fails or times out | 4609 userActivityConnectionUnavailable |
/// | source answers with an error | the source's code (4608 when resigned or expired) |
/// | userInfo header over the limit | 4611 userActivityHandoffUserInfoTooLarge |
/// | fetch deadline passes first | 4610 userActivityRemoteApplicationTimedOut |
/// | connection ends or breaks before the source's hello (it refused the session) | 4609 userActivityConnectionUnavailable |
/// | connection ends early after the hello, or a malformed frame | 4608 userActivityHandoffFailed |
///
/// Only a complete activity (fields and userInfo) is ever delivered, and at most once.
public struct ContinuationStateMachine: Sendable {
    /// What the shell does next.
    public enum Action: Sendable, Equatable {
        /// Open the connection (with the connect deadline).
        case connect
        /// Send these frames, then start the fetch deadline and read.
        case send([Frame])
        /// Keep reading.
        case read
        /// Success: hand the activity to the handlers, close the connection.
        case deliver(Activity)
        /// Failure: report it, close the connection.
        case fail(code: HandoffError.Code, message: String)
        /// Already finished: nothing to do.
        case none
    }

    private enum State: Sendable {
        case idle
        case connecting
        case awaitingHello
        case awaitingActivity
        case awaitingUserInfo(Activity)
        case finished
    }

    private var state: State = .idle
    /// The app that published the activity, once the activity frame has arrived.
    public private(set) var source: AppIdentity?
    private let request: FetchRequest
    private let hello: PeerHello
    private let peerName: String

    /// - Parameters:
    ///   - request: the activity to fetch and this continuation's ID.
    ///   - hello: the local agent's hello.
    ///   - peerName: the source agent's name, for messages.
    public init(request: FetchRequest, hello: PeerHello, peerName: String) {
        self.request = request
        self.hello = hello
        self.peerName = peerName
    }

    /// Whether the continuation has delivered or failed.
    public var isFinished: Bool { if case .finished = state { true } else { false } }

    public mutating func start() -> Action {
        guard case .idle = state else { return .none }
        state = .connecting
        return .connect
    }

    /// The connection is open. A fresh one starts with the hello; a `reused` one (kept from an
    /// earlier fetch, its hello already exchanged) carries the fetch alone.
    public mutating func connected(reused: Bool = false) -> Action {
        guard case .connecting = state else { return .none }
        if reused {
            state = .awaitingActivity
            return .send([PeerMessage.fetch(request).frame])
        }
        state = .awaitingHello
        return .send([PeerMessage.hello(hello).frame, PeerMessage.fetch(request).frame])
    }

    public mutating func connectFailed(_ reason: String) -> Action {
        fail(.userActivityConnectionUnavailable, "cannot connect to \(peerName): \(reason). Check that its agent is running and reachable (handoff peers).")
    }

    public mutating func connectTimedOut(after timeout: Duration) -> Action {
        fail(.userActivityConnectionUnavailable, "no connection to \(peerName) within \(timeout.secondsText) (limits.connectTimeout). Check that the host is up and reachable.")
    }

    public mutating func fetchTimedOut(after timeout: Duration) -> Action {
        fail(.userActivityRemoteApplicationTimedOut, "\(peerName) did not send the activity within \(timeout.secondsText) (limits.fetchTimeout). Try again, or raise limits.fetchTimeout.")
    }

    public mutating func received(_ frame: Frame) -> Action {
        let message: PeerMessage
        do { message = try PeerMessage(frame: frame) } catch { return protocolViolation(error.description) }
        switch (state, message) {
        case (.awaitingHello, .hello(let theirs)):
            guard hello.negotiatedVersion(with: theirs) != nil else {
                return fail(.userActivityConnectionUnavailable, "\(peerName) speaks protocol versions \(theirs.versions), this agent \(hello.versions). Update the older agent.")
            }
            state = .awaitingActivity
            return .read
        case (.awaitingActivity, .activity(let activity, let source)):
            guard activity.id == request.activityID else { return protocolViolation("sent activity \(activity.id), asked for \(request.activityID)") }
            self.source = source
            state = .awaitingUserInfo(activity)
            return .read
        case (.awaitingUserInfo(var activity), .userInfo(let userInfo)):
            activity.userInfo = userInfo
            state = .finished
            return .deliver(activity)
        case (.finished, _):
            return .none
        case (_, .error(let code, let text)):
            let known = HandoffError.Code(rawValue: code)
            return fail(known.isInReservedRange ? known : .userActivityHandoffFailed, text)
        default:
            return protocolViolation("unexpected \(frame.kind) frame")
        }
    }

    /// The transport refused a frame or broke.
    public mutating func receiveFailed(_ error: any Error) -> Action {
        if case FrameError.userInfoTooLarge(let declared, let limit)? = error as? FrameError {
            return fail(.userActivityHandoffUserInfoTooLarge, "the userInfo from \(peerName) is \(declared) bytes, over limits.maxUserInfoBytes (\(limit)). Send large data over continuation streams, or raise the limit.")
        }
        if let frameError = error as? FrameError { return protocolViolation(frameError.description) }
        if case .awaitingHello = state {
            return fail(.userActivityConnectionUnavailable, "the connection to \(peerName) broke before its agent answered (\(error)): it did not accept the session. Check that its agent is running and paired with this one (handoff peers), then try again.")
        }
        return fail(.userActivityHandoffFailed, "the connection to \(peerName) broke during the transfer (\(error)). The activity was not continued; try again.")
    }

    /// The peer closed the connection.
    ///
    /// Before the source's hello this means the source did not accept the session at all (it is
    /// stopping, or refusing connections): the connection was never available, 4609. After it,
    /// the transfer was cut short: 4608.
    public mutating func closed() -> Action {
        if case .awaitingHello = state {
            return fail(.userActivityConnectionUnavailable, "\(peerName) closed the connection without answering: its agent did not accept the session (it may be stopping or refusing connections). Check it with handoff peers, then try again.")
        }
        return fail(.userActivityHandoffFailed, "\(peerName) closed the connection before the activity arrived. Its agent may have stopped; try again.")
    }

    private mutating func protocolViolation(_ reason: String) -> Action {
        fail(.userActivityHandoffFailed, "\(peerName) sent invalid data: \(reason).")
    }

    private mutating func fail(_ code: HandoffError.Code, _ message: String) -> Action {
        if case .finished = state { return .none }
        state = .finished
        return .fail(code: code, message: message)
    }
}
