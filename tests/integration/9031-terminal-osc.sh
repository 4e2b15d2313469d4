#!/bin/sh
# Issue 16 finding 7: the sandbox's output reaches the operator's terminal
# without OSC 52 (clipboard: set, or read back as typed input) and OSC
# 0/1/2 (titles), in `cordon run` and `cordon shell`; text and CSI colours
# pass.  The record's stdout hash stays that of what the command wrote
# (the raw bytes), and output to a pipe is not filtered at all.
. "${CORDON_SRC:-.}/tests/lib.sh"

mkdir -p "$T/proj" && chmod 0755 "$T/proj"
# Run ARGV... (as $RUN_AS) on a fresh pty and print what reached the pty
# (the line discipline's \r\n turned back into \n).
PTY='
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
buf = b""
while True:
    try:
        b = os.read(fd, 65536)
    except OSError:
        break
    if not b:
        break
    buf += b
os.waitpid(pid, 0)
sys.stdout.buffer.write(buf.replace(b"\r\n", b"\n"))
'
on_pty() { $RUN_AS /usr/bin/python3 -c "$PTY" "$@"; }

# The command's output: text, a colour, a clipboard write, a title, text.
PRINT='printf "hello \033[31mred\033[0m \033]52;c;ZXZpbA==\007\033]2;pwned\033\\ done\n"'
RAW=$(printf 'hello \033[31mred\033[0m \033]52;c;ZXZpbA==\007\033]2;pwned\033\\ done\n' | sha256sum | cut -d' ' -f1)

has() { # FILE PYTHON-BYTES-LITERAL
	python3 -c 'import sys; sys.exit(0 if eval(sys.argv[2]) in open(sys.argv[1], "rb").read() else 1)' "$1" "$2"
}

osc() {
	who=$1
	cd "$T/proj" || exit 1
	on_pty "$CORDON" run --json-fd 3 -- sh -c "$PRINT" 3>"$T/rec-$who" >"$T/run-$who"
	nok "$who: run: no OSC 52 reaches the terminal" has "$T/run-$who" 'b"\x1b]52"'
	nok "$who: run: no title string reaches the terminal" has "$T/run-$who" 'b"\x1b]2;"'
	ok "$who: run: text and the CSI colour pass" has "$T/run-$who" 'b"hello \x1b[31mred\x1b[0m "'
	ok "$who: run: the text after the strings passes" has "$T/run-$who" 'b" done\n"'
	ok "$who: run: the record hashes the raw bytes the command wrote" \
		grep -q "\"stdout_sha256\":\"$RAW\"" "$T/rec-$who"
	# Control: to a pipe (not a terminal) nothing is filtered, so the
	# checks above can see the sequence.
	$RUN_AS "$CORDON" run -- sh -c "$PRINT" >"$T/pipe-$who"
	ok "$who: control: to a pipe the OSC 52 passes unchanged" has "$T/pipe-$who" 'b"\x1b]52;c;ZXZpbA==\x07"'
	# cordon shell: the session pty's output is filtered the same way.
	on_pty "$CORDON" shell -- sh -c "$PRINT" >"$T/sh-$who"
	ok "$who: shell: the command's text reached the terminal" has "$T/sh-$who" 'b"hello"'
	nok "$who: shell: no OSC 52 reaches the terminal" has "$T/sh-$who" 'b"\x1b]52"'
	nok "$who: shell: no title string reaches the terminal" has "$T/sh-$who" 'b"\x1b]2;"'
	ok "$who: shell: the CSI colour passes" has "$T/sh-$who" 'b"\x1b[31mred"'
	cd "$T" || exit 1
}

for_each_user osc
done_testing
