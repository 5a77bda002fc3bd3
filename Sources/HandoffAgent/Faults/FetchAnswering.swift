import HandoffCore
import HandoffTransport
import Logging
import NIOCore

/// How a source session answers the fetches on one peer connection: whether it serves the
/// connection at all, how it looks an activity up, and how it sends the answer's frames.
///
/// ``PeerSession`` asks ``Agent/fetchAnswering(on:logger:)`` for one when a connection opens and
/// again for each fetch (faults change while connections stay open). Without faults it is
/// ``AgentFetchAnswering``; with faults set (`handoff fault`, docs/FAULTS.md) it is that one
/// wrapped in ``FaultyFetchAnswering`` (and, for `willSaveDelayMs`, asking apps to save through
/// ``SlowActivitySaving``), so the session itself holds no fault logic.
protocol FetchAnswering: Sendable {
    /// Whether the connection is served (false: it is closed without an answer).
    var servesConnection: Bool { get }
    /// The activity and the app that published it (nil: it is gone), or why it cannot be given.
    func lookUp(_ request: FetchRequest) async throws -> Result<(Activity, AppIdentity?)?, HandoffError>
    /// Sends a fetch's answer, in one flush.
    func send(_ frames: [Frame], answering request: FetchRequest) async throws
}

/// Answers fetches from the agent's activities, as they are, once their apps have saved them
/// (`saving`).
struct AgentFetchAnswering: FetchAnswering {
    let agent: Agent
    /// Writes frames to the connection, in one flush.
    let write: @Sendable ([Frame]) async throws -> Void
    let saving: any ActivitySaving
    /// The request ID of a fetch on a multiplexed connection: its frames go as `reply` frames
    /// tagged with it. Nil on a connection that carries one fetch at a time.
    var tag: UInt32? = nil

    var servesConnection: Bool { true }

    func lookUp(_ request: FetchRequest) async throws -> Result<(Activity, AppIdentity?)?, HandoffError> {
        await agent.prepareForFetch(id: request.activityID, saving: saving)
    }

    func send(_ frames: [Frame], answering request: FetchRequest) async throws {
        guard let tag else { return try await write(frames) }
        try await write(frames.map { TaggedFrame(id: tag, frame: $0).wrapped(as: .reply) })
    }
}

/// Another way of answering, with the faults of a ``FaultPlan`` applied: refused connections,
/// data that is gone, a delayed payload, a corrupted activity frame, a connection dropped
/// mid-answer. Each is logged where it acts.
struct FaultyFetchAnswering: FetchAnswering {
    let base: any FetchAnswering
    let faults: FaultPlan
    /// Closes the connection after this many more bytes (`faults.dropAfterBytes`).
    let limitOutbound: @Sendable (Int) async -> Void
    let clock: any Clock<Duration>
    let logger: Logger
    let remote: String

    var servesConnection: Bool {
        guard faults.refuseConnections else { return base.servesConnection }
        logger.info("fault: refusing a peer connection", metadata: ["handoff.remote": "\(remote)"])
        return false
    }

    func lookUp(_ request: FetchRequest) async throws -> Result<(Activity, AppIdentity?)?, HandoffError> {
        let found: Result<(Activity, AppIdentity?)?, HandoffError>
        if faults.advertiseGoneData {
            logger.info("fault: answering as if the activity's data were gone", metadata: ["handoff.id": "\(request.activityID)"])
            found = .success(nil)
        } else {
            found = try await base.lookUp(request)
        }
        if faults.payloadDelay > .zero {
            logger.info("fault: delaying payload", metadata: ["handoff.remote": "\(remote)", "handoff.delay": "\(faults.payloadDelay)"])
            try await clock.sleep(for: faults.payloadDelay)
        }
        return found
    }

    func send(_ frames: [Frame], answering request: FetchRequest) async throws {
        var frames = frames
        if faults.corruptFrame, let index = frames.firstIndex(where: { $0.kind == .activity }) {
            logger.info("fault: corrupting the activity frame", metadata: ["handoff.id": "\(request.activityID)"])
            frames[index].payload = frames[index].payload.map { $0 ^ 0xA5 }
        }
        if let budget = faults.dropAfterBytes {
            logger.info("fault: dropping the connection mid-answer", metadata: ["handoff.id": "\(request.activityID)", "handoff.bytes": "\(budget)"])
            await limitOutbound(budget)
        }
        try await base.send(frames, answering: request)
    }
}

extension FaultPlan {
    /// Whether any fault acts on how fetches are answered.
    var touchesFetches: Bool {
        refuseConnections || advertiseGoneData || payloadDelay > .zero || corruptFrame || dropAfterBytes != nil
    }
}

extension Agent {
    /// How the fetches on `connection` are answered now: from the activities, through the
    /// faults set at this moment if any touch fetches or how apps save. With a `tag`, the one
    /// fetch of that request ID on a multiplexed connection.
    func fetchAnswering(on connection: FrameServer.Connection, logger: Logger, tag: UInt32? = nil) -> any FetchAnswering {
        fetchAnswering(on: SourceLink(connection), logger: logger, tag: tag)
    }

    /// ``fetchAnswering(on:logger:tag:)`` for any connection a source session serves, the shared
    /// connections this side dialled included (``SourceLink``).
    func fetchAnswering(on link: SourceLink, logger: Logger, tag: UInt32? = nil) -> any FetchAnswering {
        let plain = AgentFetchAnswering(agent: self, write: link.write, saving: faults.activitySaving, tag: tag)
        guard faults.touchesFetches else { return plain }
        return FaultyFetchAnswering(base: plain, faults: faults, limitOutbound: link.limitOutbound, clock: clock, logger: logger, remote: link.remote)
    }
}
