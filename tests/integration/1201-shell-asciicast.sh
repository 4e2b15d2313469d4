#!/bin/sh
# cordon log show --run ID --asciicast: a recorded cordon shell session as an
# asciicast v2 file that asciinema plays.  The header carries the terminal's
# size and the run's start; events are [time, "o", text] with times that
# never go back; the text is the bytes the session printed (a UTF-8
# character split across two writes stays whole, invalid bytes become
# U+FFFD), as JSON in ASCII only, so the file itself is harmless on a
# terminal.  The recording is checked against its audit record first, as
# --replay does, and --replay is unchanged.
. "${CORDON_SRC:-.}/tests/lib.sh"

for t in script jq asciinema; do
	if ! command -v $t >/dev/null 2>&1; then
		skip "$t is not installed (scripts/deps.sh test)"
		done_testing
		exit 0
	fi
done

# jq -e FILTER FILE that also fails on an empty FILE (jq 1.6 -e says 0
# when there was no input at all).
jq_ok() {
	test -s "$2" && jq -e "$1" "$2" >/dev/null
}
jqs_ok() {
	test -s "$2" && jq -se "$1" "$2" >/dev/null
}

mkdir "$T/w"
chmod 0755 "$T/w"
# What the session prints: plain text, a character split across two writes
# (the euro sign's first byte, a pause, the rest), a 4-byte character,
# invalid UTF-8 and an escape sequence that retitles a terminal.
cat >"$T/w/sess.sh" <<'EOF'
printf 'hello-cast\n'
printf 'caf\303\251 \342'; sleep 0.3; printf '\202\254 \360\237\230\200\n'
printf 'bad:\377\376:end\n'
printf 'esc:\033]0;pwned\007:end\n'
EOF
chmod 0644 "$T/w/sess.sh"

cast_session() {
	who=$1
	if [ -n "$RUN_AS" ]; then
		audit=$S/.state-nobody/audit.db
	else
		audit=$CORDON_AUDIT
	fi
	: >"$T/rec-$who.json"
	chmod 0666 "$T/rec-$who.json"
	before=$(date +%s)
	# script gives the session a terminal of a known size.
	(cd "$T/w" && $RUN_AS script -qec "stty cols 100 rows 30; '$CORDON' shell --json-fd 3 -- /bin/sh sess.sh 3>'$T/rec-$who.json'" /dev/null \
		>"$T/term-$who" </dev/null)
	after=$(date +%s)
	run=$(jq -r .run_id "$T/rec-$who.json")
	is "$(jq -r .exit_code "$T/rec-$who.json")" 0 "$who: the session ran"

	c=$T/$who.cast
	(cd "$T" && $RUN_AS "$CORDON" log show --run "$run" --asciicast) >"$c" 2>"$T/cast-err-$who"
	is "$?" 0 "$who: the session exports"
	head -n 1 "$c" >"$T/head-$who"
	tail -n +2 "$c" >"$T/events-$who"
	ok "$who: header: version 2, the terminal's 100x30" \
		jq_ok '.version == 2 and .width == 100 and .height == 30' "$T/head-$who"
	ok "$who: header: the run's start as its timestamp" \
		jq_ok "(.timestamp | type) == \"number\" and .timestamp >= $before - 1 and .timestamp <= $after" \
		"$T/head-$who"
	ok "$who: events: each [seconds, \"o\" or \"r\", text]" jqs_ok \
		'length > 0 and all(.[]; type == "array" and length == 3 and (.[0] | type) == "number" and (.[1] == "o" or .[1] == "r") and (.[2] | type) == "string")' \
		"$T/events-$who"
	ok "$who: events: times never go back" jqs_ok \
		'[.[][0]] as $t | all(range(1; $t | length); $t[.] >= $t[. - 1])' "$T/events-$who"
	ok "$who: events: the pause shows in the times" jqs_ok \
		'[.[][0]] | (last - first) >= 0.2' "$T/events-$who"
	jq -j 'select(.[1] == "o") | .[2]' "$T/events-$who" >"$T/out-$who"
	ok "$who: output: what was printed" grep -qF "hello-cast$(printf '\r')" "$T/out-$who"
	ok "$who: output: a character split across writes is whole, a 4-byte one too" \
		grep -q "$(printf 'caf\303\251 \342\202\254 \360\237\230\200')" "$T/out-$who" ||
		{ # once in ~10 full runs (CI-like, session 11): what was there
			echo "# the caf line, bytes:" >&2
			grep -a 'caf' "$T/out-$who" | od -c | head -5 >&2
			echo "# the events around it:" >&2
			grep -a -n 'caf\|u20ac\|ud83d' "$T/events-$who" | head -5 >&2
		}
	ok "$who: output: invalid bytes are U+FFFD" \
		grep -q "$(printf 'bad:\357\277\275\357\277\275:end')" "$T/out-$who"
	ok "$who: output: the escape sequence is kept (for the player)" \
		grep -q "$(printf 'esc:\033]0;pwned\007:end')" "$T/out-$who"
	lacks "$who: the file is printable ASCII: nothing raw reaches a terminal" \
		'[^ -~]' "$c" 'pwned'
	ok "$who: ... the escape sequence is a JSON escape there" grep -qF 'esc:\u001b]0;pwned\u0007:end' "$c"
	# asciinema reads its terminal (cat opens /dev/tty): script gives it one.
	script -qec "asciinema cat '$c'" /dev/null >"$T/acat-$who" 2>&1
	is "$?" 0 "$who: asciinema cat parses it"
	ok "$who: ... and prints what the session printed" grep -q 'hello-cast' "$T/acat-$who"

	(cd "$T" && $RUN_AS "$CORDON" log show --run "$run" --replay) >"$T/replay-$who" 2>&1
	ok "$who: --replay is unchanged" grep -qE '^\+[0-9.]+ out .*hello-cast\\r\\n$' "$T/replay-$who"

	refused "$who: --asciicast needs --run" 'asciicast needs --run ID' \
		env CORDON_AUDIT="$audit" "$CORDON" log show --asciicast
	refused "$who: --asciicast is show's only" "does not apply" \
		env CORDON_AUDIT="$audit" "$CORDON" log tail --asciicast
	refused "$who: --asciicast is one rendering: not with --replay" "asciicast excludes --replay" \
		env CORDON_AUDIT="$audit" "$CORDON" log show --run "$run" --asciicast --replay

	# A changed recording is refused, as for --replay.
	printf 'x' >>"$(dirname "$audit")/sessions/$run.rec"
	refused "$who: a modified recording is refused" 'does not match the run' \
		env CORDON_AUDIT="$audit" "$CORDON" log show --run "$run" --asciicast
}

for_each_user cast_session
done_testing
