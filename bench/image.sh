#!/bin/sh
# bench/image.sh BUILD_DIR — `cordon run -- /bin/true` on the host root,
# with `--rootfs DIR` (an unpacked busybox-static image) and with
# `--image FILE` (the same image as a docker-archive, its cache entry
# made beforehand: every run checks the entry's stamp and tree), taking
# turns round by round (ROUNDS=30).  Also the first, unpacking run of the
# archive and of an OCI layout with a gzip layer.  Prints median, min and
# max wall ms.  As the caller (root or not).
set -u
B=${1:?usage: image.sh BUILD_DIR}
ROUNDS=${ROUNDS:-30}
C=$(cd "$B" && pwd)/cordon
SRC=$(cd "$(dirname "$0")/.." && pwd)
D=$(mktemp -d /tmp/cordon-bench-image.XXXXXX)
trap 'rm -rf "$D"' EXIT
export CORDON_AUDIT=$D/audit.db CORDON_STATE=$D/state.db
mkdir -p "$D/rootfs/bin" "$D/w"
cp /bin/busybox "$D/rootfs/bin/"
ln -s busybox "$D/rootfs/bin/true"
MK="python3 $SRC/tests/helpers/mkimage.py"
$MK layer "$D/l.tar" "tree:$D/rootfs"
$MK docker "$D/img.tar" "$D/l.tar" >/dev/null
$MK oci "$D/oci" --gzip "$D/l.tar" >/dev/null
cd "$D/w" || exit 1
python3 - "$C" "$D" "$ROUNDS" <<'PY'
import os, shutil, statistics, subprocess, sys, time
c, d, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
def run(args):
    t = time.monotonic()
    r = subprocess.run([c, "run"] + args + ["--", "/bin/true"], capture_output=True)
    ms = (time.monotonic() - t) * 1000
    if r.returncode != 0:
        sys.exit("bench/image.sh: %s failed: %s" % (args, r.stderr.decode()))
    return ms
first = {"--image docker-archive (unpacks)": run(["--image", d + "/img.tar"]),
         "--image OCI layout, gzip (unpacks)": run(["--image", d + "/oci"])}
kinds = {"host root": [], "--rootfs DIR": ["--rootfs", d + "/rootfs"],
         "--image FILE (cached)": ["--image", d + "/img.tar"],
         "--image DIR (cached, OCI layout)": ["--image", d + "/oci"]}
res = {k: [] for k in kinds}
for _ in range(rounds):
    for k, a in kinds.items():
        res[k].append(run(a))
print("| run of /bin/true | median | min | max |")
print("|---|---:|---:|---:|")
for k, v in res.items():
    print("| %s | %.1f ms | %.1f ms | %.1f ms |" % (k, statistics.median(v), min(v), max(v)))
for k, v in first.items():
    print("| %s, once | %.1f ms | | |" % (k, v))
PY
