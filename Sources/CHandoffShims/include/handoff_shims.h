#ifndef HANDOFF_SHIMS_H
#define HANDOFF_SHIMS_H

/// Limits glibc's malloc to `arenas` arenas (mallopt M_ARENA_MAX); a no-op elsewhere. Returns 1
/// on success.
int handoff_limit_malloc_arenas(int arenas);

/// The open flag O_DIRECT (writes that bypass the page cache), or 0 where there is none.
int handoff_o_direct_flag(void);

/// Gives the calling thread the scheduling policy SCHED_IDLE (Linux): it runs when nothing else
/// wants the CPU, and any other thread that wakes up preempts it at once; under full load it still
/// gets a small share (the weight of nice 19 is 15, SCHED_IDLE's 3), so it is never starved. A
/// no-op elsewhere. Needs no privilege; undoing it does. Returns 0 on success.
int handoff_make_thread_idle(void);

/// Sets the Swift runtime's global-executor hook (`swift_task_enqueueGlobal_hook`, the one
/// swift-nio's `NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor`
/// sets) to `hook`, unless a hook is set already; atomically, as NIO does. Referenced at link
/// time rather than looked up with `dlsym` as NIO does, which cannot find it in a binary linked
/// with the static runtime (whose symbols are not exported). Returns 1 when set, 0 otherwise,
/// and 0 where this is not supported (only Linux is).
int handoff_install_enqueue_global_hook(void *hook);

#endif
