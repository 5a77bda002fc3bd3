# shellcheck shell=bash
# bench-peers.bash -- sourced by scripts/bench for `scripts/bench --peers`: KDE Connect side by side.
#
# Debian's kdeconnect (`scripts/install-deps --bench-peers`) runs headless on h1 and h2 of the
# bench lab, next to the handoff agents of the same run (Benchmarks/Scripts/kdeconnect-host: a
# private session bus each, QT_QPA_PLATFORM=offscreen, its own HOME and XDG directories, a route
# for its 255.255.255.255 broadcast on the host's eth0). The two daemons pair over D-Bus, with no
# person: requestPair on h1, acceptPairing on h2. Then, each KDE Connect row next to handoff's:
#
#   discovery   kdeconnectd on h2 restarts -> h1's daemon reports h2 reachable (reachableChanged);
#               handoffd on h3 restarts -> h2's `peers` lists it (handoff-bench discover, as the full run)
#   message     KDE Connect's ping h1 -> h2: sendPing on h1's bus -> the Notify that h2's daemon sends
#               to its notification server (kdeconnect-probe serves it; one packet, one way, ending in
#               a call to a desktop service that is already running);
#               handoff, one way (like for like): an activity published on h1 -> the activityOffered
#               event h2's agent sends to a watching client that is already running (handoff-bench
#               message: the pushed advertisement on the kept connection);
#               handoff: continue of an app's 3 KB activity on h1 from h2, delivered to a HandoffKit
#               app on h2 (handoff-bench continue: control socket -> fetch from h1 over the kept
#               connection -> the app's delegate -> reply; a round trip, ending in a running app).
#               Beside it, the same continue of the CLI's activity run by a handler process (`true`):
#               that row adds a process start, which KDE Connect's ping has no counterpart of.
#   files       64 MiB and 1 GiB: KDE Connect's share (shareUrl file://) h1 -> h2 until the file is
#               complete in h2's download directory (size, then SHA-256 checked); `handoff send`
#               h1 -> h2 (the CLI's whole run, hashing included, as --send-only); the receiving
#               daemon's peak VmRSS on both sides (sampled every 50 ms)
#   idle RSS    VmRSS of kdeconnectd and of handoffd on h1 and h2, paired and idle for 5 s
#
# Results: peers-*.json in the results directory; Benchmarks/Scripts/bench-report.py turns them
# into the "KDE Connect side by side" table.

KDEHOST=$ROOT/Benchmarks/Scripts/kdeconnect-host
KDEPROBE=$ROOT/Benchmarks/.build/kdeconnect-probe
K1=$D1/kde K2=$D2/kde
KB1=unix:path=$K1/bus.sock KB2=unix:path=$K2/bus.sock
PEERS_DISC_N=10 PEERS_MSG_N=200 PEERS_FILE_MIB=(64 1024)

# kde BUS ARGS...: busctl on a host's private session bus, talking to KDE Connect's daemon.
kde() { local bus=$1; shift; busctl --address="$bus" "$@"; }
kde_device() { echo "/modules/kdeconnect/devices/$1"; }
# kde_is BUS DEVICE PROPERTY: true if the daemon on BUS says DEVICE's boolean PROPERTY is true.
kde_is() { [[ $(kde "$1" get-property org.kde.kdeconnect "$(kde_device "$2")" org.kde.kdeconnect.device "$3" 2>/dev/null) == "b true" ]]; }
# kde_until SECS CMD...: until CMD succeeds (every 20 ms).
kde_until() {
    local deadline=$((SECONDS + $1)); shift
    until "$@"; do ((SECONDS < deadline)) || return 1; sleep 0.02; done
}
kde_self_id() { kde "$1" call org.kde.kdeconnect /modules/kdeconnect org.kde.kdeconnect.daemon selfId 2>/dev/null | awk '{print $2}' | tr -d '"'; }
kde_has_id() { [[ -n $(kde_self_id "$1") ]]; }
kde_pid() { cat "$1/kdeconnectd.pid"; }

# Starts both daemons and pairs them. Sets KID1 and KID2 (their device IDs).
peers_setup() {
    "${L[@]}" exec h1 -- "$KDEHOST" start "$K1" > /dev/null && "${L[@]}" exec h2 -- "$KDEHOST" start "$K2" > /dev/null || return 1
    kde_until 15 kde_has_id "$KB1" && kde_until 15 kde_has_id "$KB2" || { say "kdeconnectd did not come up on its bus"; return 1; }
    KID1=$(kde_self_id "$KB1") KID2=$(kde_self_id "$KB2")
    kde_until 15 kde_is "$KB1" "$KID2" isReachable && kde_until 15 kde_is "$KB2" "$KID1" isReachable ||
        { say "the two kdeconnectd did not find each other (broadcast to 255.255.255.255:1716 on the lab)"; return 1; }
    kde "$KB1" call org.kde.kdeconnect "$(kde_device "$KID2")" org.kde.kdeconnect.device requestPair &&
        kde_until 10 kde_is "$KB2" "$KID1" hasPairingRequests &&
        kde "$KB2" call org.kde.kdeconnect "$(kde_device "$KID1")" org.kde.kdeconnect.device acceptPairing &&
        kde_until 10 kde_is "$KB1" "$KID2" isTrusted && kde_until 10 kde_is "$KB2" "$KID1" isTrusted ||
        { say "KDE Connect pairing through D-Bus failed"; return 1; }
    kde_until 10 kde_is "$KB1" "$KID2" isReachable || return 1
    printf '{"version": "%s", "h1": "%s", "h2": "%s"}\n' "$("$KDEHOST" version)" "$KID1" "$KID2" > "$RESULTS/peers-kdeconnect.json"
}

peers_idle() {
    sleep 5
    printf '{"kdeconnectd_h1_kb": %d, "kdeconnectd_h2_kb": %d, "handoffd_h1_kb": %d, "handoffd_h2_kb": %d}\n' \
        "$(rss_kb "$(kde_pid "$K1")")" "$(rss_kb "$(kde_pid "$K2")")" \
        "$(rss_kb "$(agent_pid "$LAB" bench h1)")" "$(rss_kb "$(agent_pid "$LAB" bench h2)")" > "$RESULTS/peers-idle.json"
}

peers_message() {
    "$KDEPROBE" ping "$KB1" "$KB2" "$KID2" --count "$PEERS_MSG_N" --warmup 20 --gap-ms 10 > "$RESULTS/peers-ping.json" &&
        "$BENCH" message --publish-socket "$S1" --watch-socket "$S2" --count "$PEERS_MSG_N" --warmup 20 --gap-ms 10 \
            > "$RESULTS/peers-message.json" && until_listed "$S2" "$ID" 10 &&
        "${L[@]}" exec h2 -- "$BENCH" continue --id "$ID" --count "$PEERS_MSG_N" --warmup 20 > "$RESULTS/peers-continue.json" &&
        peers_app_message
}

# The app's activity becomes h1's current one while the app runs, and h1's own ($ID) is advertised
# again once the app has gone (h1 advertises its newest activity): so the handler row runs first,
# and the bench's activity is listed on h2 again before the next step.
peers_app_message() {
    continue_to_app "$RESULTS/peers-continue-app.json" "$PEERS_MSG_N" 20 && until_listed "$S2" "$ID" 10
}

peers_discovery() {
    DISC_N=$PEERS_DISC_N discover || return 1
    # kdeconnectd on h2 stops; then discover-ref starts it (kdeconnect-host run: exec kdeconnectd)
    # and stops it again, $PEERS_DISC_N times, while kdeconnect-probe watches h1's daemon.
    kill -TERM "$(kde_pid "$K2")" 2>/dev/null
    kde_until 10 eval '! kde_is "$KB1" "$KID2" isReachable' || return 1
    sleep 0.5
    "$BENCH" discover-ref --name h2 --count "$PEERS_DISC_N" \
        --watch-cmd "$KDEPROBE watch $KB1 $KID2 h2" \
        --start "$LAB --name bench exec h2 -- $KDEHOST run $K2" > "$RESULTS/peers-kde-discover.json" || return 1
    "${L[@]}" exec h2 -- "$KDEHOST" start "$K2" > /dev/null && kde_until 15 kde_is "$KB1" "$KID2" isReachable
}

# peak_rss_while PID CMD...: runs CMD, sampling PID's VmRSS every 50 ms; sets PEAK_KB; CMD's status.
peak_rss_while() {
    local pid=$1 job r rc; shift
    PEAK_KB=$(rss_kb "$pid")
    "$@" & job=$!
    while kill -0 "$job" 2>/dev/null; do
        r=$(rss_kb "$pid" 2>/dev/null) && ((r > PEAK_KB)) && PEAK_KB=$r
        sleep 0.05
    done
    wait "$job"; rc=$?
    return $rc
}

# kde_share_until_complete FILE BYTES: shareUrl h1 -> h2, then until h2's download directory holds
# the complete file (KDE Connect writes NAME.part and renames it when done); prints the seconds.
kde_share_until_complete() {
    local file=$1 bytes=$2 got t0 t1 deadline=$((SECONDS + 240))
    local dest=$K2/Downloads/${file##*/}
    t0=$(date +%s%N)
    kde "$KB1" call org.kde.kdeconnect "$(kde_device "$KID2")/share" org.kde.kdeconnect.device.share shareUrl s "file://$file" || return 1
    until got=$(stat -c %s "$dest" 2>/dev/null) && ((got == bytes)); do
        ((SECONDS < deadline)) || { echo "timeout"; return 1; }
        sleep 0.02
    done
    t1=$(date +%s%N)
    python3 -c 'import sys; print((int(sys.argv[2]) - int(sys.argv[1])) / 1e9)' "$t0" "$t1"
}

# handoff_send_timed FILE: `handoff send --to h2` h1 -> h2 (the --send-only row's method: the CLI's
# whole run, hashing included); prints the seconds, from the CLI's start to its exit.
handoff_send_timed() {
    local t0 t1 rc
    t0=$(date +%s%N)
    "${L[@]}" exec h1 -- "$BIN/handoff" --socket "$S1" send --to h2 --json "$1" > "$RESULTS/peers-send-${1##*/}.txt" 2>&1
    rc=$? t1=$(date +%s%N)
    python3 -c 'import sys; print((int(sys.argv[2]) - int(sys.argv[1])) / 1e9)' "$t0" "$t1"
    return $rc
}

peers_files() {
    local mib bytes file sum kde_s kde_rc send_s send_rc kde_peak send_peak kde_ok send_ok
    for mib in "${PEERS_FILE_MIB[@]}"; do
        bytes=$((mib << 20)) file=$D1/peers-$mib.bin
        head -c "$bytes" /dev/urandom > "$file" || return 1
        sum=$(sha256sum < "$file" | cut -d' ' -f1)
        rm -f "$K2/Downloads/${file##*/}" "$RECEIVED/${file##*/}"
        # KDE Connect's share.
        peak_rss_while "$(kde_pid "$K2")" kde_share_until_complete "$file" "$bytes" > "$RESULTS/peers-share-$mib.txt"
        kde_rc=$? kde_peak=$PEAK_KB kde_s=$(cat "$RESULTS/peers-share-$mib.txt")
        kde_ok=0
        [[ $kde_rc == 0 && $(sha256sum < "$K2/Downloads/${file##*/}" | cut -d' ' -f1) == "$sum" ]] && kde_ok=1
        rm -f "$K2/Downloads/${file##*/}"*
        peak_rss_while "$(agent_pid "$LAB" bench h2)" handoff_send_timed "$file" > "$RESULTS/peers-send-$mib.s"
        send_rc=$? send_peak=$PEAK_KB send_s=$(cat "$RESULTS/peers-send-$mib.s")
        send_ok=0
        [[ $send_rc == 0 && $(sha256sum < "$RECEIVED/${file##*/}" | cut -d' ' -f1) == "$sum" ]] && send_ok=1
        rm -f "$RECEIVED/${file##*/}" "$file"
        python3 - "$bytes" "$kde_s" "$kde_ok" "$kde_peak" "$send_s" "$send_ok" "$send_peak" > "$RESULTS/peers-file-$mib.json" <<'EOF'
import json, sys
size, kde_s, kde_ok, kde_peak, send_s, send_ok, send_peak = sys.argv[1:]
size = int(size)
rate = lambda ok, s: size / 1048576 / float(s) if ok == "1" and s not in ("", "timeout") else 0
print(json.dumps({"bytes": size,
    "kdeconnect": {"seconds": None if kde_s in ("", "timeout") else float(kde_s), "complete": kde_ok == "1",
                   "throughput_mib_s": rate(kde_ok, kde_s), "receiver_peak_kb": int(kde_peak or 0)},
    "handoff": {"seconds": float(send_s) if send_s else None, "complete": send_ok == "1", "throughput_mib_s": rate(send_ok, send_s),
                "receiver_peak_kb": int(send_peak or 0)}}))
EOF
    done
}

peers() {
    peers_setup || return 1
    peers_idle && peers_message && peers_discovery && peers_files
}
