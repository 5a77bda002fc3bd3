# Sourced by scripts/install and scripts/bench: how a release handoffd and handoff are linked, so
# that the benchmarks measure what users install. Measured in docs/BENCHMARKS.md ("How the agent is
# linked": 1-3.5 MB less idle RSS, the CLI starting in 6 ms instead of 10.5). Debug builds (tests,
# CI, `bench --short --debug`) keep SwiftPM's defaults.
#
# On Linux:
#   --static-swift-stdlib   the Swift runtime, stdlib, Dispatch and Foundation linked in: no
#                           libswiftCore.so & co. for the dynamic loader to map and relocate at
#                           every start, and no Swift toolchain needed where the binaries run.
#                           libdns_sd (Avahi), libsqlite3, libdbus-1 and glibc stay shared.
#   -use-ld=lld             the toolchain's lld (gold, the default, cannot pack relocations)
#   --no-export-dynamic     the static runtime's link arguments export every symbol (37,000
#                           of them: 3.3 MB of .dynsym, .dynstr and .gnu.hash that the loader
#                           touches at every start, about 3 MB of idle RSS). Nothing looks the
#                           binaries' own symbols up at run time; crash backtraces read .symtab.
#   -z pack-relative-relocs relative relocations as DT_RELR (10 KB instead of 1.2-2 MB of
#                           .rela.dyn that the loader reads at every start). The binaries then
#                           need glibc 2.36 or later (Debian 12, Ubuntu 22.10), so it is added only
#                           where the building machine's glibc is that recent.
# Elsewhere (macOS: no static Swift runtime, another linker) SwiftPM's defaults.
RELEASE_FLAGS=()
if [ "$(uname -s)" = Linux ]; then
  RELEASE_FLAGS=(--static-swift-stdlib -Xswiftc -use-ld=lld -Xlinker --no-export-dynamic)
  glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
  if [ -n "$glibc" ] && [ "$(printf '%s\n' 2.36 "$glibc" | sort -V | head -n1)" = 2.36 ]; then
    RELEASE_FLAGS+=(-Xlinker -z -Xlinker pack-relative-relocs)
  fi
fi
