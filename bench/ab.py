#!/usr/bin/env python3
# bench/ab.py — CPU time of `cordon run` for two binaries, interleaved:
# on a loaded machine hyperfine's sequential blocks drift with the load by
# more than a small change; alternating the binaries run by run does not.
#
#   python3 bench/ab.py DIR N BEFORE AFTER [RUN-OPTION...]
#
# Runs `BIN run RUN-OPTION... -- /bin/true` in DIR N times per binary, the
# order alternating each round, and prints the median, mean and minimum of
# user + system time (cordon and its sandbox, from wait4's rusage).  Set
# CORDON_AUDIT and CORDON_STATE (on /dev/shm, as bench/scan.sh does) so
# that the disk's fsync does not drown the figures.  Nothing is asserted.
import os
import statistics
import sys

if len(sys.argv) < 5:
    sys.exit("usage: ab.py DIR N BEFORE AFTER [RUN-OPTION...]")
d, n, a, b = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
args = sys.argv[5:]
res = {a: [], b: []}
for i in range(n):
    for binp in (a, b) if i % 2 == 0 else (b, a):
        pid = os.fork()
        if pid == 0:
            os.chdir(d)
            fd = os.open("/dev/null", os.O_WRONLY)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            os.execv(binp, [binp, "run"] + args + ["--", "/bin/true"])
        _, st, ru = os.wait4(pid, 0)
        res[binp].append((ru.ru_utime + ru.ru_stime) * 1000)
for k in (a, b):
    v = sorted(res[k])
    print("%-40s median %.1f ms  mean %.1f  min %.1f" % (k, statistics.median(v), statistics.mean(v), v[0]))
