/// The two deadlines of a continuation.
public struct ContinuationTimeouts: Sendable, Hashable {
    /// To open the connection (`limits.connectTimeout`); on expiry, 4609.
    public var connect: Duration
    /// From the request until the whole activity has arrived (`limits.fetchTimeout`); on expiry, 4610.
    public var fetch: Duration

    public init(connect: Duration = .seconds(2), fetch: Duration = .seconds(5)) {
        self.connect = connect
        self.fetch = fetch
    }
}

/// An activity as it arrived, with the app that published it.
public struct FetchedActivity: Sendable, Hashable {
    public var activity: Activity
    /// The source app; nil when the activity was published without an app (for example by the CLI).
    public var source: AppIdentity?
}

/// Fetches an activity from a source agent: drives a ``ContinuationStateMachine`` over any
/// ``PeerConnector``, with deadlines measured on any `Clock` (a manual clock in tests).
public struct ContinuationClient<C: Clock>: Sendable where C.Duration == Duration {
    public var connector: any PeerConnector
    public var clock: C
    public var hello: PeerHello
    public var limits: FrameLimits
    public var timeouts: ContinuationTimeouts
    /// Idle connections kept between fetches; nil opens a connection for each and closes it.
    public var pool: IdleConnectionPool<C>?

    public init(connector: any PeerConnector, clock: C, hello: PeerHello, limits: FrameLimits, timeouts: ContinuationTimeouts,
                pool: IdleConnectionPool<C>? = nil) {
        self.connector = connector
        self.clock = clock
        self.hello = hello
        self.limits = limits
        self.timeouts = timeouts
        self.pool = pool
    }

    /// Fetches one activity. Returns the complete activity, or the coded error; never a part.
    public func fetch(_ request: FetchRequest, from endpoint: PeerEndpoint, peerName: String) async -> Result<Activity, HandoffError> {
        await fetchActivity(request, from: endpoint, peerName: peerName).map(\.activity)
    }

    /// Fetches one activity with the identity of the app that published it.
    ///
    /// With a ``pool`` that multiplexes (``IdleConnectionPool/links``), the fetch goes on the one
    /// connection kept to the peer, beside any others in flight, with no handshake once it is
    /// open; a peer that does not multiplex, or a shared connection that ends before answering,
    /// sends the fetch the way below. With a ``pool``, an idle connection to the peer is used first (the fetch alone, one round
    /// trip); if it turns out to have broken while idle (closed or failing before any answer),
    /// the fetch is made again on a fresh connection, so a stale connection never costs a
    /// failure. A connection that delivered goes back to the pool.
    ///
    /// A fetch made again after the shared connection ended before answering has what remains of
    /// its ``ContinuationTimeouts/fetch``, not a whole one more: its 4610 still comes that long
    /// after the fetch was sent.
    public func fetchActivity(_ request: FetchRequest, from endpoint: PeerEndpoint, peerName: String) async -> Result<FetchedActivity, HandoffError> {
        var budget = timeouts.fetch
        if let links = pool?.links {
            let started = clock.now
            if let result = await multiplexedFetch(request, from: endpoint, peerName: peerName, links: links) { return result }
            budget = max(.zero, budget - started.duration(to: clock.now))
        }
        var machine = ContinuationStateMachine(request: request, hello: hello, peerName: peerName)
        _ = machine.start()
        if let pooled = pool?.take(endpoint),
           let result = await exchange(machine, over: pooled, reused: true, endpoint: endpoint, within: budget) {
            return result
        }

        let connector = self.connector
        let limits = self.limits
        let connection: any FrameConnection
        switch await Deadline.race(timeouts.connect, on: clock, { try await connector.connect(to: endpoint, limits: limits) }) {
        case .value(let c): connection = c
        case .timedOut: return .failure(Self.error(machine.connectTimedOut(after: timeouts.connect)))
        case .failed(let error): return .failure(Self.error(machine.connectFailed("\(error)")))
        }
        // A fresh connection is never stale: exchange answers.
        return await exchange(machine, over: connection, reused: false, endpoint: endpoint, within: budget)
            ?? .failure(.handoffFailed("internal error: a fresh connection was taken for a stale one"))
    }

    /// One fetch on an open connection, given `budget` of its fetch timeout. Nil when a `reused`
    /// connection broke before any answer (it had gone stale while idle): the caller retries on a
    /// fresh one.
    private func exchange(_ connecting: ContinuationStateMachine, over connection: any FrameConnection, reused: Bool,
                          endpoint: PeerEndpoint, within budget: Duration) async -> Result<FetchedActivity, HandoffError>? {
        var machine = connecting
        guard case .send(let frames) = machine.connected(reused: reused) else { preconditionFailure("connected() must send") }
        let reader = machine
        let outcome = await Deadline.race(budget, on: clock, onTimeout: { await connection.close() }) {
            () async throws -> (action: ContinuationStateMachine.Action, source: AppIdentity?, answered: Bool) in
            var machine = reader
            do { try await connection.send(frames) } catch { return (machine.receiveFailed(error), nil, false) }
            var answered = false
            while true {
                let action: ContinuationStateMachine.Action
                do {
                    guard let frame = try await connection.receive() else { return (machine.closed(), nil, answered) }
                    answered = true
                    action = machine.received(frame)
                } catch {
                    return (machine.receiveFailed(error), nil, answered)
                }
                if case .read = action { continue }
                return (action, machine.source, answered)
            }
        }
        switch outcome {
        case .value(let (action, source, answered)):
            if case .deliver(let activity) = action {
                if let pool { pool.put(connection, for: endpoint) } else { await connection.close() }
                return .success(FetchedActivity(activity: activity, source: source))
            }
            await connection.close()
            if reused && !answered { return nil }
            return .failure(Self.error(action))
        case .timedOut:
            await connection.close()
            return .failure(Self.error(machine.fetchTimedOut(after: timeouts.fetch)))
        case .failed(let error):
            await connection.close()
            return .failure(Self.error(machine.receiveFailed(error)))
        }
    }

    /// Tells the source agent its activity was continued with a `continued` frame: on an idle
    /// connection from the ``pool`` when there is one (a write, no round trip), otherwise on a new
    /// connection after the hello, which then goes to the pool. Best effort: the handoff already
    /// happened, so a failure is only logged.
    public func notifyContinued(_ request: FetchRequest, at endpoint: PeerEndpoint) async -> HandoffError? {
        let notice = PeerMessage.continued(request).frame
        if let links = pool?.links, await notifyContinuedMultiplexed(notice, at: endpoint, links: links) { return nil }
        if let pool, let pooled = pool.take(endpoint) {
            do {
                try await pooled.send([notice])
                pool.put(pooled, for: endpoint)
                return nil
            } catch {
                await pooled.close()  // stale: a fresh connection below
            }
        }
        let connector = self.connector
        let limits = self.limits
        let pool = self.pool
        let frames = [PeerMessage.hello(hello).frame, notice]
        let outcome = await Deadline.race(timeouts.connect, on: clock) { () async throws -> Void in
            let connection = try await connector.connect(to: endpoint, limits: limits)
            do { try await connection.send(frames) } catch { await connection.close(); throw error }
            // The source's hello (or its close) shows it has read ours; the notice follows it.
            let answer = try? await connection.receive()
            if let pool, answer?.kind == .hello { pool.put(connection, for: endpoint) } else { await connection.close() }
        }
        switch outcome {
        case .value: return nil
        case .timedOut: return .connectionUnavailable("no answer from the source agent within \(timeouts.connect.secondsText)")
        case .failed(let error): return .connectionUnavailable("cannot tell the source agent: \(error)")
        }
    }

    static func error(_ action: ContinuationStateMachine.Action) -> HandoffError {
        if case .fail(let code, let message) = action { return HandoffError(code, message) }
        return .handoffFailed("internal error: the continuation ended in an unexpected state")
    }

    private static func result(_ action: ContinuationStateMachine.Action) -> Result<Activity, HandoffError> {
        switch action {
        case .deliver(let activity): return .success(activity)
        case .fail(let code, let message): return .failure(HandoffError(code, message))
        default: return .failure(.handoffFailed("internal error: the continuation ended in an unexpected state"))
        }
    }
}
