extension ContinuationClient {
    /// Fetches on the one multiplexed connection kept to the peer (``MultiplexedLinks``): its
    /// liveness connection, or one opened first when it has none up. Nil when the fetch must go the way of a connection of
    /// its own: the peer does not multiplex, or the shared connection ended before any answer to
    /// this fetch (it is then made once more, on a fresh connection).
    func multiplexedFetch(_ request: FetchRequest, from endpoint: PeerEndpoint, peerName: String,
                          links: MultiplexedLinks) async -> Result<FetchedActivity, HandoffError>? {
        var machine = ContinuationStateMachine(request: request, hello: hello, peerName: peerName)
        _ = machine.start()
        let connection: MultiplexedConnection
        switch await links.link(to: endpoint, open: { [self] in await openLink(to: endpoint) }) {
        case .multiplexed(let c): connection = c
        case .plain: return nil
        case .failed(let failure): return .failure(Self.error(failure.apply(to: &machine)))
        case .cancelled: return .failure(Self.error(machine.connectFailed("the continuation was cancelled")))
        }
        let hello = self.hello
        let outcome = await Deadline.race(timeouts.fetch, on: clock) { await connection.fetch(request, hello: hello, peerName: peerName) }
        _ = machine.connected(reused: true)
        switch outcome {
        case .value(.delivered(let activity, let source)?): return .success(FetchedActivity(activity: activity, source: source))
        case .value(.failed(let code, let message)?): return .failure(HandoffError(code, message))
        case .value(.retry?): return nil
        case .value(nil): return .failure(Self.error(machine.receiveFailed(CancellationError())))
        case .timedOut: return .failure(Self.error(machine.fetchTimedOut(after: timeouts.fetch)))
        case .failed(let error): return .failure(Self.error(machine.receiveFailed(error)))
        }
    }

    /// Tells the source on the multiplexed connection, if one is open; false when there is none.
    func notifyContinuedMultiplexed(_ notice: Frame, at endpoint: PeerEndpoint, links: MultiplexedLinks) async -> Bool {
        guard let connection = links.openConnection(to: endpoint) else { return false }
        do {
            try await connection.send([notice])
            return true
        } catch {
            return false
        }
    }

    /// Opens a connection to the peer and exchanges hellos offering multiplexing: the connection
    /// deadline for the connect, the fetch deadline for the source's hello.
    func openLink(to endpoint: PeerEndpoint) async -> LinkOpening {
        let connector = self.connector
        let limits = self.limits
        let connection: any FrameConnection
        switch await Deadline.race(timeouts.connect, on: clock, { try await connector.connect(to: endpoint, limits: limits) }) {
        case .value(let c): connection = c
        case .timedOut: return .failed(.connectTimedOut(timeouts.connect))
        case .failed(let error): return .failed(.connectFailed("\(error)"))
        }
        var ours = hello
        ours.multiplexing = true
        let frames = [PeerMessage.hello(ours).frame]
        let answer = await Deadline.race(timeouts.fetch, on: clock, onTimeout: { await connection.close() }) { () async throws -> Frame? in
            try await connection.send(frames)
            return try await connection.receive()
        }
        let frame: Frame
        switch answer {
        case .value(let f?): frame = f
        case .value(nil):
            await connection.close()
            return .failed(.closed)
        case .timedOut: return .failed(.helloTimedOut(timeouts.fetch))
        case .failed(let error):
            await connection.close()
            return .failed(.broke(error))
        }
        guard case .hello(let theirs)? = try? PeerMessage(frame: frame), ours.negotiatedVersion(with: theirs) != nil else {
            await connection.close()
            return .failed(.answered(frame))
        }
        guard theirs.multiplexing else { return .plain(connection) }
        return .multiplexed(MultiplexedConnection(connection: connection, limits: limits))
    }
}
