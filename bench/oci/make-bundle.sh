#!/bin/sh
# bench/oci/make-bundle.sh DIR [rootless] — write a minimal OCI bundle into DIR
# for `crun run --bundle DIR ID`: crun's own default spec (`crun spec`:
# pid/net/ipc/uts/mount namespaces, a capability set, masked paths, no new
# privileges) with the host's / as a read-only root and /bin/true as the
# process. No rootfs is copied: root.path is "/" and crun binds it.
# "rootless" adds a user namespace mapping the caller to root (`crun spec
# --rootless`), for runs as an unprivileged user.
set -eu
dir=$1
mode=${2:-}
mkdir -p "$dir"
cd "$dir"
rm -f config.json
if [ "$mode" = rootless ]; then crun spec --rootless; else crun spec; fi
python3 - <<'PY'
import json
c = json.load(open("config.json"))
c["root"] = {"path": "/", "readonly": True}
c["process"]["terminal"] = False
c["process"]["args"] = ["/bin/true"]
c["process"]["cwd"] = "/"
c["hostname"] = "bench"
# /sys and /sys/fs/cgroup are mounted by the default spec; cordon and bwrap
# (as benchmarked) mount neither, so drop them to compare like with like.
c["mounts"] = [m for m in c["mounts"] if not m["destination"].startswith("/sys")]
json.dump(c, open("config.json", "w"), indent=1)
PY
