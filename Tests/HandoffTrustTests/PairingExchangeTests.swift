import HandoffCore
import HandoffTestSupport
import HandoffTrust
import Testing

/// The pairing exchange as a pure machine: inputs in, directives out, timers included, without
/// a connection, a person or a clock that moves by itself.
@Suite("PairingExchange: the pairing decisions, without I/O")
struct PairingExchangeTests {
    typealias Exchange = PairingExchange<ManualClock.Instant>
    typealias Directive = Exchange.Directive

    static let timeout = Duration.seconds(120)
    static let a = PairingTests.randomID()
    static let b = PairingTests.randomID()
    static let nonceA = [UInt8](repeating: 1, count: 32)
    static let nonceB = [UInt8](repeating: 2, count: 32)
    static let hello = PeerHello(agentID: "agent-a", name: "laptop")
    static let commitment = PairingInitiator(local: a, remote: b, nonce: nonceA).commitment
    static let keyA = [UInt8](repeating: 0xA, count: 32)
    static let keyB = [UInt8](repeating: 0xB, count: 32)

    static func initiator(nonce: [UInt8] = nonceA) -> Exchange {
        Exchange(.initiator(target: "desk", hello: hello, timeout: timeout), local: a, name: "laptop", nonce: nonce)
    }

    static func responder(commitment: [UInt8]) -> Exchange {
        Exchange(.responder(peerName: "laptop", commitment: commitment), local: b, name: "desk", nonce: nonceB)
    }

    /// One side as a shell would run it, with what it did.
    struct Side {
        var exchange: Exchange
        var key: [UInt8]
        var accept: Bool
        var pending: [Directive] = []
        var inbox: [PeerMessage] = []
        var code: String?
        var stored: (DeviceID, String, [UInt8])?
        var rotated = false
        var outcome: Result<TrustChange, HandoffError>?
    }

    /// Runs both sides against each other until neither can go on.
    static func run(_ sides: inout [Side]) {
        var progressed = true
        while progressed {
            progressed = false
            for i in sides.indices where !sides[i].pending.isEmpty {
                let directive = sides[i].pending[0]
                if directive == .receive, sides[i].inbox.isEmpty { continue }  // waits for the other side
                sides[i].pending.removeFirst()
                progressed = true
                switch directive {
                case .send(let messages): sides[1 - i].inbox += messages
                case .sendAdvertisingKey: sides[1 - i].inbox.append(.keys(advertisingKey: sides[i].key))
                case .receive: sides[i].pending = sides[i].exchange.handle(.received(sides[i].inbox.removeFirst()))
                case .askUser(let code, _, _):
                    sides[i].code = code
                    sides[i].pending = sides[i].exchange.handle(.userAnswered(accepted: sides[i].accept))
                case .store(let id, let name, let key):
                    sides[i].stored = (id, name, key)
                    sides[i].pending = sides[i].exchange.handle(.stored(.success(TrustChange(deviceID: id.description, name: name))))
                case .rotateAdvertisingKey: sides[i].rotated = true
                case .finish(let result): sides[i].outcome = result
                case .announceRequest, .scheduleTimer, .close: break
                }
            }
        }
    }

    /// Both sides from the start: the initiator's first batch, the responder's once the request arrived.
    static func pair(acceptA: Bool = true, acceptB: Bool = true) -> [Side] {
        var initiator = Side(exchange: Self.initiator(), key: keyA, accept: acceptA)
        initiator.pending = initiator.exchange.start(remote: b, now: .zero)
        var responder = Side(exchange: Self.responder(commitment: Self.commitment), key: keyB, accept: acceptB)
        responder.pending = responder.exchange.start(remote: a, now: .zero)
        // The responder's agent read hello and the request before the exchange began.
        var sides = [initiator, responder]
        sides[0].pending.removeAll { if case .send = $0 { return true } else { return false } }
        sides[0].inbox = [.hello(PeerHello(agentID: "agent-b", name: "desk"))]
        run(&sides)
        return sides
    }

    @Test("the initiator opens with the timer, hello and its commitment, then reads")
    func initiatorOpens() {
        var exchange = Self.initiator()
        let clock = ManualClock()
        #expect(exchange.start(remote: Self.b, now: clock.now) == [
            .scheduleTimer(at: clock.now.advanced(by: Self.timeout)),
            .send([.hello(Self.hello), .pairing(.request(name: "laptop", commitment: Self.commitment))]),
            .receive,
        ])
    }

    @Test("both people confirm: the same code, each side stores the other with its key, no rotation")
    func bothConfirm() throws {
        let sides = Self.pair()
        #expect(sides[0].code != nil && sides[0].code == sides[1].code)
        #expect(sides[0].outcome == .success(TrustChange(deviceID: Self.b.description, name: "desk")))
        #expect(sides[1].outcome == .success(TrustChange(deviceID: Self.a.description, name: "laptop")))
        let storedByA = try #require(sides[0].stored), storedByB = try #require(sides[1].stored)
        #expect(storedByA.0 == Self.b && storedByA.2 == Self.keyB)
        #expect(storedByB.0 == Self.a && storedByB.2 == Self.keyA)
        #expect(!sides[0].rotated && !sides[1].rotated)
        #expect(sides[0].exchange.isFinished && sides[1].exchange.isFinished)
    }

    @Test("a refusal here or there stores nothing, sends no key and rotates none")
    func refusals() {
        let refusedHere = Self.pair(acceptA: false)
        #expect(refusedHere[0].outcome?.error?.message == "pairing with desk was refused here; nothing was stored")
        #expect(refusedHere[1].outcome?.error?.message == "laptop refused the pairing; nothing was stored")
        let refusedThere = Self.pair(acceptB: false)
        #expect(refusedThere[0].outcome?.error?.message == "desk refused the pairing; nothing was stored")
        #expect(refusedThere[1].outcome?.error?.message == "pairing with laptop was refused here; nothing was stored")
        for side in refusedHere + refusedThere {
            #expect(side.stored == nil)
            #expect(!side.rotated)
            #expect(!side.inbox.contains { if case .keys = $0 { return true } else { return false } })
        }
    }

    @Test("the timer closes the connection; what fails after it is the timeout, 4610")
    func timeout() {
        var exchange = Self.initiator()
        let clock = ManualClock()
        _ = exchange.start(remote: Self.b, now: clock.now)
        #expect(exchange.handle(.timerFired) == [.close])
        #expect(exchange.handle(.timerFired) == [], "it fires once")
        let directives = exchange.handle(.connectionClosed)
        #expect(directives == [.finish(.failure(.remoteTimedOut("pairing with desk did not finish within \(Self.timeout); nothing was stored")))])
        #expect(exchange.handle(.timerFired) == [], "a timer after the end does nothing")
    }

    @Test("the timer while the person decides: the answer cannot be sent, the exchange times out")
    func timeoutWhileAsking() {
        var exchange = Self.initiator()
        _ = exchange.start(remote: Self.b, now: .zero)
        _ = exchange.handle(.received(.hello(PeerHello(agentID: "agent-b", name: "desk"))))
        let asked = exchange.handle(.received(.pairing(.nonce(name: "desk", nonce: Self.nonceB))))
        #expect(asked.count == 2)
        #expect(exchange.handle(.timerFired) == [.close])
        #expect(exchange.handle(.userAnswered(accepted: true)) == [
            .finish(.failure(.remoteTimedOut("pairing with desk did not finish within \(Self.timeout); nothing was stored"))),
        ])
    }

    @Test("a pairing that fails once this side's key may be out rotates the key")
    func keyRotation() {
        func confirmed() -> Exchange {
            var exchange = Self.initiator()
            _ = exchange.start(remote: Self.b, now: .zero)
            _ = exchange.handle(.received(.hello(PeerHello(agentID: "agent-b", name: "desk"))))
            _ = exchange.handle(.received(.pairing(.nonce(name: "desk", nonce: Self.nonceB))))
            #expect(exchange.handle(.userAnswered(accepted: true)) == [.send([.pairing(.confirm(accepted: true))]), .receive])
            #expect(exchange.handle(.received(.pairing(.confirm(accepted: true)))) == [.sendAdvertisingKey, .receive])
            return exchange
        }
        var closed = confirmed()
        #expect(closed.handle(.connectionClosed) == [
            .rotateAdvertisingKey, .finish(.failure(.handoffFailed("desk closed the connection during pairing; nothing was stored"))),
        ])
        var wrong = confirmed()
        #expect(wrong.handle(.received(.streamEnd)) == [
            .rotateAdvertisingKey,
            .finish(.failure(.handoffFailed("desk broke off pairing before sending its advertising key; nothing was stored"))),
        ])
        var unsaved = confirmed()
        #expect(unsaved.handle(.received(.keys(advertisingKey: Self.keyB))) == [.store(deviceID: Self.b, name: "desk", advertisingKey: Self.keyB)])
        #expect(unsaved.handle(.stored(.failure(.handoffFailed("cannot save")))) == [.rotateAdvertisingKey, .finish(.failure(.handoffFailed("cannot save")))])
        var sendFailed = confirmed()
        #expect(sendFailed.handle(.failed(HandoffError.handoffFailed("broken pipe"))) == [.rotateAdvertisingKey, .finish(.failure(.handoffFailed("broken pipe")))])
    }

    @Test("a reveal that does not match the commitment stops the responder before any code")
    func tamperedReveal() {
        var responder = Self.responder(commitment: Self.commitment)
        let started = responder.start(remote: Self.a, now: .zero)
        #expect(started == [.announceRequest(peer: "laptop", deviceID: Self.a), .send([.pairing(.nonce(name: "desk", nonce: Self.nonceB))]), .receive])
        let directives = responder.handle(.received(.pairing(.reveal(nonce: [UInt8](repeating: 9, count: 32)))))
        guard case .finish(.failure(let error))? = directives.last, directives.count == 1 else { Issue.record("\(directives)"); return }
        #expect(error.message.hasPrefix("pairing with laptop stopped: the other device's reveal does not match its commitment"))
        #expect(error.message.hasSuffix("; nothing was stored"))
    }

    @Test("no certificate, this device itself, an error frame, a wrong answer")
    func refusedStarts() {
        var none = Self.initiator()
        #expect(none.start(remote: nil, now: .zero) == [.finish(.failure(.handoffFailed("desk presented no certificate")))])
        var itself = Self.initiator()
        #expect(itself.start(remote: Self.a, now: .zero) == [.finish(.failure(.handoffFailed("desk is this device; pair with another one")))])
        var refused = Self.initiator()
        _ = refused.start(remote: Self.b, now: .zero)
        #expect(refused.handle(.received(.error(code: 4609, message: "not accepting"))) == [.finish(.failure(HandoffError(.init(rawValue: 4609), "not accepting")))])
        var silent = Self.initiator()
        _ = silent.start(remote: Self.b, now: .zero)
        #expect(silent.handle(.received(.streamEnd)) == [.finish(.failure(.handoffFailed("desk did not answer the handshake")))])
        var short = Self.responder(commitment: [1, 2, 3])
        let directives = short.start(remote: Self.a, now: .zero)
        #expect(directives.first == .announceRequest(peer: "laptop", deviceID: Self.a))
        #expect(short.isFinished)
    }
}

extension Result {
    fileprivate var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
