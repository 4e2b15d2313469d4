# oci-bundle.sh — the bundles of the cordon-oci tests (2001, 2003, 2004,
# 2005), sourced after tests/lib.sh:
#   oci_bundle DIR ROOT PATH PATCH  DIR/config.json: $SPEC (containerd's
#                   default spec) with no cgroupsPath (one cgroup a
#                   container, not the corpus's shared one), root.path ROOT
#                   read-only, the environment PATH=PATH, then the python
#                   statements in PATCH (c is the spec); DIR readable by
#                   all, and owned by uid 65534 when RUN_AS is set
oci_bundle() {
	mkdir -p "$1"
	python3 -c "
import json
c = json.load(open('$SPEC'))
c['linux'].pop('cgroupsPath', None)
c['root'] = {'path': '$2', 'readonly': True}
c['process']['env'] = ['PATH=$3']
$4
json.dump(c, open('$1/config.json', 'w'))"
	chmod -R a+rX "$1"
	[ "$RUN_AS" = "" ] || chown -R 65534:65534 "$1"
}
