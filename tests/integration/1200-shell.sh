#!/bin/sh
# cordon shell, driven by tmux like a person at a terminal: commands run and
# print, the window is resized, the exit status comes back, the terminal is
# restored; the pty is the sandbox's own (its own devpts, never the host's
# terminal) and TIOCSTI from inside reaches nothing outside (THREATS row 1);
# the session is recorded and replays with control characters escaped.
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers

if ! command -v tmux >/dev/null 2>&1; then
	skip "tmux is not installed (scripts/deps.sh test)"
	done_testing
	exit 0
fi

# The pane's text, joined lines.
pane() { tmux -S "$sock" capture-pane -p -J -t s 2>/dev/null; }

# Wait (up to 15 s) until the pane shows a line matching the regex $1.
wait_for() {
	_w=0
	while [ $_w -lt 150 ]; do
		pane | grep -qE -- "$1" && return 0
		sleep 0.1
		_w=$((_w + 1))
	done
	diag "pane, waiting for '$1':"
	pane | sed 's/^/#   /' | tail -15
	return 1
}

# Wait (up to 15 s) until file $1 exists.
wait_file() {
	_w=0
	while [ ! -s "$1" ] && [ $_w -lt 150 ]; do
		sleep 0.1
		_w=$((_w + 1))
	done
	test -s "$1"
}

# Wait (up to 8 s) until file $1 has a line matching $2.
wait_for_file_line() {
	_w=0
	while ! grep -qE -- "$2" "$1" 2>/dev/null && [ $_w -lt 80 ]; do
		sleep 0.1
		_w=$((_w + 1))
	done
}

keys() { tmux -S "$sock" send-keys -t s -l -- "$1" && tmux -S "$sock" send-keys -t s Enter; }

shell_session() {
	who=$1
	sock=$T/tmux-$who.sock
	if [ -n "$RUN_AS" ]; then
		as="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all"
		audit=$S/.state-nobody/audit.db
	else
		as=""
		audit=$CORDON_AUDIT
	fi
	# What runs in the pane: cordon shell, then the terminal's settings
	# and the exit status, written by the pane's own shell afterwards.
	cat >"$T/pane-$who.sh" <<EOF
stty -g >"$T/stty-before-$who"
CORDON_AUDIT=$audit HOME=/nonexistent $as "$CORDON" shell --ro "$H" --json-fd 3 -- /bin/sh -i 3>"$T/rec-$who.json"
echo \$? >"$T/rc-$who"
stty -g >"$T/stty-after-$who"
timeout --foreground 10 cat >"$T/typed-$who"
sleep 30
EOF
	tmux -S "$sock" -f /dev/null new-session -d -s s -x 100 -y 30 "sh $T/pane-$who.sh"
	ok "$who: the shell prompts" wait_for '^\$ $'

	keys 'echo hel""lo-$((6*7))'
	ok "$who: a command runs and prints" wait_for '^hello-42$'

	keys 'id -u; ls /dev/pts | tr "\n" " "; echo; readlink /proc/self/fd/0'
	ok "$who: unprivileged inside" wait_for '^1000$'
	ok "$who: the sandbox's own devpts holds one pty (not the host's)" wait_for '^0 ptmx $'
	ok "$who: stdin is that pty" wait_for '^/dev/pts/0$'
	keys "test -e '$audit' && echo audit=visible || echo audit=hidden"
	ok "$who: cordon's audit log is not visible inside" wait_for '^audit=hidden$'
	keys "test -e '$(dirname "$audit")/sessions' && echo sessions=visible || echo sessions=hidden"
	ok "$who: nor are the session recordings" wait_for '^sessions=hidden$'

	keys 'echo via-devtty >/dev/tty; tty'
	ok "$who: /dev/tty is the session pty" wait_for '^via-devtty$'
	keys "python3 -c 'import os
n = 0
try:
    while n < 100: os.openpty(); n += 1
except OSError: pass
print(\"ptys=%d\" % n)'"
	ok "$who: the sandbox's devpts holds a few ptys, not the host's supply" wait_for '^ptys=(1[0-5])$'
	keys 'echo size=$(stty size)'
	want=$(tmux -S "$sock" display -p -t s '#{pane_height} #{pane_width}')
	ok "$who: the pty has the terminal's size ($want)" wait_for "^size=$want\$"
	tmux -S "$sock" resize-window -t s -x 120 -y 40
	sleep 0.3
	keys 'echo size=$(stty size)'
	want=$(tmux -S "$sock" display -p -t s '#{pane_height} #{pane_width}')
	ok "$who: a resize reaches the pty ($want)" wait_for "^size=$want\$"

	# THREATS row 1: keystrokes pushed with TIOCSTI must reach nothing:
	# not the session's shell, and not the host terminal, whose input queue
	# the pane reads after cordon exits (typed-*).
	keys "$H/try-syscall tiocsti tiocsti-high"
	ok "$who: TIOCSTI is refused inside" wait_for '^tiocsti errno=EPERM$'
	ok "$who: TIOCSTI with junk in the upper bits too" wait_for '^tiocsti-high errno=EPERM$'
	# The injected line would be read by the session's own shell (the pty
	# it was pushed into) and print inj-ected-ran, spelled so that the
	# typed command itself never shows that text.
	keys "python3 -c 'import fcntl, termios
for c in \"echo inj\" \"ected-ran; touch $T/injected-$who\\n\": fcntl.ioctl(0, termios.TIOCSTI, c.encode())' 2>&1 | tail -1"
	ok "$who: a real injection attempt fails" wait_for 'PermissionError|Operation not permitted'
	sleep 0.5
	keys 'echo typed-after-inject'
	wait_for '^typed-after-inject$' >/dev/null
	pane >"$T/pane-inject-$who"
	lacks "$who: the injected line never ran in the session" '^injected-ran$' "$T/pane-inject-$who" '^typed-after-inject$'

	# Hostile output: an escape sequence to retitle the terminal.
	keys "printf 'esc:\\033]0;pwned\\007:end\\n'"
	sleep 0.3
	keys 'exit 7'
	ok "$who: cordon exited" wait_file "$T/rc-$who"
	is "$(cat "$T/rc-$who")" 7 "$who: cordon shell exits with the shell's status"
	is "$(cat "$T/stty-after-$who")" "$(cat "$T/stty-before-$who")" \
		"$who: the terminal's settings are restored"
	# The pane's tty is read after cordon exits: what waits in its input
	# queue is what an injection pushed there.  A line typed now is the
	# control that the read works.
	keys 'typed-control'
	wait_for_file_line "$T/typed-$who" '^typed-control$'
	lacks "$who: nothing was injected into the host terminal" 'injected-' "$T/typed-$who" '^typed-control$'
	nok "$who: ... and nothing ran it" test -e "$T/injected-$who"

	run=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$T/rec-$who.json")
	is "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["exit_code"])' "$T/rec-$who.json")" 7 \
		"$who: the result record says exit 7"
	CORDON_AUDIT=$audit "$CORDON" log show --run "$run" --replay >"$T/replay-$who" 2>"$T/replay-err-$who"
	is "$?" 0 "$who: the session replays"
	ok "$who: replay: what was typed" grep -qxE '\+[0-9.]+ in  echo hel""lo-\$\(\(6\*7\)\)' "$T/replay-$who"
	ok "$who: replay: what was printed" grep -qE '^\+[0-9.]+ out hello-42\\r\\n$' "$T/replay-$who"
	ok "$who: replay: the resize" grep -qE "^\+[0-9.]+ size $(echo "$want" | tr ' ' x)\$" "$T/replay-$who"
	ok "$who: replay: the escape sequence is shown escaped" \
		grep -qF 'esc:\x1b]0;pwned\x07:end' "$T/replay-$who"
	nok "$who: replay: no raw control byte reaches the terminal" \
		grep -q "$(printf '[\033\007]')" "$T/replay-$who"
	tmux -S "$sock" kill-server 2>/dev/null
	f=$(dirname "$audit")/sessions/$run.rec
	sum=$(sha256sum "$f" | cut -d' ' -f1)
	ok "$who: the run's result record holds the recording's SHA-256" sh -c \
		"CORDON_AUDIT='$audit' '$CORDON' log show --json --run $run --kind run.result | grep -q $sum"

	# Tampering with the recording is detected: the hash is in the chain.
	printf 'x' >>"$f"
	CORDON_AUDIT=$audit "$CORDON" log show --run "$run" --replay >/dev/null 2>"$T/tamper-$who"
	is "$?" 1 "$who: a modified recording is refused"
	ok "$who: with a one-line reason" grep -q 'does not match the run' "$T/tamper-$who"
	ok "$who: the audit log still verifies" env CORDON_AUDIT="$audit" "$CORDON" log verify
}

for_each_user shell_session

# A crash of cordon mid-session still restores the terminal (and the
# sandbox dies with its supervisor).
sock=$T/tmux-crash.sock
cat >"$T/pane-crash.sh" <<EOF
echo \$\$ >"$T/pane-crash-pid"
stty -g >"$T/stty-before-crash"
"$CORDON" shell -- /bin/sh -i
echo \$? >"$T/rc-crash"
stty -g >"$T/stty-after-crash"
sleep 30
EOF
tmux -S "$sock" -f /dev/null new-session -d -s s -x 100 -y 30 "sh $T/pane-crash.sh"
ok "crash: the shell prompts" wait_for '^\$ $'
# The script's own pid: the pane's may be a shell above it (tmux runs the
# command with $SHELL -c, and dash does not exec the last command).
pid=$(pgrep -P "$(cat "$T/pane-crash-pid")" -x cordon)
ok "crash: cordon is found under the pane" test -n "$pid"
kill -SEGV "$pid"
ok "crash: cordon died" wait_file "$T/rc-crash"
is "$(cat "$T/rc-crash")" 139 "crash: of SIGSEGV"
is "$(cat "$T/stty-after-crash")" "$(cat "$T/stty-before-crash")" "crash: the terminal's settings are restored"
tmux -S "$sock" kill-server 2>/dev/null

# Under a policy the shell is decided like a run (tool shell, its argv as
# the scope): a granted command runs on the pty, anything else is refused
# before the terminal is touched.
cat >"$T/p.yaml" <<'YAML'
version: 1
agents:
  - {id: coder, owner: alice}
tools:
  - {id: shell, kind: command}
grants:
  - id: coder-tty
    agent: coder
    tool: shell
    actions: [execute]
    scope: {argv: ["tty"]}
    owner: alice
    justification: tests
    review_by: 2099-01-01
    expires: 2099-01-01
  - id: coder-masked
    agent: coder
    tool: shell
    actions: [execute]
    scope: {argv: ["cat"]}
    mask: {email: redact}
    owner: alice
    justification: tests
    review_by: 2099-01-01
    expires: 2099-01-01
YAML
chmod 0644 "$T/p.yaml"
out=$("$CORDON" shell --policy "$T/p.yaml" --agent coder --json-fd 3 -- tty </dev/null 3>"$T/prec" | tr -d '\r')
is "$out" /dev/pts/0 "policy: a granted command runs on the session pty"
is "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["exit_code"])' "$T/prec")" 0 \
	"policy: and exits 0"
"$CORDON" shell --policy "$T/p.yaml" --agent coder -- /bin/sh -i </dev/null >"$T/pout" 2>"$T/perr"
is "$?" 125 "policy: an ungranted shell is refused"
ok "policy: as denied by policy" grep -q 'denied by policy' "$T/perr"
is "$(cat "$T/pout")" "" "policy: and nothing ran"
printf 'bob@example.com\n' >"$T/mail.txt"
chmod 0644 "$T/mail.txt"
"$CORDON" shell --policy "$T/p.yaml" --agent coder -- cat "$T/mail.txt" </dev/null >"$T/pout" 2>"$T/perr"
is "$?" 125 "policy: a grant that masks output is refused for an interactive session"
ok "policy: ... saying why" grep -q 'masks output' "$T/perr"
nok "policy: ... and nothing was shown" grep -q 'bob@' "$T/pout"

# No recording, no session: a sessions path that cannot be a directory
# refuses the shell before anything runs.
mkdir -p "$S/norec" && : >"$S/norec/sessions"
CORDON_AUDIT=$S/norec/audit.db "$CORDON" shell -- /bin/true </dev/null >/dev/null 2>"$T/err"
is "$?" 125 "an unwritable session recording refuses the shell"
ok "with a one-line reason" grep -q 'session recording' "$T/err"
is "$(wc -l <"$T/err" | tr -d ' ')" 1 "one line"

# Bad input.
"$CORDON" shell --record-limit 1T 2>"$T/err"
is "$?" 125 "an oversized --record-limit is refused"
is "$(wc -l <"$T/err" | tr -d ' ')" 1 "with one line"
"$CORDON" run --record-limit 1M -- true 2>"$T/err"
is "$?" 125 "--record-limit is for cordon shell"
"$CORDON" log show --replay 2>"$T/err"
is "$?" 2 "--replay needs --run"
"$CORDON" log show --run ../../etc --replay 2>"$T/err"
is "$?" 2 "--replay refuses a run id that is not one"
done_testing
