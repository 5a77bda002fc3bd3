import Foundation
import HandoffCore
import Testing

@testable import HandoffAgent

/// Every rule of the pairing window, with the time as an input (``AgentInstant``s).
@Suite("PairingWindowState")
struct PairingWindowStateTests {
    typealias State = PairingWindowState<AgentInstant>
    let t0 = AgentInstant(sinceStart: .seconds(5))
    let timeout = Duration.seconds(120)
    let owner = UUID()
    let window = UUID()
    static let paired = TrustChange(deviceID: "ab12", name: "desk")

    func opened() -> State {
        var state = State()
        _ = state.open(window, owner: owner, name: "laptop", timeout: timeout, now: t0)
        return state
    }

    @Test("opening shows the window in the advertisement and sets its timer pairingTimeout later")
    func opens() {
        var state = State()
        #expect(state.open(window, owner: owner, name: "laptop", timeout: timeout, now: t0)
                == [.advertise, .scheduleTimer(window: window, at: t0.advanced(by: timeout))])
        #expect(state.window?.id == window)
        #expect(state.window?.claimed == false)
    }

    @Test("one window at a time: a second is refused at once, and the first stays open")
    func oneAtATime() {
        var state = opened()
        let second = UUID()
        #expect(state.open(second, owner: UUID(), name: "laptop", timeout: timeout, now: t0)
                == [.answer(window: second, .failure(.handoffFailed("laptop is already accepting a pairing; finish or cancel that one first")))])
        #expect(state.window?.id == window)
    }

    @Test("a window takes one attempt: the first device claims it, a second gets nothing; no window, no claim")
    func claimOnce() {
        var none = State()
        #expect(none.claim() == nil)
        var state = opened()
        #expect(state.claim()?.id == window)
        #expect(state.window?.claimed == true)
        #expect(state.claim() == nil)
    }

    @Test("the attempt's end closes the window: its connection, its caller's answer, the advertisement; then it may open again")
    func closeByID() {
        var state = opened()
        _ = state.claim()
        #expect(state.close(window, with: .success(Self.paired))
                == [.closeConnection(window: window), .answer(window: window, .success(Self.paired)), .advertise])
        #expect(state.window == nil)
        #expect(state.close(window, with: .success(Self.paired)) == [], "closed once")
        #expect(state.open(UUID(), owner: owner, name: "laptop", timeout: timeout, now: t0).first == .advertise)
    }

    @Test("an unclaimed window has no connection to close; a close naming another window changes nothing")
    func closeUnclaimed() {
        var state = opened()
        #expect(state.close(UUID(), with: .success(Self.paired)) == [])
        #expect(state.close(window, with: .failure(.handoffFailed("x"))) == [.answer(window: window, .failure(.handoffFailed("x"))), .advertise])
    }

    @Test("the control connection that opened the window closing cancels it; another connection's does not")
    func ownerConnectionCloses() {
        var state = opened()
        _ = state.claim()
        #expect(state.connectionClosed(UUID()) == [])
        #expect(state.connectionClosed(owner) == [.closeConnection(window: window),
                                                   .answer(window: window, .failure(.handoffFailed("pairing was cancelled"))), .advertise])
        #expect(state.window == nil)
    }

    @Test("a caller that stops waiting closes its window; for a window already closed it changes nothing")
    func callerLeaves() {
        var state = opened()
        #expect(state.callerLeft(window) == [.answer(window: window, .failure(.handoffFailed("pairing was cancelled"))), .advertise])
        #expect(state.callerLeft(window) == [])
    }

    @Test("the timer: nothing one nanosecond early, 4610 at pairingTimeout, nothing for a window closed already")
    func timesOut() {
        var state = opened()
        _ = state.claim()
        let deadline = t0.advanced(by: timeout)
        #expect(state.timerFired(window, now: deadline.advanced(by: .nanoseconds(-1))) == [])
        #expect(state.timerFired(UUID(), now: deadline) == [], "another window's timer")
        let expired = state.timerFired(window, now: deadline)
        let error = HandoffError.remoteTimedOut("no device completed pairing within \(timeout); nothing was stored")
        #expect(expired == [.closeConnection(window: window), .answer(window: window, .failure(error)), .advertise])
        #expect(error.code.rawValue == 4610)
        #expect(state.timerFired(window, now: deadline) == [])
    }
}
