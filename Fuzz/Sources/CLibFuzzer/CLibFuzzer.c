#include "CLibFuzzer.h"

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

int handoff_fuzz_run_driver(int argc, char **argv, int (*callback)(const uint8_t *data, size_t size)) {
    return LLVMFuzzerRunDriver(&argc, &argv, callback);
}
