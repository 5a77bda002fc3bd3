#!/usr/bin/env bash
# startup-cpu.bash BINDIR RUNS RESULTS [HOSTS]: an agent's start-up CPU (issue 21) on a lab of HOSTS
# hosts (default 2), all paired: h2..hHOSTS keep running, h1's agent (BINDIR/handoffd) is started
# RUNS times. Each run samples h1's CPU time every 5 ms from exec (startup_cpu_sample.py): when h2's
# log first says it found h1, and 1, 2, 3 and 5 s after exec; `cpu_*` are utime+stime of
# /proc/PID/stat (all threads, exited ones too; 10 ms ticks), `sched_*` the sum of the live threads'
# /proc/PID/task/*/schedstat (ns). Prints median/mean/min/max. Root (network namespaces); run it
# under the build lock so that no build runs meanwhile:
#     /work/bin/hbuild /work/main Benchmarks/Scripts/startup-cpu.bash .build-release/release 10 /tmp/startup-cpu
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
bindir=$(cd "$1" && pwd) runs=$2 out=$3 hosts=${4:-2}
mkdir -p "$out"
export HANDOFFD=$bindir/handoffd HANDOFF=${HANDOFF:-$bindir/handoff}
[[ -x $HANDOFF ]] || HANDOFF=$ROOT/.build/debug/handoff
L=("$ROOT/scripts/lab" --name scpu)
"${L[@]}" up "$hosts" >/dev/null
trap '"${L[@]}" down >/dev/null 2>&1' EXIT
all=$(seq -f 'h%g' 1 "$hosts")
for h in $all; do "${L[@]}" agent start "$h" >/dev/null; done
"${L[@]}" trust $all >/dev/null
sleep 2; "${L[@]}" agent stop h1 >/dev/null; sleep 3
d1=$("${L[@]}" path h1); d2=$("${L[@]}" path h2)
for i in $(seq 1 "$runs"); do
  mark=$(wc -l < "$d2/handoffd.log")
  rm -f "$d1/handoffd.pid"
  python3 "$ROOT/Benchmarks/Scripts/startup_cpu_sample.py" "$d1/handoffd.pid" "$d2/handoffd.log" "$mark" "$out/run$i.json" &
  sampler=$!
  "${L[@]}" agent start h1 >/dev/null
  wait $sampler
  "${L[@]}" agent stop h1 >/dev/null
  sleep 2
done
python3 - "$out" "$runs" <<'PY'
import json, sys, statistics as st
out, runs = sys.argv[1], int(sys.argv[2])
rs = [json.load(open("%s/run%d.json" % (out, i))) for i in range(1, runs + 1)]
for k in ["listed_s", "cpu_at_listed", "sched_at_listed", "cpu_at_1s", "sched_at_1s", "cpu_at_2s", "cpu_at_3s", "sched_at_3s",
          "cpu_at_5s", "sched_at_5s", "threads_at_5s"]:
    v = [r[k] for r in rs if k in r]
    if v: print("%-16s n=%d median %.3f mean %.3f min %.3f max %.3f" % (k, len(v), st.median(v), st.mean(v), min(v), max(v)))
PY
