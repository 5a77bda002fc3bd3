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
///   connection to the source agent (`hello`, `streamOpen`), waits for `streamAccepted`, answers
///   the app, then relays stream frames both ways.
/// - `acceptStreams` (the source app, with the `streamID` of a `streamsRequested` event): the
///   agent pairs the connection with the waiting peer connection.
///
/// Each direction is a pump from one connection's inbound to the other's outbound; NIO's async
/// channels bound what is buffered, so a fast writer is slowed to the reader's pace. When one end
/// closes, the other is closed.
enum ContinuationStreamSession {
    /// Peer connections carry stream data in frames of at most this size.
    static let peerLimits = FrameLimits(maxFrameBytes: 64 * 1024, maxUserInfoBytes: 0)

    static func serve<I: AsyncIteratorProtocol>(_ command: String, _ body: JSONValue, inbound: inout I,
                                                connection: FrameServer.Connection, agent: Agent) async throws
    where I.Element == Frame {
        let requestID = body["requestID"]
        func respond(_ result: Result<JSONValue, HandoffError>) async throws {
            try await connection.outbound.write(Frame(kind: .controlResponse,
                                                       payload: ControlProtocol.responseJSON(result, requestID: requestID).serializedBytes))
        }
        if command == "acceptStreams" {
            guard let streamID = body["streamID"]?.stringValue.flatMap(UUID.init(uuidString:)),
                let claim = await agent.claimStreams(streamID)
            else {
                try await respond(.failure(.handoffFailed("no stream request with that streamID is waiting (it may have timed out)")))
                return
            }
            // `streamAccepted` goes to the peer before the app hears it may send: the app's first
            // bytes travel on the same writer and must not overtake it.
            do {
                try await claim.peer.outbound.write(PeerMessage.streamAccepted.frame)
            } catch {
                claim.release.resume(returning: nil)
                try await respond(.failure(.connectionUnavailable("the peer that asked for the streams is gone (\(error))")))
                return
            }
            try await respond(.success(.object([:])))
            claim.relay.onDone(close: connection.close)
            claim.release.resume(returning: StreamConnectionEnd(connection))
            // Fault injection (faults.stallStreamAfterBytes): the app's bytes stop here.
            let stall = await agent.faults.stallStreamAfterBytes
            // App to peer here; the peer's session pumps peer to app. Both connections close once
            // both directions have ended.
            try await claim.relay.direction {
                try await StreamChannels.pump(&inbound, to: claim.peer.outbound, writeLast: claim.peer.writeAndWait, stallAfterBytes: stall)
            }
            await claim.relay.waitUntilDone()
            return
        }

        guard let continuationID = body["continuationID"]?.stringValue.flatMap(UUID.init(uuidString:)),
            let source = await agent.streamSource(continuationID: continuationID)
        else {
            try await respond(.failure(.handoffFailed("openStreams needs the continuationID of an activity continued by this app on this host")))
            return
        }
        let limits = agent.configuration.limits
        let channel: FrameChannel
        do {
            channel = try await StreamChannels.connect(to: source.peer.endpoint, limits: peerLimits, connectTimeout: limits.connectTimeout,
                                                       tls: agent.security.clientTLS,
                                                       idleTimeout: limits.streamIdleTimeout > .zero ? limits.streamIdleTimeout : nil)
        } catch {
            try await respond(.failure(.connectionUnavailable("cannot connect to \(source.peer.name) for continuation streams: \(error)")))
            return
        }
        let request = StreamRequest(activityID: source.activityID, streamID: UUID())
        try await channel.executeThenClose { peerInbound, peerOutbound in
            try await peerOutbound.write(PeerMessage.hello(agent.hello).frame)
            try await peerOutbound.write(PeerMessage.streamOpen(request).frame)
            // The source must accept within fetchTimeout; closing the channel ends the wait.
            let deadline = channel.channel.eventLoop.scheduleTask(in: TimeAmount.nanoseconds(limits.fetchTimeout.nanoseconds)) {
                channel.channel.close(promise: nil)
            }
            let appOutbound = connection.outbound
            let relay = agent.streamRelays.make()
            defer {
                relay.directionEnded(nil)  // done already, unless the streams never opened
                agent.streamRelays.finished()
            }
            let (answers, answerSink) = AsyncStream.makeStream(of: Result<Void, HandoffError>.self)
            let (responded, respondedSink) = AsyncStream.makeStream(of: Bool.self)
            try await withThrowingTaskGroup(of: Void.self) { group in
                // Peer to app: the handshake, then (once the app has its answer) the pump.
                group.addTask {
                    var frames = peerInbound.makeAsyncIterator()
                    let answer = await handshake(&frames, peer: source.peer.name, timeout: limits.fetchTimeout)
                    answerSink.yield(answer)
                    answerSink.finish()
                    guard case .success = answer else { return }
                    for await go in responded where go {
                        // When the peer's connection ends (closed, broken, or cut by unpairing),
                        // nothing more can pass either way: the relay closes the app's connection
                        // too, so the app sees the end instead of waiting forever. A source that
                        // went quiet for limits.streamIdleTimeout: the app learns why, with 4610,
                        // before its connection closes.
                        try await relay.direction {
                            try await StreamChannels.pump(&frames, to: appOutbound, writeLast: connection.writeAndWait, lastWords: { error in
                                guard let idle = error as? StreamIdleTimeout else { return nil }
                                return PeerMessage.error(code: HandoffError.Code.userActivityRemoteApplicationTimedOut.rawValue,
                                                         message: "\(source.peer.name) sent nothing on the continuation streams for \(idle.timeout) (limits.streamIdleTimeout)").frame
                            })
                        }
                        return
                    }
                }
                var answerIterator = answers.makeAsyncIterator()
                let answer = await answerIterator.next() ?? .failure(.handoffFailed("the stream request to \(source.peer.name) ended"))
                deadline.cancel()
                try await respond(answer.map { .object(["streamID": .string(request.streamID.uuidString)]) })
                guard case .success = answer else {
                    respondedSink.finish()
                    return
                }
                relay.onDone(close: connection.close)
                relay.onDone(close: { channel.channel.close(promise: nil) })
                respondedSink.yield(true)
                respondedSink.finish()
                // App to peer, here. Both connections close once both directions have ended, or
                // at once when either side goes away.
                try await relay.direction {
                    try await StreamChannels.pump(&inbound, to: peerOutbound, writeLast: { try await channel.channel.writeAndFlush($0).get() })
                }
                await relay.waitUntilDone()
                try await group.next()
            }
        }
    }

    /// Reads the source's hello and its answer to `streamOpen`.
    static func handshake<I: AsyncIteratorProtocol>(_ frames: inout I, peer: String, timeout: Duration) async -> Result<Void, HandoffError>
    where I.Element == Frame {
        do {
            guard let hello = try await frames.next(), case .hello = try PeerMessage(frame: hello) else {
                return .failure(.remoteTimedOut("\(peer) did not answer the stream request within \(timeout)"))
            }
            guard let answer = try await frames.next() else {
                return .failure(.remoteTimedOut("\(peer) did not accept the continuation streams within \(timeout)"))
            }
            switch try PeerMessage(frame: answer) {
            case .streamAccepted: return .success(())
            case .error(let code, let message): return .failure(HandoffError(HandoffError.Code(rawValue: code), message))
            default: return .failure(.handoffFailed("\(peer) answered the stream request with a \(answer.kind) frame"))
            }
        } catch let idle as StreamIdleTimeout {
            return .failure(.remoteTimedOut("\(peer) did not answer the stream request: \(idle)"))
        } catch {
            return .failure(.handoffFailed("the stream connection to \(peer) failed: \(error)"))
        }
    }
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
