#!/usr/bin/env bash
# one-way-message.bash COUNT [BIN_DIR] : the one-way message on a two-host lab: h1 publishes a
# 3 KB activity, the time until h2's `watch` reports it (handoff-bench message, 20 of warm-up,
# 10 ms apart). Prints p50/p99 and the errors. PERF=1 also records `perf` profiles of both agents.
#
# BIN_DIR holds handoffd, handoff and handoff-bench (default: .build-release/release). Compare two
# builds by running it with each, alternating, under `flock /tmp/swift-build.lock`. Root.
# RESULTS=DIR keeps the configs and profiles (default /tmp/one-way-message).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
COUNT=${1:-200}
source "$ROOT/Benchmarks/Scripts/two-host-lab.bash"
two_host_lab msg "${2:-$ROOT/.build-release/release}" "${RESULTS:-/tmp/one-way-message}"
for h in h1 h2; do
  d=$("${L[@]}" path $h)
  printf '{"name": "%s", "port": 0, "socketPath": "%s/handoff.sock", "stateDirectory": "%s/state", "inboxDirectory": "%s/apps", "urlOpener": ["true"]}\n' \
    $h "$d" "$d" "$d" > "$OUT/$h.json"
  "${L[@]}" agent start $h --config "$OUT/$h.json" >/dev/null || exit 1
done
"${L[@]}" trust h1 h2 >/dev/null || exit 1
ID=$("${L[@]}" exec h1 -- "$BIN/handoff-bench" publish --bytes 3000)
for _ in $(seq 200); do "$BIN/handoff" --socket "$D2/handoff.sock" list --json 2>/dev/null | grep -q "$ID" && break; sleep 0.05; done
if [[ -n ${PERF:-} ]]; then
  perf record -q -g -p "$(cat "$D1/handoffd.pid")" -o "$OUT/h1.perf" >/dev/null 2>&1 & PA=$!
  perf record -q -g -p "$(cat "$D2/handoffd.pid")" -o "$OUT/h2.perf" >/dev/null 2>&1 & PB=$!
  sleep 0.5
fi
"$BIN/handoff-bench" message --publish-socket "$D1/handoff.sock" --watch-socket "$D2/handoff.sock" --count "$COUNT" --warmup 20 --gap-ms 10 |
  python3 -c '
import json, sys
d = json.load(sys.stdin); s = sorted(d["samples_us"])
print("n", len(s), "p50 %.0f p99 %.0f us" % (s[len(s) // 2], s[int(len(s) * .99)]), "errors", d["errors"], d["error_messages"][:2])'
if [[ -n ${PERF:-} ]]; then kill -INT "$PA" "$PB"; wait "$PA" "$PB" 2>/dev/null; fi
