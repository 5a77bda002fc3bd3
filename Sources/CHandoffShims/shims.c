#include "handoff_shims.h"

#if defined(__GLIBC__)
#include <malloc.h>
int handoff_limit_malloc_arenas(int arenas) { return mallopt(M_ARENA_MAX, arenas); }
#else
int handoff_limit_malloc_arenas(int arenas) { (void)arenas; return 1; }
#endif
