"""The "KDE Connect side by side" table of docs/BENCHMARKS.md, from the peers-*.json results of
`scripts/bench --peers` (Benchmarks/Scripts/bench-peers.bash). Used by bench-report.py.

Each row: KDE Connect's figure, handoff's from the same run on the same lab, the ratio handoff ÷
KDE Connect, whether handoff is ahead, and what each side measures.
"""
import os
from bench_results import format_ms, load_json, percentile

BEGIN = "<!-- kdeconnect-side-by-side:begin -->"
END = "<!-- kdeconnect-side-by-side:end -->"


def _mb(kb):
    return "n/a" if not kb else f"{kb / 1024:.1f} MB"


def has_results(directory):
    return os.path.exists(os.path.join(directory, "peers-kdeconnect.json"))


class PeersReport:
    def __init__(self, directory):
        self.dir = directory
        self.rows = []  # (row, kde, handoff, ratio, ahead, what)
        self.broken = []
        kde = load_json(directory, "peers-kdeconnect.json")
        if not kde:
            self.broken.append("peers-kdeconnect.json")
        self.version = (kde or {}).get("version", "?")

    def samples(self, name):
        data = load_json(self.dir, name)
        if not data or not data.get("samples_us"):
            self.broken.append(name)
            return None, data or {}
        return data["samples_us"], data

    def add(self, row, kde, handoff, ratio, ahead, what):
        self.rows.append((row, kde, handoff, "n/a" if ratio is None else f"{ratio:.2f}×",
                          "—" if ahead is None else ("yes" if ahead else "**no**"), what))

    def latency_row(self, row, kde, handoff, q, what):
        k50, kq, h50, hq = percentile(kde, 50), percentile(kde, q), percentile(handoff, 50), percentile(handoff, q)
        ratio = None if not (k50 and h50) else h50 / k50
        ahead = None if None in (k50, kq, h50, hq) else (h50 < k50 and hq < kq)
        self.add(row, f"{format_ms(k50)} / {format_ms(kq)}", f"{format_ms(h50)} / {format_ms(hq)}", ratio, ahead, what)

    def discovery(self):
        kde, kdata = self.samples("peers-kde-discover.json")
        handoff, hdata = self.samples("discover.json")
        # Listed with its current activity, when the run measured it (h3 keeps one across restarts).
        with_activity = bool(hdata.get("activity_us"))
        if with_activity:
            handoff = hdata["activity_us"]
        n = len(kde or []), len(handoff or [])
        errors = f"; errors {kdata.get('errors', 0)} / {hdata.get('errors', 0)}" if kdata.get("errors") or hdata.get("errors") else ""
        self.latency_row(
            f"discovery of a restarting paired device, p50 / p95 ({n[0]} / {n[1]} restarts{errors})", kde, handoff, 95,
            "KDE Connect: kdeconnectd on h2 starts → h1's daemon reports h2 reachable (reachableChanged(true) on h1's bus): "
            "UDP broadcast, then TCP and TLS back. handoff: handoffd on h3 starts → "
            + ("its current activity (kept across the restart) listed in h2's `list` (polled every 5 ms): h3 reaches h2 at "
               "its last known address and announces itself (docs/PROTOCOL.md, \"Rejoining after a start\")" if with_activity else
               "listed in h2's `peers` (polled every 5 ms), as the full run's discovery row: by DNS-SD; the peer is listed "
               "without its activity"))

    def message(self):
        kde, _ = self.samples("peers-ping.json")
        oneway, _ = self.samples("peers-message.json")
        self.latency_row(
            f"small message, one way, on a warm connection, p50 / p99 ({len(kde or [])} / {len(oneway or [])})", kde, oneway, 99,
            "KDE Connect: ping h1 → h2: sendPing on h1's bus → the Notify(\"Ping!\") h2's daemon sends to its notification "
            "server, a running desktop service (kdeconnect-probe, one clock). handoff: an activity (3 KB userInfo) published "
            "on h1's control socket → the activityOffered event h2's agent sends to a running client watching it "
            "(handoff-bench message, one clock): sealed, pushed on the kept connection, checked and decrypted by h2")
        app, _ = self.samples("peers-continue-app.json")
        handler, _ = self.samples("peers-continue.json")
        self.latency_row(
            f"&nbsp;&nbsp;a continue, a round trip, p50 / p99 ({len(kde or [])} / {len(app or [])})", kde, app, 99,
            "KDE Connect: ping h1 → h2, one way: sendPing on h1's bus → the Notify(\"Ping!\") h2's daemon sends to its "
            "notification server, a running desktop service (kdeconnect-probe, one clock). handoff: continue of an "
            "app's activity on h1 (3 KB userInfo) from h2, a round trip: control socket → fetch from h1 on the kept "
            "connection → the HandoffKit app on h2, a running app, takes it → reply")
        self.latency_row(
            f"&nbsp;&nbsp;the same continue run by a handler process, p50 / p99 ({len(kde or [])} / {len(handler or [])})",
            kde, handler, 99,
            "handoff: the CLI's activity on h1, continued from h2 by starting the handler `true` (fork, exec, stdin, "
            "wait) before the reply; KDE Connect's ping starts no process, so this row has no like-for-like reference")

    def files(self):
        for mib in (64, 1024):
            data = load_json(self.dir, f"peers-file-{mib}.json")
            if not data:
                self.broken.append(f"peers-file-{mib}.json")
                continue
            size = f"{mib} MiB" if mib < 1024 else f"{mib // 1024} GiB"
            k, h = data["kdeconnect"], data["handoff"]
            kt, ht = k.get("throughput_mib_s") or 0, h.get("throughput_mib_s") or 0
            state = lambda side, t: f"{t:.0f} MiB/s" if side.get("complete") else "not received complete"
            self.add(f"file of {size} h1 → h2, throughput", state(k, kt), state(h, ht),
                     ht / kt if kt and ht else None, None if not ht else (not kt or ht > kt),
                     "KDE Connect: share plugin (shareUrl file://) → complete in h2's download directory (NAME.part "
                     "renamed), SHA-256 checked after. handoff: `handoff send --to h2` h1 → h2, the CLI's whole run "
                     "(hashing the file as it sends it), SHA-256 checked by h2 and again after")
            kp, hp = k.get("receiver_peak_kb"), h.get("receiver_peak_kb")
            self.add(f"file of {size}: receiver's peak RSS", _mb(kp), _mb(hp), hp / kp if kp and hp else None,
                     None if not (kp and hp) else hp < kp,
                     "VmRSS of the receiving daemon on h2 (kdeconnectd, handoffd), sampled every 50 ms during the transfer")

    def idle(self):
        data = load_json(self.dir, "peers-idle.json")
        if not data:
            self.broken.append("peers-idle.json")
            return
        k, h = data.get("kdeconnectd_h1_kb"), data.get("handoffd_h1_kb")
        k2, h2 = data.get("kdeconnectd_h2_kb"), data.get("handoffd_h2_kb")
        self.add("idle RSS, h1 (h2)", f"{_mb(k)} ({_mb(k2)})", f"{_mb(h)} ({_mb(h2)})", h / k if k and h else None,
                 None if not (k and h) else h < k,
                 "VmRSS of kdeconnectd and of handoffd on the same host, paired and connected, after 5 s idle")

    def build(self):
        self.idle()
        self.message()
        self.discovery()
        self.files()
        return self

    def markdown(self, meta):
        out = [f"Measured by `scripts/bench --peers` at {meta.get('date', '?')}, commit {meta.get('commit', '?')}; "
               f"KDE Connect {self.version} (Debian's `kdeconnect`, headless: `QT_QPA_PLATFORM=offscreen`, a private "
               f"session bus each), on h1 and h2 of the same lab as the agents, in the same run. Ratio: handoff ÷ "
               f"KDE Connect (for times and RSS lower is better, for throughput higher).",
               "",
               f"| row | KDE Connect {self.version} | handoff | ratio | handoff ahead | what each side measures |",
               "|---|---|---|---|---|---|"]
        out += [f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]} |" for r in self.rows]
        return "\n".join(out)

    def text(self):
        lines = [f"KDE Connect {self.version} side by side (ratio: handoff ÷ KDE Connect)"]
        for r in self.rows:
            lines.append(f"  {r[0]}: KDE Connect {r[1]}, handoff {r[2]}, ratio {r[3]}, ahead: {r[4].strip('*')}")
        return "\n".join(lines)


def splice(document, block):
    """The document with the text between the markers replaced by block (None if no markers)."""
    if BEGIN not in document or END not in document:
        return None
    head, rest = document.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{block}\n{END}{tail}"


def existing_block(document):
    """The table a previous `--peers` run left in the document, if any."""
    if BEGIN not in document or END not in document:
        return None
    return document.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n")
