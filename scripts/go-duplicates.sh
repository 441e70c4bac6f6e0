#!/usr/bin/env bash
# Repeated Go code, as issue #8 counts it: the workplace's `duplicates` tool
# over the repository's .go files (tracked and untracked, not ignored),
# leaving out generated ones (headed "// Code generated … DO NOT EDIT"), so
# that the generated assembly twins and their declarations do not bury the
# hand-written pairs:
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
	cp "$f" "$tmp/$f"
done
cd "$tmp"
duplicates --seconds 200 "$@"
