import HandoffCore
import HandoffTransport
import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A control connection that carries one app's end of a pair of continuation streams.
///
/// - `openStreams` (the continuing app, with its `continuationID`): the agent opens a TCP
///   connection to the source agent (`hello`, `streamOpen`), waits for `streamAccepted`, then
///   joins the two connections' splices and answers the app.
/// - `acceptStreams` (the source app, with the `streamID` of a `streamsRequested` event): the
///   agent joins the app's connection with the waiting peer connection, sends `streamAccepted` to
///   the peer and answers the app.
///
/// Once joined, stream frames go from one connection to the other on the event loops
/// (``StreamSplice``), each connection read only while the other can take more, so a fast writer
/// is slowed to the reader's pace. When both directions have ended, or one side goes away, both
/// connections are closed.
enum ContinuationStreamSession {
    /// Peer connections carry stream data in frames of at most this size.
    static let peerLimits = FrameLimits(maxFrameBytes: 64 * 1024, maxUserInfoBytes: 0)

    /// Serves `openStreams` or `acceptStreams`, the first request on `connection`.
    static func serve(_ request: ControlRequest, requestID: JSONValue?, connection: FrameServer.Connection, agent: Agent) async throws {
        func response(_ result: Result<any ControlResult, HandoffError>) -> Frame {
            Frame(kind: .controlResponse, payload: ControlProtocol.responseJSON(result.map(\.json), requestID: requestID).serializedBytes)
        }
        func respond(_ result: Result<any ControlResult, HandoffError>) async throws {
            try await connection.outbound.write(response(result))
        }
        if case .acceptStreams(let streamID) = request {
            guard let claim = await agent.claimStreams(streamID) else {
                try await respond(.failure(.handoffFailed("no stream request with that streamID is waiting (it may have timed out)")))
                return
            }
            // The peer first: `streamAccepted` goes out before the app hears it may send, so the
            // app's first bytes cannot overtake it. The faults set now that act on streams go on
            // the app's connection before it is joined.
            await agent.applyStreamFaults(toAppConnection: connection)
            do {
                try await StreamSplice.join(claim.peer, StreamSpliceDirection(), firstFrame: PeerMessage.streamAccepted.frame,
                                            connection.splice, StreamSpliceDirection(),
                                            firstFrame: response(.success(EmptyResult())),
                                            onEnd: claim.relay.directionEnded)
            } catch {
                claim.release.resume(returning: false)  // the peer's session ends the relay
                // Only a failure on the peer's side leaves the app without an answer.
                try? await respond(.failure(.connectionUnavailable("the peer that asked for the streams is gone (\(error))")))
                return
            }
            claim.relay.onDone(close: connection.close)
            claim.release.resume(returning: true)
            // The peer's session closes its connection; both close once both directions have ended.
            await claim.relay.waitUntilDone(ownConnectionClosed: { connection.splice.isClosed })
            return
        }

        guard case .openStreams(let continuationID) = request, let source = await agent.streamSource(continuationID: continuationID) else {
            try await respond(.failure(.handoffFailed("openStreams needs the continuationID of an activity continued by this app on this host")))
            return
        }
        let limits = agent.configuration.limits
        let peer: any PeerStreamConnection
        do {
            // Relayed to the app connection's splice: on TCP, on its event loop, so that the
            // relay of this pair stays on one thread.
            peer = try await agent.transport.connectStream(
                to: source.peer.endpoint, limits: peerLimits,
                options: PeerStreamOptions(idleTimeout: limits.streamIdleTimeout > .zero ? limits.streamIdleTimeout : nil,
                                           relayPartner: connection.splice))
        } catch {
            try await respond(.failure(.connectionUnavailable("cannot connect to \(source.peer.name) for continuation streams: \(error)")))
            return
        }
        // The relay joins the two connections' splices: stream frames go from one channel to the
        // other on the event loop, never through the async side.
        guard let peerSplice = (peer as? ChannelStreamConnection)?.splice else {
            try? await peer.executeThenClose { _, _ in }
            try await respond(.failure(.connectionUnavailable("the transport to \(source.peer.name) cannot relay continuation streams")))
            return
        }
        let request = StreamRequest(activityID: source.activityID, streamID: UUID.random())
        try await peer.executeThenClose { peerInbound, peerOutbound in
            try await peerOutbound.write(PeerMessage.hello(agent.hello).frame)
            try await peerOutbound.write(PeerMessage.streamOpen(request).frame)
            // The source must accept within fetchTimeout; closing the channel ends the wait.
            var frames = peerInbound.makeAsyncIterator()
            let (answer, _) = await Deadline.watch(limits.fetchTimeout, on: agent.clock, onExpiry: { peer.close() }) {
                await handshake(&frames, peer: source.peer.name, timeout: limits.fetchTimeout)
            }
            guard case .success = answer else {
                try await respond(answer.map { EmptyResult() })
                return
            }
            let relay = agent.streamRelays.make()
            defer {
                relay.directionEnded(nil)  // done already, unless the streams never opened
                agent.streamRelays.finished()
            }
            relay.onDone(close: connection.close)
            relay.onDone(close: peerSplice.close)
            // The app first: its answer goes out before the source's bytes (held by the peer
            // connection's splice since `streamAccepted`) are relayed to it. When the source's
            // connection ends (closed, broken, or cut by unpairing), nothing more can pass either
            // way: both connections close, so the app sees the end instead of waiting forever. A
            // source that went quiet for limits.streamIdleTimeout: the app learns why, with 4610,
            // before its connection closes.
            let fromSource = StreamSpliceDirection(lastWords: { error in
                guard let idle = error as? StreamIdleTimeout else { return nil }
                return PeerMessage.error(code: HandoffError.Code.userActivityRemoteApplicationTimedOut.rawValue,
                                         message: "\(source.peer.name) sent nothing on the continuation streams for \(idle.timeout) (limits.streamIdleTimeout)").frame
            })
            do {
                try await StreamSplice.join(connection.splice, StreamSpliceDirection(),
                                            firstFrame: response(.success(OpenStreamsResult(streamID: request.streamID))),
                                            peerSplice, fromSource, firstFrame: nil, onEnd: relay.directionEnded)
            } catch {
                // A connection closed while joining: the app may have its answer already, so it
                // learns of the break from its connection closing (the relay's end, below).
                return
            }
            await relay.waitUntilDone(ownConnectionClosed: { connection.splice.isClosed })
        }
    }

    /// Reads the source's hello and its answer to `streamOpen`.
    nonisolated(nonsending) static func handshake<I: AsyncIteratorProtocol>(_ frames: inout I, peer: String, timeout: Duration) async -> Result<Void, HandoffError>
    where I.Element == Frame {
        await handshake(&frames, peer: peer, timeout: timeout, request: "stream request", accepting: "accept the continuation streams") { message in
            if case .streamAccepted = message { return () }
            return nil
        }
    }

    /// Reads the peer's hello and its answer to a request (`accepted` reads an answer that takes
    /// it; an `error` frame refuses it).
    nonisolated(nonsending) static func handshake<I: AsyncIteratorProtocol, Taken>(_ frames: inout I, peer: String, timeout: Duration, request: String, accepting: String,
                                                          accepted: (PeerMessage) -> Taken?) async -> Result<Taken, HandoffError>
    where I.Element == Frame {
        do {
            guard let hello = try await frames.next(isolation: #isolation), case .hello = try PeerMessage(frame: hello) else {
                return .failure(.remoteTimedOut("\(peer) did not answer the \(request) within \(timeout)"))
            }
            guard let answer = try await frames.next(isolation: #isolation) else {
                return .failure(.remoteTimedOut("\(peer) did not \(accepting) within \(timeout)"))
            }
            let message = try PeerMessage(frame: answer)
            if let taken = accepted(message) { return .success(taken) }
            if case .error(let code, let message) = message { return .failure(HandoffError(HandoffError.Code(rawValue: code), message)) }
            return .failure(.handoffFailed("\(peer) answered the \(request) with a \(answer.kind) frame"))
        } catch let idle as StreamIdleTimeout {
            return .failure(.remoteTimedOut("\(peer) did not answer the \(request): \(idle)"))
        } catch {
            return .failure(.handoffFailed("the connection to \(peer) failed: \(error)"))
        }
    }
}
