#!/bin/sh
# Issue 16 (session 10's outside review, F3): credential files a working
# tree commonly holds are masked in the working directory (default
# profile), as the other credentials are:
# - by content: a .json with a "refresh_token" or "client_secret" value
#   (google-auth's token.json, which has no "type"; an OAuth client's
#   credentials.json), a private key block in a .crt, .cer or .asc (PEM,
#   OpenSSH, PGP);
# - by name: AuthKey_*.p8, *.keystore, *.ppk, kubeconfig, *.tfvars.
# Controls, shown whole: package-lock.json, an ordinary .json, a .json
# whose client_secret is empty (a template), a certificate in a .crt and
# a public key in an .asc.  As root and as nobody; each run twice (the
# second replays the scan cache).
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

SECRET=s3cr3t-$$
mktree() {
	p=$1
	mkdir -p "$p"
	printf '{"token": "ya29.x", "refresh_token": "1//%s", "client_id": "a", "client_secret": "b"}\n' \
		"$SECRET" >"$p/token.json"
	printf '{"installed": {"client_id": "a", "client_secret":\n  "GOCSPX-%s"}}\n' "$SECRET" \
		>"$p/credentials.json"
	printf -- '-----BEGIN PRIVATE KEY-----\n%s\n-----END PRIVATE KEY-----\n' "$SECRET" \
		>"$p/AuthKey_ABC123.p8"
	printf -- '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n-----BEGIN EC PRIVATE KEY-----\n%s\n-----END EC PRIVATE KEY-----\n' \
		"$SECRET" >"$p/server.crt"
	printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n-----END OPENSSH PRIVATE KEY-----\n' \
		"$SECRET" >"$p/deploy.cer"
	printf -- '-----BEGIN PGP PRIVATE KEY BLOCK-----\n%s\n-----END PGP PRIVATE KEY BLOCK-----\n' \
		"$SECRET" >"$p/signing.asc"
	echo "keystore $SECRET" >"$p/release.keystore"
	echo "PuTTY-User-Key-File-3: ssh-ed25519 $SECRET" >"$p/id.ppk"
	echo "users: [{user: {token: $SECRET}}]" >"$p/kubeconfig"
	echo "db_password = \"$SECRET\"" >"$p/prod.tfvars"
	# controls
	printf '{"name": "x", "lockfileVersion": 3, "packages": {"": {"integrity": "sha512-ok"}}}\n' \
		>"$p/package-lock.json"
	echo '{"editor.tabSize": 4, "token_url": "https://x/token"}' >"$p/settings.json"
	echo '{"client_id": "", "client_secret": ""}' >"$p/oauth.template.json"
	printf -- '-----BEGIN CERTIFICATE-----\nMIIBpublic\n-----END CERTIFICATE-----\n' >"$p/ca.crt"
	printf -- '-----BEGIN PGP PUBLIC KEY BLOCK-----\nmQINpublic\n-----END PGP PUBLIC KEY BLOCK-----\n' \
		>"$p/pub.asc"
}

SECRETS="token.json credentials.json AuthKey_ABC123.p8 server.crt deploy.cer signing.asc release.keystore id.ppk kubeconfig prod.tfvars"
CONTROLS="package-lock.json settings.json oauth.template.json ca.crt pub.asc"

for_each_user masked_in_run

done_testing
