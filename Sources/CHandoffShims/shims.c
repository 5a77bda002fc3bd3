#define _GNU_SOURCE
#include <fcntl.h>

#include "handoff_shims.h"

#if defined(__GLIBC__)
#include <malloc.h>
int handoff_limit_malloc_arenas(int arenas) { return mallopt(M_ARENA_MAX, arenas); }
#else
int handoff_limit_malloc_arenas(int arenas) { (void)arenas; return 1; }
#endif

#if defined(O_DIRECT)
int handoff_o_direct_flag(void) { return O_DIRECT; }
#else
int handoff_o_direct_flag(void) { return 0; }
#endif

#if defined(__linux__)
#include <sched.h>
int handoff_make_thread_idle(void) {
    struct sched_param param = {0};
    // On Linux, 0 names the calling thread.
    return sched_setscheduler(0, SCHED_IDLE, &param);
}
#else
int handoff_make_thread_idle(void) { return 0; }
#endif

#if defined(__linux__)
// Exported by Swift's concurrency runtime (static or shared); nil until a hook is set.
extern void *swift_task_enqueueGlobal_hook;
int handoff_install_enqueue_global_hook(void *hook) {
    void *expected = 0;
    return __atomic_compare_exchange_n(&swift_task_enqueueGlobal_hook, &expected, hook, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED) ? 1 : 0;
}
#else
int handoff_install_enqueue_global_hook(void *hook) { (void)hook; return 0; }
#endif
