import HandoffCore

/// The agent's events (``AgentEvent``: offers, withdrawals, peers, continuations) as an async
/// sequence, over a control connection of their own (`watch`, docs/PROTOCOL.md "Watching").
/// `handoff watch` prints them; HandoffKit apps get them from `HandoffApplication.agentEvents()`.
///
/// The sequence ends with an error when the agent cannot be reached (4609), refuses the watch,
/// or closes the connection (it stopped, or this client fell too far behind); it ends without
/// one when the consuming task is cancelled.
public struct AgentEventStream: AsyncSequence, Sendable {
    public typealias Element = AgentEvent

    private let connect: @Sendable () async throws(HandoffError) -> ControlChannel

    /// Events from the agent at `socketPath` (checked as every control connection is).
    public init(socketPath: String) {
        connect = { () async throws(HandoffError) in try await ControlChannel.connect(socketPath: socketPath, hint: ControlClient.hint) }
    }

    /// Events over connections `connect` opens (an agent in the same process, in tests).
    public init(connect: @escaping @Sendable () async throws(HandoffError) -> any FrameConnection) {
        self.connect = { () async throws(HandoffError) in ControlChannel(connection: try await connect()) }
    }

    public func makeAsyncIterator() -> AsyncThrowingStream<AgentEvent, any Error>.AsyncIterator {
        let (stream, sink) = AsyncThrowingStream.makeStream(of: AgentEvent.self)
        let connect = self.connect
        // The stream's own task: it reads the connection for as long as the consumer iterates,
        // and is cancelled (closing the connection) when the consumer stops.
        let reader = Task {
            let channel: ControlChannel
            do { channel = try await connect() } catch {
                sink.finish(throwing: error)
                return
            }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await channel.readFrames() }
                group.addTask {
                    await withTaskCancellationHandler {
                        switch await channel.request(.watch) {
                        case .failure(let error): sink.finish(throwing: error)
                        case .success:
                            for await (event, _) in channel.events {
                                if case .agent(let agentEvent)? = event { sink.yield(agentEvent) }
                            }
                            if Task.isCancelled { sink.finish() } else {
                                sink.finish(throwing: HandoffError.connectionUnavailable(
                                    "the agent ended the watch: it stopped, or this client fell too far behind; see its log, and watch again"))
                            }
                        }
                    } onCancel: {
                        Task { await channel.close() }
                    }
                }
                await group.next()
                await channel.close()
                await group.waitForAll()
            }
        }
        sink.onTermination = { _ in reader.cancel() }
        return stream.makeAsyncIterator()
    }
}
