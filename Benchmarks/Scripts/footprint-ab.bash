#!/usr/bin/env bash
# footprint-ab.bash HANDOFFD LABEL WINDOW_S: scripts/bench's footprint row on its own: h1 idle with an
# activity and two paired peers (h3 stopped), VmRSS after 5 s + WINDOW_S; start-up CPU per agent
# (all threads' on-CPU time from exec to the control socket's appearing); the resident pages of
# each vendored BoringSSL (and the agent's smaps, per mapping, in RESULTS/LABEL/smaps.txt); with BENCH=handoff-bench, the TLS floor (ref-serve --tls after 20 pings).
# For comparing two builds of handoffd (say, before and after a change); run it under
# `flock /tmp/swift-build.lock` so that no build runs meanwhile. Root (network namespaces).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LAB=$ROOT/scripts/lab
export HANDOFFD=$1 HANDOFF=${HANDOFF:-$ROOT/.build/debug/handoff}
L=("$LAB" --name fp)
R=${RESULTS:-/tmp/footprint-ab}/$2; rm -rf "$R"; mkdir -p "$R"
"${L[@]}" down >/dev/null 2>&1
"${L[@]}" up 3 >/dev/null || exit 1
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
for h in h1 h2 h3; do
  D=$("${L[@]}" path $h)
  printf '{"name": "%s", "port": 0, "socketPath": "%s/handoff.sock", "stateDirectory": "%s/state", "inboxDirectory": "%s/apps", "urlOpener": ["true"]}\n' $h $D $D $D > $R/$h.json
  "${L[@]}" agent start $h --config $R/$h.json >/dev/null || exit 1
  pid=$(cat $D/handoffd.pid); echo "$h start-up CPU: $(cat /proc/$pid/task/*/schedstat | awk "{s += \$1} END {printf \"%.1f\", s / 1e6}") ms, ticks $(ticks $pid)" | tee -a $R/startup.txt
done
D1=$("${L[@]}" path h1) D2=$("${L[@]}" path h2) D3=$("${L[@]}" path h3)
"${L[@]}" trust h1 h2 h3 >/dev/null && $HANDOFF --socket $D3/handoff.sock publish --type com.example.bench.edit --title "h3's activity" >/dev/null &&
  "${L[@]}" agent stop h3 >/dev/null || exit 1
$HANDOFF --socket $D1/handoff.sock publish --type com.example.bench.edit --title "h1's activity" >/dev/null || exit 1
for i in $(seq 100); do $HANDOFF --socket $D2/handoff.sock list --json 2>/dev/null | grep -q "h1's activity" && break; sleep 0.1; done
pid=$(cat $D1/handoffd.pid)
sleep 5; echo 1 > /proc/$pid/clear_refs; a0=$(ticks $pid)
sleep "$3"
a1=$(ticks $pid)
echo "$2: VmRSS $(awk '/^VmRSS/ {print $2}' /proc/$pid/status) kB, RssAnon $(awk '/^RssAnon/ {print $2}' /proc/$pid/status) kB, RssFile $(awk '/^RssFile/ {print $2}' /proc/$pid/status) kB, Referenced $(awk '/^Referenced/ {print $2}' /proc/$pid/smaps_rollup) kB, idle CPU ticks $((a1 - a0)) in $3 s" | tee $R/result.txt
cp /proc/$pid/smaps $R/smaps.txt
python3 "$ROOT/Benchmarks/Scripts/boringssl-pages.py" $pid $HANDOFFD | tee -a $R/result.txt
grep -E 'Foundation|ICU|sqlite|libssl|crypto' /proc/$pid/maps | awk '{print $6}' | sort -u > $R/libs.txt
if [ -n "${BENCH:-}" ]; then
  ID1=$($HANDOFF --socket $D1/handoff.sock status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["deviceID"])')
  "${L[@]}" exec h1 -- $BENCH ref-serve --port 7993 --tls --state $R/ref-tls-state > $R/ref.log 2>&1 &
  rp=$!
  for i in $(seq 100); do grep -q listening $R/ref.log && break; sleep 0.1; done
  RID=$(grep listening $R/ref.log | python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["deviceID"])')
  "${L[@]}" exec h2 -- $BENCH ref-ping --host 198.18.0.1 --port 7993 --tls --state $D2/state --peer-id $RID --count 20 --warmup 0 >/dev/null
  sleep 5
  spid=$(pgrep -f "ref-serve --port 7993" | while read p; do case "$(cat /proc/$p/comm)" in handoff-bench*) true;; *) false;; esac && echo $p; done | head -1)
  echo "$2 floor (ref-serve --tls): VmRSS $(awk '/^VmRSS/ {print $2}' /proc/$spid/status) kB" | tee -a $R/result.txt
  kill $rp 2>/dev/null; kill $spid 2>/dev/null
fi
"${L[@]}" down >/dev/null 2>&1
