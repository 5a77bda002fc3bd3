import HandoffCore
import HandoffTransport
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The source side of one peer connection: the handshake, then fetches answered from the
/// agent's activities. Malformed input ends only this connection.
public enum PeerSession {
    /// The fetches a multiplexed connection has answered at once, at most; more wait unread. A
    /// continuing agent keeps no more than this outstanding (``MultiplexedConnection``), so the
    /// session goes on reading, and answers a ping behind them at once.
    public static let maxRequestsInFlight = MultiplexedConnection.maxRequestsOutstanding

    /// One peer connection: handshake, then fetches.
    ///
    /// Only a paired device (by the certificate it presented in TLS) gets past the handshake; any
    /// other may only pair, and only while `handoff pair --accept` waits. It learns nothing else,
    /// not even this agent's name.
    public static func serve(_ connection: FrameServer.Connection, agent: Agent, logger: Logger) async throws {
        let remote = connection.remoteAddress.map { "\($0)" } ?? "unknown"
        guard await agent.fetchAnswering(on: connection, logger: logger).servesConnection else {
            connection.close()
            return
        }
        var inbound = connection.inbound.makeAsyncIterator()
        // TLS is done once the first frame has arrived: the peer's certificate is known.
        guard let first = try await inbound.next() else { return }
        let peerID = connection.peerIdentity?.deviceID
        var paired = false
        if let peerID { paired = await agent.isPaired(peerID) }
        // What apps and logs are told: the name this host stored when pairing, never the name
        // the peer gives itself in hello.
        let trustedName = await agent.trustedName(of: peerID)
        var machine = SourceSessionStateMachine(hello: paired ? agent.sharingHello : PeerHello(agentID: "-", name: "-"))
        let slots = RequestSlots(capacity: maxRequestsInFlight)
        let link = SourceLink(connection)
        // This side's liveness's use of the connection, when the hellos agreed to share it.
        var shared: SharedLink?
        defer { shared?.end() }
        var next: Frame? = first
        // A child task pushes the advertisement to a peer that subscribed, beside the pongs this
        // loop writes; it ends with the session.
        try await withThrowingDiscardingTaskGroup { children in
            defer { children.cancelAll() }
            while let frame = next {
                next = nil
                if !paired {
                    guard FrameKind.beforePairing.contains(frame.kind) else {
                        logger.info("refused an unpaired device", metadata: [
                            "handoff.remote": "\(remote)", "handoff.device": "\(peerID?.shortID ?? "none")", "handoff.frame": "\(frame.kind)",
                        ])
                        try await connection.outbound.write(PeerMessage.error(code: HandoffError.Code.userActivityConnectionUnavailable.rawValue,
                            message: "this device (\(peerID?.shortID ?? "no certificate")) is not paired with the host it reached; pair them first with `handoff pair` (or `handoff trust add`)").frame)
                        return
                    }
                } else if frame.kind == .hello {
                    connection.gate?.authenticate()
                } else if let peerID, await !agent.isPaired(peerID) {
                    try await refuseUnpaired(frame, from: peerID, on: link, logger: logger)
                    return
                }
                let peerName = trustedName ?? remote
                let action = machine.received(frame)
                if case .send(let frames) = action, frame.kind == .hello, machine.shared, let peerID, let peer = machine.peer {
                    // The hellos agreed to share this connection: the answer goes first, then
                    // this side's liveness may take the connection as its own to the peer.
                    try await link.write(frames)
                    let offered = SharedLink(device: peerID, peerHello: peer, link: link)
                    shared = offered
                    agent.sharedLinks.offer(offered)
                    next = try await inbound.next()
                    continue
                }
                switch action {
                case .lookUp(let request):
                    // A connection may carry many fetches over a long time (the continuing agent keeps
                    // it for the next one): how to answer (the faults set now) is asked for each, as
                    // the pairing is, for every frame, above.
                    let served = try await serveFetch(request, tag: nil, on: link, agent: agent, logger: logger) { lookup in
                        let action = switch lookup {
                        case .success(let found): machine.lookedUp(found?.0, source: found?.1, request: request, now: agent.wallClock())
                        case .failure(let error): machine.lookUpFailed(error)
                        }
                        guard case .send(let frames) = action else { return nil }
                        return frames
                    }
                    guard served else { return }
                case .receiveOpen(let request):
                    try await OpenURLTransfer.receive(request, inbound: &inbound, outbound: connection.outbound,
                                                      peer: peerName, device: peerID, agent: agent)
                    return
                case .receiveFiles(let offer):
                    try await FileReceiver.receive(offer, inbound: &inbound, outbound: connection.outbound, splice: connection.splice,
                                                   peer: peerName, device: peerID, agent: agent, logger: logger)
                    return
                case .openStreams(let request):
                    let relay = agent.streamRelays.make()
                    defer {
                        relay.directionEnded(nil)  // done already, unless the app never took the streams
                        agent.streamRelays.finished()
                    }
                    switch await agent.awaitStreamApp(request, peer: connection.splice, relay: relay) {
                    case .failure(let error):
                        try await connection.outbound.write(PeerMessage.error(code: error.code.rawValue, message: error.message).frame)
                    case .success:
                        // The app's session has joined this connection's splice with its own and sent
                        // `streamAccepted`: stream frames now go between the two connections on the
                        // event loops. The connection stays until both directions have ended (or one
                        // side has gone away).
                        relay.onDone(close: connection.close)
                        await relay.waitUntilDone(ownConnectionClosed: { connection.splice.isClosed })
                    }
                    return
                case .pair(let name, let commitment):
                    try await PairingSession.respond(name: name, commitment: commitment, inbound: &inbound, connection: connection, agent: agent)
                    return
                case .exchangeKeys(let key):
                    guard let peerID, let ours = await agent.receivedAdvertisingKey(key, from: peerID, certificateDER: connection.peerIdentity?.certificateDER) else { return }
                    try await connection.outbound.write(PeerMessage.keys(advertisingKey: ours.bytes).frame)
                case .search(let request):
                    try await connection.outbound.write(await agent.answerSearch(request))
                case .serveClipboard(let itemID):
                    try await ClipboardTransfer.serve(itemID, to: connection.outbound, peer: peerName, agent: agent, logger: logger)
                    return
                default:
                    if case .saidGoodbye = action { shared?.goodbye.mark() }
                    guard try await perform(action, link: link, peerName: peerName, shared: shared, slots: slots, children: &children,
                                            machine: machine, agent: agent, logger: logger) else { return }
                }
                next = try await inbound.next()
            }
        }
    }

    /// Answers one fetch, on a connection of its own (`tag` nil) or beside the others in flight on
    /// a multiplexed one (its frames tagged with `tag`): asks how to answer now (the faults set
    /// now, as for every fetch), looks the activity up, and sends the frames `answer` makes of the
    /// lookup. Returns false, having sent nothing, when the connection is no longer served or
    /// `answer` has nothing to send.
    static func serveFetch(_ request: FetchRequest, tag: UInt32?, on link: SourceLink, agent: Agent, logger: Logger,
                           answer: (Result<(Activity, AppIdentity?)?, HandoffError>) -> [Frame]?) async throws -> Bool {
        let answering = await agent.fetchAnswering(on: link, logger: logger, tag: tag)
        guard answering.servesConnection, let frames = answer(try await answering.lookUp(request)) else { return false }
        var metadata: Logger.Metadata = [
            "handoff.remote": "\(link.remote)", "handoff.id": "\(request.activityID)",
            "handoff.continuation": "\(request.continuationID)", "handoff.found": "\(frames.first?.kind == .activity)",
        ]
        if let tag { metadata["handoff.request"] = "\(tag)" }
        logger.info("serving fetch", metadata: metadata)
        try await answering.send(frames, answering: request)
        return true
    }
}
