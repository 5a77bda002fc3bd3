#!/usr/bin/env bash
# one-way-message.bash COUNT [BIN_DIR] : the one-way message on a two-host lab: h1 publishes a
# 3 KB activity, the time until h2's `watch` reports it (handoff-bench message, 20 of warm-up,
# 10 ms apart, GAP_MS=N for another gap). Prints p50/p99 and the errors, the time until the
# publish is answered (once kept for the agent's next start), and the CPU per message
# of both agents and of each host's avahi-daemon and dbus-daemon. PERF=1 also records `perf`
# profiles of both agents. PHASES=1 traces the scheduler's wake-ups (`perf record -a -e
# sched:sched_waking`, nothing else) and prints where each message's time goes: the client's
# write to h1's wake-up, h1's to h2's (the push), h2's to the watcher's (message_phases.py).
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
perf_start
# CPU ticks of both agents, then both hosts' avahi-daemons and dbus-daemons.
cpu() { for p in "$D1/handoffd.pid" "$D2/handoffd.pid" "$D1/avahi.pid" "$D2/avahi.pid" "$D1/dbus.pid" "$D2/dbus.pid"; do
  awk '{print $14 + $15}' "/proc/$(cat "$p")/stat" 2>/dev/null || echo 0; done | paste -sd' '; }
BEFORE=$(cpu)
if [[ -n ${PHASES:-} ]]; then
  perf record -q -a -e sched:sched_waking -o "$OUT/sched.perf" >/dev/null 2>&1 & PHASES_PID=$!
  sleep 0.5
fi
"$BIN/handoff-bench" message --publish-socket "$D1/handoff.sock" --watch-socket "$D2/handoff.sock" --count "$COUNT" --warmup 20 --gap-ms ${GAP_MS:-10} |
  python3 -c '
import json, sys
d = json.load(sys.stdin); s = sorted(d["samples_us"])
a = sorted(d.get("answer_us", [])) or [0]
print("n", len(s), "p50 %.0f p99 %.0f us" % (s[len(s) // 2], s[int(len(s) * .99)]), "errors", d["errors"], d["error_messages"][:2],
      "publish answered p50 %.0f p99 %.0f us" % (a[len(a) // 2], a[int(len(a) * .99)]))' 
AFTER=$(cpu)
if [[ -n ${PHASES:-} ]]; then
  kill -INT "$PHASES_PID"; wait "$PHASES_PID" 2>/dev/null
  perf script -i "$OUT/sched.perf" -F comm,tid,time,event,trace 2>/dev/null > "$OUT/sched.txt"
  python3 "$ROOT/Benchmarks/Scripts/message_phases.py" "$OUT/sched.txt" "$(cat "$D1/handoffd.pid")" "$(cat "$D2/handoffd.pid")"
fi
python3 - "$BEFORE" "$AFTER" "$(getconf CLK_TCK)" "$((COUNT + 20))" <<'PY'
import sys
before, after, tck, n = [int(x) for x in sys.argv[1].split()], [int(x) for x in sys.argv[2].split()], int(sys.argv[3]), int(sys.argv[4])
us = [(b - a) * 1e6 / tck / n for a, b in zip(before, after)]
print("cpu per message: h1 agent %.0f us, h2 agent %.0f us, avahi-daemons %.0f + %.0f us, dbus-daemons %.0f + %.0f us" % tuple(us))
PY
perf_stop
