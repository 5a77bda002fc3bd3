#ifndef HANDOFF_CSQLITE_SHIM_H
#define HANDOFF_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
