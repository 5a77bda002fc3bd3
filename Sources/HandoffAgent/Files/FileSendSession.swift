import HandoffCore
import HandoffTransport
import NIOCore

/// The sending agent's part in `handoff send`: a relay. The CLI reads the files itself (the agent
/// may not be allowed to) and speaks the file send end to end with the receiving agent; this
/// agent opens the pinned-TLS connection to the paired device, sends `hello` and the offer, and
/// once the receiver has answered joins the CLI's control connection with the peer connection
/// (``StreamSplice``, as continuation streams are joined): the files' frames go from one to the
/// other on the event loop, with no copy into Swift, each side read only while the other can
/// take more.
enum FileSendSession {
    /// Serves `sendFiles`, the first request on `connection`.
    static func serve(peer name: String, offer: FileOffer, requestID: JSONValue?, connection: FrameServer.Connection, agent: Agent) async throws {
        func response(_ result: Result<any ControlResult, HandoffError>) -> Frame {
            Frame(kind: .controlResponse, payload: ControlProtocol.responseJSON(result.map(\.json), requestID: requestID).serializedBytes)
        }
        func respond(_ result: Result<any ControlResult, HandoffError>) async throws {
            try await connection.outbound.write(response(result))
        }
        guard let peer = await agent.pairedPeer(named: name) else {
            return try await respond(.failure(.connectionUnavailable("no paired device named \(name) is reachable; `handoff peers` lists them")))
        }
        let limits = agent.configuration.limits
        let peerConnection: any PeerStreamConnection
        do {
            peerConnection = try await agent.transport.connectStream(
                to: peer.endpoint, limits: ContinuationStreamSession.peerLimits,
                options: PeerStreamOptions(idleTimeout: limits.streamIdleTimeout > .zero ? limits.streamIdleTimeout : nil,
                                           relayPartner: connection.splice))
        } catch {
            return try await respond(.failure(.connectionUnavailable("cannot connect to \(peer.name) to send files: \(error)")))
        }
        guard let peerSplice = (peerConnection as? ChannelStreamConnection)?.splice else {
            try? await peerConnection.executeThenClose { _, _ in }
            return try await respond(.failure(.connectionUnavailable("the transport to \(peer.name) cannot relay files")))
        }
        try await peerConnection.executeThenClose { peerInbound, peerOutbound in
            try await peerOutbound.write(PeerMessage.hello(agent.hello).frame)
            try await peerOutbound.write(PeerMessage.files(.offer(offer)).frame)
            var frames = peerInbound.makeAsyncIterator()
            let (answer, _) = await Deadline.watch(limits.fetchTimeout, on: agent.clock, onExpiry: { peerConnection.close() }) {
                await ContinuationStreamSession.handshake(&frames, peer: peer.name, timeout: limits.fetchTimeout, request: "file offer",
                                                          accepting: "answer the file offer") { message -> [Int]? in
                    guard case .files(.answer(let starts)) = message, starts.count == offer.files.count else { return nil }
                    return starts
                }
            }
            let starts: [Int]
            switch answer {
            case .failure(let error): return try await respond(.failure(error))
            case .success(let taken): starts = taken
            }
            let relay = agent.streamRelays.make()
            defer {
                relay.directionEnded(nil)  // done already, unless the relay never started
                agent.streamRelays.finished()
            }
            relay.onDone(close: connection.close)
            relay.onDone(close: peerSplice.close)
            // faults.stallStreamAfterBytes acts on the CLI's data as on an app's stream.
            await agent.applyStreamFaults(toAppConnection: connection)
            let fromReceiver = StreamSpliceDirection(lastWords: { error in
                guard let idle = error as? StreamIdleTimeout else { return nil }
                return PeerMessage.files(.received(FileReceipt(index: 0, name: "", start: 0, bytes: 0, error: .remoteTimedOut(
                    "\(peer.name) sent nothing for \(idle.timeout) (limits.streamIdleTimeout)")))).frame
            }, alsoRelaying: FileTransferMessage.kinds)
            do {
                try await StreamSplice.join(connection.splice, StreamSpliceDirection(alsoRelaying: FileTransferMessage.kinds),
                                            firstFrame: response(.success(SendFilesResult(starts: starts))),
                                            peerSplice, fromReceiver, firstFrame: nil, onEnd: relay.directionEnded)
            } catch {
                return  // a connection closed while joining: the CLI sees its connection close
            }
            await relay.waitUntilDone(ownConnectionClosed: { connection.splice.isClosed })
        }
    }
}

extension Agent {
    /// A reachable peer by name, as `handoff peers` shows it.
    func reachablePeer(named name: String) -> PeerRecord? {
        directory.peer(named: name)
    }

    /// A reachable peer by name that is a paired device, for `handoff send`.
    func pairedPeer(named name: String) -> PeerRecord? {
        guard let peer = directory.peer(named: name), let device = peer.deviceID, isPaired(device) else { return nil }
        return peer
    }
}
