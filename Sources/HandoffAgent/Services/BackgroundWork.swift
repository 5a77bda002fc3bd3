import ServiceLifecycle

/// The agent's background work, owned by a Service: continuations that outlive the caller who
/// asked (a closed control connection must not cut a handler short), key exchanges, timers the
/// agent's decisions asked for. Each job runs as a child of ``run()``'s task group, so the work
/// ends with the service group, and nothing runs in an unstructured task.
///
/// Jobs submitted before ``run()`` starts wait for it. When the service stops, jobs still running
/// are cancelled, and jobs that never started run their `ifStopped` instead (``Job/stopped``), so
/// a caller waiting on one gets an answer instead of waiting for ever.
public final class BackgroundWork: Service, Sendable {
    /// One piece of work, with what to do if it never runs.
    struct Job: Sendable {
        let work: @Sendable () async -> Void
        let stopped: @Sendable () -> Void
    }

    private let jobs: AsyncStream<Job>
    private let submit: AsyncStream<Job>.Continuation

    public init() {
        (jobs, submit) = AsyncStream.makeStream(of: Job.self)
    }

    /// Starts `work` in the service's task group; `ifStopped` runs instead when the service
    /// stopped before the work could start.
    func spawn(_ work: @escaping @Sendable () async -> Void, ifStopped: @escaping @Sendable () -> Void = {}) {
        if case .terminated = submit.yield(Job(work: work, stopped: ifStopped)) { ifStopped() }
    }

    /// Runs the jobs until the service group shuts down gracefully (the agent's group stops
    /// this service last) or the task is cancelled; jobs still running are then cancelled.
    public func run() async throws {
        await withDiscardingTaskGroup { group in
            for await job in jobs.cancelOnGracefulShutdown() {
                group.addTask { await job.work() }
            }
            group.cancelAll()
        }
        submit.finish()
        // Jobs submitted but never started: their callers learn it now.
        for await job in jobs { job.stopped() }
    }
}
