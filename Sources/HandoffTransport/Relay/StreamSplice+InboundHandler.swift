import NIOCore

extension StreamSplice {
    /// Adds the handler `make` creates to the splice's channel, just before the splice: it sees
    /// each decoded frame first, and the frames it passes on go to the splice and the async side
    /// as before. Runs on the channel's event loop; returns the handler added.
    ///
    /// A receiving agent puts a file sink here (the file data it takes is written in the pipeline,
    /// never handed to a task frame by frame).
    public func addInboundHandler<Handler: ChannelHandler & Sendable>(_ make: @escaping @Sendable () -> Handler) async throws -> Handler {
        let channel = self.channel
        return try await channel.eventLoop.submit {
            let sync = channel.pipeline.syncOperations
            let handler = make()
            try sync.addHandler(handler, position: .before(try sync.handler(type: StreamSpliceHandler.self)))
            return handler
        }.get()
    }
}
