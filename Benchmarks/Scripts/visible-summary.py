"""Prints the activity-change-visible step of a results directory (scripts/bench --visible-only):
publish on h1 -> listed on h2, resign on h1 -> gone from h2's list, and the dns_sd TXT reference."""
import json
import sys

d = sys.argv[1]
vis = json.loads(open(f"{d}/visible.json").read().strip().splitlines()[-1])
ref = []
for line in open(f"{d}/visible-reference.txt"):
    parts = line.split()  # txt NAME RECV_NS SEQ T_NS
    if len(parts) == 5 and parts[0] == "txt" and int(parts[3]) > 0 and int(parts[4]) > 0:
        ref.append((int(parts[2]) - int(parts[4])) / 1000)


def p(samples, q):
    s = sorted(samples)
    return s[min(len(s) - 1, int(q * len(s)))] / 1000 if s else float("nan")


def line(what, samples, errors, unit):
    return (f"{what}: p50 {p(samples, 0.5):.2f} ms, p95 {p(samples, 0.95):.2f} ms, max {p(samples, 1):.2f} ms, "
            f"errors {errors} ({len(samples)} {unit})")


print(line("publish on h1 -> listed on h2", vis["samples_us"], vis["errors"], "changes"))
print(line("resign on h1 -> gone from h2's list", vis.get("withdraw_samples_us", []), vis.get("withdraw_errors", 0), "withdrawals"))
print(line("reference, dns_sd TXT update -> TXT query answer", ref, 0, "updates"))
