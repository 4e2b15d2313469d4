#!/bin/sh
# One rule (issue 17): every command that prints data takes --json and
# prints JSON (one object, one array, or JSON lines for the log's record
# streams), whatever it has to say.  Each output is parsed here, and its
# shape checked where a program relies on it.
. "${CORDON_SRC:-.}/tests/lib.sh"

P="$CORDON_SRC/examples/policies/coding-agent.yaml"
# json_ok DESC KIND CMD...: CMD prints exactly one JSON value of KIND
# (object, array) or, for KIND=lines, one or more lines each an object,
# and exits 0.
json_ok() {
	_d=$1 _k=$2
	shift 2
	"$@" >"$T/j.out" 2>"$T/j.err"
	_rc=$?
	python3 - "$_k" "$T/j.out" <<'PY'
import json, sys
kind, path = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8").read()
if kind == "lines":
    assert text.splitlines(), "no lines"
    for line in text.splitlines():
        assert isinstance(json.loads(line), dict), line
else:
    v = json.loads(text)
    assert isinstance(v, {"object": dict, "array": list}[kind]), type(v)
PY
	_py=$?
	[ "$_rc" -eq 0 ] || _py=1
	is "$_py" 0 "$_d: --json prints JSON ($_k), exit $_rc"
	[ "$_py" -eq 0 ] || sed 's/^/#   /' "$T/j.out" "$T/j.err" | head -5
}

"$CORDON" run -- true >/dev/null 2>&1 # a record or two in the log

json_ok "policy lint" object "$CORDON" policy lint --json "$P"
json_ok "policy check" object "$CORDON" policy check "$P" --agent coder --tool fs --action read \
	--path /work/payments/src/a.c --json
json_ok "policy explain" object "$CORDON" policy explain "$P" --agent coder --tool fs \
	--action read --path /work/payments/src/a.c --json
out=$("$CORDON" policy explain "$P" --agent coder --tool fs --action read \
	--path /work/payments/src/a.c --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
m = [r["id"] for r in d["rules"] if r["matched"]]
print(d["decision"], ",".join(m), all(set(r) == {"id", "kind", "matched", "why"} for r in d["rules"]))')
is "$out" "allow coder-read-repo True" "policy explain --json: the decision and every rule, the one that matched named"
json_ok "policy test" object "$CORDON" policy test "$P" --json
out=$("$CORDON" policy test "$P" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["failed"], d["total"] == len(d["cases"]) > 10, all(c["pass"] for c in d["cases"]))')
is "$out" "0 True True" "policy test --json: total, failed and every case"
n_tap=$("$CORDON" policy test "$P" | grep -c '^ok ')
n_json=$("$CORDON" policy test "$P" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])')
is "$n_json" "$n_tap" "policy test --json counts the cases the TAP report prints"
printf 'version: 1\nbogus: 1\n' >"$T/bad.yaml"
"$CORDON" policy test "$T/bad.yaml" --json >"$T/bad.out" 2>/dev/null
is "$?" 1 "policy test --json of a policy that does not load exits 1"
is "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["loaded"])' "$T/bad.out")" \
	False "  and says it did not load, in JSON"
json_ok "policy diff" object "$CORDON" policy diff "$P" "$P" --json
json_ok "policy review" object "$CORDON" policy review "$P" --no-audit --json
json_ok "policy matrix" object "$CORDON" policy matrix "$P" --json
out=$("$CORDON" policy matrix "$P" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
c = [c for c in d["cells"] if c["agent"] == "coder" and c["tool"] == "fs"][0]
print(len(d["cells"]) == len(d["agents"]) * len(d["tools"]), "read" in c["allow"], len(d["grants"]) > 0)')
is "$out" "True True True" "policy matrix --json: one cell per agent and tool, classes by name, the grants"
# (but for "at", the second each was made in)
no_at() { sed 's/"at":"[^"]*"//'; }
is "$("$CORDON" policy matrix "$P" --format json | no_at)" "$("$CORDON" policy matrix "$P" --json | no_at)" \
	"policy matrix --format json is --json"
"$CORDON" policy matrix "$P" --format yaml >/dev/null 2>&1
is "$?" 2 "policy matrix --format yaml is a usage error"

json_ok "log show" lines "$CORDON" log show --json
json_ok "log tail" lines "$CORDON" log tail --json
json_ok "log export" lines "$CORDON" log export --json
is "$("$CORDON" log export --json)" "$("$CORDON" log export --format jsonl)" \
	"log export --json is --format jsonl"
json_ok "log verify" object "$CORDON" log verify --json
json_ok "approvals list" array "$CORDON" approvals list --json
json_ok "approvals stats" array "$CORDON" approvals stats --json
json_ok "grant list" array "$CORDON" grant list --json
json_ok "proposals list" array "$CORDON" proposals list --json
json_ok "cache list" array "$CORDON" cache list --json
json_ok "mcp pins list" array "$CORDON" mcp pins list --json
json_ok "run --dry-run" object "$CORDON" run --dry-run --json -- true

done_testing
