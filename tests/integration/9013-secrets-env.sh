#!/bin/sh
# THREATS row 13: read secrets — the caller's environment, ~/.ssh, cloud
# credentials, /etc/shadow.  The sandbox gets an empty environment plus
# PATH HOME TMPDIR LANG (and TERM); HOME is the scratch; the caller's home
# and the system's secrets are never mounted.
. "${CORDON_SRC:-.}/tests/lib.sh"

mkdir -p "$T/proj" "$T/home/.ssh" "$T/home/.aws" "$T/home/.config/gcloud"
echo "-----BEGIN OPENSSH PRIVATE KEY----- fake-key-$$" >"$T/home/.ssh/id_rsa"
printf '[default]\naws_secret_access_key = fake-aws-file-%s\n' $$ >"$T/home/.aws/credentials"
echo "fake-gcloud-$$" >"$T/home/.config/gcloud/application_default_credentials.json"
chmod -R a+rX "$T"

sec() {
	who=$1
	cd "$T/proj" || exit 1
	# The caller's environment is full of secrets; the home is the fake one.
	# shellcheck disable=SC2016
	inner='env; echo HOME-IS=$HOME
		ls -a "$HOME"; ls -a ~ 2>/dev/null
		cat "'"$T"'/home/.ssh/id_rsa" "'"$T"'/home/.aws/credentials" 2>/dev/null
		cat ~/.ssh/id_rsa ~/.aws/credentials /root/.ssh/id_rsa /etc/shadow /etc/gshadow 2>/dev/null
		cat /proc/1/environ 2>/dev/null
		grep -rl fake- /tmp /etc 2>/dev/null
		true'
	HOME="$T/home" FAKE_AWS_SECRET=fake-aws-env-$$ AWS_SECRET_ACCESS_KEY=fake-aws-env-$$ \
		GITHUB_TOKEN=fake-gh-$$ SSH_AUTH_SOCK=/tmp/fake-agent-$$ OPENAI_API_KEY=fake-openai-$$ \
		$RUN_AS env HOME="$T/home" "$CORDON" run -- sh -c "$inner" >"$T/out-$who" 2>&1
	is $? 0 "$who: the run itself worked"
	ok "$who: HOME inside is the scratch" grep -qx 'HOME-IS=/tmp' "$T/out-$who"
	lacks "$who: no secret value from the env or the fake home appears anywhere inside" "fake-.*-$$|fake-key-$$" "$T/out-$who" '^HOME-IS=/tmp$'
	for n in FAKE_AWS_SECRET AWS_SECRET_ACCESS_KEY GITHUB_TOKEN SSH_AUTH_SOCK OPENAI_API_KEY; do
		lacks "$who: $n is not in the environment" "^$n=" "$T/out-$who" '^HOME-IS='
	done
	lacks "$who: no .ssh or .aws in the sandbox's home" '^\.(ssh|aws)$' "$T/out-$who" '^HOME-IS='
	# Control: the same secrets are readable outside, by the same user.
	ok "$who: control: the fake key is readable outside" $RUN_AS cat "$T/home/.ssh/id_rsa"
	for p in "$T/home" /root /home /etc/shadow /etc/gshadow /etc/ssh /etc/sudoers /var/lib; do
		absent_in "$who: $p is absent inside" "$p" $RUN_AS "$CORDON" run --
	done
	# A name passed with --env is the only way a value gets in.
	is "$(FAKE_AWS_SECRET=x $RUN_AS "$CORDON" run --env FAKE_AWS_SECRET -- sh -c 'echo $FAKE_AWS_SECRET')" x \
		"$who: control: --env passes exactly the named variable"
	cd "$T" || exit 1
}

for_each_user sec
done_testing
