#!/bin/sh
# Issue 16 (session 10's review, H8): credential names are matched in
# any case and in more forms, in the working directory (default profile):
# - a suffix in upper or mixed case: a.PPK, b.Keystore, AuthKey_X.P8,
#   id.KEY, and a .CRT / .PEM holding a private key, TOKEN.JSON holding a
#   refresh_token (read as a .crt, .pem and .json are);
# - terraform.tfvars.json; kubeconfig anywhere in the name
#   (kubeconfig.yaml, my-kubeconfig, Prod.KubeConfig);
# - a token.json below a nested node_modules (x/node_modules/y/).
# Controls, shown whole: package-lock.json and package.json in
# node_modules, an ordinary .json there (tsconfig.json), a certificate
# in a .CRT, an ordinary .yaml, and source code about kubeconfigs
# (kubeconfig.go).  As root and as nobody; each run twice (the second
# replays the scan cache).
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

SECRET=s3cr3t-$$
KEY="-----BEGIN PRIVATE KEY-----
$SECRET
-----END PRIVATE KEY-----"
mktree() {
	p=$1
	mkdir -p "$p/x/node_modules/y" "$p/pkg"
	echo "PuTTY-User-Key-File-3: ssh-ed25519 $SECRET" >"$p/a.PPK"
	echo "keystore $SECRET" >"$p/b.Keystore"
	echo "$KEY" >"$p/AuthKey_X.P8"
	echo "$KEY" >"$p/id.KEY"
	printf -- '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n%s\n' "$KEY" \
		>"$p/c.CRT"
	echo "$KEY" >"$p/d.PEM"
	printf '{"refresh_token": "1//%s"}\n' "$SECRET" >"$p/TOKEN.JSON"
	printf '{"variable": {"db_password": {"default": "%s"}}}\n' "$SECRET" \
		>"$p/terraform.tfvars.json"
	echo "users: [{user: {token: $SECRET}}]" >"$p/kubeconfig.yaml"
	cp "$p/kubeconfig.yaml" "$p/my-kubeconfig"
	cp "$p/kubeconfig.yaml" "$p/Prod.KubeConfig"
	printf '{"refresh_token": "1//%s"}\n' "$SECRET" >"$p/x/node_modules/y/token.json"
	# controls
	printf '{"name": "x", "lockfileVersion": 3, "packages": {"": {"integrity": "sha512-ok"}}}\n' \
		>"$p/x/node_modules/y/package-lock.json"
	echo '{"name": "y", "version": "1.0.0"}' >"$p/x/node_modules/y/package.json"
	echo '{"compilerOptions": {"strict": true}}' >"$p/x/node_modules/y/tsconfig.json"
	printf -- '-----BEGIN CERTIFICATE-----\nMIIBpublic\n-----END CERTIFICATE-----\n' >"$p/ca.CRT"
	echo 'services: {web: {image: nginx}}' >"$p/compose.yaml"
	echo 'package kubeconfig // loads a kubeconfig' >"$p/pkg/kubeconfig.go"
}

SECRETS="a.PPK b.Keystore AuthKey_X.P8 id.KEY c.CRT d.PEM TOKEN.JSON terraform.tfvars.json kubeconfig.yaml my-kubeconfig Prod.KubeConfig x/node_modules/y/token.json"
CONTROLS="x/node_modules/y/package-lock.json x/node_modules/y/package.json x/node_modules/y/tsconfig.json ca.CRT compose.yaml pkg/kubeconfig.go"

for_each_user masked_in_run

done_testing
