#!/bin/sh
# THREATS row 43: an unwritable log refuses the append (no log, no run):
# a read-only log directory, a read-only database, a locked database.
# Rootless: run as nobody when root (root ignores permission bits).
. "${CORDON_SRC:-.}/tests/lib.sh"

APPEND="$CORDON_BUILD/tests/tools/audit-append"
if [ "$(id -u)" -eq 0 ]; then
	AS=as_nobody
	D="$T/nobody"
	mkdir -p "$D"
	chown 65534:65534 "$D"
else
	AS=""
	D="$T/me"
	mkdir -p "$D"
fi
export HOME="$D" XDG_CONFIG_HOME="$D/cfg"
unset XDG_STATE_HOME CORDON_AUDIT CORDON_AUDIT_KEY CORDON_AUDIT_CHECKPOINTS

# A read-only directory, no log yet.
$AS mkdir "$D/ro"
chmod 0555 "$D/ro"
$AS "$APPEND" --db "$D/ro/audit.db" -n 1 >/dev/null 2>"$D/err"
is "$?" 1 "append into a read-only directory fails"
ok "with a reason" grep -q 'audit' "$D/err"
ok "and nothing was created" test ! -e "$D/ro/audit.db"

# An existing log whose directory became read-only.
$AS mkdir "$D/log"
$AS "$APPEND" --db "$D/log/audit.db" -n 3 >/dev/null
chmod 0444 "$D/log/audit.db"
$AS "$APPEND" --db "$D/log/audit.db" -n 1 >/dev/null 2>"$D/err"
is "$?" 1 "append to a read-only database fails"
chmod 0644 "$D/log/audit.db"
chmod 0555 "$D/log"
$AS "$CORDON" log checkpoint --audit "$D/log/audit.db" --key "$D/none" >/dev/null 2>&1
is "$?" 1 "checkpoint with a missing key fails"
chmod 0755 "$D/log"

# Locked by another process for longer than the busy timeout; the locker
# lets go when told (the file unlock), or after 15 s.
printf 'BEGIN IMMEDIATE;\nINSERT INTO meta VALUES("lock", "x");\n.shell touch %s\n.shell i=0; while [ ! -e %s ] && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done\n' \
	"$D/locked" "$D/unlock" | $AS sqlite3 "$D/log/audit.db" >/dev/null 2>&1 &
locker=$!
i=0
while [ ! -e "$D/locked" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
$AS "$APPEND" --db "$D/log/audit.db" -n 1 >/dev/null 2>"$D/err"
is "$?" 1 "append to a locked log fails (after the busy timeout)"
ok "saying it is locked" grep -qi 'lock' "$D/err"
touch "$D/unlock"
wait "$locker" 2>/dev/null
ok "unlocked, the log verifies" $AS "$CORDON" log verify --audit "$D/log/audit.db"

# Garbage in place of the database.
head -c 4096 /dev/urandom >"$D/garbage.db"
chmod 0666 "$D/garbage.db"
$AS "$APPEND" --db "$D/garbage.db" -n 1 >/dev/null 2>&1
is "$?" 1 "append to a corrupt file fails"
$AS "$CORDON" log verify --audit "$D/garbage.db" >/dev/null 2>&1
is "$?" 1 "verify of a corrupt file fails"
done_testing
