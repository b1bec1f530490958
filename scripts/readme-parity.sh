#!/bin/sh
# The README's parity table: print it (no TABLE), check it against TABLE
# (--check: exit 1 and a diff when they differ), or replace it with TABLE
# (the table tests/conformance.test.sh writes; `make conformance` leaves it
# in build/conformance.md).
# usage: scripts/readme-parity.sh [--check] [TABLE] [README]
set -u
check=0
if [ "${1:-}" = --check ]; then
    check=1
    shift
fi
table=${1:-}
readme=${2:-README.md}
# The table: from its heading row to the first line that is no row.
current() { awk '/^\| scenario \|/ { t = 1 } t && !/^\|/ { exit } t' "$readme"; }
if [ -z "$table" ]; then
    current
    exit 0
fi
[ -s "$table" ] || { echo "readme-parity: $table: no table" >&2; exit 2; }
[ -n "$(current)" ] || { echo "readme-parity: $readme has no '| scenario |' table" >&2; exit 2; }
if [ "$check" = 1 ]; then
    tmp=$(mktemp)
    current >"$tmp"
    if cmp -s "$tmp" "$table"; then
        rm -f "$tmp"
        exit 0
    fi
    diff -u "$tmp" "$table" | sed 's/^/    /'
    rm -f "$tmp"
    exit 1
fi
tmp=$(mktemp "$readme.XXXXXX")
awk -v tf="$table" '
    /^\| scenario \|/ && !done { while ((getline l < tf) > 0) print l; skip = 1; done = 1; next }
    skip && /^\|/ { next }
    { skip = 0; print }' "$readme" >"$tmp" && mv "$tmp" "$readme"
