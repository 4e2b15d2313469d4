#!/bin/sh
# cordon completion bash|zsh|fish: each script loads in its shell and
# completes commands, sub-commands, options and known values; and it is
# generated from the tables the parsers use, so every command --help lists
# and every option a command's --help lists is completed (a new option or
# command without completion fails here).  An unknown shell is refused.
. "${CORDON_SRC:-.}/tests/lib.sh"

"$CORDON" completion bash >"$T/c.bash"
is "$?" 0 "bash: the script is printed"
ok "bash: it parses (bash -n)" bash -n "$T/c.bash"

# comp WORD...: what bash completes for the command line WORD... (the last
# one is the word under the cursor), one reply a line.
comp() {
	bash --norc -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_cordon; printf "%s\n" "${COMPREPLY[@]}"' _ "$T/c.bash" "$@"
}

is "$(comp cordon ru)" run "bash: cordon ru<TAB> -> run"
is "$(comp cordon run --tim)" --timeout "bash: cordon run --tim<TAB> -> --timeout"
ok "bash: cordon policy <TAB> lists check" sh -c 'printf "%s\n" "$1" | grep -qx check' _ "$(comp cordon policy '')"
is "$(comp cordon policy '' | sort | tr '\n' ' ')" "check diff explain lint matrix review test " \
	"bash: ... and every policy sub-command"
is "$(comp cordon mcp pins '' | tr '\n' ' ')" "list approve diff " "bash: sub-commands two deep (mcp pins)"
is "$(comp cordon completion '' | tr '\n' ' ')" "bash zsh fish " "bash: completion's shells"
ok "bash: profile names for --profile" sh -c 'printf "%s\n" "$1" | grep -qx workspace-write' _ \
	"$(comp cordon run --profile '')"
is "$(comp cordon run --profile = w)" workspace-write "bash: --profile=w (bash splits at =)"
is "$(comp cordon policy matrix --format '' | tr '\n' ' ')" "text markdown json " \
	"bash: the values of a known set (matrix --format)"
is "$(comp cordon log show --asc)" --asciicast "bash: log show's own options ..."
is "$(comp cordon log tail --asc)" "" "bash: ... not another log command's (tail takes no --asciicast)"
is "$(comp cordon proxy --listen)" --listen "bash: cordon's internal options are not offered (proxy --listen-fd)"
mkdir "$T/d"
: >"$T/d/team.yaml"
is "$(comp cordon policy lint "$T/d/te")" "$T/d/team.yaml" "bash: policy files are completed"
is "$(comp cordon run --cwd "$T/")" "$T/d" "bash: --cwd completes directories only"
is "$(comp cordon run --timeout 5 -- ls --tim)" "" \
	"bash: after '--' the words are the command's (no cordon option)"
ok "bash: ... whose name is completed as a command" sh -c 'printf "%s\n" "$1" | grep -qx ls' _ \
	"$(comp cordon run -- ls)"

# The tables and --help agree: every command of `cordon --help`, every
# sub-command its usage names and every option its --help lists is
# completed.
cmds=$("$CORDON" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF && !/^Commands:/ {print $1}')
top=" $(bash --norc -c '. "$1"; _cordon_spec ""; echo $_cordon_subs' _ "$T/c.bash") "
missing=""
for c in $cmds; do
	case $top in *" $c "*) ;; *) missing="$missing $c" ;; esac
done
is "$missing" "" "every command of cordon --help is completed ($(echo $cmds | wc -w) commands)"

# Every command path of the script, with its sub-commands and options, one
# line each: PATH|SUBS|OPTS.
bash --norc -c '. "$1"; q=("")
	while [ ${#q[@]} -gt 0 ]; do
		p=${q[0]}; q=("${q[@]:1}")
		_cordon_spec "$p"
		echo "$p|" $_cordon_subs "|" $_cordon_opts
		for s in $_cordon_subs; do q+=("${p:+$p }$s"); done
	done' _ "$T/c.bash" >"$T/table"
ok "the script's table has every path (cordon's, the commands', their sub-commands')" \
	test "$(wc -l <"$T/table")" -gt 40
field() { grep "^$1|" "$T/table" | cut -d'|' -f"$2"; }

# The sub-commands each usage line names are completed.
missing=""
while IFS='|' read -r p subs opts; do
	[ -n "$p" ] || continue
	for s in $("$CORDON" $p --help 2>&1 | grep -oE "^(usage: +| +)cordon $p [a-z][a-z-]*( |\$)" |
		awk '{print $NF}' | sort -u); do
		case " $subs " in *" $s "*) ;; *) missing="$missing $p:$s" ;; esac
	done
done <"$T/table"
is "$missing" "" "every sub-command a usage names is completed"

# The options a command's --help lists: on its own usage lines (not its
# sub-commands') and its option lines, for every command that takes more
# than --help (the pins sub-commands share mcp's help, whose option lines
# are the gateway's).
help_opts() {
	"$CORDON" $1 --help >"$T/help" 2>&1
	{
		grep -E "^(usage:|   ) *cordon $1( |\$)" "$T/help" |
			grep -vE "cordon $1 ($(echo $2 | tr ' ' '|'))( |\$)"
		case $1 in "mcp pins"*) ;; *) grep -E '^ +(-|\[)' "$T/help" ;; esac
	} | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}
missing=""
n=0
nc=0
while IFS='|' read -r p subs opts; do
	[ -n "$p" ] || continue
	[ -n "$subs" ] && [ "$(echo $opts)" = --help ] && continue
	nc=$((nc + 1))
	for o in $(help_opts "$p" "$subs"); do
		n=$((n + 1))
		case " $opts " in *" $o "*) ;; *) missing="$missing $p:$o" ;; esac
	done
done <"$T/table"
is "$missing" "" "every option a --help lists is completed ($n options of $nc commands)"
ok "... that check saw them (run's --timeout among them)" test "$n" -gt 150
missing=""
for o in $(field run 3); do
	"$CORDON" run --help | grep -qe "$o\\b" || missing="$missing $o"
done
is "$missing" "" "and every option completed for run is in its --help"

# zsh: the script parses; under compinit it registers itself for cordon;
# its function completes (compsys's own functions stand in, printing what
# they were asked to offer).
if command -v zsh >/dev/null 2>&1; then
	"$CORDON" completion zsh >"$T/c.zsh"
	ok "zsh: it parses (zsh -n)" zsh -n "$T/c.zsh"
	is "$(HOME=$T zsh -f -c 'autoload -U compinit; compinit -u -D; . "$1"; echo $_comps[cordon]' _ "$T/c.zsh")" \
		_cordon "zsh: compinit then source: cordon's completion is _cordon"
	zcomp() {
		zsh -f -c 'compdef() { :; }; compset() { :; }; . "$1"; shift
			compadd() { while [ "$1" != -- ]; do shift; done; shift; print -l -- "$@"; }
			_files() { print -- "(files $*)"; }
			_normal() { print -- "(normal ${words[1]} $CURRENT)"; }
			_command_names() { print -- "(commands)"; }
			words=("$@"); CURRENT=$#; _cordon' _ "$T/c.zsh" "$@"
	}
	ok "zsh: cordon ru<TAB> offers run" sh -c 'printf "%s\n" "$1" | grep -qx run' _ "$(zcomp cordon ru)"
	ok "zsh: cordon run --tim<TAB> offers --timeout" sh -c 'printf "%s\n" "$1" | grep -qx -- --timeout' _ \
		"$(zcomp cordon run --tim)"
	ok "zsh: cordon policy <TAB> offers check" sh -c 'printf "%s\n" "$1" | grep -qx check' _ \
		"$(zcomp cordon policy '')"
	is "$(zcomp cordon policy lint '')" "(files )" "zsh: policy files"
	is "$(zcomp cordon run --cwd '')" "(files -/)" "zsh: --cwd directories"
	is "$(zcomp cordon run --net=n)" none "zsh: --net=<TAB> offers none"
	is "$(zcomp cordon run --timeout 1 -- ls '')" "(normal ls 2)" "zsh: after '--', the command's own completion"
	# And a real one: an interactive zsh on a pty (zpty), compinit, the
	# script sourced, then "cordon run --tim" and a TAB typed.
	cat >"$T/zpty.zsh" <<'EOF'
zmodload zsh/zpty
zpty z "HOME=$1 PS1=%% zsh -f -i"
zpty -w z "autoload -U compinit; compinit -u -D; source $2; echo READY"
out= n=0
while [[ $out != *READY*READY* ]] && (( n++ < 300 )); do
	zpty -r -t z line && out+=$line
	sleep 0.1
done
zpty -w -n z "cordon run --tim	"
out= n=0
while [[ $out != *--timeout* ]] && (( n++ < 100 )); do
	zpty -r -t z line && out+=$line
	sleep 0.1
done
print -r -- "$out"
zpty -d z
EOF
	timeout 60 zsh -f "$T/zpty.zsh" "$T" "$T/c.zsh" >"$T/zpty.out" 2>&1
	ok "zsh: typed on a terminal, cordon run --tim<TAB> becomes --timeout" grep -q 'cordon run --timeout' "$T/zpty.out"
else
	skip "zsh is not installed (scripts/deps.sh test)"
fi

# fish: the script parses, and fish's own completion engine answers.
if command -v fish >/dev/null 2>&1; then
	"$CORDON" completion fish >"$T/c.fish"
	ok "fish: it parses (fish -n)" fish -n "$T/c.fish"
	fcomp() {
		(cd "$T/d" && HOME=$T fish --no-config -c 'source $argv[1]; complete -C $argv[2]' "$T/c.fish" "$1" | cut -f1)
	}
	is "$(fcomp 'cordon ru')" run "fish: cordon ru<TAB> -> run"
	is "$(fcomp 'cordon run --tim')" --timeout "fish: cordon run --tim<TAB> -> --timeout"
	ok "fish: cordon policy <TAB> offers check" sh -c 'printf "%s\n" "$1" | grep -qx check' _ \
		"$(fcomp 'cordon policy ')"
	is "$(fcomp 'cordon completion ' | sort | tr '\n' ' ')" "bash fish zsh " "fish: completion's shells"
	ok "fish: profile names for --profile" sh -c 'printf "%s\n" "$1" | grep -qx strict' _ \
		"$(fcomp 'cordon run --profile ')"
	is "$(fcomp 'cordon policy lint te')" team.yaml "fish: policy files"
	is "$(fcomp 'cordon log tail --asc')" "" "fish: log tail takes no --asciicast"
else
	skip "fish is not installed (scripts/deps.sh test)"
fi

# An unknown shell is a usage error, in one line, with nothing printed.
"$CORDON" completion tcsh >"$T/out" 2>"$T/err"
is "$?" 2 "an unknown shell: exit 2"
ok "... with one line naming it" grep -qx "cordon completion: unknown shell 'tcsh' (bash, zsh or fish)" "$T/err"
is "$(wc -c <"$T/out")" 0 "... and no script"
refused "no shell: refused" 'name one shell' "$CORDON" completion

done_testing
