#ifndef HANDOFF_CDBUS_SHIM_H
#define HANDOFF_CDBUS_SHIM_H
#include <dbus/dbus.h>
#endif
