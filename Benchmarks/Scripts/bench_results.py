"""What both reports read from a benchmark's results directory: a result file's last JSON line,
nearest-rank percentiles, and times in microseconds written as milliseconds."""

import json
import math
import os


def load_json(directory, name):
    """The last line of `name` in `directory` as JSON; None when missing or not JSON."""
    path = os.path.join(directory, name)
    try:
        with open(path) as f:
            text = f.read().strip()
        return json.loads(text.splitlines()[-1]) if text else None
    except (OSError, ValueError, IndexError):
        return None


def percentile(samples, q):
    """Nearest-rank percentile; None for no samples."""
    if not samples:
        return None
    s = sorted(samples)
    return s[max(0, math.ceil(q / 100 * len(s)) - 1)]


def format_ms(us):
    """Microseconds as milliseconds: two decimals under 100 ms, none above; "n/a" for None."""
    if us is None:
        return "n/a"
    return f"{us / 1000:.2f} ms" if us < 100_000 else f"{us / 1000:.0f} ms"


def floor_bound(secured):
    """The file send's floor (send-reference-secured.json): its CPU on both ends in seconds, the
    machine's cores, and the throughput in MiB/s that CPU allows spread perfectly over them (the
    fastest any design that encrypts and hashes on both ends could go here); None without both
    ends' CPU."""
    cpu_s = ((secured.get("server_cpu_ms") or 0) + (secured.get("process_cpu_ms") or 0)) / 1000
    if not (secured.get("server_cpu_ms") and cpu_s and secured.get("bytes_total")):
        return None
    cores = os.cpu_count() or 1
    return cpu_s, cores, secured["bytes_total"] / 1048576 / (cpu_s / cores)
