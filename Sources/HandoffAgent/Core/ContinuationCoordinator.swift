import HandoffCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Who asks for continuations, and who gets which answer: a pure value, SWIM style. The agent
/// gives it each request and each finished continuation; it says whether to start one, and
/// which waiting callers get which result. The agent runs the continuations and delivers the
/// answers; it decides nothing about them.
///
/// - A second request for an activity being continued waits for the first and gets its result,
///   so the handlers run once.
/// - With an idempotency key, a continuation happens at most once per key
///   (``IdempotencyLedger``): a retry gets the first result marked `replayed`, a retry while it
///   runs waits for it, and a key used for another activity is refused.
struct ContinuationCoordinator: Sendable {
    /// Identifies one caller waiting for a result.
    typealias CallerID = UUID
    typealias Outcome = Result<ContinueResult, HandoffError>

    /// What to do with a request.
    enum Decision: Sendable {
        /// Start continuing the activity, then report ``finished(_:outcome:handlerStarted:now:)``;
        /// the caller waits for its answer.
        case start(UUID)
        /// The caller waits for an answer from a continuation already running.
        case wait
        /// Answer the caller at once with the result of an earlier run under the same key.
        case replay(Outcome)
        /// Answer the caller at once.
        case answer(Outcome)
    }

    private var ledger: IdempotencyLedger<Outcome, AgentInstant>
    /// Callers waiting for each activity being continued, in order; `joined` callers came while it ran.
    private var inFlight: [UUID: [(caller: CallerID, joined: Bool)]] = [:]
    /// The idempotency key each caller running or joining a continuation brought.
    private var keyOfCaller: [CallerID: String] = [:]
    /// Callers that retried a key whose continuation still runs.
    private var keyWaiters: [String: [CallerID]] = [:]

    init(ledger: IdempotencyLedger<Outcome, AgentInstant> = .init()) {
        self.ledger = ledger
    }

    /// A request by `caller` to continue activity `id`, with an optional idempotency key.
    mutating func request(_ id: UUID, idempotencyKey key: String?, caller: CallerID, now: AgentInstant) -> Decision {
        if let key {
            switch ledger.begin(key, activityID: id, now: now) {
            case .replay(let outcome):
                return .replay(Self.replayed(outcome))
            case .wait:
                keyWaiters[key, default: []].append(caller)
                return .wait
            case .conflict(let other):
                return .answer(.failure(.handoffFailed(
                    "idempotency key \(key) was used to continue activity \(other), not \(id); use a fresh key for each continuation")))
            case .run:
                keyOfCaller[caller] = key
            }
        }
        if inFlight[id] != nil {
            inFlight[id]?.append((caller, true))
            return .wait
        }
        inFlight[id] = [(caller, false)]
        return .start(id)
    }

    /// The continuation of `id` ended: the answers for every caller waiting on it. A caller that
    /// joined a running continuation counts as having started a handler, so its key is never
    /// run again.
    mutating func finished(_ id: UUID, outcome: Outcome, handlerStarted: Bool, now: AgentInstant) -> [(CallerID, Outcome)] {
        var answers: [(CallerID, Outcome)] = []
        for (caller, joined) in inFlight.removeValue(forKey: id) ?? [] {
            answers.append((caller, outcome))
            guard let key = keyOfCaller.removeValue(forKey: caller) else { continue }
            ledger.finish(key, value: outcome, handlerStarted: handlerStarted || joined, now: now)
            for waiter in keyWaiters.removeValue(forKey: key) ?? [] { answers.append((waiter, Self.replayed(outcome))) }
        }
        return answers
    }

    /// Whether activity `id` is being continued now.
    func isRunning(_ id: UUID) -> Bool { inFlight[id] != nil }

    private static func replayed(_ outcome: Outcome) -> Outcome {
        outcome.map { first in
            var replayed = first
            replayed.replayed = true
            return replayed
        }
    }
}
