#!/usr/bin/env python3
"""The scans' share of a run, measured with the configurations interleaved run by run.

    python3 bench/scan-interleaved.py CORDON[,BEFORE] EMPTY_DIR TREE_DIR [ROUNDS]

Each round runs `CORDON run --profile P -- true` once in each of EMPTY_DIR and TREE_DIR for
P in strict and workspace-write (after 5 warm-up runs each), and takes the CPU time of
cordon and its sandbox from wait4's rusage (the warm service's own CPU is not counted).
Interleaving keeps this VM's slow drifts out of the differences; medians are printed.
TREE_DIR is what bench/scan.sh builds (2,500 directories of 20 files, a nested git
repository); the caller must own both directories for workspace-write to mean anything.
The warm service and the state live in /dev/shm/cordon-interleaved-UID (-N for the Nth
binary: with CORDON,BEFORE both are measured in the same rounds, each with its own service,
state and scan cache, and printed one after the other).
"""
import os
import statistics
import sys


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    bins = [os.path.abspath(b) for b in sys.argv[1].split(",")]
    empty, tree = (os.path.abspath(a) for a in sys.argv[2:4])
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 150
    envs = {}
    for i, b in enumerate(bins):
        base = "/dev/shm/cordon-interleaved-%d%s" % (os.getuid(), "-%d" % i if i else "")
        os.makedirs(base + "/svc", exist_ok=True)
        os.chmod(base + "/svc", 0o755)
        envs[b] = dict(os.environ, CORDON_SERVICE_DIR=base + "/svc", CORDON_WARM="1",
                       CORDON_AUDIT=base + "/audit.db", CORDON_STATE=base + "/state.db")
    configs = [(b, d, p) for b in bins for d in (empty, tree) for p in ("strict", "workspace-write")]

    def one(b, d, p):
        pid = os.fork()
        if pid == 0:
            os.chdir(d)
            null = os.open("/dev/null", os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            os.execve(b, [b, "run", "--profile", p, "--", "true"], envs[b])
        _, status, ru = os.wait4(pid, 0)
        if status:
            sys.exit("scan-interleaved: a run of %s in %s (%s) failed: %d" % (b, d, p, status))
        return (ru.ru_utime + ru.ru_stime) * 1000

    for c in configs:
        for _ in range(5):
            one(*c)
    res = {c: [] for c in configs}
    for _ in range(rounds):
        for c in configs:
            res[c].append(one(*c))
    med = {c: statistics.median(v) for c, v in res.items()}
    print("# uid %d, %d rounds, CPU ms of cordon and its sandbox (median)" % (os.getuid(), rounds))
    for b in bins:
        if len(bins) > 1:
            print("# " + b)
        for p in ("strict", "workspace-write"):
            e, t = med[(b, empty, p)], med[(b, tree, p)]
            print("%-16s empty %6.2f  tree %6.2f  scans %+.2f ms (%+.1f%%)" % (p, e, t, t - e, 100 * (t - e) / e))


if __name__ == "__main__":
    main()
