#!/usr/bin/env python3
"""Condenses `swift package benchmark --format markdown` output into one table for
docs/BENCHMARKS.md: per benchmark, wall clock p50/p90, mallocs p50 and throughput p50.

usage: micro-summary.py MARKDOWN_FILE
"""
import re
import sys

SCALE = {"ns": 1e-3, "μs": 1.0, "us": 1.0, "ms": 1e3, "s": 1e6}
COUNT = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}


def parse(path):
    target = bench = None
    rows = {}
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("## ") and not line.startswith("## Baseline"):
            target = line[3:].strip()
        elif line.startswith("### "):
            bench = line[4:].strip()
            rows[(target, bench)] = {}
        elif line.startswith("| ") and bench and not line.startswith("| Metric"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if len(cells) < 9:
                continue
            metric, values = cells[0], cells[1:8]  # p0 p25 p50 p75 p90 p99 p100
            rows[(target, bench)][metric] = values
    return rows


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def main():
    rows = parse(sys.argv[1])
    out = ["| target | benchmark | wall clock p50 | wall clock p90 | mallocs p50 | throughput p50 |",
           "|---|---|---|---|---|---|"]
    for (target, bench), metrics in rows.items():
        wall50 = wall90 = mallocs = throughput = "n/a"
        for metric, values in metrics.items():
            if metric.startswith("Time (wall clock)"):
                unit = re.search(r"\((ns|μs|us|ms|s)\)", metric)
                factor = SCALE[unit.group(1)] if unit else 1.0
                p50, p90 = number(values[2]), number(values[4])
                fmt = lambda us: f"{us:.2f} µs" if us < 10 else f"{us:.1f} µs" if us < 1000 else f"{us / 1000:.2f} ms"
                if p50 is not None: wall50 = fmt(p50 * factor)
                if p90 is not None: wall90 = fmt(p90 * factor)
            elif metric.startswith("Malloc (total)"):
                mallocs = values[2]
            elif metric.startswith("Throughput"):
                unit = re.search(r"\(([KMG]?)\)\s*$", metric)
                p50 = number(values[2])
                if p50 is not None:
                    throughput = f"{p50 * COUNT[unit.group(1) if unit else '']:,.0f} /s"
        out.append(f"| {target} | {bench} | {wall50} | {wall90} | {mallocs} | {throughput} |")
    print("\n".join(out))


if __name__ == "__main__":
    main()
