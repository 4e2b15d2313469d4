#!/bin/sh
# cordon as containerd's OCI runtime (issue 20): a private containerd (its
# own root, state and socket in the test's directory; Debian's containerd,
# installed by scripts/deps.sh) runs an image built here (busybox-static
# and the escape probes, as a docker-archive) through the runc shim with
# `--runc-binary build/cordon-oci`.  Checked: the container runs, exit
# codes and signals pass through `ctr`, `ctr task kill` works, the probes
# are refused inside, the audit log has each container's intent and
# result, and a privileged or host-network container is refused with
# cordon's reason in ctr's error.  Root only: containerd needs root.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
OCI=$CORDON_BUILD/cordon-oci
H=$CORDON_BUILD/tests/helpers

if [ "$(id -u)" -ne 0 ]; then
	skip "containerd runs as root only"
	done_testing
fi
for c in containerd ctr; do
	command -v $c >/dev/null 2>&1 || { skip "$c is not installed (scripts/deps.sh test installs it)"; done_testing; }
done

# Every ctr call is bounded: a shim that died must fail the test, not hang
# it (and with it the suite).
CTR=$(command -v ctr)
ctr() { timeout 60 "$CTR" "$@"; }

D=$T/ctrd
NS=cordontest$$
mkdir -p "$D"
cat >"$D/config.toml" <<EOC
version = 2
root = "$D/root"
state = "$D/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$D/sock"
[ttrpc]
  address = "$D/sock.ttrpc"
[debug]
  address = "$D/debug.sock"
EOC
stop_containerd() {
	if [ -n "${ctrd_pid:-}" ]; then
		for id in $(ctr -a "$D/sock" -n $NS task ls -q 2>/dev/null); do
			ctr -a "$D/sock" -n $NS task kill -s SIGKILL "$id" 2>/dev/null
			ctr -a "$D/sock" -n $NS task delete -f "$id" >/dev/null 2>&1
		done
		kill "$ctrd_pid" 2>/dev/null
		i=0
		while kill -0 "$ctrd_pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		kill -9 "$ctrd_pid" 2>/dev/null
		wait "$ctrd_pid" 2>/dev/null
		ctrd_pid=
	fi
	# The test's cgroups (cgroupsPath), deepest first.
	for h in /sys/fs/cgroup/*; do
		[ -d "$h/cordontest$$" ] || continue
		find "$h/cordontest$$" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	# The shim's runtime root for this namespace (go-runc's --root).
	rm -rf "/run/containerd/runc/$NS"
	# Snapshots still mounted (a container left running) go before $T does.
	grep -o " $D/[^ ]*" /proc/self/mounts | sort -r | while read -r m; do umount -l "$m"; done
}
trap 'stop_containerd; _tap_cleanup' EXIT
# The records go where the operator says: containerd's environment.
containerd --config "$D/config.toml" >"$D/log" 2>&1 &
ctrd_pid=$!
i=0
while ! ctr -a "$D/sock" version >/dev/null 2>&1 && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
ok "a private containerd answers on its own socket" ctr -a "$D/sock" version

# The image: busybox-static and the probes in one layer, as a docker-archive.
I=$T/img
mkdir -p "$I/rootfs/bin" "$I/rootfs/probe" "$I/rootfs/etc"
cp /bin/busybox "$I/rootfs/bin/"
for c in sh echo cat id sleep true; do ln -s busybox "$I/rootfs/bin/$c"; done
cp "$H/esc-probe" "$H/try-syscall" "$I/rootfs/probe/"
echo "root:x:0:0::/:/bin/sh" >"$I/rootfs/etc/passwd"
chmod 0666 "$I/rootfs/etc/passwd"
(cd "$I/rootfs" && tar --owner=0 --group=0 -cf ../layer.tar .)
L=$(sha256sum "$I/layer.tar" | cut -d' ' -f1)
printf '{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/bin:/probe"],"Cmd":["/bin/sh"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' "$L" >"$I/cfg.json"
C=$(sha256sum "$I/cfg.json" | cut -d' ' -f1)
mv "$I/cfg.json" "$I/$C.json"
printf '[{"Config":"%s.json","RepoTags":["cordon-test:1"],"Layers":["layer.tar"]}]' "$C" >"$I/manifest.json"
(cd "$I" && tar -cf ../img.tar manifest.json "$C.json" layer.tar)
ok "ctr imports the test image" ctr -a "$D/sock" -n $NS images import "$T/img.tar"
IMG=docker.io/library/cordon-test:1

crun() { # crun [ctr run options] ID CMD...
	timeout 60 ctr -a "$D/sock" -n $NS run --runtime io.containerd.runc.v2 --runc-binary "$OCI" "$@"
}
desc() { for p in $(pgrep -P "$1"); do echo "$p"; desc "$p"; done; }
# wait_in ID COMM: until a COMM process runs in task ID (seen from the
# host, below the task's process; 10 s at most); its pid in cpid.
wait_in() {
	cpid=""
	_i=0
	while [ -z "$cpid" ] && [ $_i -lt 100 ]; do
		_sup=$(ctr -a "$D/sock" -n $NS task ls | awk -v id="$1" '$1 == id { print $2 }')
		cpid=$(for p in $(desc "${_sup:-0}"); do [ "$(cat /proc/$p/comm 2>/dev/null)" = "$2" ] && echo "$p"; done | head -1)
		[ -n "$cpid" ] || sleep 0.1
		_i=$((_i + 1))
	done
}

out=$(crun --rm $IMG c1 sh -c 'echo hello; id -u; exit 3' 2>&1)
rc=$?
is "$out" "hello
1000" "the container runs under cordon: its output, and uid 0 of the spec is cordon's user 1000"
is "$rc" 3 "its exit code (3) is ctr's"

# Signals: ctr task kill reaches the container's process.
crun -d $IMG c2 sh -c 'trap "exit 42" TERM; while :; do sleep 0.1; done' >/dev/null 2>&1
wait_in c2 sleep # the loop runs: the trap is set
ok "ctr task kill -s SIGTERM is accepted" ctr -a "$D/sock" -n $NS task kill -s SIGTERM c2
i=0
while ! ctr -a "$D/sock" -n $NS task ls | grep -q 'c2 .*STOPPED' && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
ok "the TERM reached the trap: exit 42" sh -c "ctr -a '$D/sock' -n $NS task delete c2 2>&1 | grep -q 'exit with non-zero exit code 42'"
ctr -a "$D/sock" -n $NS containers rm c2 >/dev/null 2>&1
crun -d $IMG c3 sleep 1000 >/dev/null 2>&1
wait_in c3 sleep
ok "ctr task kill -s SIGKILL is accepted" ctr -a "$D/sock" -n $NS task kill -s SIGKILL c3
i=0
while ! ctr -a "$D/sock" -n $NS task ls | grep -q 'c3 .*STOPPED' && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
ok "SIGKILL ends it: exit 137" sh -c "ctr -a '$D/sock' -n $NS task delete c3 2>&1 | grep -q 'exit with non-zero exit code 137'"
ctr -a "$D/sock" -n $NS containers rm c3 >/dev/null 2>&1

# The escape probes inside a container containerd asked to give 14
# capabilities.
out=$(crun --rm $IMG c4 sh -c 'esc-probe ids; esc-probe raw; esc-probe open-write /etc/passwd; esc-probe tcp 192.0.2.1 80; try-syscall mount bpf unshare-user setns; grep -E "^(CapBnd|NoNewPrivs|Seccomp):" /proc/self/status' 2>&1)
is "$out" "euid=1000
egid=1000
CapPrm=0000000000000000
CapEff=0000000000000000
CapAmb=0000000000000000
setuid0=EINVAL
raw=EPERM
open-write=EROFS
connect=EACCES
mount errno=EPERM
bpf errno=EPERM
unshare-user errno=EPERM
setns errno=EPERM
CapBnd:	0000000000000000
NoNewPrivs:	1
Seccomp:	2" "inside: no capabilities, raw sockets, mount, bpf, unshare and setns refused, the image read-only, no route out, no_new_privs, seccomp"

# A terminal (ctr run -t, kubectl exec -it's kind): cordon-oci makes a pty
# and sends its controller over the shim's --console-socket; the command
# has the follower as stdin, stdout and controlling terminal.  ctr wants a
# terminal of its own: script(1) gives it one (its stdin at EOF echoes as
# ^@, dropped).  TIOCSTI stays refused.  The deadline is outside script:
# inside, timeout would put ctr in a process group of its own, not the
# terminal's foreground one, and ctr's raw-mode tcsetattr would stop it
# (SIGTTOU) wherever script's $SHELL (it runs the command) forks first, as
# dash does (CI's SHELL is unset: /bin/sh); SHELL=/bin/sh makes every run
# take that path.
tty_ctr() { # tty_ctr RUNTIME ID CMD
	SHELL=/bin/sh timeout -k 5 60 script -qec "exec ctr -a '$D/sock' -n $NS run -t --rm --runtime io.containerd.runc.v2 --runc-binary '$1' $IMG $2 sh -c '$3'" /dev/null </dev/null
}
tty_run() { # tty_run RUNTIME ID CMD: its output, the terminal's \r and ^@ dropped
	tty_ctr "$@" 2>&1 | tr -d '\r\000' | sed 's/\^@//g'
}
tcmd='test -t 0 && echo tty-in; test -t 1 && echo tty-out; [ "$(cut -d" " -f7 /proc/self/stat)" != 0 ] && echo ctty; try-syscall tiocsti; exit 5'
out=$(tty_run "$OCI" t1 "$tcmd")
is "$out" "tty-in
tty-out
ctty
tiocsti errno=EPERM" "ctr run -t: the container's stdin and stdout are a terminal, its controlling one; its output arrives; TIOCSTI refused"
tty_ctr "$OCI" t2 'exit 7' >/dev/null 2>&1
is "$?" 7 "ctr run -t: the exit status passes through (7)"
if command -v runc >/dev/null 2>&1; then
	out=$(tty_run "$(command -v runc)" t3 "$tcmd")
	ok "control: under runc the same terminal takes TIOCSTI (EFAULT: it got past to the NULL buffer)" sh -c "printf '%s\n' '$out' | grep -qx 'tiocsti errno=EFAULT'"
fi

# exec (ctr task exec, kubectl exec): refused, with cordon's reason, and
# on record; the container it aimed at runs on.
crun -d $IMG c6 sh -c 'trap "exit 9" TERM; while :; do sleep 0.1; done' >/dev/null 2>&1
wait_in c6 sleep
refused "ctr task exec is refused with cordon's reason" 'OCI runtime exec failed: exec: cordon-oci refuses a second process in container c6' timeout 30 ctr -a "$D/sock" -n $NS task exec --exec-id e1 c6 id -u
ok "the container runs on after the refused exec" sh -c "ctr -a '$D/sock' -n $NS task ls | grep -q 'c6 .*RUNNING'"
ctr -a "$D/sock" -n $NS task kill -s SIGTERM c6
i=0
while ! ctr -a "$D/sock" -n $NS task ls | grep -q 'c6 .*STOPPED' && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
ctr -a "$D/sock" -n $NS task delete c6 >/dev/null 2>&1
ctr -a "$D/sock" -n $NS containers rm c6 >/dev/null 2>&1

# linux.cgroupsPath (ctr --cgroup; the kubelet's /kubepods/...): the
# container's processes are in that cgroup of each v1 hierarchy, with the
# spec's memory limit and cordon's process cap (the spec gives none)
# written there; a path with .. and a cgroup that exists are refused.
CG=/cordontest$$
if [ "$(stat -f -c %T /sys/fs/cgroup/memory 2>/dev/null)" = cgroupfs ]; then
	crun -d --cgroup "$CG/c7" --memory-limit 300000000 $IMG c7 sleep 1000 >/dev/null 2>&1
	wait_in c7 sleep
	is "$(grep -E '^[0-9]+:(memory|pids):' /proc/${cpid:-0}/cgroup | cut -d: -f2- | sort)" "memory:$CG/c7
pids:$CG/c7" "cgroupsPath: the container's process (seen from the host) is in the spec's cgroup"
	lim=$(cat /sys/fs/cgroup/memory$CG/c7/memory.limit_in_bytes 2>/dev/null)
	ok "the spec's memory limit is written there ($lim)" sh -c "[ '${lim:-0}' -le 300000000 ] && [ '${lim:-0}' -gt 299000000 ]"
	is "$(cat /sys/fs/cgroup/pids$CG/c7/pids.max 2>/dev/null)" 256 "and cordon's process cap (256) holds where the spec gives none"
	ctr -a "$D/sock" -n $NS task kill -s SIGKILL c7
	i=0
	while ! ctr -a "$D/sock" -n $NS task ls | grep -q 'c7 .*STOPPED' && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	ctr -a "$D/sock" -n $NS task delete c7 >/dev/null 2>&1
	ctr -a "$D/sock" -n $NS containers rm c7 >/dev/null 2>&1
	ok "the container's cgroup is removed when it ends" test ! -e "/sys/fs/cgroup/memory$CG/c7"
	refused "a cgroupsPath with .. is refused" "OCI runtime create failed: linux.cgroupsPath $CG/../x: cordon places a container only in a cgroup below" crun --rm --cgroup "$CG/../x" $IMG c8 true
	mkdir -p "/sys/fs/cgroup/memory$CG/taken"
	refused "a cgroupsPath that exists (another's cgroup) is refused" "OCI runtime create failed: linux.cgroupsPath $CG/taken exists already in the memory hierarchy" crun --rm --cgroup "$CG/taken" $IMG c9 true
else
	skip "cgroupsPath: no cgroup v1 memory hierarchy here"
fi

# Control: the same probes under Debian's runc see what they report.
if command -v runc >/dev/null 2>&1; then
	out=$(timeout 60 ctr -a "$D/sock" -n $NS run --rm --runtime io.containerd.runc.v2 --runc-binary "$(command -v runc)" $IMG c5 sh -c 'esc-probe ids; esc-probe raw' 2>&1)
	ok "control: under runc the probes see uid 0, capabilities and a raw socket" sh -c "printf '%s\n' '$out' | grep -qx euid=0 && printf '%s\n' '$out' | grep -qx raw=ok"
fi

# Refusals: ctr shows cordon's reason.
refused "a privileged container is refused, CAP_SYS_ADMIN named" 'OCI runtime create failed: cordon refuses privileged containers: .*CAP_SYS_ADMIN' crun --rm --privileged $IMG p1 true
refused "a host-network container is refused" 'OCI runtime create failed: cordon refuses host namespaces: .*network' crun --rm --net-host $IMG p2 true

# The audit log: each container that ran has its intent and result.
"$CORDON" log show --tool container --json >"$T/recs" 2>&1
python3 - "$T/recs" >"$T/audit" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
intents = {r["run_id"] for r in recs if r["kind"] == "run.intent"}
for r in recs:
    if r["kind"] == "run.result":
        print(r["details"]["oci"]["id"], r["reason"], r["exit_code"], r["run_id"] in intents)
PY
python3 - "$T/recs" >"$T/execs" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    o = (r.get("details") or {}).get("oci") or {}
    if r["kind"] == "decision" and o.get("refused_at") == "exec":
        print(o["id"], r["action"], r["decision"], " ".join(o.get("args") or []))
PY
is "$(cat "$T/execs")" "c6 exec deny id -u" "the refused exec is a deny decision on record, with the command it asked for"
is "$(cat "$T/audit")" "c1 exited 3 True
c2 exited 42 True
c3 signaled 137 True
c4 exited 0 True
t1 exited 5 True
t2 exited 7 True
c6 exited 9 True
c7 signaled 137 True" "the audit log has each container's result after its intent (exit 3, 42, signal 9 as 137, 0; the terminal ones 5 and 7; 9 after a refused exec; 137 in its cgroupsPath)"
ok "the log verifies" "$CORDON" log verify

stop_containerd
done_testing
