#!/bin/sh
# cordon-oci driven as containerd's runc shim drives it (issue 20), without
# containerd: tests/helpers/oci-shim.py is a subreaper that runs create,
# reads the pid file, starts, kills and reaps.  The bundle's config.json
# is containerd's own default spec (from the fuzz corpus) with the test's
# command.  Checked as root and as nobody: the lifecycle and state, exit
# codes and signals passing through, the walls inside, the audit records,
# and each refusal's reason where containerd reads it (--log, JSON).
# Two users, four containers and seven refusals each.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/oci-bundle.sh"
OCI=$CORDON_BUILD/cordon-oci
H=$CORDON_BUILD/tests/helpers
SHIM=$CORDON_SRC/tests/helpers/oci-shim.py
SPEC=$CORDON_SRC/tests/fuzz/corpus/oci-config/containerd-default.json
# The image's root is outside the bundles (one for all, as CRI-O's store
# is): cordon-oci takes such roots only from the stores CORDON_OCI_ROOTS names.
export CORDON_OCI_ROOTS=$T

is "$(readlink "$OCI")" cordon "build/cordon-oci is a link to cordon (one binary, named by argv[0])"
refused "exec is refused with a reason" 'exec: cordon-oci refuses a second process in container x' "$OCI" exec x
refused "kill with a signal the supervisor would take itself is refused" 'passes KILL, TERM, INT, HUP, QUIT, USR1 and USR2 only' "$OCI" --root "$T/none" kill c1 STOP
ok "features prints JSON" sh -c "'$OCI' features | python3 -c 'import json,sys; json.load(sys.stdin)'"

# The image's root: busybox and the probes, owned by root, read-only.
R=$T/rootfs
mkdir -p "$R/bin" "$R/probe" "$R/etc" "$R/proc" "$R/dev" "$R/sys" "$R/tmp"
cp /bin/busybox "$R/bin/busybox"
for c in sh echo cat id sleep true ls; do ln -s busybox "$R/bin/$c"; done
cp "$H/esc-probe" "$H/try-syscall" "$R/probe/"
echo "root:x:0:0::/:/bin/sh" >"$R/etc/passwd"
# Writable by anyone: only the read-only image stops a write (EROFS).
chmod 0666 "$R/etc/passwd"
chmod -R a+rX "$R"

# bundle DIR PATCH: oci_bundle with root.path R, PATH /bin:/probe.
bundle() { oci_bundle "$1" "$R" /bin:/probe "$2"; }

oci_user() {
	who=$1
	W=$T/$who
	mkdir -p "$W"
	[ "$RUN_AS" = "" ] || chown 65534:65534 "$W"
	chmod 0755 "$W"

	# Lifecycle: created before start, exit code passed, stopped after.
	bundle "$W/b1" "c['process']['args'] = ['/bin/sh', '-c', 'echo started; exit 7']"
	out=$($RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/b1" c1 2>&1)
	is "$out" "state=created
started
exit=7
after=stopped" "$who: create, state created, start, the container's exit code 7 reaches the shim, then stopped"
	refused "$who: deleted: state says it does not exist" 'container c1 does not exist' $RUN_AS "$OCI" --root "$W/root" state c1
	ok "$who: delete removed its state directory" test ! -e "$W/root/c1"

	# Signals: TERM reaches the command (its trap exits 42); KILL ends it
	# as 128+9 and the result is still recorded.
	bundle "$W/b2" "c['process']['args'] = ['/bin/sh', '-c', 'trap \"exit 42\" TERM; echo up; while :; do sleep 0.1; done']"
	out=$($RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/b2" c2 --kill TERM 1.5 2>&1)
	is "$out" "state=created
up
exit=42
after=stopped" "$who: kill TERM reaches the container's process (its trap exits 42)"
	bundle "$W/b3" "c['process']['args'] = ['/bin/sleep', '1000']"
	out=$($RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/b3" c3 --kill KILL 1 2>&1)
	is "$out" "state=created
exit=137
after=stopped" "$who: kill KILL ends the container: exit 137"

	# The walls inside: no capabilities though the spec asks for 14, uid 0
	# of the spec is cordon's unprivileged user, read-only image, no
	# network, no raw sockets, seccomp and no_new_privs.
	bundle "$W/b4" "c['process']['args'] = ['/bin/sh', '-c', 'esc-probe ids; esc-probe raw; esc-probe open-write /etc/passwd; esc-probe tcp 192.0.2.1 80; try-syscall mount bpf; grep -E \"^(NoNewPrivs|Seccomp|CapBnd):\" /proc/self/status; echo x >/run/w && echo run-writable']"
	out=$($RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/b4" c4 2>&1)
	is "$out" "state=created
euid=1000
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
CapBnd:	0000000000000000
NoNewPrivs:	1
Seccomp:	2
run-writable
exit=0
after=stopped" "$who: inside: no capabilities, uid 1000, raw sockets and mount/bpf refused, the image read-only, no network, no_new_privs, seccomp; the spec's /run tmpfs writable"

	# The audit log: a decision, an intent and a result for each container.
	python3 - "$W" <<'PY' >"$T/audit-$who" 2>&1
import json, subprocess, sys, os
recs = [json.loads(l) for l in subprocess.run(
    [os.environ["CORDON"], "log", "show", "--tool", "container", "--json"],
    capture_output=True, text=True).stdout.splitlines()]
for r in recs:
    if r["kind"] == "run.result":
        print(r["details"]["oci"]["id"], r["reason"], r["exit_code"],
              r["details"]["oci"]["capabilities_dropped"])
print("intents", sum(1 for r in recs if r["kind"] == "run.intent"))
PY
	if [ "$RUN_AS" = "" ]; then
		is "$(cat "$T/audit-$who")" "c1 exited 7 42
c2 exited 42 42
c3 signaled 137 42
c4 exited 0 42
intents 4" "$who: the audit log has each container's intent and result (exit, signal, the 42 capability entries dropped)"
	else
		ok "$who: the audit log has each container's intent and result" sh -c "as_nobody '$CORDON' log show --tool container --json | grep -c '\"run.result\"' | grep -qx 4"
	fi

	# Refusals, each with its reason in the log where containerd reads it,
	# and nothing left behind.
	bundle "$W/p1" "c['process']['capabilities']['bounding'].append('CAP_SYS_ADMIN')"
	refused "$who: a privileged container is refused, CAP_SYS_ADMIN named" 'error=cordon refuses privileged containers: .*CAP_SYS_ADMIN' $RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/p1" p1
	ok "$who: nothing left of the refused container" test ! -e "$W/root/p1"
	bundle "$W/p2" "c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] != 'network']"
	refused "$who: the host's network namespace is refused" 'error=cordon refuses host namespaces: .*no network namespace' $RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/p2" p2
	bundle "$W/p3" "c['linux']['namespaces'][0]['path'] = '/proc/self/ns/pid'"
	refused "$who: a namespace joined by path (the host's) is refused" 'error=cordon refuses host namespaces: linux.namespaces pid joins the host' $RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/p3" p3
	bundle "$W/p4" "c['linux']['devices'] = [{'path': '/dev/kmsg', 'type': 'c', 'major': 1, 'minor': 11}]"
	refused "$who: a device beyond the defaults is refused" 'error=cordon refuses device /dev/kmsg' $RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/p4" p4
	bundle "$W/p5" "c['hooks'] = {'createRuntime': [{'path': '/bin/true'}]}"
	refused "$who: hooks are refused" 'error=config.json: hooks run host programs' $RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/p5" p5
	bundle "$W/p6" "c['process']['args'] = 'sh'"
	refused "$who: a malformed spec is refused, the field named" 'error=config.json: process.args must be an array' $RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/p6" p6
	bundle "$W/p7" "c['mounts'].append({'destination': '/x', 'type': 'nfs', 'source': 'h:/x'})"
	refused "$who: a mount type cordon does not make is refused" 'error=config.json: mount at /x \(type nfs\)' $RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/p7" p7
	ok "$who: no refused container left state behind" sh -c "test -z \"\$(ls '$W/root')\""
}
for_each_user oci_user

# A policy the operator keeps (CORDON_OCI_POLICY_DIR), chosen by the
# container's annotations: the grant decides, a pod never brings its own.
mkdir -p "$T/policies"
cat >"$T/policies/agents.yaml" <<'YAML'
version: 1
agents:
  - id: builder
    owner: ops@example.com
tools:
  - id: container
    kind: command
grants:
  - id: builder-echo
    agent: builder
    tool: container
    actions: [execute]
    scope:
      argv: [/bin/echo]
    owner: ops@example.com
    justification: the builder prints
    review_by: 2030-01-01
    expires: 2030-06-30
YAML
export CORDON_OCI_POLICY_DIR=$T/policies
P=$T/pol
mkdir -p "$P"
ann="c['annotations'] = {'cordon.policy': 'agents', 'cordon.agent': 'builder'}"
bundle "$P/g1" "c['process']['args'] = ['/bin/echo', 'granted']; $ann"
out=$(/usr/bin/python3 "$SHIM" "$OCI" "$P/root" "$P/g1" g1 2>&1)
is "$out" "state=created
granted
exit=0
after=stopped" "policy: the granted command runs"
ok "policy: its decision names the grant" sh -c "'$CORDON' log show --kind decision --json | grep -q '\"grant_ids\":\"builder-echo\"'"
bundle "$P/g2" "c['process']['args'] = ['/bin/sh', '-c', 'echo not granted']; $ann"
refused "policy: another command is denied at create, with the reason" "error=denied by policy: no grant for agent 'builder'" /usr/bin/python3 "$SHIM" "$OCI" "$P/root" "$P/g2" g2
bundle "$P/g3" "c['process']['args'] = ['/bin/echo', 'x']; c['annotations'] = {'cordon.policy': '../../tmp/own', 'cordon.agent': 'builder'}"
refused "policy: an annotation naming a path is refused" "error=annotation cordon.policy '../../tmp/own': a policy name" /usr/bin/python3 "$SHIM" "$OCI" "$P/root" "$P/g3" g3
bundle "$P/g4" "c['process']['args'] = ['/bin/echo', 'x']; c['annotations'] = {'cordon.policy': 'agents'}"
refused "policy: without an agent the container is refused" 'error=the policy .* decides per agent' /usr/bin/python3 "$SHIM" "$OCI" "$P/root" "$P/g4" g4

# Control: the probes see capabilities and raw sockets where they exist.
ok "control: outside, root's raw socket works (the probe can tell)" sh -c "'$H/esc-probe' raw | grep -qx raw=ok"

done_testing
