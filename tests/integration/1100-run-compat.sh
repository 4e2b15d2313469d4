#!/bin/sh
# cordon run: real programs run normally under the default (strict)
# profile with every wall up: python3, sh pipelines, gcc, git on a
# read-only repository, node, perl, make.
. "${CORDON_SRC:-.}/tests/lib.sh"

# One repository per user: git refuses a repository owned by someone else
# ("dubious ownership"), and inside the sandbox only the invoking user's
# files belong to the sandbox user.
mkrepo() {
	mkdir -p "$1"
	(
		cd "$1" && git init -q . && git config user.email t@example.com && git config user.name t &&
			echo hello >a.txt && printf 'all:\n\t@echo made $(X)\n' >Makefile &&
			printf '#include <stdio.h>\nint main(void){printf("compiled %%d\\n", 6*7);return 0;}\n' >hello.c &&
			git add . && git commit -qm init && echo changed >>a.txt
	) >/dev/null 2>&1
	chmod -R a+rX "$1"
}
mkrepo "$T/repo-$(id -un)"
if [ "$(id -u)" -eq 0 ]; then
	mkrepo "$T/repo-nobody" && chown -R 65534:65534 "$T/repo-nobody"
fi

compat() {
	who=$1
	cd "$T/repo-$who" || exit 1
	run() { $RUN_AS "$CORDON" run --json-fd 3 -- "$@" 3>"$T/rec-$who"; }
	clean() { is "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["denied_syscalls"])' "$T/rec-$who")" "[]" "$who: ... with no refused syscall"; }

	is "$(run /usr/bin/python3 -c 'import json, hashlib, subprocess, threading, multiprocessing, tempfile, sqlite3
p = multiprocessing.Pool(2); r = sum(p.map(abs, [-1, -2])); p.close(); p.join()
with tempfile.NamedTemporaryFile() as f: f.write(b"x")
print(r, subprocess.run(["echo", "sub"], capture_output=True, text=True).stdout.strip(), sqlite3.connect(":memory:").execute("select 1").fetchone()[0])')" \
		"3 sub 1" "$who: python3 runs (multiprocessing, subprocess, tempfile, sqlite3)"
	clean
	is "$(run sh -c 'seq 1 1000 | grep 7 | sort -rn | head -3 | tr "\n" " "; echo; cat a.txt | wc -l; ls | sort | head -1; (sleep 0.1 & wait); echo $((6*7))')" \
		"997 987 979 
2
Makefile
42" "$who: sh pipelines, subshells, wait, arithmetic"
	clean
	# Overwriting an existing file in scratch (open with O_TRUNC): gcc's
	# cc1 does that to the temp file gcc created.
	ok "$who: an existing file in scratch can be overwritten (Landlock truncate)" \
		$RUN_AS "$CORDON" run -- sh -c 'echo a > /tmp/f && echo b > /tmp/f'
	is "$(run sh -c 'gcc -O1 -o /tmp/hello hello.c && /tmp/hello')" "compiled 42" "$who: gcc compiles into scratch and the program runs"
	clean
	# git status on the read-only repository: git cannot take
	# .git/index.lock to refresh the index (read-only mount) and carries on
	# silently; the status itself is right, with or without
	# --no-optional-locks.
	is "$(run git status --porcelain)" " M a.txt" "$who: git status works on the read-only repository"
	clean
	is "$(run git --no-optional-locks status --porcelain)" " M a.txt" "$who: git --no-optional-locks status too"
	is "$(run sh -c 'git log --oneline | wc -l; git diff --stat | tail -1')" "1
 1 file changed, 1 insertion(+)" "$who: git log and diff work"
	nok "$who: git commit fails (read-only)" run git commit -qam x
	is "$(run make -s X=ok)" "made ok" "$who: make runs"
	clean
	is "$(run perl -e 'use strict; use POSIX; my %h=(a=>1); print join(",", keys %h), " ", POSIX::floor(4.5), "\n"')" "a 4" "$who: perl runs"
	clean
	if [ -x /usr/bin/node ]; then
		is "$(run /usr/bin/node -e 'const os=require("os"), cp=require("child_process"), fs=require("fs"); fs.writeFileSync("/tmp/n", "x"); console.log(cp.execSync("echo sub").toString().trim(), fs.readFileSync("/tmp/n","utf8"), os.cpus().length > 0)')" \
			"sub x true" "$who: node runs (child_process, fs, os)"
		clean
	fi
	cd "$T" || exit 1
}

for_each_user compat
done_testing
