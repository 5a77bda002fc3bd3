#ifndef HANDOFF_SHIMS_H
#define HANDOFF_SHIMS_H

/// Limits glibc's malloc to `arenas` arenas (mallopt M_ARENA_MAX); a no-op elsewhere. Returns 1
/// on success.
int handoff_limit_malloc_arenas(int arenas);

/// Serves allocations below `mmap_threshold` bytes from the heap, and returns free memory at the
/// heap's top to the system only beyond `trim_threshold` bytes (mallopt M_MMAP_THRESHOLD and
/// M_TRIM_THRESHOLD); a no-op elsewhere. Returns 1 on success.
int handoff_reuse_large_allocations(int mmap_threshold, int trim_threshold);

#endif
