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
#   -function-sections      each function (Swift and C: BoringSSL, the shims) in a section of its
#                           own, closures and specializations included (by default Swift gives
#                           its own section only to some, and C none), so that the linker can
#                           place every one
#   --symbol-ordering-file  the functions start-up, the idle loop and a person's common commands
#                           run, listed in scripts/link-order.txt (made by scripts/link-order), laid
#                           out together at the front of .text. The kernel maps a file's pages around
#                           each one touched (64 KB), so scattered over 21 MB they kept about 16 MB
#                           of code resident in an idle agent. A function the list does not name
#                           (new since) is laid out after them: a stale list costs memory only.
# Elsewhere (macOS: no static Swift runtime, another linker) SwiftPM's defaults.
RELEASE_FLAGS=()
if [ "$(uname -s)" = Linux ]; then
  RELEASE_FLAGS=(--static-swift-stdlib -Xswiftc -use-ld=lld -Xlinker --no-export-dynamic
    -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections)
  order="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/link-order.txt"
  [ -f "$order" ] && RELEASE_FLAGS+=(-Xlinker "--symbol-ordering-file=$order" -Xlinker --no-warn-symbol-ordering)
  glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
  if [ -n "$glibc" ] && [ "$(printf '%s\n' 2.36 "$glibc" | sort -V | head -n1)" = 2.36 ]; then
    RELEASE_FLAGS+=(-Xlinker -z -Xlinker pack-relative-relocs)
  fi
fi
