#!/bin/sh
# cordon policy matrix: agents x tools with their action classes, as an
# aligned terminal table and as Markdown; --agent, --at; hostile names
# escaped; a broken policy prints no matrix.
. "${CORDON_SRC:-.}/tests/lib.sh"
P="$CORDON_SRC/tests/data/policy/base.yaml"

out=$("$CORDON" policy matrix "$P" --at 2029-06-01)
is "$?" 0 "text: exit 0"
row=$(printf '%s\n' "$out" | grep '^coder ')
# base.yaml: fs read (build profile) + delete with approval; sh execute;
# web read; the forbid rule on fs is scoped ('*').
case $row in "coder "*"r--D--* 2030-01-01"*"----x- 2030-01-01"*"r----- 2030-01-01") r=0 ;; *) r=1 ;; esac
is "$r" 0 "text: coder's row ($row)"
row=$(printf '%s\n' "$out" | grep '^other ')
case $row in "other "*"------*"*"------"*"------") r=0 ;; *) r=1 ;; esac
is "$r" 0 "text: other has nothing but the forbid narrowing ($row)"
# Aligned: the column of 'sh' starts at the same offset in the header and rows.
hdr=$(printf '%s\n' "$out" | grep '^agent ')
h=${hdr%%sh*}
c=$(printf '%s\n' "$out" | grep '^coder ' | cut -c$((${#h} + 1))-$((${#h} + 6)))
is "$c" "----x-" "text: columns are aligned"
case $out in *"  coder  fs    ---D--   rm-tmp      -     human"*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "text: grant rows with approval in upper case"
case $out in *"grant matrix of $P (sha256 $(sha256sum <"$P" | cut -c1-16)..."*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "text: names the file and its sha256"

# At the expiry second the grant is absent; a second before it is not.
row=$("$CORDON" policy matrix "$P" --at 2029-12-31T23:59:59Z | grep '^coder ')
case $row in "coder "*"r--D--*"*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "a second before expiry: read is there"
out=$("$CORDON" policy matrix "$P" --at 2030-01-01T00:00:00Z)
row=$(printf '%s\n' "$out" | grep '^coder ')
case $row in "coder "*"------* (expired)"*"------ (expired)"*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "at the expiry second: every cell is expired ($row)"
case $out in *"read-repo"*"expired"*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "expired grants are listed as expired"

# Markdown: a header, a separator, every row with the same number of '|'.
"$CORDON" policy matrix "$P" --format markdown --at 2029-06-01 >"$T/m.md"
is "$?" 0 "markdown: exit 0"
grep '^|' "$T/m.md" | head -4 >"$T/tab"
is "$(sed -n 2p "$T/tab" | tr -d '|-')" "" "markdown: separator row"
is "$(awk -F'|' '{print NF}' "$T/tab" | sort -u | wc -l | tr -d ' ')" 1 "markdown: rows of equal width"
grep -q '^| `coder` *| `r--D--\* 2030-01-01` ' "$T/m.md"
is "$?" 0 "markdown: ids and cells in code spans"
grep -q '^## Grants' "$T/m.md" && grep -q '^## Tools' "$T/m.md"
is "$?" 0 "markdown: grants and tools sections"

# --agent: one row; an unknown agent is an error, not an empty table.
out=$("$CORDON" policy matrix "$P" --agent other --at 2029-06-01)
is "$?" 0 "--agent: exit 0"
case $out in *"coder "*) r=1 ;; *) r=0 ;; esac
is "$r" 0 "--agent other: no row or grant of coder"
"$CORDON" policy matrix "$P" --agent ghost 2>"$T/e" >/dev/null
is "$?" 1 "--agent ghost: exit 1"
grep -q "unknown agent 'ghost'" "$T/e"
is "$?" 0 "--agent ghost: says so"

# Hostile names: a '|' and a '`' in an operation name cannot break a
# Markdown table; UTF-8 passes, nothing else reaches the terminal raw.
cat >"$T/h.yaml" <<'YAML'
version: 1
agents: [{id: a, owner: o}]
tools: [{id: t, kind: mcp, operations: {x|y: read, p`q: update}}]
YAML
"$CORDON" policy matrix "$T/h.yaml" --format markdown >"$T/h.md"
is "$?" 0 "hostile names: exit 0"
grep '^| `t`' "$T/h.md" | grep -qF 'x\|y\=r p\`q\=u'
is "$?" 0 "hostile names: '|' and '\`' escaped in Markdown"
is "$(grep '^| `t` ' "$T/h.md" | tail -1 | sed 's/\\|//g' | tr -cd '|')" "||||" "hostile names: no extra column"
cp "$T/h.yaml" "$T/a\`b.yaml"
"$CORDON" policy matrix "$T/a\`b.yaml" --format markdown | grep -qF 'Policy \/tmp'
is "$?" 0 "a file name with a '\`' is escaped"

# Failures: usage 2, a policy that does not load 4 (and prints no matrix).
"$CORDON" policy matrix >/dev/null 2>&1
is "$?" 2 "no file: exit 2"
"$CORDON" policy matrix "$P" --format html >/dev/null 2>&1
is "$?" 2 "unknown format: exit 2"
"$CORDON" policy matrix "$P" --at yesterday >/dev/null 2>&1
is "$?" 2 "bad --at: exit 2"
"$CORDON" policy matrix "$P" --agent >/dev/null 2>&1
is "$?" 2 "--agent without a value: exit 2"
printf 'version: 1\nagents: []\ntools: []\nbogus: 1\n' >"$T/bad.yaml"
out=$("$CORDON" policy matrix "$T/bad.yaml" 2>"$T/e")
is "$?" 4 "a broken policy: exit 4"
is "$out" "" "a broken policy: no matrix"
grep -q "bad.yaml:4:1" "$T/e"
is "$?" 0 "a broken policy: file:line:col"
"$CORDON" policy matrix --help | grep -q "Exit 0 printed"
is "$?" 0 "--help documents the exit statuses"
"$CORDON" policy --help | grep -q "policy matrix FILE"
is "$?" 0 "policy --help lists matrix"
done_testing
