import HandoffCore
import HandoffTransport
import HandoffTrust
import Logging

/// The source side of a shared connection this side dialled (docs/PROTOCOL.md, "One connection
/// per pair"): the peer sends its own pings, fetches, `continued` notices, keys, subscription,
/// `announce` and `goodbye` on it, and this side answers them as ``PeerSession`` answers them on
/// a connection it accepted. Liveness reads the connection and hands over every frame that is
/// not an answer to its own requests (``frames``).
struct SharedSourceRole: Sendable {
    /// The peer's frames for the source side, in order; ends with the connection.
    let frames = FrameInbox()
    let link: SourceLink
    /// The peer's hello (it agreed to share).
    let peer: PeerHello
    /// Set when the peer says `goodbye` (it stops).
    let goodbye = PeerSaidGoodbye()

    /// Whether a frame read on the connection is the peer's to this side's source, not an answer
    /// to this side's own requests (`pong`, `reply`, `advertisement`).
    static func isForSource(_ kind: FrameKind) -> Bool { !SourceSessionStateMachine.watcherKinds.contains(kind) }

    /// Serves the peer's frames until the connection ends, or a frame ends the session (then it
    /// closes the connection).
    func serve(agent: Agent, logger: Logger) async {
        guard let peerID = link.peerID else { return }
        var machine = SourceSessionStateMachine(hello: agent.hello, sharingWith: peer)
        let peerName = await agent.trustedName(of: peerID) ?? link.remote
        let slots = RequestSlots(capacity: PeerSession.maxRequestsInFlight)
        do {
            try await withThrowingDiscardingTaskGroup { children in
                defer { children.cancelAll() }
                while let frame = try await frames.next() {
                    guard await agent.isPaired(peerID) else {
                        try await PeerSession.refuseUnpaired(frame, from: peerID, on: link, logger: logger)
                        break
                    }
                    let action = machine.received(frame)
                    if case .saidGoodbye = action { goodbye.mark() }
                    guard try await PeerSession.perform(action, link: link, peerName: peerName, shared: nil, slots: slots,
                                                        children: &children, machine: machine, agent: agent, logger: logger) else { break }
                }
            }
        } catch {
            logger.debug("shared connection: serving the peer ended", metadata: ["handoff.remote": "\(link.remote)", "handoff.error": "\(error)"])
        }
        await link.close()
    }
}
