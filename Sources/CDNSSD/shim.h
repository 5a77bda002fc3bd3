#ifndef HANDOFF_CDNSSD_SHIM_H
#define HANDOFF_CDNSSD_SHIM_H
#include <dns_sd.h>
#endif
