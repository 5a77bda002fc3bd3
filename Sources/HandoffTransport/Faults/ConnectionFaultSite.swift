/// Where fault injection puts its decorators on one served connection: the byte budget of
/// `faults.dropAfterBytes` and the stall of `faults.stallStreamAfterBytes`.
///
/// A connection of ``FrameServer`` has none: its decorators go in its channel pipeline
/// (``OutboundByteBudget``, ``StreamStallHandler``). A harness that serves connections without a
/// socket (the in-memory lab of the tests) gives its own, so the same faults act there.
public protocol ConnectionFaultSite: Sendable {
    /// From now on, lets `budget` more bytes of frames out, then closes the connection mid-frame.
    func limitOutbound(toBytes budget: Int) async
    /// From now on, stream data read from the connection stops after `budget` bytes.
    func stallStreams(afterBytes budget: Int) async throws
}
