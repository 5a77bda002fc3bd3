#ifndef HANDOFF_SHIMS_H
#define HANDOFF_SHIMS_H

/// Limits glibc's malloc to `arenas` arenas (mallopt M_ARENA_MAX); a no-op elsewhere. Returns 1
/// on success.
int handoff_limit_malloc_arenas(int arenas);

#endif
