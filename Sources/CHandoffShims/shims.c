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
