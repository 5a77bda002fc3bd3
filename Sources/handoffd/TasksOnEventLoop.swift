import CHandoffShims
import NIOCore
import NIOPosix

/// Swift concurrency's tasks run on the agent's one event loop thread instead of Dispatch's pool:
/// what swift-nio's `NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()`
/// does, with the hook set through `handoff_install_enqueue_global_hook` (CHandoffShims), since
/// NIO finds the hook with `dlsym`, which cannot see it in this statically linked binary.
///
/// A frame read on the loop is then handed to the task that awaits it, and a frame a task writes
/// to the channel that carries it, without waking another thread; Dispatch's two pool threads
/// woke each other several times per request (docs/BENCHMARKS.md, "One thread for tasks and
/// I/O"). `Task.sleep`'s timers stay Dispatch's (when one fires, the task that slept is enqueued
/// through the hook and resumes on the loop), so the agent's own timers sleep on
/// `EventLoopClock`, the loop's timers, instead.
///
/// What runs on a task must not block: DNS-SD runs on the poller's thread, D-Bus on the bus's,
/// process spawns on swift-subprocess's, the kept activities on their writer's. The trust store's
/// and the settings' rare writes (pairing, a device's new address, pause) block the loop for their
/// fsyncs, as they blocked the agent's actor before.
enum TasksOnEventLoop {
    private typealias EnqueueHook = @convention(thin) (UnownedJob, @convention(thin) (UnownedJob) -> Void) -> Void

    /// Installs the hook; false when another hook is set already, or off Linux (the tasks then
    /// stay on Dispatch's pool). Call once, before the first task that should run on the loop.
    static func install() -> Bool {
        withUnsafeTemporaryAllocation(of: EnqueueHook.self, capacity: 1) { hook in
            // The closure captures nothing, so it is a plain function (as in NIO's takeover).
            hook.baseAddress!.initialize(to: { job, _ in
                MultiThreadedEventLoopGroup.singleton.any().executor.enqueue(ExecutorJob(job))
            })
            return hook.baseAddress!.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 1) {
                handoff_install_enqueue_global_hook($0.pointee) == 1
            }
        }
    }
}
