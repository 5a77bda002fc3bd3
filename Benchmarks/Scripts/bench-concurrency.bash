#!/usr/bin/env bash
# Benchmarks/Scripts/bench-concurrency.bash [RESULTS]: the concurrency row of scripts/bench alone, on a lab of
# its own ("hcb", two hosts; same agent configurations and commands as scripts/bench), with the
# release build scripts/bench makes (.build-release): 1000 concurrent fetches h2 -> h1 after 20
# sequential warm-up ones, first with a connection per fetch (the path before multiplexing), then
# with --multiplex (one multiplexed connection, the agent's path), then the bare TCP reference
# (a new connection per exchange). Prints p50/p99, errors and h1's CPU per fetch for each. Root.
# Run it alone: flock /tmp/swift-build.lock Benchmarks/Scripts/bench-concurrency.bash

set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LAB=$ROOT/scripts/lab; L=("$LAB" --name hcb); BIN=$ROOT/.build-release/release; export HANDOFFD=$BIN/handoffd
BENCH=$BIN/handoff-bench
R=${1:-/tmp/handoff-bench-concurrency}; rm -rf "$R"; mkdir -p "$R"
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
trap '"${L[@]}" down >/dev/null 2>&1' EXIT
"${L[@]}" up 2 >/dev/null || exit 1
D1=$("${L[@]}" path h1) D2=$("${L[@]}" path h2)
S1=$D1/handoff.sock S2=$D2/handoff.sock
cat > "$R/h1.json" <<J
{"name": "h1", "port": 0, "socketPath": "$S1", "stateDirectory": "$D1/state", "inboxDirectory": "$D1/apps",
 "urlOpener": ["true"],
 "security": {"maxConnectionsPerDevice": 4096, "maxUnauthenticatedConnections": 4096, "handshakeTimeout": 10,
              "maxUnauthenticatedPerAddress": 4096, "connectionsPerSecondPerAddress": 100000}}
J
cat > "$R/h2.json" <<J
{"name": "h2", "port": 0, "socketPath": "$S2", "stateDirectory": "$D2/state", "inboxDirectory": "$D2/apps", "urlOpener": ["true"]}
J
"${L[@]}" agent start h1 --config "$R/h1.json" >/dev/null && "${L[@]}" agent start h2 --config "$R/h2.json" >/dev/null &&
    "${L[@]}" trust h1 h2 >/dev/null || { echo "agents did not start or pair"; exit 1; }
ID1=$("$BIN/handoff" --socket "$S1" status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["deviceID"])')
ID=$("${L[@]}" exec h1 -- "$BENCH" publish --bytes 3000) || exit 1
for _ in $(seq 200); do "$BIN/handoff" --socket "$S2" list --json 2>/dev/null | grep -qi "$ID" && break; sleep 0.05; done
PORT=$("$BIN/handoff" --socket "$S1" status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["port"])')
pid=$(cat "$D1/handoffd.pid")
for mode in plain multiplex; do
    flag=(); [[ $mode == multiplex ]] && flag=(--multiplex)
    a0=$(cpu_ticks "$pid")
    "${L[@]}" exec h2 -- "$BENCH" fetch --host 198.18.0.1 --peer-id "$ID1" --state "$D2/state" --port "$PORT" --id "$ID" \
        --count 1000 --concurrency 1000 --warmup 20 "${flag[@]}" > "$R/$mode.json"
    echo "$(( $(cpu_ticks "$pid") - a0 ))" > "$R/$mode.ticks"
done
"${L[@]}" exec h1 -- "$BENCH" ref-serve --port 7998 > "$R/ref-serve.log" 2>&1 &
ref=$!
for _ in $(seq 200); do grep -q listening "$R/ref-serve.log" && break; sleep 0.05; done
refpid=$(pgrep -n -f "handoff-bench ref-serve --port 7998")
c0=$(cpu_ticks "$refpid")
"${L[@]}" exec h2 -- "$BENCH" ref-ping --host 198.18.0.1 --port 7998 --count 1000 --concurrency 1000 --warmup 20 > "$R/reference.json"
echo "$(( $(cpu_ticks "$refpid") - c0 ))" > "$R/reference.ticks"
kill -TERM "$ref" "$refpid" 2>/dev/null; wait "$ref" 2>/dev/null
python3 - "$R" "$(getconf CLK_TCK)" <<'P'
import json, sys
d, tck = sys.argv[1], int(sys.argv[2])
for name in ("plain", "multiplex", "reference"):
    j = json.loads(open(f"{d}/{name}.json").read().strip().splitlines()[-1])
    s = sorted(j["samples_us"]); n = len(s)
    pct = lambda p: s[min(n - 1, int(p * n))] / 1000 if n else float("nan")
    ticks = int(open(f"{d}/{name}.ticks").read())
    fetches = n + j.get("errors", 0) + 20
    print(f"{name:10s} n={n} errors={j.get('errors')} p50={pct(0.5):.2f} ms p99={pct(0.99):.2f} ms "
          f"total={j.get('total_ms', 0):.0f} ms server CPU/fetch={1e6 * ticks / tck / fetches:.0f} us (incl. 20 warm-up)")
P
