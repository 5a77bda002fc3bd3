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
