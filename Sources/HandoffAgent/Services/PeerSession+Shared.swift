import HandoffCore
import HandoffTransport
import HandoffTrust
import Logging

extension PeerSession {
    /// Performs what a frame of a paired device led to, for the frames a connection keeps
    /// carrying (pings, multiplexed fetches, `continued`, keys, the subscription, `announce`,
    /// `goodbye`): alike on a connection this side accepted and on a shared one it dialled
    /// (``SharedSourceRole``). Returns false when the session ends.
    static func perform(_ action: SourceSessionStateMachine.Action, link: SourceLink, peerName: String, shared: SharedLink?, slots: RequestSlots,
                        children: inout ThrowingDiscardingTaskGroup<any Error>, machine: SourceSessionStateMachine, agent: Agent,
                        logger: Logger) async throws -> Bool {
        switch action {
        case .send(let frames):
            try await link.write(frames)  // one flush for the whole answer
        case .lookUpTagged(let id, let request):
            // At the cap, no frame more is read until an answer is out: backpressure.
            await slots.acquire()
            children.addTask {
                defer { slots.release() }
                let served = try await serveFetch(request, tag: id, on: link, agent: agent, logger: logger) { lookup in
                    switch lookup {
                    case .success(let found): machine.answer(found?.0, source: found?.1, request: request, now: agent.wallClock())
                    case .failure(let error): [PeerMessage.error(code: error.code.rawValue, message: error.message).frame]
                    }
                }
                // Refused as a fetch on a connection of its own would be: the connection closes.
                if !served { await link.close() }
            }
        case .notifyContinued(let request):
            // The connection stays open: the continuing agent may reuse it for its next fetch.
            await agent.activityWasContinued(request, by: peerName)
        case .takeKeys(let key):
            if let peerID = link.peerID { _ = await agent.receivedAdvertisingKey(key, from: peerID, certificateDER: link.certificateDER) }
        case .subscribeAdvertisements:
            // A paired device that knows this one by address, or takes its pushes: the record
            // now, then each new one.
            let records = agent.advertisementFeed.subscribe()
            logger.info("peer subscribed to the advertisement", metadata: ["handoff.remote": "\(link.remote)", "handoff.peer": "\(peerName)"])
            children.addTask {
                for await record in records {
                    do { try await link.write([PeerMessage.advertisement(instanceName: record.instanceName, txtRecord: record.txtRecord).frame]) } catch { return }
                }
            }
        case .announced(let port, let instanceName, let txtRecord):
            // Paired (checked before) and pinned: the device itself says it is back.
            guard let peerID = link.peerID, let host = link.host else { break }
            let reached = await agent.receivedAnnouncement(port: port, instanceName: instanceName, txtRecord: txtRecord, from: peerID, host: host)
            // Where this side's pushes from the peer on the same connection are taken at.
            if let reached { shared?.markAnnounced(at: reached) }
        case .saidGoodbye:
            if let peerID = link.peerID { await agent.receivedGoodbye(from: peerID) }
            return false
        case .forwardToWatcher(let frame):
            shared?.deliver(frame)
        case .sendAndClose(let frames, let reason):
            try await link.write(frames)  // one flush for the whole answer
            logger.info("closing peer connection", metadata: ["handoff.remote": "\(link.remote)", "handoff.reason": "\(reason)"])
            return false
        default:
            // Streams, `open`, files, pairing, search and clipboard go on connections of their own.
            logger.info("closing peer connection", metadata: ["handoff.remote": "\(link.remote)", "handoff.reason": "\(action) on a shared connection"])
            return false
        }
        return true
    }

    /// A frame from a device unpaired while its connection was open (the agent keeps connections
    /// between continuations): no frame it sends or had buffered (fetch, open, streamOpen,
    /// continued, keys) is acted on; a fetch is told why. The session then ends.
    static func refuseUnpaired(_ frame: Frame, from peerID: DeviceID, on link: SourceLink, logger: Logger) async throws {
        logger.info("refused a frame from a device no longer paired", metadata: [
            "handoff.remote": "\(link.remote)", "handoff.device": "\(peerID.shortID)", "handoff.frame": "\(frame.kind)",
        ])
        let refusal = PeerMessage.error(code: HandoffError.Code.userActivityConnectionUnavailable.rawValue,
            message: "this device (\(peerID.shortID)) is no longer paired with the host it reached; pair them again with `handoff pair`").frame
        if frame.kind == .fetch {
            try await link.write([refusal])
        } else if frame.kind == .request, let tagged = try? TaggedFrame(unwrapping: frame) {
            try await link.write([TaggedFrame(id: tagged.id, frame: refusal).wrapped(as: .reply)])
        }
    }
}
