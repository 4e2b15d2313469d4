#!/bin/sh
# 4103-store-pg-secrets.sh — a shared store's connection secrets stay out
# of the sandbox in every form libpq reads them (issue 19): the socket
# directory named percent-encoded in host=, as the URI's host part, in a
# comma list of hosts; the password file of passfile=, the client key of
# sslkey=, the service file of PGSERVICEFILE.  Each probe binds the
# secret's directory read-only and looks; the control: the same probe with
# the local (SQLite) state sees the file.  Root and uid 65534.
: "${CORDON_TEST_TIMEOUT:=180}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/pg-start.sh"

pg_start || { done_testing; exit; }
ok "the owner's first connection makes the schema" env PGPASSWORD="$PG_ADMIN_PW" \
	"$CORDON" log verify --audit "postgresql://cordon_admin@/cordon?host=$PG_SOCK"
pg_sql "$(cat "$CORDON_SRC/docs/postgresql-roles.sql")
CREATE ROLE host_a LOGIN PASSWORD 'pw-a' IN ROLE cordon_writer;" ||
	nok "the roles of docs/postgresql-roles.sql are made" false
ENC=$(printf '%s' "$PG_SOCK" | sed 's|/|%2F|g')
D=$T/secrets
mkdir -p "$D/pass" "$D/key" "$D/svc" && chmod 0755 "$D" "$D/pass" "$D/key" "$D/svc"
printf '*:*:*:host_a:pw-a\n' >"$D/pass/pgpass"
printf 'SECRET-CLIENT-KEY\n' >"$D/key/clientkey"
printf '[cordon]\nuser=host_a\npassword=pw-a\n' >"$D/svc/pg_service.conf"
chmod 0644 "$D/pass/pgpass" "$D/key/clientkey" "$D/svc/pg_service.conf"

secrets() {
	who=$1
	W="$T/w-$who"
	mkdir -p "$W" && chmod 0777 "$W" && cd "$W" || exit 1
	# probe URI [ENV...] -- what a sandbox sees of the socket directory
	# and the three files.
	probe() {
		_uri=$1
		shift
		$RUN_AS env PGPASSWORD=pw-a CORDON_STATE="$_uri" "$@" "$CORDON" run --ro "$PG_DIR" --ro "$D" -- \
			sh -c 'echo ran; ls -A "$0"; cat "$1/pass/pgpass" "$1/key/clientkey" "$1/svc/pg_service.conf"' \
			"$PG_SOCK" "$D" 2>&1
	}
	out=$(probe "$T/local-$who.db")
	case $out in ran*.s.PGSQL*pw-a*SECRET-CLIENT-KEY*password=pw-a*) ok "$who: control: with a local state the probe sees all four" true ;;
	*) nok "$who: control: with a local state the probe sees all four ($out)" true ;; esac
	for form in "postgresql:///cordon?host=$ENC" "postgresql://host_a@$ENC/cordon" \
		"postgresql:///cordon?host=/nonexistent-dir,$ENC"; do
		out=$(probe "$form&user=host_a" 2>&1)
		[ "${form#*\?}" = "$form" ] && out=$(probe "$form" 2>&1)
		case $out in ran*) ;; *) nok "$who: the probe ran with $form ($out)" true; continue ;; esac
		case $out in *.s.PGSQL*) nok "$who: $form: the socket directory is hidden ($out)" true ;;
		*) ok "$who: $form: the socket directory is hidden" true ;; esac
	done
	out=$(probe "postgresql://host_a@/cordon?host=$PG_SOCK&passfile=$D/pass/pgpass&sslkey=$D/key/clientkey&sslmode=disable" \
		PGSERVICEFILE="$D/svc/pg_service.conf")
	case $out in ran*) ok "$who: the probe ran with passfile=, sslkey=, PGSERVICEFILE" true ;;
	*) nok "$who: the probe ran with passfile=, sslkey=, PGSERVICEFILE ($out)" true ;; esac
	case $out in *pw-a*) nok "$who: passfile= and the service file are hidden ($out)" true ;;
	*) ok "$who: passfile= and the service file are hidden" true ;; esac
	case $out in *SECRET-CLIENT-KEY*) nok "$who: sslkey= is hidden ($out)" true ;;
	*) ok "$who: sslkey= is hidden" true ;; esac
}
for_each_user secrets
done_testing
