#!/bin/sh
# bench/oci-containerd.sh BUILD_DIR — container start-to-exit of /bin/true
# through containerd (`ctr run --rm`, io.containerd.runc.v2) with cordon-oci,
# runc and crun as the runtime binary, interleaved round by round (ROUNDS=15).
# A private containerd (root, state and socket in a temp dir) and an image of
# busybox-static alone, as in tests/integration/2000-oci-containerd.sh.
# Root only.  Prints each runtime's median, min and max in ms; a runtime that
# fails here (crun refuses cgroup v1 hybrid hosts) is reported as failing.
set -u
B=${1:?usage: oci-containerd.sh BUILD_DIR}
ROUNDS=${ROUNDS:-15}
[ "$(id -u)" -eq 0 ] || { echo "oci-containerd: root only (containerd)"; exit 0; }
D=$(mktemp -d /tmp/cordon-bench-oci.XXXXXX)
NS=bench$$
cat >"$D/config.toml" <<EOC
version = 2
root = "$D/root"
state = "$D/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$D/sock"
[ttrpc]
  address = "$D/sock.ttrpc"
EOC
CORDON_AUDIT=$D/audit.db CORDON_STATE=$D/state.db containerd --config "$D/config.toml" >"$D/log" 2>&1 &
pid=$!
trap 'kill $pid; wait $pid 2>/dev/null; grep -o " $D/[^ ]*" /proc/self/mounts | sort -r | while read -r m; do umount -l "$m"; done; rm -rf "$D" "/run/containerd/runc/$NS"' EXIT
i=0
while ! ctr -a "$D/sock" version >/dev/null 2>&1 && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
mkdir -p "$D/img/rootfs/bin"
cp /bin/busybox "$D/img/rootfs/bin/"
ln -s busybox "$D/img/rootfs/bin/true"
(cd "$D/img/rootfs" && tar --owner=0 --group=0 -cf ../layer.tar .)
L=$(sha256sum "$D/img/layer.tar" | cut -d' ' -f1)
printf '{"architecture":"amd64","os":"linux","config":{"Cmd":["/bin/true"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' "$L" >"$D/img/c.json"
printf '[{"Config":"c.json","RepoTags":["bench:1"],"Layers":["layer.tar"]}]' >"$D/img/manifest.json"
(cd "$D/img" && tar -cf ../img.tar manifest.json c.json layer.tar)
ctr -a "$D/sock" -n $NS images import "$D/img.tar" >/dev/null
python3 - "$D" "$NS" "$ROUNDS" "$(readlink -f "$B/cordon-oci" 2>/dev/null || echo "$B/cordon")" <<'PY'
import os, shutil, statistics, subprocess, sys, time
d, ns, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
# cordon-oci must be called by its name: the link, not its target.
rts = {"cordon-oci": os.path.join(os.path.dirname(sys.argv[4]), "cordon-oci")}
for name in ("runc", "crun"):
    p = shutil.which(name)
    if p:
        rts[name] = p
res = {k: [] for k in rts}
fail = {}
n = 0
for r in range(rounds):
    for k, p in rts.items():
        n += 1
        t = time.monotonic()
        c = subprocess.run(["ctr", "-a", d + "/sock", "-n", ns, "run", "--rm", "--runtime",
                            "io.containerd.runc.v2", "--runc-binary", p, "docker.io/library/bench:1",
                            "b%d" % n, "/bin/true"], capture_output=True, text=True)
        ms = (time.monotonic() - t) * 1000
        if c.returncode == 0:
            res[k].append(ms)
        else:
            fail[k] = c.stderr.strip().splitlines()[-1][:160] if c.stderr else "failed"
for k in rts:
    v = res[k]
    if v:
        print("%-11s n=%-3d median %6.0f ms  min %6.0f  max %6.0f" % (k, len(v), statistics.median(v), min(v), max(v)))
    else:
        print("%-11s failed: %s" % (k, fail.get(k, "?")))
print("load average: %s" % open("/proc/loadavg").read().split()[0])
PY
