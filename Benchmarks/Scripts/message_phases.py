#!/usr/bin/env python3
"""message_phases.py SCHED_TEXT H1_PID H2_PID: where a one-way message's time goes, from a
system-wide trace of sched:sched_waking (`perf record -a -e sched:sched_waking`, then
`perf script -F comm,tid,time,event,trace`), written by one-way-message.bash with PHASES=1.

For each message, from the thread that woke it up, three handoffs of the CPU:
  the client's publish (its write to h1's control socket) -> h1's event loop woken,
  h1's event loop woken -> h2's event loop woken (h1 reads, seals and pushes the activity),
  h2's event loop woken -> the watching client woken (h2 opens it, takes it, writes the event).
A message counts from the timer that ends the client's gap (its wake-up from idle), so the
first phase also holds the client's own work before the write (the request is made before
the clock starts, see OneWayMessage.swift). Prints each phase's median, in microseconds.
"""
import collections
import re
import sys


def main():
    path, h1_pid, h2_pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    line_re = re.compile(r'^(\S.*?)\s+(\d+)\s+([\d.]+):\s+sched:sched_waking:.*?\bpid=(\d+)')
    wakes = []  # (time, waker tid, waker comm, woken tid)
    for line in open(path):
        m = line_re.match(line.strip())
        if m:
            wakes.append((float(m.group(3)), int(m.group(2)), m.group(1), int(m.group(4))))
    # Each agent's event loop: its NIO thread, a tid just above the agent's pid.
    loops = {}
    for _, tid, comm, _ in wakes:
        for name, pid in (('h1', h1_pid), ('h2', h2_pid)):
            if comm.startswith('NIO-SGLTN') and pid < tid < pid + 100:
                loops[name] = min(loops.get(name, tid), tid)
    if len(loops) < 2:
        sys.exit("message_phases: no event loop thread of %s woke anything" % ' or '.join(n for n in ('h1', 'h2') if n not in loops))
    h1, h2 = loops['h1'], loops['h2']
    # The client: the thread (not one of the agents') that wakes h1's loop most often.
    wakers = collections.Counter(w for _, w, comm, t in wakes
                                 if t == h1 and w not in (0, h1, h2) and not comm.startswith('TP-') and not (h1_pid <= w < h1_pid + 100))
    if not wakers:
        sys.exit("message_phases: nothing but the agents woke h1's event loop")
    client = wakers.most_common(1)[0][0]
    phases = []
    for i, (t, waker, _, woken) in enumerate(wakes):
        if woken != client or waker != 0:
            continue
        marks = [t]
        for t2, w2, _, k2 in wakes[i + 1:i + 400]:
            step = len(marks)
            if (step, w2, k2) in ((1, client, h1), (2, h1, h2), (3, h2, client)):
                marks.append(t2)
                if len(marks) == 4:
                    phases.append([(b - a) * 1e6 for a, b in zip(marks, marks[1:])])
                    break
    if not phases:
        sys.exit("message_phases: no message found in the trace")
    median = lambda xs: sorted(xs)[len(xs) // 2]
    names = ["client wakes -> h1's loop woken", "h1's loop -> h2's loop woken", "h2's loop -> the watcher woken"]
    print("phases of %d messages (medians):" % len(phases), ", ".join(
        "%s %.0f us" % (n, median([p[k] for p in phases])) for k, n in enumerate(names)),
        "; total %.0f us" % median([sum(p) for p in phases]))


if __name__ == '__main__':
    main()
