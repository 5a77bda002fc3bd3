import HandoffCore

/// One end of an in-memory connection between two agents (``InMemoryNetwork``): the
/// connecting agent's, or the listening agent's (``InMemoryNetwork/Accepted``). Frames cross as
/// bytes and are parsed with the receiving end's limits, as on TCP.
///
/// ``close()`` closes both directions, as closing a socket does: the other end reads the end
/// (after what was sent), and a pending ``receive()`` here returns nil.
public final class InMemoryPeerConnection: UnpinnedFrameConnection, OutboundLimiting {
    /// The identity the other end proved (in TLS terms: the certificate it presented); nil for
    /// an end that has no identity.
    public let provenIdentity: ProvenPeerIdentity?
    private let incoming: InMemoryFramePipe
    private let outgoing: InMemoryFramePipe

    init(provenIdentity: ProvenPeerIdentity?, incoming: InMemoryFramePipe, outgoing: InMemoryFramePipe) {
        self.provenIdentity = provenIdentity
        self.incoming = incoming
        self.outgoing = outgoing
    }

    /// Two connected ends: frames sent on one are received on the other, each parsed with its
    /// receiver's limits; each end reports the other's identity. (An app's connection to its
    /// agent's control socket, in memory, is such a pair without identities.)
    public static func pair(_ a: (identity: ProvenPeerIdentity?, limits: FrameLimits),
                     _ b: (identity: ProvenPeerIdentity?, limits: FrameLimits)) -> (InMemoryPeerConnection, InMemoryPeerConnection) {
        let toA = InMemoryFramePipe(limits: a.limits)
        let toB = InMemoryFramePipe(limits: b.limits)
        // Each end reports the identity the other proved.
        return (InMemoryPeerConnection(provenIdentity: b.identity, incoming: toA, outgoing: toB),
                InMemoryPeerConnection(provenIdentity: a.identity, incoming: toB, outgoing: toA))
    }

    /// Sends frames in order.
    ///
    /// - Throws: ``InMemoryTransportError/sendOnClosedConnection`` once this direction is closed
    ///   (by either end, or by a byte budget).
    public func send(_ frames: [Frame]) async throws {
        guard outgoing.write(frames) else { throw InMemoryTransportError.sendOnClosedConnection }
    }

    /// The next frame; nil once the other end closed (after what it sent) or this end did.
    public func receive() async throws -> Frame? {
        try await incoming.read()
    }

    /// Closes both directions.
    public func close() async {
        closeNow()
    }

    /// Closes both directions, from any context.
    public func closeNow() {
        outgoing.close()
        incoming.close()
    }

    /// Lets `bytes` more bytes out, then closes the connection mid-frame (`faults.dropAfterBytes`).
    public func limitOutbound(toBytes bytes: Int) {
        outgoing.limit(toBytes: bytes)
    }

    /// Whether this end can no longer send (it, or the other end, closed the connection).
    public var isClosed: Bool { outgoing.isClosed }
}
