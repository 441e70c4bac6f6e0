#!/usr/bin/env bash
# Repeated Go code, as issue #8 counts it: the workplace's `duplicates` tool
# over the repository's .go files (tracked and untracked, not ignored),
# leaving out generated ones (headed "// Code generated … DO NOT EDIT"), so
# that the generated assembly twins and their declarations do not bury the
# hand-written pairs, and with import blocks blanked (see below):
#
#   scripts/go-duplicates.sh [duplicates flags, e.g. --most 200]
set -euo pipefail
cd "$(dirname "$0")/.."
command -v duplicates >/dev/null || { echo "go-duplicates: the duplicates tool is not on PATH" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git ls-files -co --exclude-standard -- '*.go' | while read -r f; do
	[ -f "$f" ] || continue
	grep -q '^// Code generated .* DO NOT EDIT' "$f" && continue
	mkdir -p "$tmp/$(dirname "$f")"
	# The tool passes over import lines, but only the one-line form: inside a
	# parenthesised block it reads each path as code, and files of one package
	# pair by their import lists alone. Blank the block's lines (numbers kept).
	awk '/^import \($/ { print; inblk = 1; next }
	     inblk && /^\)$/ { print; inblk = 0; next }
	     inblk { print ""; next }
	     { print }' "$f" > "$tmp/$f"
done
cd "$tmp"
duplicates --seconds 200 "$@"
