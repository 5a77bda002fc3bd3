#ifndef HANDOFF_CLIBFUZZER_H
#define HANDOFF_CLIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

/// Runs libFuzzer's driver (LLVMFuzzerRunDriver, from the libFuzzer that -sanitize=fuzzer links)
/// with the process's arguments and `callback` as the fuzz target. Returns the exit status.
///
/// SwiftPM renames an executable target's entry point to `<Module>_main` and links `main` to it,
/// so libFuzzer's own `main` is never used; each target's main.swift calls this instead.
int handoff_fuzz_run_driver(int argc, char **argv, int (*callback)(const uint8_t *data, size_t size));

#endif
