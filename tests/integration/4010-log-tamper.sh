#!/bin/sh
# THREATS rows 40-41: edit, delete, reorder, insert, truncate and roll back
# the log with the sqlite3 CLI; verify must fail each time naming the seq.
# An untouched log verifies.  Run as the invoking user and as nobody.
. "${CORDON_SRC:-.}/tests/lib.sh"

APPEND="$CORDON_BUILD/tests/tools/audit-append"
command -v sqlite3 >/dev/null || { skip "no sqlite3 CLI"; done_testing; }

scenario() {
	who=$1
	D="$T/$who"
	mkdir -p "$D"
	[ "$who" = nobody ] && chown 65534:65534 "$D"
	export HOME="$D" XDG_CONFIG_HOME="$D/cfg" CORDON_AUDIT="$D/audit.db"
	unset XDG_STATE_HOME CORDON_AUDIT_KEY CORDON_AUDIT_CHECKPOINTS
	$RUN_AS "$CORDON" log keygen >/dev/null 2>&1 || { ok "$who: keygen" false; return; }

	fresh() {
		rm -f "$D"/audit.db*
		$RUN_AS "$APPEND" --db "$D/audit.db" -n 20 --pairs --key "$D/cfg/cordon/audit.key" \
			--every 10 --cp-out "$D/audit.db.checkpoints" >/dev/null
	}
	# expect DESC SQL PROBLEM SEQ
	expect() {
		fresh
		$RUN_AS sqlite3 "$D/audit.db" "$2" || { ok "$who: $1 (sql)" false; return; }
		$RUN_AS "$CORDON" log verify --audit "$D/audit.db" >"$D/out" 2>"$D/err"
		rc=$?
		is "$rc" 1 "$who: $1: verify fails"
		if grep -q "seq $4: $3" "$D/err"; then
			ok "$who: $1: names seq $4 ($3)" true
		else
			ok "$who: $1: names seq $4 ($3): $(cat "$D/err")" false
		fi
		# The same for a program: --json, exit 1 too.
		$RUN_AS "$CORDON" log verify --json --audit "$D/audit.db" >"$D/out" 2>/dev/null
		rc=$?
		case $(cat "$D/out") in *'"intact":false'*"\"bad_seq\":$4,"*"\"problem\":\"$3\""*) r=0 ;; *) r=1 ;; esac
		is "$rc.$r" "1.0" "$who: $1: --json says intact false, bad_seq $4, problem $3"
		[ "$r" -eq 0 ] || diag "$(cat "$D/out")"
	}

	fresh
	ok "$who: untouched log verifies" $RUN_AS "$CORDON" log verify --audit "$D/audit.db"
	$RUN_AS "$CORDON" log verify --json --audit "$D/audit.db" >"$D/out"
	case $(cat "$D/out") in '{"intact":true,"records":'*'"pubkey":true,"checkpoint_file":true'*'}') r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$who: --json: intact, with the key and the checkpoint file"
	expect "modified field" "UPDATE records SET target='/etc/shadow' WHERE seq=5" modified 5
	expect "deleted row" "DELETE FROM records WHERE seq=7" missing 7
	expect "swapped rows" "UPDATE records SET seq=-1 WHERE seq=5;
		UPDATE records SET seq=5 WHERE seq=6; UPDATE records SET seq=6 WHERE seq=-1" reordered 5
	expect "forged row inserted" "UPDATE records SET seq=-seq WHERE seq>=9;
		UPDATE records SET seq=1-seq WHERE seq<0;
		INSERT INTO records(seq,time_ns,kind,agent,prev_hash,hash)
		VALUES(9,1,'run.result','agent-0',randomblob(32),randomblob(32))" inserted 9
	expect "tail truncated" "DELETE FROM records WHERE seq>30" truncated 31
	expect "tail truncated and counter reset" \
		"DELETE FROM records WHERE seq>30; UPDATE sqlite_sequence SET seq=30" "rolled back" 31

	# Rollback: keep a copy, write more and checkpoint, restore the copy.
	fresh
	$RUN_AS sqlite3 "$D/audit.db" ".backup '$D/old.db'"
	$RUN_AS "$APPEND" --db "$D/audit.db" -n 5 >/dev/null
	ok "$who: checkpoint on demand" $RUN_AS "$CORDON" log checkpoint --audit "$D/audit.db"
	ok "$who: grown log verifies" $RUN_AS "$CORDON" log verify --audit "$D/audit.db"
	cp "$D/old.db" "$D/audit.db"
	rm -f "$D/audit.db-wal" "$D/audit.db-shm"
	$RUN_AS "$CORDON" log verify --audit "$D/audit.db" >/dev/null 2>"$D/err"
	is "$?" 1 "$who: restored older copy: verify fails"
	ok "$who: names the rollback" grep -q "seq 45: rolled back" "$D/err"

	# A tampered checkpoint file line: bad signature.
	fresh
	python3 -c 'import sys
p = sys.argv[1]; l = open(p).read().split("\n")
l[0] = l[0][:-1] + ("b" if l[0][-1] == "a" else "a")
open(p, "w").write("\n".join(l))' "$D/audit.db.checkpoints"
	$RUN_AS "$CORDON" log verify --audit "$D/audit.db" >/dev/null 2>"$D/err"
	is "$?" 1 "$who: edited checkpoint line: verify fails"
	ok "$who: bad signature" grep -q "bad signature" "$D/err"

	# A torn last line (crash while appending) is not tampering.
	fresh
	printf 'cordon-checkpoint v1 0123' >>"$D/audit.db.checkpoints"
	$RUN_AS "$CORDON" log verify --audit "$D/audit.db" >"$D/out" 2>&1
	is "$?" 0 "$who: torn checkpoint line: still intact"
	ok "$who: and reported as torn" grep -q '^torn' "$D/out"
}
for_each_user scenario
done_testing
