#!/usr/bin/env bash
# Repeated Go code, as issue #8 counts it: the workplace's `duplicates` tool
# over the repository's .go files (tracked and untracked, not ignored),
# leaving out generated ones (headed "// Code generated … DO NOT EDIT"), so
# that the generated assembly twins and their declarations do not bury the
# hand-written pairs, and with import blocks blanked (see below):
#
#   scripts/go-duplicates.sh [duplicates flags, e.g. --most 200]
#   scripts/go-duplicates.sh --change [--base REV]   (what came since REV)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v duplicates >/dev/null || { echo "go-duplicates: the duplicates tool is not on PATH" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# With --change [--base REV], the tool compares against a git history, which
# the filtered copy has not: give it one, REV's files (HEAD's by default)
# filtered the same way as the first commit, the working tree's over them.
change=0 base=HEAD args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--change) change=1 ;;
	--base) base=$2; shift ;;
	*) args+=("$1") ;;
	esac
	shift
done

# filter SRC DEST writes a .go file's copy with its import block blanked,
# or nothing for a generated file. The tool passes over import lines, but
# only the one-line form: inside a parenthesised block it reads each path
# as code, and files of one package pair by their import lists alone.
# Blank the block's lines (numbers kept).
filter() {
	grep -q '^// Code generated .* DO NOT EDIT' "$1" && return 0
	mkdir -p "$(dirname "$2")"
	awk '/^import \($/ { print; inblk = 1; next }
	     inblk && /^\)$/ { print; inblk = 0; next }
	     inblk { print ""; next }
	     { print }' "$1" > "$2"
}

if [ $change = 1 ]; then
	git rev-parse --verify -q "$base^{commit}" >/dev/null || { echo "go-duplicates: --base $base is not a commit" >&2; exit 2; }
	git init -q "$tmp"
	old=$(mktemp -d)
	trap 'rm -rf "$tmp" "$old"' EXIT
	git archive "$base" | tar -x -C "$old"
	(cd "$old" && find . -name '*.go' -type f) | while read -r f; do
		filter "$old/$f" "$tmp/$f"
	done
	git -C "$tmp" add -A
	git -C "$tmp" -c user.name=go-duplicates -c user.email=none commit -q --allow-empty -m base
	find "$tmp" -path "$tmp/.git" -prune -o -name '*.go' -type f -exec rm {} +
fi
git ls-files -co --exclude-standard -- '*.go' | while read -r f; do
	[ -f "$f" ] || continue
	filter "$f" "$tmp/$f"
done
cd "$tmp"
if [ $change = 1 ]; then
	duplicates --seconds 200 --change ${args[@]+"${args[@]}"}
else
	duplicates --seconds 200 ${args[@]+"${args[@]}"}
fi
