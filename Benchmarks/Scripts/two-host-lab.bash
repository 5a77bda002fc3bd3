# Sourced by the two-host measuring scripts (cpu-per-continue.bash, one-way-message.bash):
#   two_host_lab LAB_NAME BIN_DIR RESULTS_DIR
# sets BIN (holding handoffd, handoff and handoff-bench; HANDOFFD and HANDOFF exported for the
# lab), OUT (made), L (the lab command), brings the lab up with h1 and h2, tears it down when the
# script exits, and sets D1 and D2 to the hosts' directories. ROOT must be the repository.
# With PERF set, perf_start records `perf` profiles of both agents (OUT/h1.perf, OUT/h2.perf) until
# perf_stop; without it both do nothing. PERF_ARGS replaces perf's options (default -g): e.g.
# "-F 4000 --no-inherit" leaves out the handlers' processes, whose forks perf otherwise slows (in
# this VM, perf doubles the agents' CPU per continue either way: compare profiles, not totals).
two_host_lab() {
    BIN=$(cd "$2" && pwd) || exit 1
    OUT=$3
    mkdir -p "$OUT"
    export HANDOFFD=$BIN/handoffd HANDOFF=$BIN/handoff
    L=("$ROOT/scripts/lab" --name "$1")
    "${L[@]}" down >/dev/null 2>&1
    "${L[@]}" up 2 >/dev/null || exit 1
    trap '"${L[@]}" down >/dev/null 2>&1' EXIT
    D1=$("${L[@]}" path h1) D2=$("${L[@]}" path h2)
}
perf_start() {
    [[ -n ${PERF:-} ]] || return 0
    perf record -q ${PERF_ARGS:--g} -p "$(cat "$D1/handoffd.pid")" -o "$OUT/h1.perf" >/dev/null 2>&1 & PERF_H1=$!
    perf record -q ${PERF_ARGS:--g} -p "$(cat "$D2/handoffd.pid")" -o "$OUT/h2.perf" >/dev/null 2>&1 & PERF_H2=$!
    sleep 0.5
}
perf_stop() {
    [[ -n ${PERF:-} ]] || return 0
    kill -INT "$PERF_H1" "$PERF_H2"
    wait "$PERF_H1" "$PERF_H2" 2>/dev/null
}
