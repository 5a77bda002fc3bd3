#ifndef HANDOFF_SHIMS_H
#define HANDOFF_SHIMS_H

/// Limits glibc's malloc to `arenas` arenas (mallopt M_ARENA_MAX); a no-op elsewhere. Returns 1
/// on success.
int handoff_limit_malloc_arenas(int arenas);

/// The open flag O_DIRECT (writes that bypass the page cache), or 0 where there is none.
int handoff_o_direct_flag(void);

#endif
