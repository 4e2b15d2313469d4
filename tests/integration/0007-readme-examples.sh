#!/bin/sh
# Every README example runs as written: each line of README.md's ```sh
# blocks (but the first, ./build.sh, which installs packages) is run with
# `cordon` on the PATH meaning $CORDON, in a fresh copy of what ships in the
# repository, with LANG and LC_ALL unset, as root and as nobody, and must
# exit 0.  Only lines ending in `# needs: a person` or `# needs: network`
# are not run, and there may be at most three of them.  The README must not
# point outside the repository.
. "${CORDON_SRC:-.}/tests/lib.sh"

readme=${CORDON_README:-$CORDON_SRC/README.md}
mkdir -p "$T/bin"
ln -s "$CORDON" "$T/bin/cordon"

# One example per line: blocks numbered, continuation lines joined.
awk '/^```sh[ \t]*$/ { inb = 1; n++; next }
	/^```/ { inb = 0; next }
	inb && n > 1 {
		line = (cont != "" ? cont " " : "") $0
		if (line ~ /\\$/) { sub(/[ \t]*\\$/, "", line); cont = line; next }
		cont = ""
		print n "\t" line
	}' "$readme" >"$T/examples"
ok "README.md has sh code blocks beyond the first" test -s "$T/examples"

run_examples() { # USER: run every example as USER, one assertion each
	user=$1
	work=$T/$user
	mkdir -p "$work"
	cp -R "$CORDON_SRC/examples" "$work/"
	[ "$user" = root ] || chown -R 65534:65534 "$work"
	block=0
	ran=0
	needs=0
	tab=$(printf '\t')
	while IFS=$tab read -r b line; do
		[ "$b" = "$block" ] || { block=$b; dir=$work; }
		case $line in
		'' | '#'*) continue ;;
		*'# needs: a person' | *'# needs: network')
			needs=$((needs + 1))
			diag "$user: not run (${line##*# needs: }): ${line%%#*}"
			continue
			;;
		'cd '*)
			to=${line#cd }
			to=${to%%#*}
			to=$(echo "$to" | sed 's/[ \t]*$//')
			ok "$user: block $b: cd $to exists in the repository" test -d "$dir/$to"
			dir=$dir/$to
			continue
			;;
		esac
		ran=$((ran + 1))
		set -- env -u LANG -u LC_ALL PATH="$T/bin:$PATH" timeout 120 sh -c "cd '$dir' && $line"
		if [ "$user" = root ]; then
			ok "$user: block $b: $line" "$@" </dev/null
		else
			ok "$user: block $b: $line" as_nobody "$@" </dev/null
		fi
	done <"$T/examples"
	ok "$user: the README examples ran ($ran lines)" test "$ran" -ge 8
	ok "$user: at most three examples are not run ($needs)" test "$needs" -le 3
}

for_each_user run_examples

# The README names only files that ship with the repository.
nok "README.md does not point outside the repository (../shared, /work/)" \
	grep -n -e '\.\./shared' -e '`/work/' -e '(\.\./' "$readme"
ok "every examples/ path the README names exists" sh -c "
	cd '$CORDON_SRC' && for p in \$(grep -o 'examples/[A-Za-z0-9_./-]*' '$readme' | sed 's/[.]\$//' | sort -u); do
		test -e \"\$p\" || { echo \"missing: \$p\"; exit 1; }
	done"
done_testing
