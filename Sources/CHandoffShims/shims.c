#include "handoff_shims.h"

#if defined(__GLIBC__)
#include <malloc.h>
int handoff_limit_malloc_arenas(int arenas) { return mallopt(M_ARENA_MAX, arenas); }
int handoff_reuse_large_allocations(int mmap_threshold, int trim_threshold) {
    return mallopt(M_MMAP_THRESHOLD, mmap_threshold) && mallopt(M_TRIM_THRESHOLD, trim_threshold);
}
#else
int handoff_limit_malloc_arenas(int arenas) { (void)arenas; return 1; }
int handoff_reuse_large_allocations(int mmap_threshold, int trim_threshold) {
    (void)mmap_threshold;
    (void)trim_threshold;
    return 1;
}
#endif
