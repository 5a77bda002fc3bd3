#!/usr/bin/env python3
# startup_cpu_sample.py PIDFILE PEERLOG MARK_LINES OUT: waits for the agent's pid, then samples its CPU time
# (utime+stime of /proc/PID/stat, all threads, dead ones included) every 5 ms: at the first line
# after MARK_LINES of PEERLOG saying h2 found h1, and at 1, 2, 3 and 5 s after exec.
import os, sys, time, json
pidfile, peerlog, mark, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
tck = os.sysconf("SC_CLK_TCK")
t0 = time.time()
pid = None
while time.time() - t0 < 10:
    try:
        pid = int(open(pidfile).read().strip()); break
    except Exception:
        time.sleep(0.001)
start_ticks = int(open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[19])  # starttime (field 22)
boot = float(open("/proc/uptime").read().split()[0])
def cpu():
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tck  # utime, stime (fields 14, 15)
def since_exec():
    return float(open("/proc/uptime").read().split()[0]) - start_ticks / tck
def sched():
    total = 0
    for t in os.listdir("/proc/%d/task" % pid):
        try: total += int(open("/proc/%d/task/%s/schedstat" % (pid, t)).read().split()[0])
        except Exception: pass
    return total / 1e9
def threads():
    return len(os.listdir("/proc/%d/task" % pid))
res = {"pid": pid}
listed = None
marks = [1.0, 2.0, 3.0, 5.0]
while marks:
    t = since_exec()
    if listed is None:
        try:
            lines = open(peerlog).read().splitlines()[mark:]
            if any("handoff.peer=h1" in l and "peer found" in l for l in lines):
                listed = t; res["listed_s"] = round(t, 3); res["cpu_at_listed"] = cpu(); res["sched_at_listed"] = sched()
        except Exception:
            pass
    if t >= marks[0]:
        res["cpu_at_%gs" % marks[0]] = cpu(); res["sched_at_%gs" % marks[0]] = sched(); res["threads_at_%gs" % marks[0]] = threads(); marks.pop(0)
    time.sleep(0.005)
json.dump(res, open(out, "w"))
