#!/bin/sh
# The AppArmor profile (packaging/apparmor/cordon) that lets cordon create
# user namespaces where kernel.apparmor_restrict_unprivileged_userns=1
# (Ubuntu 24.04): it parses (apparmor_parser -QT: no kernel load, no
# cache), a broken copy does not; and the namespace refusal names the
# restriction, the profile and how to install it when the sysctl reads 1
# (CORDON_TEST_PROC_ROOT stands in for /proc's sysctls), as root and as
# nobody, in `cordon run` and `cordon doctor`.
#
# Debian 12's parser is AppArmor 3.0, which knows neither the userns rule
# nor abi/4.0: there the profile is parsed without those two lines (both
# checked present and in place), and as it is wherever the parser knows
# them (AppArmor 4: Ubuntu 24.04, Debian 13).
src=$(cd "${CORDON_SRC:-.}" && pwd)
. "${CORDON_SRC:-.}/tests/lib.sh"

profile=$src/packaging/apparmor/cordon
ok "the profile is in the source tree" test -s "$profile"

# --- (a) it parses -------------------------------------------------------
printf 'abi <abi/4.0>,\nprofile probe /probe {\n  userns,\n}\n' >"$T/probe"
if apparmor_parser -QT "$T/probe" >/dev/null 2>&1; then
	echo "# this apparmor_parser knows userns and abi/4.0: the profile is parsed as it is"
	cp "$profile" "$T/parsed"
else
	echo "# this apparmor_parser ($(apparmor_parser --version 2>&1 | head -1)) predates userns:"
	echo "# the profile is parsed without its abi/4.0 and userns lines"
	refused "this parser really lacks the userns rule (so the lines go)" \
		"abi/4.0|syntax error" apparmor_parser -QT "$profile"
	sed -e '/^abi <abi\/4\.0>,$/d' -e '/^  userns,$/d' "$profile" >"$T/parsed"
	is "$(($(wc -l <"$profile") - $(wc -l <"$T/parsed")))" 2 "exactly two lines dropped"
fi
ok "apparmor_parser -QT parses the profile" apparmor_parser -QT "$T/parsed"

# Its content: abi 4.0 first, the cordon profile unconfined but for
# naming, attached to the root-owned install paths only, granting userns.
is "$(grep -v '^#' "$profile" | grep -v '^$' | head -1)" "abi <abi/4.0>," \
	"the profile declares abi/4.0 first (a pinned older abi would drop the userns rule)"
is "$(grep '^profile ' "$profile")" "profile cordon /usr/{,local/}bin/cordon flags=(unconfined) {" \
	"it attaches to /usr/bin/cordon and /usr/local/bin/cordon"
is "$(sed -n '/^profile cordon /,/^}/p' "$profile" | grep -c '^  userns,$')" 1 \
	"it grants userns inside the cordon profile"
grep -v '^ *#' "$profile" >"$T/rules"
lacks "it names no user-writable path" '@\{HOME\}|/home/|\.local|/tmp/|\*' "$T/rules" 'profile cordon'

# Negative controls: a broken copy does not parse (the parser checks).
sed 's/^}$//' "$T/parsed" >"$T/broken1"
refused "a copy without its closing brace does not parse" "syntax error|unexpected" \
	apparmor_parser -QT "$T/broken1"
sed 's/flags=(unconfined)/flags=(unconfinedd)/' "$T/parsed" >"$T/broken2"
refused "a copy with an unknown flag does not parse" "invalid|unknown|flag" \
	apparmor_parser -QT "$T/broken2"

# --- (b) the refusal names the restriction ---------------------------------
# A user namespace refused on this host: in a namespace of our own,
# user.max_user_namespaces is lowered so that cordon's own namespace
# cannot be made (doctor in it, as its root; run one namespace further
# in, as uid 65534 there).  AppArmor's sysctl then comes from the stand-in.
mkdir -p "$T/proc/sys/kernel" "$T/w/root" "$T/h/root" "$T/w/nobody" "$T/h/nobody"
chown 65534:65534 "$T/w/nobody" "$T/h/nobody" 2>/dev/null
aa=$T/proc/sys/kernel/apparmor_restrict_unprivileged_userns
hint='AppArmor restricts unprivileged user namespaces \(kernel\.apparmor_restrict_unprivileged_userns=1\): load cordon.s AppArmor profile.*apparmor_parser -r /etc/apparmor\.d/cordon.*install -m 0644 packaging/apparmor/cordon /etc/apparmor\.d/cordon'
doctor_in() { # PROC_ROOT: cordon doctor where user namespaces are refused
	$RUN_AS unshare -Ur sh -c 'echo 0 >/proc/sys/user/max_user_namespaces &&
		exec env ${1:+CORDON_TEST_PROC_ROOT=$1} HOME="$2" CORDON_AUDIT="$2/a.db" \
		CORDON_STATE="$2/s.db" CORDON_MASK_KEY="$2/k" "$3" doctor' \
		sh "$1" "$T/h/$who" "$CORDON"
}
run_in() { # PROC_ROOT: cordon run where user namespaces are refused
	(cd "$T/w/$who" && $RUN_AS unshare -Ur sh -c 'echo 1 >/proc/sys/user/max_user_namespaces &&
		exec unshare --user --map-user=65534 --map-group=65534 env \
		${1:+CORDON_TEST_PROC_ROOT=$1} HOME="$2" CORDON_AUDIT="$2/a.db" \
		CORDON_STATE="$2/s.db" "$3" run -- /bin/true' sh "$1" "$T/h/$who" "$CORDON")
}
t() {
	who=root
	[ "$1" = nobody ] && who=nobody
	echo 1 >"$aa"
	refused "$1: run names AppArmor's restriction, the profile and its install" \
		"cannot create the sandbox's namespaces \($hint" run_in "$T/proc"
	refused "$1: doctor names it too (its user-namespaces FAIL's fix)" "fix: $hint" \
		doctor_in "$T/proc"
	grep -q "^warn apparmor .*restricts unprivileged user namespaces; cordon's profile (/etc/apparmor.d/cordon) is not loaded" "$T/.ok.out"
	is "$?" 0 "$1: ... and its apparmor check warns that the profile is not loaded"
	$RUN_AS env CORDON_TEST_PROC_ROOT="$T/proc" HOME="$T/h/$who" CORDON_AUDIT="$T/h/$who/a.db" \
		CORDON_STATE="$T/h/$who/s.db" CORDON_MASK_KEY="$T/h/$who/k" "$CORDON" doctor >"$T/d" 2>&1
	is "$?" 0 "$1: restricted but namespaces work (a loaded profile): doctor exits 0"
	grep -q "^ok   apparmor .*restricts unprivileged user namespaces; cordon can create them" "$T/d"
	is "$?" 0 "$1: ... its apparmor check says cordon can create them"
	echo 0 >"$aa"
	refused "$1: the restriction off: run names another cause" \
		"cannot create the sandbox's namespaces \(not a chroot, AppArmor or a sysctl" \
		run_in "$T/proc"
	refused "$1: ... so does doctor" \
		"fix: not a chroot, AppArmor or a sysctl" doctor_in "$T/proc"
	refused "$1: no stand-in: this host's /proc is read (the sysctl that holds)" \
		"fix: user\.max_user_namespaces=0: sysctl" doctor_in ""
	lacks "$1: ... and not AppArmor" "AppArmor restricts" "$T/.ok.out" "user\.max_user_namespaces=0"
	ok "$1: where namespaces work, the stand-in changes nothing (run exits 0)" \
		$RUN_AS sh -c 'cd "$1" && env CORDON_TEST_PROC_ROOT="$2" HOME="$3" \
			CORDON_AUDIT="$3/a.db" CORDON_STATE="$3/s.db" "$4" run -- /bin/true' sh \
		"$T/w/$who" "$T/proc" "$T/h/$who" "$CORDON"
}
chmod -R a+rX "$T/proc"
for_each_user t
done_testing
