#!/usr/bin/env python3
"""Turns the raw results of scripts/bench into the table it prints and docs/BENCHMARKS.md.

usage: bench-report.py RESULTS_DIR [--markdown OUT.md]
       bench-report.py RESULTS_DIR --peers [--markdown OUT.md]

--peers: only the "KDE Connect side by side" table (scripts/bench --peers; peers_report.py), which
replaces the one in OUT.md and leaves the rest of it alone. A full report keeps OUT.md's table
unless RESULTS_DIR holds peers results of its own.

Exit status: 0 if every measurement produced samples, 1 if one is missing or empty (the
benchmark itself is broken). Missed targets never change the exit status.
"""
import os
import sys

import peers_report
from bench_results import floor_bound, format_ms, load_json, percentile


class Report:
    def __init__(self, directory):
        self.dir = directory
        self.meta = load_json(directory, "meta.json") or {}
        self.rows = []  # (section, figure, measured, reference, target, result)
        self.notes = []
        self.broken = []

    # -- helpers ------------------------------------------------------------

    def samples(self, name, key="samples_us"):
        data = load_json(self.dir, name)
        if data is None or not data.get(key):
            self.broken.append(name)
            return None, data
        return data[key], data

    def add(self, section, figure, measured, reference, target, ok):
        result = "—" if ok is None else ("PASS" if ok else "MISS")
        self.rows.append((section, figure, measured, reference, target, result))

    @staticmethod
    def ms(us):
        return format_ms(us)

    # -- sections -----------------------------------------------------------

    def latency_targets(self, section, samples, data, ref):
        """The continue-latency targets of one series against the reference; returns its p50."""
        # The reference: a bare TCP request/response of the same bytes plus the TLS
        # handshake (the agents' TLS 1.3, on a new connection each time).
        refname = "bare TCP exchange + TLS 1.3 handshake"
        p50, p99 = percentile(samples, 50), percentile(samples, 99)
        r50, r99 = percentile(ref, 50), percentile(ref, 99)
        self.add(section, "p50", self.ms(p50), f"{self.ms(r50)} ({refname})", "≤ 2 ms",
                 None if p50 is None else p50 <= 2000)
        self.add(section, "p99", self.ms(p99), f"{self.ms(r99)} ({refname})", "≤ 10 ms",
                 None if p99 is None else p99 <= 10_000)
        ratio = None if not (p50 and r50) else p50 / r50
        self.add(section, "p50 ÷ reference p50", "n/a" if ratio is None else f"{ratio:.1f}×", "1×", "≤ 3×",
                 None if ratio is None else ratio <= 3)
        errors = (data or {}).get("errors", 0)
        self.add(section, "errors", str(errors), "", "0", errors == 0)
        return p50

    def continue_latency(self):
        cont, cdata = self.samples("continue.json")
        tcp, _ = self.samples("reference-tcp.json")
        ref, _ = self.samples("reference-tls.json")
        fetch, _ = self.samples("fetch.json")
        spawn, _ = self.samples("spawn.json")
        n = len(cont) if cont else 0
        section = f"Continue latency, 3 KB userInfo, warm agents, h2 ← h1 ({n} continues)"
        p50 = self.latency_targets(section, cont, cdata, ref)
        t50, t99 = percentile(tcp, 50), percentile(tcp, 99)
        self.add(section, "  the same exchange without TLS (bare TCP, new connection), p50 / p99",
                 f"{self.ms(t50)} / {self.ms(t99)}", "", "", None)
        tratio = None if not (p50 and t50) else p50 / t50
        self.add(section, "  p50 ÷ that p50", "n/a" if tratio is None else f"{tratio:.1f}×", "", "", None)
        reuse, _ = self.samples("fetch-reuse.json")
        notify, _ = self.samples("fetch-notify.json")
        rtt, _ = self.samples("control-rtt.json")
        f50, k50, s50, n50, c50 = (percentile(fetch, 50), percentile(reuse, 50), percentile(spawn, 50),
                                   percentile(notify, 50), percentile(rtt, 50))
        self.add(section, "  parts: control socket round trip (`status`), p50", self.ms(c50), "", "", None)
        self.add(section, "  parts: bare fetch h2→h1 on a kept connection (ContinuationClient with a pool, as the agent), p50",
                 self.ms(k50), "", "", None)
        if n50 and k50:
            self.add(section, "  parts: telling the source (`continued` on the kept connection), p50 of fetch+notify − fetch",
                     self.ms(n50 - k50), "", "", None)
        self.add(section, "  parts: handler `true` (spawn + stdin + wait, as the agent), p50", self.ms(s50), "", "", None)
        if p50 and s50 and n50 and c50:
            self.add(section, "  rest: inside the agents (p50 − the parts above; parts measured separately)",
                     self.ms(p50 - n50 - s50 - c50), "", "", None)
        self.add(section, "  first continuation to a peer: bare fetch on a new connection (TCP + TLS 1.3 + hello), p50",
                 self.ms(f50), "", "", None)
        cpu = load_json(self.dir, "continue-cpu.json")
        if cpu:
            self.add(section, "  CPU per continue: continuing agent h2 / source agent h1 (utime+stime)",
                     f"{cpu['h2_cpu_us']:.0f} µs / {cpu['h1_cpu_us']:.0f} µs", "", "", None)
        # The app path: the same continues delivered to a HandoffKit app on h2 (no process started).
        app, adata = self.samples("continue-app.json")
        section = f"Continue latency to an app: as above, delivered to a HandoffKit app on h2 ({len(app or [])} continues)"
        self.latency_targets(section, app, adata, ref)

    def visible(self):
        vis, vdata = self.samples("visible.json")
        ref = self.reference_txt_latencies()
        n = len(vis) if vis else 0
        section = f"Activity change visible on a peer: publish on h1 → listed on h2 ({n} changes)"
        p50, p95 = percentile(vis, 50), percentile(vis, 95)
        r50, r95 = percentile(ref, 50), percentile(ref, 95)
        refname = "dns_sd TXT update → TXT query answer"
        self.add(section, "p50", self.ms(p50), f"{self.ms(r50)} ({refname})", "", None)
        self.add(section, "p95", self.ms(p95), f"{self.ms(r95)} ({refname})", "≤ 300 ms",
                 None if p95 is None else p95 <= 300_000)
        ratio = None if not (p95 and r95) else p95 / r95
        self.add(section, "p95 ÷ reference p95", "n/a" if ratio is None else f"{ratio:.2f}×", "1×", "≤ 1.25×",
                 None if ratio is None else ratio <= 1.25)
        errors = (vdata or {}).get("errors", 0)
        self.add(section, "errors (not visible before the next change)", str(errors), "", "0", errors == 0)
        # Each change, once listed, is resigned at once (handoff-bench visible --withdraw).
        withdrawn = (vdata or {}).get("withdraw_samples_us") or []
        if withdrawn:
            self.add(section, "withdrawal p50 / p95 (resign on h1 → gone from h2's list)",
                     f"{self.ms(percentile(withdrawn, 50))} / {self.ms(percentile(withdrawn, 95))}", "", "", None)
            werrors = (vdata or {}).get("withdraw_errors", 0)
            self.add(section, "withdrawals not seen within 1.2 s", str(werrors), "", "0", werrors == 0)

    def reference_txt_latencies(self):
        path = os.path.join(self.dir, "visible-reference.txt")
        latencies = []
        try:
            for line in open(path):
                parts = line.split()
                # txt NAME RECV_NS SEQ T_NS
                if len(parts) == 5 and parts[0] == "txt" and int(parts[3]) > 0 and int(parts[4]) > 0:
                    latencies.append((int(parts[2]) - int(parts[4])) / 1000)
        except OSError:
            pass
        if not latencies:
            self.broken.append("visible-reference.txt")
        return latencies

    def discover(self):
        disc, ddata = self.samples("discover.json")
        ref, _ = self.samples("discover-reference.json")
        n = len(disc) if disc else 0
        section = f"New agent discovered by a peer: start on h3 → listed in h2's peers ({n} starts)"
        p50, p95 = percentile(disc, 50), percentile(disc, 95)
        r50, r95 = percentile(ref, 50), percentile(ref, 95)
        refname = "dns_sd register → browse+resolve+TXT+A"
        self.add(section, "p50", self.ms(p50), f"{self.ms(r50)} ({refname})", "", None)
        self.add(section, "p95", self.ms(p95), f"{self.ms(r95)} ({refname})", "≤ 1.2 s",
                 None if p95 is None else p95 <= 1_200_000)
        activity = (ddata or {}).get("activity_us")
        if activity:
            # h3 kept its activity across the restart; it rejoins its paired devices at once (announce).
            a50, a95 = percentile(activity, 50), percentile(activity, 95)
            self.add(section, "p50 / p95 listed with its current activity", f"{self.ms(a50)} / {self.ms(a95)}",
                     f"{self.ms(r50)} / {self.ms(r95)} ({refname})", "≤ 100 ms (p50)", None if a50 is None else a50 <= 100_000)
        errors = (ddata or {}).get("errors", 0)
        self.add(section, "errors", str(errors), "", "0", errors == 0)
        # h3 again, remembering no address of its peers: it browses, finds h2 and reaches out.
        cold, cdata = self.samples("discover-cold.json")
        if cold:
            c50, c95 = percentile(cold, 50), percentile(cold, 95)
            self.add(section, "p50 / p95 listed, remembering no address (browses first)",
                     f"{self.ms(c50)} / {self.ms(c95)}", f"{self.ms(r50)} / {self.ms(r95)} ({refname})", "≤ 0.5 s (p95)",
                     None if c95 is None else c95 <= 500_000)
            cerrors = (cdata or {}).get("errors", 0)
            self.add(section, "errors, remembering no address", str(cerrors), "", "0", cerrors == 0)

    def concurrency(self):
        conc, cdata = self.samples("concurrency.json")
        ref, rdata = self.samples("concurrency-reference.json")
        tls, tdata = self.samples("concurrency-reference-tls.json")
        cpu = load_json(self.dir, "concurrency-cpu.json") or {}
        n = (len(conc) if conc else 0) + (cdata or {}).get("errors", 0)
        section = f"Concurrency: {n} concurrent fetches from h2 against h1's agent (peer port)"
        p50, p99 = percentile(conc, 50), percentile(conc, 99)
        r50, r99 = percentile(ref, 50), percentile(ref, 99)
        l50, l99 = percentile(tls, 50), percentile(tls, 99)
        errors = (cdata or {}).get("errors", 0)
        both = lambda a, b: f"{a} (bare TCP) / {b} (TCP + TLS 1.3)"
        self.add(section, "errors", str(errors),
                 both((rdata or {}).get('errors', 0), (tdata or {}).get('errors', 0)) + ", same burst", "0", errors == 0)
        self.add(section, "p50", self.ms(p50), both(self.ms(r50), self.ms(l50)), "", None)
        self.add(section, "p99", self.ms(p99), both(self.ms(r99), self.ms(l99)), "≤ 100 ms",
                 None if p99 is None else p99 <= 100_000)
        if cdata and rdata and tdata:
            self.add(section, "whole burst", f"{cdata.get('total_ms', 0):.0f} ms",
                     both(f"{rdata.get('total_ms', 0):.0f} ms", f"{tdata.get('total_ms', 0):.0f} ms"), "", None)
        if cpu:
            count = max(1, n)
            us = lambda x: "n/a" if x is None else f"{x * 1000 / count:.0f} µs"
            a, r, t = cpu.get("agent_cpu_ms"), cpu.get("reference_cpu_ms"), cpu.get("reference_tls_cpu_ms")
            if a is not None and r is not None:
                self.add(section, "server CPU per fetch (utime+stime ÷ fetches)", us(a),
                         both(us(r), us(t)) + ", reference servers", "", None)
            a, r, t = cpu.get("client_cpu_ms"), cpu.get("reference_client_cpu_ms"), cpu.get("reference_tls_client_cpu_ms")
            if a is not None and r is not None:
                self.add(section, "client CPU per fetch", us(a), both(us(r), us(t)) + ", reference clients", "", None)

    def footprint(self):
        fp = load_json(self.dir, "footprint.json")
        if not fp:
            self.broken.append("footprint.json")
            return
        window = fp.get("window_s")
        section = f"Footprint of an idle agent (h1, holding one activity; {window} s window)"
        rss, cpu = fp.get("agent_rss_kb"), fp.get("agent_cpu_percent")
        arss, acpu = fp.get("avahi_rss_kb"), fp.get("avahi_cpu_percent")
        self.add(section, "RSS (VmRSS)", f"{rss / 1024:.1f} MB", f"{arss / 1024:.1f} MB (avahi-daemon, same host)",
                 "≤ 30 MB", rss / 1024 <= 30)
        self.add(section, "CPU (utime+stime)", f"{cpu:.2f} %", f"{acpu:.2f} % (avahi-daemon, same host)", "≤ 1 %",
                 cpu <= 1)
        if fp.get("tls_server_rss_kb"):
            self.add(section, "  the design's floor: a bare SwiftNIO TLS server linking the same libraries, idle, RSS",
                     f"{fp['tls_server_rss_kb'] / 1024:.1f} MB", "", "", None)
        if "agent_anonymous_kb" in fp:
            self.add(section, "  of the RSS: anonymous (the agent's own heap and stacks)",
                     f"{fp['agent_anonymous_kb'] / 1024:.1f} MB", "", "", None)
            self.add(section, "  of the RSS: shared file pages (binary, Swift runtime, Foundation, ICU)",
                     f"{fp.get('agent_shared_clean_kb', 0) / 1024:.1f} MB", "", "", None)
            self.add(section, "  PSS (shared pages divided among the processes mapping them)",
                     f"{fp.get('agent_pss_kb', 0) / 1024:.1f} MB", "", "", None)
        if "agent_referenced_kb" in fp:
            self.add(section, "  of the RSS: touched during the window (smaps Referenced; the idle working set)",
                     f"{fp['agent_referenced_kb'] / 1024:.1f} MB", "", "", None)

    def scale(self):
        sc, sdata = self.samples("scale.json")
        ref, rdata = self.samples("scale-reference.json")
        hosts = (load_json(self.dir, "meta.json") or {}).get("scale_hosts", "?")
        section = f"Scale: {hosts} hosts, agents started together → each lists all {hosts - 1 if isinstance(hosts, int) else '?'} others"
        mx, p50 = (max(sc) if sc else None), percentile(sc, 50)
        rmx, r50 = (max(ref) if ref else None), percentile(ref, 50)
        refname = "dns_sd register + browse on every host"
        self.add(section, "median host", self.ms(p50), f"{self.ms(r50)} ({refname})", "", None)
        self.add(section, "last host", self.ms(mx), f"{self.ms(rmx)} ({refname})", "≤ 3 s",
                 None if mx is None else mx <= 3_000_000)
        ratio = None if not (mx and rmx) else mx / rmx
        self.add(section, "last host ÷ reference's last host", "n/a" if ratio is None else f"{ratio:.2f}×", "1×", "≤ 1.25×",
                 None if ratio is None else ratio <= 1.25)
        errors = (sdata or {}).get("errors", 0)
        self.add(section, "hosts that did not see all others", str(errors),
                 str((rdata or {}).get("errors", 0)), "0", errors == 0)
        first, fdata = self.samples("scale-first.json")
        if first:
            self.add(section, "  before: the first meeting after pairing, last host (every agent then met all others)",
                     self.ms(max(first)), "", "", None)
            if (fdata or {}).get("errors", 0):
                self.add(section, "  before: hosts that had not met all others when stopped", str(fdata["errors"]), "", "", None)
        if sdata and "agents_ready_ms" in sdata:
            self.add(section, "  last agent's control socket up (after start)", f"{sdata['agents_ready_ms']:.0f} ms",
                     "", "", None)

    def streams(self):
        one = load_json(self.dir, "stream-1.json")
        ref = load_json(self.dir, "stream-reference.json")
        many = load_json(self.dir, "stream-n.json")
        rss = load_json(self.dir, "stream-rss.json")
        for name, data in (("stream-1.json", one), ("stream-reference.json", ref), ("stream-n.json", many), ("stream-rss.json", rss)):
            if not data or ("samples_us" in data and not data["samples_us"] and not data.get("bytes_total")):
                self.broken.append(name)
        if one:
            mib = one.get("bytes_total", 0) / 1048576
            section = f"Continuation streams (HandoffKit apps, h1 → h2 through both agents)"
            rt = (ref or {}).get("throughput_mib_s")
            self.add(section, f"throughput, 1 stream of {mib:.0f} MiB", f"{one.get('throughput_mib_s', 0):.0f} MiB/s",
                     f"{rt:.0f} MiB/s (one bare TCP connection, same bytes)" if rt else "n/a", "", None)
            if rt:
                ratio = one.get('throughput_mib_s', 0) / rt
                self.add(section, "  ÷ reference", f"{ratio:.2f}×", "1×", "≥ 0.5×", ratio >= 0.5)
            disk = load_json(self.dir, "send-disk.json")
            if disk and disk.get("throughput_mib_s"):
                self.add(section, "  h2's disk: the same bytes in 1 MiB writes, one fsync (any receiver's ceiling)",
                         f"{disk['throughput_mib_s'] / rt:.2f}× the reference", f"{disk['throughput_mib_s']:.0f} MiB/s", "", None)
            # Two more references, each as "the stream is N× of it".
            for name, label, what in (
                ("stream-tls-reference.json", "one TLS 1.3 connection, app to app (the agents' TLS, no agent in between)",
                 "swift-nio-ssl both ends"),
                ("stream-relayed-reference.json", "the design's ceiling: two bare relays on the same path",
                 "C relays, no TLS, no framing"),
            ):
                self.other_reference(section, one, rt, name, label, what=what)
            self.add(section, "  errors (attempts that failed to open; retried up to 3 times)", str(one.get("errors", 0)), "", "0", one.get("errors", 0) == 0)
        if many and rss:
            section = f"Continuation streams (HandoffKit apps, h1 → h2 through both agents)"
            n, each = rss.get("streams"), rss.get("bytes_each", 0) / 1048576
            self.add(section, f"{n} concurrent streams of {each:.0f} MiB: aggregate throughput",
                     f"{many.get('throughput_mib_s', 0):.0f} MiB/s", "", "", None)
            self.add(section, f"  source agent (h1) RSS during the {n} streams, peak",
                     f"{rss['h1_peak_kb'] / 1024:.1f} MB", f"{rss['h1_idle_kb'] / 1024:.1f} MB (same agent, before)", "", None)
            self.add(section, f"  continuing agent (h2) RSS during the {n} streams, peak",
                     f"{rss['h2_peak_kb'] / 1024:.1f} MB", f"{rss['h2_idle_kb'] / 1024:.1f} MB (same agent, before)", "", None)
            errors = many.get("errors", 0)
            self.add(section, "  errors", str(errors), "", "0", errors == 0)

    def files_sent(self):
        one = load_json(self.dir, "send-1.json")
        ref = load_json(self.dir, "send-reference.json")
        for name, data in (("send-1.json", one), ("send-reference.json", ref)):
            if not data or not data.get("throughput_mib_s"):
                self.broken.append(name)
        if one and ref and ref.get("throughput_mib_s"):
            section = "Files sent (handoff send, h1 → h2 through both agents)"
            mib, rt = one.get("bytes_total", 0) / 1048576, ref["throughput_mib_s"]
            self.add(section, f"throughput, one {mib:.0f} MiB file (the CLI's whole run, hashed as it goes)",
                     f"{one.get('throughput_mib_s', 0):.0f} MiB/s", f"{rt:.0f} MiB/s (one bare TCP connection, same bytes, memory to memory)", "", None)
            ratio = one.get("throughput_mib_s", 0) / rt
            self.add(section, "  ÷ reference", f"{ratio:.2f}×", "1×", "≥ 0.5×", ratio >= 0.5)
            self.other_reference(section, one, rt, "send-reference-file.json", target=0.5, figure=
                                 "bare TCP into a file in h2's download directory, one fsync (`nc h1 port > file; sync`)")
            direct = load_json(self.dir, "send-reference-direct.json") or {}
            how = "past the page cache" if direct.get("direct") else "buffered: O_DIRECT refused"
            self.other_reference(section, one, rt, "send-reference-direct.json", target=0.5, figure=
                                 f"bare TCP into a file in h2's download directory ({how}, 1 MiB writes), one fsync (like for like)")
            secured = load_json(self.dir, "send-reference-secured.json") or {}
            self.other_reference(section, one, rt, "send-reference-secured.json", figure=
                                 "the design's floor: the agents' TLS 1.3 with SHA-256 on both ends into a file there, one fsync, no agent")
            if secured.get("throughput_mib_s") and direct.get("throughput_mib_s"):
                floor = secured["throughput_mib_s"] / direct["throughput_mib_s"]
                self.add(section, "    the floor ÷ the like-for-like reference", f"{floor:.2f}×", "", "", None)
                if bound := floor_bound(secured):
                    cpu_s, cores, bound = bound
                    self.add(section, f"    the floor's CPU ({cpu_s:.2f} s, both ends) over {cores} cores: at most",
                             f"{bound / direct['throughput_mib_s']:.2f}× the like-for-like reference", f"{bound:.0f} MiB/s",
                             "≥ 0.5× (else beyond the design here)", None)
            disk = load_json(self.dir, "send-disk.json")
            if disk and disk.get("throughput_mib_s"):
                how = "past the page cache" if disk.get("direct") else "buffered"
                self.add(section, f"  h2's disk: the same bytes in 1 MiB writes ({how}), one fsync (any receiver's ceiling)",
                         f"{disk['throughput_mib_s'] / rt:.2f}× the reference", f"{disk['throughput_mib_s']:.0f} MiB/s", "", None)

    def other_reference(self, section, one, rt, name, figure, what=None, target=None):
        """One more reference (`name`, if the run made it) as "the measured one is N× of it",
        against `target` if given; `rt` is the bare connection's throughput."""
        data = load_json(self.dir, name)
        if data is not None and not data.get("throughput_mib_s"):
            self.broken.append(name)
        if data and data.get("throughput_mib_s"):
            t = data["throughput_mib_s"]
            ratio = one.get("throughput_mib_s", 0) / t
            note = f"{what}; " if what else ""
            self.add(section, f"  {figure}", f"{ratio:.2f}× of it",
                     f"{t:.0f} MiB/s ({note}{t / rt:.2f}× the bare connection)" if rt else f"{t:.0f} MiB/s",
                     f"≥ {target}×" if target else "", ratio >= target if target else None)

    # -- output -------------------------------------------------------------

    def build(self):
        self.continue_latency()
        self.visible()
        self.discover()
        self.concurrency()
        self.footprint()
        self.scale()
        self.streams()
        self.files_sent()

    def text_table(self):
        lines = []
        header = ("figure", "measured", "reference (same run)", "target", "result")
        widths = [max(len(header[i]), *(len(r[i + 1]) for r in self.rows)) for i in range(5)]
        section = None
        for row in self.rows:
            if row[0] != section:
                section = row[0]
                lines.append("")
                lines.append(section)
                lines.append("  " + "  ".join(h.ljust(w) for h, w in zip(header, widths)))
            lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(row[1:], widths)))
        return "\n".join(lines)

    def markdown_table(self):
        out = ["| benchmark | figure | measured | reference (same run, same link) | target | result |",
               "|---|---|---|---|---|---|"]
        section = None
        for row in self.rows:
            name = row[0] if row[0] != section else ""
            section = row[0]
            figure = row[1].replace("  ", "&nbsp;&nbsp;", 1) if row[1].startswith("  ") else row[1]
            result = f"**{row[5]}**" if row[5] == "MISS" else row[5]
            out.append(f"| {name} | {figure} | {row[2]} | {row[3]} | {row[4]} | {result} |")
        return "\n".join(out)


def peers_main(directory, markdown):
    """--peers: the KDE Connect table alone, spliced into OUT.md."""
    peers = peers_report.PeersReport(directory).build()
    meta = load_json(directory, "meta.json") or {}
    print(peers.text())
    if peers.broken:
        print("BROKEN: no results from " + ", ".join(sorted(set(peers.broken))), file=sys.stderr)
    if markdown:
        with open(markdown) as f:
            document = f.read()
        text = peers_report.splice(document, peers.markdown(meta))
        if text is None:
            print(f"bench-report: {markdown} has no KDE Connect section markers ({peers_report.BEGIN}); "
                  "regenerate it with a full run first", file=sys.stderr)
            return 1
        with open(markdown, "w") as f:
            f.write(text)
    return 1 if peers.broken else 0


def peers_block(directory, markdown):
    """The KDE Connect table of a full report: this run's, else the one OUT.md has."""
    if peers_report.has_results(directory):
        return peers_report.PeersReport(directory).build().markdown(load_json(directory, "meta.json") or {})
    try:
        with open(markdown) as f:
            kept = peers_report.existing_block(f.read())
    except OSError:
        kept = None
    return kept or "(not measured yet: run `scripts/bench --peers`)"


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    directory = sys.argv[1]
    markdown = sys.argv[sys.argv.index("--markdown") + 1] if "--markdown" in sys.argv else None
    if "--peers" in sys.argv:
        return peers_main(directory, markdown)
    report = Report(directory)
    report.build()
    m = report.meta
    start_load = open(os.path.join(directory, "loadavg-start.txt")).read().split()[:3] if os.path.exists(
        os.path.join(directory, "loadavg-start.txt")) else ["?"]
    m["load"] = f"load average {' '.join(start_load)} at the start, {' '.join(m.get('loadavg', ['?']))} at the end"
    print(f"handoff macro benchmarks ({m.get('mode', '?')}): {m.get('date', '?')}, commit {m.get('commit', '?')}"
          f"{' + uncommitted changes' if m.get('dirty') else ''}, {m.get('nproc', '?')} cores, kernel {m.get('kernel', '?')}; {m['load']}")
    print(report.text_table())
    misses = [r for r in report.rows if r[5] == "MISS"]
    print(f"\n{len(misses)} target(s) missed" + (": " + "; ".join(f"{r[0].split(':')[0].split(',')[0]} {r[1]}" for r in misses) if misses else ""))
    if report.broken:
        print("BROKEN: no results from " + ", ".join(sorted(set(report.broken))), file=sys.stderr)
    if markdown:
        template_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "BENCHMARKS.template.md")
        with open(template_path) as f:
            template = f.read()
        text = template.replace("{{DATE}}", m.get("date", "?")).replace("{{COMMIT}}", m.get("commit", "?") + (
            " (with uncommitted changes in Sources/)" if m.get("dirty") else "")).replace(
            "{{MACHINE}}", f"{m.get('nproc', '?')} cores, {m.get('memory', '?')}, Linux {m.get('kernel', '?')}, {m.get('swift', '?')}; {m['load']}").replace(
            "{{TABLE}}", report.markdown_table()).replace("{{DURATION}}", str(m.get("duration_s", "?")))
        micro_path = os.path.join(directory, "micro.md")
        micro = open(micro_path).read().strip() if os.path.exists(micro_path) else None
        text = text.replace("{{PEERS}}", peers_block(directory, markdown))
        text = text.replace("{{MICRO}}", micro or "(not run in this generation: `scripts/bench --no-micro`; "
                            "run `cd Benchmarks && swift package benchmark`)")
        with open(markdown, "w") as f:
            f.write(text)
    return 1 if report.broken else 0


if __name__ == "__main__":
    sys.exit(main())
