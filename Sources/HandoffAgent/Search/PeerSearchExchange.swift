import HandoffCore

/// One pinned connection to a paired device for `handoff search --devices all`: hello and
/// `searchRequest`, answered by hello and `searchResults` (or an error), within a deadline.
enum PeerSearchExchange {
    static func run(_ request: PeerSearchRequest, at endpoint: PeerEndpoint, connector: any PeerConnector, hello: PeerHello,
                    clock: any Clock<Duration>, timeout: Duration) async -> Result<[SavedActivity], HandoffError> {
        switch await Deadline.race(timeout, on: clock, { await exchange(request, at: endpoint, connector: connector, hello: hello) }) {
        case .value(let answer): answer
        case .timedOut: .failure(.remoteTimedOut("no answer within \(timeout)"))
        case .failed(let error): .failure(.connectionUnavailable("\(error)"))
        }
    }

    private static func exchange(_ request: PeerSearchRequest, at endpoint: PeerEndpoint, connector: any PeerConnector,
                                 hello: PeerHello) async -> Result<[SavedActivity], HandoffError> {
        let connection: any FrameConnection
        do {
            connection = try await connector.connect(to: endpoint, limits: FrameLimits())
        } catch {
            return .failure(.connectionUnavailable("cannot connect: \(error)"))
        }
        let answer = await ask(request, on: connection, hello: hello)
        await connection.close()
        return answer
    }

    private static func ask(_ request: PeerSearchRequest, on connection: any FrameConnection, hello: PeerHello) async -> Result<[SavedActivity], HandoffError> {
        do {
            try await connection.send([PeerMessage.hello(hello).frame, PeerMessage.searchRequest(request).frame])
            while let frame = try await connection.receive() {
                switch try PeerMessage(frame: frame) {
                case .hello: continue
                case .searchResults(let results): return .success(results)
                case .error(let code, let message): return .failure(HandoffError(HandoffError.Code(rawValue: code), message))
                default: return .failure(.handoffFailed("the device answered search with a \(frame.kind) frame"))
                }
            }
            return .failure(.connectionUnavailable("the device closed the connection without answering (an older agent?)"))
        } catch {
            return .failure(.connectionUnavailable("the search failed: \(error)"))
        }
    }
}
