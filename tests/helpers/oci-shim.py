#!/usr/bin/env python3
"""oci-shim.py — what containerd's runc shim does with a runtime, for the
tests of cordon-oci without containerd (tests/integration/2001-oci-cli.sh).

  oci-shim.py RUNTIME ROOT BUNDLE ID [--kill SIG AFTER_S] [--stop-at created]

Becomes a child subreaper (as the shim is), runs `RUNTIME --root ROOT
--log BUNDLE/log.json --log-format json create --bundle BUNDLE --pid-file
BUNDLE/init.pid ID`, reads the pid file, runs `start ID` (optionally
`kill ID SIG` after AFTER_S seconds), reaps the pid and prints
"exit=N" or "signal=N", then `delete ID`.  The container's stdout and
stderr are this process's.  Exit status: 0, or 1 when create failed
(the log's last error is printed as "error=MSG")."""
import ctypes, json, os, subprocess, sys, time

PR_SET_CHILD_SUBREAPER = 36


def main():
    rt, root, bundle, cid = sys.argv[1:5]
    rest = sys.argv[5:]
    kill = None
    if rest[:1] == ["--kill"]:
        kill = (rest[1], float(rest[2]))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("prctl: cannot become a subreaper")
    log = os.path.join(bundle, "log.json")
    pidf = os.path.join(bundle, "init.pid")
    base = [rt, "--root", root, "--log", log, "--log-format", "json"]
    r = subprocess.run(base + ["create", "--bundle", bundle, "--pid-file", pidf, cid],
                       stderr=subprocess.DEVNULL)
    if r.returncode != 0:
        msg = ""
        if os.path.exists(log):
            for line in open(log):
                e = json.loads(line)
                if e.get("level") == "error":
                    msg = e["msg"]
        print("error=" + msg, flush=True)
        return 1
    data = open(pidf).read()
    pid = int(data)  # go-runc's strconv.Atoi: no newline allowed
    print("state=" + json.loads(subprocess.run(base + ["state", cid], capture_output=True,
                                               text=True).stdout)["status"], flush=True)
    subprocess.run(base + ["start", cid], check=True)
    if kill:
        time.sleep(kill[1])
        subprocess.run(base + ["kill", cid, kill[0]], check=True)
    while True:
        p, st = os.waitpid(-1, 0)
        if p == pid:
            break
    if os.WIFEXITED(st):
        print("exit=%d" % os.WEXITSTATUS(st), flush=True)
    else:
        print("signal=%d" % os.WTERMSIG(st), flush=True)
    print("after=" + json.loads(subprocess.run(base + ["state", cid], capture_output=True,
                                               text=True).stdout)["status"], flush=True)
    subprocess.run(base + ["delete", cid], check=True)
    return 0


sys.exit(main())
