#!/bin/sh
# Two runs, no race (session 8's attacker, F2): a credential known by
# its path (.kube/config, .ssh/KEY, .config/gh/hosts.yml, .config/gcloud/,
# .docker/config.json, .cargo/credentials.toml) or by its content (a
# service-account .json, skipped under node_modules/) is covered, and the
# cover cannot be renamed, but a directory above it could: run 1 renamed
# .kube to k, moved the key's directory into node_modules/, and run 2 read
# every secret.  Now, in a tree the sandbox can write, every directory
# between the tree's top and a covered credential is bound over itself:
# a rename or removal of one fails (EBUSY), so the credential keeps a
# path the next walk covers.  A hard link of a covered file fails too
# (the cover is another filesystem: EXDEV).  Controls: the secrets are on
# the host; a directory holding no credential is renamed freely; run 1
# ran.  workspace-write and --rw; as root and as nobody.
. "${CORDON_SRC:-.}/tests/lib.sh"

READ='cat ops/.kube/config ops/.ssh/deploy_key ops/.config/gh/hosts.yml ops/.config/gcloud/credentials.db ops/.docker/config.json ops/.cargo/credentials.toml ops/gcp/sa.json ops/k/config ops/s/deploy_key ops/c/gh/hosts.yml ops/c/gcloud/credentials.db ops/d/config.json ops/g/credentials.toml node_modules/gcp/sa.json node_modules/ops/.kube/config node_modules/ops/gcp/sa.json kl 2>/dev/null; echo read-ran'

MOVE='cd ops && mv plain plain2 && echo renamed-plain
for p in .kube:k .ssh:s .config:c .docker:d .cargo:g; do mv "${p%%:*}" "${p#*:}" 2>&1; done
mkdir -p ../node_modules && mv gcp ../node_modules/ 2>&1
cd .. && mv ops node_modules/ 2>&1
ln ops/.kube/config kl 2>&1
echo move-ran'

setup() {
	d=$1
	o=$d/ws/ops
	mkdir -p "$o/.kube" "$o/.ssh" "$o/.config/gh" "$o/.config/gcloud" "$o/.docker" "$o/.cargo" \
		"$o/gcp" "$o/plain" "$d/cwd"
	echo KUBE-SECRET-F2 >"$o/.kube/config"
	echo SSH-SECRET-F2 >"$o/.ssh/deploy_key"
	echo GH-SECRET-F2 >"$o/.config/gh/hosts.yml"
	echo GCLOUD-SECRET-F2 >"$o/.config/gcloud/credentials.db"
	echo DOCKER-SECRET-F2 >"$o/.docker/config.json"
	echo CARGO-SECRET-F2 >"$o/.cargo/credentials.toml"
	printf '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\nSA-SECRET-F2\\n-----END PRIVATE KEY-----\\n", "client_email": "x@y.iam.gserviceaccount.com"}\n' \
		>"$o/gcp/sa.json"
	echo notes >"$o/plain/notes"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
}

# run in mode $1 the script $2, output in $T/out
run() {
	case $1 in
	ww) (cd "$d/ws" && $RUN_AS "$CORDON" run --profile workspace-write -- sh -c "$2") ;;
	rw) (cd "$d/cwd" && $RUN_AS "$CORDON" run --rw "$d/ws" -- sh -c "cd '$d/ws' && $2") ;;
	esac >"$T/out" 2>&1
}

two_runs() {
	who=$1
	for mode in ww rw; do
		d=$T/$mode-$who
		setup "$d"
		run $mode "$READ"
		is "$?:$(grep -c SECRET-F2 "$T/out"):$(grep -c read-ran "$T/out")" "0:0:1" \
			"$who/$mode: control: before, a run reads no secret"
		run $mode "$MOVE"
		sed 's/^/#   run 1: /' "$T/out" | head -12
		ok "$who/$mode: control: run 1 ran and renamed a directory without a credential" \
			grep -q renamed-plain "$T/out"
		is "$(grep -c 'Device or resource busy' "$T/out")" 6 \
			"$who/$mode: run 1: the five credential directories and ops could not be renamed (EBUSY)"
		ok "$who/$mode: run 1: the key's directory did not move into node_modules" \
			test -f "$d/ws/ops/gcp/sa.json" -a ! -e "$d/ws/node_modules/gcp/sa.json"
		ok "$who/$mode: run 1: no hard link of a covered file" grep -q "cross-device" "$T/out"
		run $mode "$READ"
		is "$(grep -c SECRET-F2 "$T/out"):$(grep -c read-ran "$T/out")" "0:1" \
			"$who/$mode: run 2 reads no secret"
		ok "$who/$mode: the secrets are still on the host, where they were" \
			grep -q SECRET-F2 "$d/ws/ops/.kube/config" "$d/ws/ops/.ssh/deploy_key" \
			"$d/ws/ops/.config/gh/hosts.yml" "$d/ws/ops/.config/gcloud/credentials.db" \
			"$d/ws/ops/.docker/config.json" "$d/ws/ops/.cargo/credentials.toml" "$d/ws/ops/gcp/sa.json"
	done
}

for_each_user two_runs
done_testing
