#!/bin/sh
# cordon log: every subcommand has --help; bad input gives exit 2 (usage)
# or 1 with a one-line reason; keygen makes a 0600 secret key.
. "${CORDON_SRC:-.}/tests/lib.sh"

export HOME="$T/home" XDG_CONFIG_HOME="$T/cfg" CORDON_AUDIT="$T/state/audit.db"
unset XDG_STATE_HOME CORDON_AUDIT_KEY CORDON_AUDIT_CHECKPOINTS
mkdir -p "$HOME"

ok "log --help" "$CORDON" log --help
for sub in show tail export verify checkpoint keygen; do
	ok "log $sub --help" "$CORDON" log "$sub" --help
done
"$CORDON" log >/dev/null 2>&1
is "$?" 2 "no subcommand: exit 2"
"$CORDON" log frobnicate >/dev/null 2>&1
is "$?" 2 "unknown subcommand: exit 2"
"$CORDON" log show --bogus >/dev/null 2>&1
is "$?" 2 "unknown option: exit 2"
"$CORDON" log show --since yesterday-ish >/dev/null 2>&1
is "$?" 2 "bad time: exit 2"
"$CORDON" log verify --format jsonl >/dev/null 2>&1
is "$?" 2 "an option of another subcommand: exit 2"
"$CORDON" log export --format csv >/dev/null 2>&1
is "$?" 2 "unknown export format: exit 2"
"$CORDON" log show extra-arg >/dev/null 2>&1
is "$?" 2 "stray argument: exit 2"

"$CORDON" log show >/dev/null 2>"$T/err"
is "$?" 1 "show on a missing log: exit 1"
is "$(wc -l <"$T/err")" 1 "with a one-line reason"
ok "and it created nothing" test ! -e "$CORDON_AUDIT"

ok "keygen" "$CORDON" log keygen
is "$(stat -c %a "$XDG_CONFIG_HOME/cordon/audit.key")" 600 "secret key is 0600"
is "$(stat -c %a "$XDG_CONFIG_HOME/cordon")" 700 "key directory is 0700"
ok "public key exists" test -s "$XDG_CONFIG_HOME/cordon/audit.pub"
"$CORDON" log keygen >/dev/null 2>&1
is "$?" 1 "keygen refuses to overwrite a key"

ok "checkpoint creates the log" "$CORDON" log checkpoint
is "$(stat -c %a "$T/state")" 700 "log directory is 0700"
is "$(stat -c %a "$CORDON_AUDIT")" 600 "log database is 0600"
ok "checkpoint file written" test -s "$CORDON_AUDIT.checkpoints"
ok "verify an (almost) empty log" "$CORDON" log verify
is "$("$CORDON" log export --format jsonl | wc -l)" 1 "one record (the checkpoint)"
"$CORDON" log verify --pubkey "$T/nope" >/dev/null 2>&1
is "$?" 1 "verify with a missing public key: exit 1"

chmod 0644 "$XDG_CONFIG_HOME/cordon/audit.key"
if [ "$(id -u)" -eq 0 ] || [ -r "$XDG_CONFIG_HOME/cordon/audit.key" ]; then
	"$CORDON" log checkpoint >/dev/null 2>"$T/err"
	is "$?" 1 "a group/world-readable secret key is refused"
	ok "saying why" grep -q 'chmod 600' "$T/err"
fi
done_testing
