#!/bin/sh
# Issue 16 (session 8's second attacker, G3 a, b): the rest of a
# virtualenv, which the host's Python and shell run on their own.
# A virtualenv is found by its pyvenv.cfg, whatever its directory is
# called (here myenv/).  In a workspace-write tree:
# - its bin/ is read-only whole: no new command (`bin/git`, which
#   `. bin/activate` puts first on PATH) and no rewritten one (`bin/pip`);
# - in lib/python3.X/site-packages/ the *.pth files (their import lines
#   run at every start of the venv's python, -I included), the modules
#   they import (setuptools' _distutils_hack/, an editable install's
#   finder), sitecustomize/usercustomize and __pycache__ (a compiled
#   sitecustomize) are read-only when they exist, and new ones (a .pth,
#   usercustomize.py, __pycache__, the missing module a .pth imports, a
#   sitecustomize.py in the src/ a .pth puts on sys.path, a .pth in a new
#   lib64/ site directory, a new environment's bin/) are in
#   planted_paths after the run.
# The host side is then run as a user would (`. myenv/bin/activate;
# git; pip`, `myenv/bin/python -I`): nothing the sandbox wrote runs.
# Controls: the existing .pth and pip do run on the host; a project bin/
# (no pyvenv.cfg), an ordinary module in site-packages and src/ stay
# writable and are not listed.  Each refusal run twice (the second
# replays the scan cache for nobody).  As root and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

# the interpreter itself (a pyenv shim is a script: no venv through it)
PY=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')
PYV=$("$PY" -c 'import sys; print("python%d.%d" % sys.version_info[:2])')
CPY=$("$PY" -c 'import sys; print(sys.implementation.cache_tag)')

planted() {
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(" ".join(sorted(r.get("planted_paths") or [])) if "planted_paths" in r else "absent")' "$T/rec" 2>&1
}

# A virtualenv made by hand (python3-venv is not installed): Python finds
# it by the pyvenv.cfg beside bin/ as it does a real one.  $2: markers.
mkvenv() {
	v=$1/myenv
	mkdir -p "$v/bin" "$v/lib/$PYV/site-packages/__pycache__" "$1/bin" "$1/src"
	printf 'home = /usr/bin\ninclude-system-site-packages = false\nversion = 3\n' >"$v/pyvenv.cfg"
	ln -s "$PY" "$v/bin/python"
	ln -s python "$v/bin/python3"
	printf 'VIRTUAL_ENV=%s; export VIRTUAL_ENV; PATH="$VIRTUAL_ENV/bin:$PATH"; export PATH\n' \
		"$v" >"$v/bin/activate"
	printf '#!%s/bin/python\nprint("real pip")\n' "$v" >"$v/bin/pip"
	chmod +x "$v/bin/pip"
	s=$v/lib/$PYV/site-packages
	# setuptools' line, and the module it imports at every start
	echo "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') == 'local'; enabled and __import__('_distutils_hack').add_shim(); " \
		>"$s/distutils-precedence.pth"
	mkdir -p "$s/_distutils_hack"
	printf 'def add_shim():\n    open("%s/host-pth-ran", "w").close()\n' "$2" \
		>"$s/_distutils_hack/__init__.py"
	# an editable install's
	echo 'import __editable___proj_1_0_finder; __editable___proj_1_0_finder.install()' \
		>"$s/__editable__.proj-1.0.pth"
	printf 'def install():\n    pass\n' >"$s/__editable___proj_1_0_finder.py"
	echo 'x = 1' >"$s/sitecustomize.py"
	echo 'print("tool")' >"$1/bin/tool"
	echo 'print("main")' >"$1/src/main.py"
}

# Each attempt in the sandbox prints NAME=erofs, NAME=refused (another
# error) or NAME=written.
refused() {
	who=$1
	d=$T/ro-$who
	m=$T/marks-$who
	sp=myenv/lib/$PYV/site-packages
	mkdir -p "$d" "$m"
	mkvenv "$d" "$m"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	cat >"$d/attack.sh" <<EOF
$ATTEMPT
try venv-bin-new "printf '#!/bin/sh\\\\necho x >$m/git-ran\\\\n' >myenv/bin/git && chmod +x myenv/bin/git"
try venv-bin-pip "printf '#!/bin/sh\\\\necho x >$m/pip-ran\\\\n' >myenv/bin/pip"
try venv-activate "echo 'echo x >$m/act-ran' >>myenv/bin/activate"
try pth-existing "echo 'import os; open(\"$m/pth-ran\", \"w\")' >>$sp/distutils-precedence.pth"
try sitecustomize "echo 'open(\"$m/site-ran\", \"w\")' >>$sp/sitecustomize.py"
try site-pyc "echo junk >$sp/__pycache__/sitecustomize.$CPY.pyc"
try pth-module "echo 'def add_shim(): open(\"$m/hack-ran\", \"w\")' >$sp/_distutils_hack/__init__.py"
try pth-module-new "echo x >$sp/_distutils_hack/more.py"
try pth-finder "echo 'def install(): open(\"$m/finder-ran\", \"w\")' >$sp/__editable___proj_1_0_finder.py"
try project-bin "echo 'print(1)' >bin/newtool && echo x >>bin/tool"
try site-module "echo 'x = 2' >$sp/ordinary.py"
try src "echo x >>src/main.py"
EOF
	chmod 644 "$d/attack.sh"
	sleep 1.1 # older than the walk's 1 s guard: the cache may keep it
	cd "$d" || exit 1
	for pass in first second; do
		$RUN_AS "$CORDON" run --profile workspace-write -- sh attack.sh \
			>"$T/out" 2>"$T/err"
		is "$?" 0 "$who ($pass run): the run exits 0"
		for n in venv-bin-new venv-bin-pip venv-activate pth-existing sitecustomize site-pyc \
			pth-module pth-module-new pth-finder; do
			is "$(grep "^$n=" "$T/out")" "$n=erofs" \
				"$who ($pass run): $n is refused: read-only file system"
		done
		for n in project-bin site-module src; do
			is "$(grep "^$n=" "$T/out")" "$n=written" \
				"$who ($pass run): control: $n is written"
		done
	done
	is "$(ls myenv/bin | tr '\n' ' ')" "activate pip python python3 " \
		"$who: myenv/bin holds what it held on the host"
	# the host, as a user (or an editor) would
	(. ./myenv/bin/activate && git --version && pip) >"$T/host" 2>&1
	./myenv/bin/python -I -c 'print("host python ran")' >>"$T/host" 2>&1
	is "$(grep -c 'real pip\|host python ran' "$T/host")" 2 \
		"$who: control: the host's pip and python ran"
	is "$(ls "$m" | tr '\n' ' ')" "host-pth-ran " \
		"$who: the host ran the existing .pth (control) and nothing the sandbox wrote"
	cd "$T" || exit 1
}
for_each_user refused

planted_new() {
	who=$1
	d=$T/new-$who
	m=$T/marks2-$who
	sp=myenv/lib/$PYV/site-packages
	mkdir -p "$d" "$m"
	mkvenv "$d" "$m"
	rmdir "$d/$sp/__pycache__"
	echo 'import _virtualenv' >"$d/$sp/_virtualenv.pth" # its module not there (yet)
	echo "$d/src" >"$d/$sp/__editable__.proj.pth"    # src/ on sys.path
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	sleep 1.1
	cd "$d" || exit 1
	$RUN_AS "$CORDON" run --profile workspace-write --json-fd 3 -- sh -c "
		echo 'import os; open(\"$m/zz-ran\", \"w\")' >$sp/zz.pth
		echo 'x = 1' >$sp/usercustomize.py
		mkdir $sp/__pycache__ && echo junk >$sp/__pycache__/sitecustomize.$CPY.pyc
		echo 'import os' >$sp/_virtualenv.py
		echo 'import os' >src/sitecustomize.py
		mkdir -p myenv/lib64/$PYV/site-packages && echo 'import os' >myenv/lib64/$PYV/site-packages/yy.pth
		mkdir -p env2/bin && echo 'home = /usr/bin' >env2/pyvenv.cfg && echo x >env2/bin/git
		echo 'x = 3' >$sp/plain.py
		echo x >src/new.py && echo x >bin/new" 3>"$T/rec" >"$T/out" 2>"$T/err"
	is "$?" 0 "$who: the run exits 0"
	got=" $(planted) "
	for f in $sp/zz.pth $sp/usercustomize.py $sp/__pycache__ $sp/_virtualenv.py src/sitecustomize.py \
		myenv/lib64/$PYV/site-packages/yy.pth env2/pyvenv.cfg env2/bin; do
		case $got in *" $f "*) r=yes ;; *) r="no: $got" ;; esac
		is "$r" yes "$who: a new $f is in planted_paths"
	done
	for f in plain.py src/new.py bin/new; do
		case $got in *"$f "*) r="listed: $got" ;; *) r=no ;; esac
		is "$r" no "$who: control: $f is not listed"
	done
	ok "$who: the run warns of them on stderr" grep -q 'zz\.pth' "$T/err"
	is "$(cat "$d/$sp/zz.pth" 2>&1 | grep -c zz-ran)" 1 \
		"$who: control: the .pth was written (reported, not refused)"
	cd "$T" || exit 1
}
for_each_user planted_new

done_testing
