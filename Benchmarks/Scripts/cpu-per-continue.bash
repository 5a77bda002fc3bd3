#!/usr/bin/env bash
# cpu-per-continue.bash COUNT [BIN_DIR] : CPU time and context switches per continue, in the
# continuing agent (h2) and the source (h1), on a two-host lab. COUNT continues of a 3 KB activity
# (handoff-bench continue, 20 of warm-up first), handler `true` on h2. Prints p50/p99 latency,
# CPU and context switches per continue in each agent, and h2's busiest threads.
#
# BIN_DIR holds handoffd, handoff and handoff-bench (default: .build-release/release, made by a
# release build). Compare two builds by running it with each, alternating, under
# `flock /tmp/swift-build.lock` so that no build runs meanwhile. Root (network namespaces).
# SOURCE_RESTARTS=1 restarts h1 after pairing, so that the connection the two share is h1's
# rejoin dial (case B in docs/BENCHMARKS.md); `ss` in h2's namespace goes to RESULTS/ss.
# RESULTS=DIR keeps the configs, the samples and the per-thread counters (default /tmp/cpu-per-continue).
# PERF=1 also records `perf` profiles of both agents during the measured continues (RESULTS/h1.perf,
# RESULTS/h2.perf); the CPU figures then include perf's own cost.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
COUNT=${1:-2000}
source "$ROOT/Benchmarks/Scripts/two-host-lab.bash"
two_host_lab cpuc "${2:-$ROOT/.build-release/release}" "${RESULTS:-/tmp/cpu-per-continue}"
cat > "$OUT/h1.json" <<J
{"name": "h1", "port": 0, "socketPath": "$D1/handoff.sock", "stateDirectory": "$D1/state", "inboxDirectory": "$D1/apps", "urlOpener": ["true"]}
J
cat > "$OUT/h2.json" <<J
{"name": "h2", "port": 0, "socketPath": "$D2/handoff.sock", "stateDirectory": "$D2/state", "inboxDirectory": "$D2/apps",
 "urlOpener": ["true"], "handlers": [{"activityTypes": ["com.example.bench.edit"], "command": ["${HANDLER:-true}"]}]}
J
"${L[@]}" agent start h1 --config "$OUT/h1.json" >/dev/null && "${L[@]}" agent start h2 --config "$OUT/h2.json" >/dev/null &&
  "${L[@]}" trust h1 h2 >/dev/null || { echo "cpu-per-continue: lab setup failed" >&2; exit 1; }
if [[ -n ${SOURCE_RESTARTS:-} ]]; then
  sleep 1; "${L[@]}" agent stop h1 >/dev/null; "${L[@]}" agent start h1 --config "$OUT/h1.json" >/dev/null; sleep 1
fi
ID=$("${L[@]}" exec h1 -- "$BIN/handoff-bench" publish --bytes 3000)
for _ in $(seq 200); do "$BIN/handoff" --socket "$D2/handoff.sock" list --json 2>/dev/null | grep -q "$ID" && break; sleep 0.05; done
P1=$(cat "$D1/handoffd.pid") P2=$(cat "$D2/handoffd.pid")
"${L[@]}" exec h2 -- "$BIN/handoff-bench" continue --id "$ID" --count 200 --warmup 20 >/dev/null
# Per thread: id, name, context switches, CPU ticks.
tasks() { for t in /proc/$1/task/*; do echo "$(basename "$t") $(tr ' ' _ < "$t/comm") $(awk '/^voluntary_ctxt/{v=$2} /^nonvoluntary_ctxt/{n=$2} END{print v+n}' "$t/status") $(awk '{print $14+$15}' "$t/stat")"; done; }
# Whole process: CPU ticks, context switches, threads.
snap() { awk '{print $14+$15}' "/proc/$1/stat"; cat /proc/"$1"/task/*/status | awk '/^voluntary_ctxt/{v+=$2} /^nonvoluntary_ctxt/{n+=$2} END{print v+n}'; ls "/proc/$1/task" | wc -l; }
perf_start
read -r -d '' a1 c1 _ < <(snap "$P1"); read -r -d '' a2 c2 _ < <(snap "$P2"); tasks "$P2" > "$OUT/tasks0"
"${L[@]}" exec h2 -- "$BIN/handoff-bench" continue --id "$ID" --count "$COUNT" --warmup 20 > "$OUT/continue.json"
read -r -d '' b1 d1 _ < <(snap "$P1"); read -r -d '' b2 d2 u2 < <(snap "$P2"); tasks "$P2" > "$OUT/tasks1"
perf_stop
# Who dialled the shared connection: h2's end at its own agent port means h1 dialled.
"${L[@]}" exec h2 -- ss -tnH state established | awk '{print $3, $4}' > "$OUT/ss"
echo "h2 port $("$BIN/handoff" --socket "$D2/handoff.sock" status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["port"])')" >> "$OUT/ss"
python3 - "$OUT" "$COUNT" "$(getconf CLK_TCK)" "$a1 $b1 $c1 $d1 $a2 $b2 $c2 $d2 ${u2//[[:space:]]/}" <<'PY'
import json, sys
out, count, tck, counters = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split()
a1, b1, c1, d1, a2, b2, c2, d2, threads = map(int, counters)
samples = sorted(json.load(open(f"{out}/continue.json"))["samples_us"])
n = count + 20
print("p50 %.0f p99 %.0f us" % (samples[len(samples) // 2], samples[int(len(samples) * .99)]))
print("h2 cpu/continue %.0f us, ctxsw/continue %.1f, threads %d" % ((b2 - a2) * 1e6 / tck / n, (d2 - c2) / n, threads))
before = {line.split()[0]: line.split() for line in open(f"{out}/tasks0")}
for line in open(f"{out}/tasks1"):
    tid, name, switches, ticks = line.split()
    s0, t0 = (int(before[tid][2]), int(before[tid][3])) if tid in before else (0, 0)
    if int(switches) - s0 > n * 0.05:
        print("  %-20s ctxsw/continue %5.1f cpu/continue %4.0f us" % (name, (int(switches) - s0) / n, (int(ticks) - t0) * 1e6 / tck / n))
print("h1 cpu/continue %.0f us, ctxsw/continue %.1f" % ((b1 - a1) * 1e6 / tck / n, (d1 - c1) / n))
PY
