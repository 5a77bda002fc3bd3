/// Runs work that must outlive the caller who started it (closing a connection whose TLS
/// close_notify may take seconds, opening a connection that several callers wait for, the reader
/// of a kept connection), in a task group that a Service owns: the agent's `BackgroundWork`.
/// Nothing in the core starts an unstructured task of its own.
///
/// `ifStopped` runs instead of `work` when the owner has stopped and the work can no longer
/// start, so whoever waits for the work is answered.
public struct BackgroundSpawner: Sendable {
    private let start: @Sendable (_ work: @escaping @Sendable () async -> Void, _ ifStopped: @escaping @Sendable () -> Void) -> Void

    /// - Parameter start: runs `work` in the owner's task group, or `ifStopped` when it no
    ///   longer can.
    public init(_ start: @escaping @Sendable (_ work: @escaping @Sendable () async -> Void,
                                              _ ifStopped: @escaping @Sendable () -> Void) -> Void) {
        self.start = start
    }

    /// Runs `work` in the owner's task group; `ifStopped` instead when the owner has stopped.
    public func spawn(_ work: @escaping @Sendable () async -> Void, ifStopped: @escaping @Sendable () -> Void = {}) {
        start(work, ifStopped)
    }
}
