#!/bin/sh
# 4110-state-not-own.sh — "unsigned rows count only in the caller's own
# SQLite store" is decided by who owns the file, not by the backend's name
# (session 9's second review, B5): uid 65534 owned the state file root was
# pointed at (CORDON_STATE) and wrote an unsigned break-glass grant "by
# bob" (no key); root's gate honoured it.  Now a state database not owned
# by the caller alone (another owner, group/other-writable, a directory
# another user can change) counts as shared: only signed rows count (the
# same cd_state_own for grants, tool approvals and call approvals).
# Controls: the same unsigned grant counts in the caller's own 0600 file,
# for root and for uid 65534.
. "${CORDON_SRC:-.}/tests/lib.sh"

"$CORDON" approvals keygen --key "$T/alice.key" >"$T/alice.pub" 2>/dev/null
cat >"$T/p.yaml" <<YAML
version: 1
agents:
  - {id: coder, owner: alice}
tools:
  - {id: shell, kind: command}
profiles:
  ws: {workspace: write}
approvers:
  people: [alice, bob]
  keys:
    alice: "$(cat "$T/alice.pub")"
grants:
  - {id: ls, agent: coder, tool: shell, actions: [execute], scope: {argv: [ls]}, profile: ws, owner: alice, justification: tests, review_by: 2099-01-01, expires: 2099-01-01}
YAML
chmod 0644 "$T/p.yaml"
mkdir -p "$T/nb" "$T/ws" "$T/ws-nb" "$T/an"
chown 65534:65534 "$T/nb" "$T/ws-nb" "$T/an"
NB="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all env HOME=/nonexistent"
grant() { # STATE [RUNNER]: an unsigned grant by bob (no key) in STATE
	${2:-} env CORDON_STATE="$1" ${2:+CORDON_AUDIT=$T/an/audit.db} "$CORDON" grant break-glass \
		--agent coder --tool shell --actions execute --scope argv=rm --ticket X --ttl 10m \
		--by bob >"$T/gout" 2>&1 || { cat "$T/gout" >&2; return 1; }
}
tryrm() { # STATE [RUNNER]: rm victim under the grant
	w=$T/ws${2:+-nb}
	(cd "$w" && ${2:-} touch victim && ${2:-} env CORDON_STATE="$1" ${2:+CORDON_AUDIT=$T/an/audit.db} "$CORDON" run --policy "$T/p.yaml" \
		--agent coder -- rm victim >"$T/out" 2>&1)
	rc=$?
	[ "$rc" -eq 0 ] || [ "$rc" -eq 125 ] || sed 's/^/# /' "$T/out" >&2
	[ -e "$w/victim" ] && v=present || v=gone
	rm -f "$w/victim"
	echo "rc=$rc victim=$v"
}

# uid 65534's file, root the caller.
ok "uid 65534 writes an unsigned grant by bob into its state file" grant "$T/nb/state.db" "$NB"
is "$(stat -c %u "$T/nb/state.db")" 65534 "... the file is uid 65534's"
is "$(tryrm "$T/nb/state.db" "$NB")" "rc=0 victim=gone" "control: uid 65534's own file: its unsigned grant counts for uid 65534"
r=$(tryrm "$T/nb/state.db")
is "$r" "rc=125 victim=present" "root pointed at uid 65534's state file: the unsigned grant does not count"
ok "... and the warning says why (the file's owner)" grep -q "left out: .*unsigned.*(the state database: '$T/nb/state.db' is owned by uid 65534" "$T/out"

# root's own file: a control, then made group-writable, then in a directory uid 65534 owns.
mkdir -p "$T/own" && chmod 0700 "$T/own"
ok "root writes an unsigned grant by bob into its own state file" grant "$T/own/state.db"
is "$(tryrm "$T/own/state.db")" "rc=0 victim=gone" "control: root's own 0600 file: its unsigned grant counts"
chmod 0660 "$T/own/state.db"
is "$(tryrm "$T/own/state.db")" "rc=125 victim=present" "root's file made group-writable: the unsigned grant does not count"
chmod 0600 "$T/own/state.db"
chown 65534:65534 "$T/own"
chmod 0755 "$T/own"
is "$(tryrm "$T/own/state.db")" "rc=125 victim=present" "root's file in a directory uid 65534 owns: the unsigned grant does not count"
chown 0:0 "$T/own"
is "$(tryrm "$T/own/state.db")" "rc=0 victim=gone" "control: back in root's directory it counts again"
done_testing
