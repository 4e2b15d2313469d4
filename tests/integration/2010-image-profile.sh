#!/bin/sh
# A profile names the root (issue 20): `image:` in a profile file and in a
# policy's profile runs the command on that image; `rootfs:` likewise;
# the two exclude each other, as do --image and --rootfs; a policy's path
# must be canonical; under --policy the grant's root stands (--image and
# --rootfs refused).  As root and as nobody.
: "${CORDON_TEST_TIMEOUT:=240}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
MK="python3 $CORDON_SRC/tests/helpers/mkimage.py"

R=$T/rootfs
mkdir -p "$R/bin" "$R/usr/local/bin" "$T/w"
cp /bin/busybox "$R/bin/busybox"
for c in sh cat echo; do ln -s busybox "$R/bin/$c"; done
printf '#!/bin/sh\necho image-tool\n' >"$R/usr/local/bin/only-in-image"
chmod 0755 "$R/usr/local/bin/only-in-image"
$MK layer "$T/l.tar" "tree:$R"
D=$($MK docker "$T/img.tar" "$T/l.tar")
printf 'image: %s\n' "$T/img.tar" >"$T/img.yaml"
printf 'rootfs: %s\n' "$R" >"$T/rootfs.yaml"
printf 'image: %s\nrootfs: %s\n' "$T/img.tar" "$R" >"$T/both.yaml"
printf 'image: img.tar\n' >"$T/rel.yaml"
cat >"$T/policy.yaml" <<YAML
version: 1
agents:
  - id: builder
    owner: ops
tools:
  - id: shell
    kind: command
profiles:
  boxed: {image: $T/img.tar, timeout: 30s}
grants:
  - id: boxed-tool
    agent: builder
    tool: shell
    actions: [execute]
    scope: {argv: [only-in-image]}
    profile: boxed
    owner: ops
    justification: t
    review_by: 2030-01-01
    expires: 2030-06-30
YAML
sed "s|image: $T/img.tar|image: $T/../$(basename "$T")/img.tar|" "$T/policy.yaml" >"$T/bad-policy.yaml"
chmod -R a+rX "$T"

profile_user() {
	who=$1
	run() { (cd "$T/w" && $RUN_AS "$CORDON" run "$@"); }
	out=$(run --profile "$T/img.yaml" -- only-in-image 2>&1)
	is "$out" image-tool "$who: a profile file's image: runs the command on the image"
	is "$($RUN_AS "$CORDON" log show --json --kind run.intent | tail -n 1 | jq -r .details.image.digest)" "$D" "$who: ... and the record names its digest"
	out=$(run --profile "$T/rootfs.yaml" -- only-in-image 2>&1)
	is "$out" image-tool "$who: a profile file's rootfs: runs it on the directory"
	refused "$who: control: without a root the tool is not there" 'not found|No such file' run -- only-in-image
	out=$(run --profile "$T/img.yaml" --rootfs / -- true 2>&1)
	case $out in *"root '/' is the host's own root"*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$who: the command line's --rootfs replaces the profile's image (and / is refused)"
	refused "$who: a profile with image and rootfs is refused" "profile settings image and rootfs exclude each other" run --profile "$T/both.yaml" -- true
	refused "$who: a relative image path is refused" "profile setting image: 'img.tar' is not an absolute path" run --profile "$T/rel.yaml" -- true
	refused "$who: --image and --rootfs together are refused" "--image and --rootfs exclude each other" run --image "$T/img.tar" --rootfs "$R" -- true
	out=$(run --policy "$T/policy.yaml" --agent builder -- only-in-image 2>&1)
	is "$out" image-tool "$who: a policy profile's image: runs the granted command on the image"
	refused "$who: under --policy the grant's root stands" "with --policy the grant's profile names the root" run --policy "$T/policy.yaml" --agent builder --rootfs "$R" -- only-in-image
}
for_each_user profile_user
refused "a policy's image path must be canonical" "image '[^']*/\.\./[^']*' is not canonical" "$CORDON" policy lint "$T/bad-policy.yaml"
done_testing
