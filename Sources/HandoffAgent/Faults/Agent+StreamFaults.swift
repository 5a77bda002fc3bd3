import HandoffTransport

extension Agent {
    /// Puts the faults set now that act on continuation streams on a source app's connection,
    /// before it is joined to the peer's: with `faults.stallStreamAfterBytes`, the app's stream
    /// data stops after that many bytes (a handler in front of the connection's splice). Without
    /// such faults the connection is left as it is.
    ///
    /// A connection that has closed meanwhile gets nothing: joining it fails as it would have.
    nonisolated func applyStreamFaults(toAppConnection connection: FrameServer.Connection) async {
        guard let budget = await faults.stallStreamAfterBytes else { return }
        logger.info("fault: stalling the app's stream data", metadata: ["handoff.bytes": "\(budget)"])
        try? await connection.stallStreams(afterBytes: budget)
    }
}
