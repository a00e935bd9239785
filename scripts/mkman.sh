#!/usr/bin/env bash
# mkman.sh BIN TEMPLATE: a man page from its template (docs/man/*.in), the lines
# `.\" @COMMANDS@` and `.\" @COMMON@` replaced by what `BIN --dump-man commands`
# and `BIN --dump-man common` print: every command's synopsis and options from
# the option tables the tool parses with (user/lib/optab.c), and the number,
# unit and exit-status sections all the tools share. `make man` writes
# docs/*.[18] with it; tests/cli checks that they are what it writes now.
set -euo pipefail
bin=$1 template=$2
commands=$(mktemp) common=$(mktemp)
trap 'rm -f "$commands" "$common"' EXIT
"$bin" --dump-man commands >"$commands"
"$bin" --dump-man common >"$common"
while IFS= read -r line; do
	case $line in
	'.\" @COMMANDS@') cat "$commands" ;;
	'.\" @COMMON@') cat "$common" ;;
	*) printf '%s\n' "$line" ;;
	esac
done <"$template"
