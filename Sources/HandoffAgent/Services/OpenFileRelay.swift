import HandoffCore
import HandoffTransport
import NIOCore

/// `handoff open FILE`: the CLI streams the file, and this agent relays it to the peer, as
/// `handoff send` does (``FileSendSession``), so no file is base64-encoded into a control frame
/// and no cap but the receiver's `limits.maxOpenFileBytes` applies.
///
/// The agent sends `hello` and `open` (with `answersFirst`) to the peer; the receiver checks the
/// app, the size and the Inbox quota and answers `streamAccepted` (or an error). Then the CLI's
/// control connection is joined with the peer connection: the file's stream frames go to the
/// peer on the event loop, and the receiver's answer (`opened` or `error`) comes back to the CLI.
enum OpenFileRelay {
    /// Serves `open` with a streamed file, the first request on `connection`.
    static func serve(_ open: ControlRequest.OpenCommand, requestID: JSONValue?, connection: FrameServer.Connection, agent: Agent) async throws {
        func response(_ result: Result<any ControlResult, HandoffError>) -> Frame {
            Frame(kind: .controlResponse, payload: ControlProtocol.responseJSON(result.map(\.json), requestID: requestID).serializedBytes)
        }
        func respond(_ result: Result<any ControlResult, HandoffError>) async throws {
            try await connection.outbound.write(response(result))
        }
        guard case .streamedFile(let name, let size) = open.target else {
            return try await respond(.failure(.handoffFailed("open on a connection of its own needs a streamed file")))
        }
        guard let peer = await agent.reachablePeer(named: open.peer) else {
            return try await respond(.failure(.connectionUnavailable("no peer named \(open.peer); `handoff peers` lists them")))
        }
        let limits = agent.configuration.limits
        let peerConnection: any PeerStreamConnection
        do {
            peerConnection = try await agent.transport.connectStream(to: peer.endpoint, limits: ContinuationStreamSession.peerLimits,
                                                                     options: PeerStreamOptions(relayPartner: connection.splice))
        } catch {
            return try await respond(.failure(.connectionUnavailable("cannot connect to \(peer.name): \(error)")))
        }
        guard let peerSplice = (peerConnection as? ChannelStreamConnection)?.splice else {
            try? await peerConnection.executeThenClose { _, _ in }
            return try await respond(.failure(.connectionUnavailable("the transport to \(peer.name) cannot relay files")))
        }
        // A streamed file comes on a connection of its own, never an app's: from `handoff open`.
        var request = OpenRequest(bundleID: open.bundleID, fileName: name, fileSize: size,
                                  sourceApplication: OpenRequest.commandLineSourceApplication, annotation: open.annotation)
        request.answersFirst = true
        try await peerConnection.executeThenClose { peerInbound, peerOutbound in
            try await peerOutbound.write(PeerMessage.hello(agent.hello).frame)
            try await peerOutbound.write(PeerMessage.open(request).frame)
            // The receiver may start the app first: it has limits.handlerTimeout for that.
            let wait = limits.handlerTimeout + limits.fetchTimeout
            var frames = peerInbound.makeAsyncIterator()
            let (answer, _) = await Deadline.watch(wait, on: agent.clock, onExpiry: { peerConnection.close() }) {
                await ContinuationStreamSession.handshake(&frames, peer: peer.name, timeout: wait, request: "open request",
                                                          accepting: "take the file") { message -> Void? in
                    if case .streamAccepted = message { return () }
                    return nil
                }
            }
            if case .failure(let error) = answer { return try await respond(.failure(error)) }
            let relay = agent.streamRelays.make()
            defer {
                relay.directionEnded(nil)
                agent.streamRelays.finished()
            }
            relay.onDone(close: connection.close)
            relay.onDone(close: peerSplice.close)
            do {
                try await StreamSplice.join(connection.splice, StreamSpliceDirection(), firstFrame: response(.success(EmptyResult())),
                                            peerSplice, StreamSpliceDirection(alsoRelaying: [.opened, .error]), firstFrame: nil,
                                            onEnd: relay.directionEnded)
            } catch {
                return
            }
            // The receiver answers once the app has the file, then closes: the relay ends there.
            await relay.waitUntilDone(ownConnectionClosed: { connection.splice.isClosed })
        }
    }
}
