import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// Lets the kernel drop a child's SIGCHLD where it is raised, instead of waking the main thread.
///
/// The agent leaves SIGCHLD at its default action, which ignores it; swift-subprocess learns that
/// a child exited through its pidfd. A signal that is ignored is discarded when it is raised, but
/// only if the thread it is sent to (the child's parent: the thread that forked it) does not block
/// it. swift-subprocess forks on a worker thread it starts from the event loop thread, and both
/// inherit the mask of the Dispatch thread that first started the loop, which blocks SIGCHLD. So
/// each exit queued a SIGCHLD for the whole process, and the only thread that takes it, the main
/// thread waiting in `dispatchMain`'s `sigsuspend`, woke to discard it: one wake-up per handler run.
///
/// Unblocking SIGCHLD on the loop thread before the first spawn makes swift-subprocess's threads
/// start without it blocked. Nothing else changes: with the default action no thread is ever
/// interrupted by it, and children start with an empty mask and default actions either way.
enum ChildExitSignals {
    /// Unblocks SIGCHLD on `eventLoop`'s thread (and so in the threads later started from it).
    /// Returns whether it is now unblocked there.
    static func unblock(on eventLoop: any EventLoop) async -> Bool {
        #if os(Linux)
        let result = try? await eventLoop.submit { () -> Int32 in
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, SIGCHLD)
            return pthread_sigmask(SIG_UNBLOCK, &set, nil)
        }.get()
        return result == 0
        #else
        return false
        #endif
    }
}
