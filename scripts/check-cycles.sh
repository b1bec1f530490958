#!/bin/sh
# Checks that the objects of some folders use each other without a cycle:
# an edge A -> B where A.o needs a function or variable B.o defines (nm),
# sorted with tsort, which names a loop when there is one. ARCHITECTURE.md:
# "arrows point from user to used; nothing points back" — within tui/ and
# cli/ too (the app core and its screens, the verb table and its verbs).
# usage: scripts/check-cycles.sh BUILD_DIR DIR...   (from the top of the tree)
#        exits 1 and names the objects of a loop
set -u
build=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# defs: "SYMBOL OBJECT" for every global definition; uses: "SYMBOL OBJECT" for every need.
for d in "$@"; do
    for o in "$build/$d"/*.o; do
        [ -f "$o" ] || continue
        name=$d/$(basename "$o" .o)
        # An object whose source is gone (moved, in an older build dir) is no part of the tree.
        if [ -d "$d" ] && [ ! -f "$name.c" ]; then continue; fi
        nm "$o" | awk -v n="$name" '
            NF == 3 && $2 ~ /^[TDBRCGSV]$/ { print $3, n >> "'"$tmp/defs"'" }
            NF == 2 && $1 == "U" { print $2, n >> "'"$tmp/uses"'" }'
        echo "$name $name" >>"$tmp/edges" # every object is a node, used or not
    done
done
[ -f "$tmp/defs" ] && [ -f "$tmp/uses" ] || exit 0
# user used, for each need another object of these folders defines
awk 'NR == FNR { def[$1] = $2; next } ($1 in def) && def[$1] != $2 { print $2, def[$1] }' \
    "$tmp/defs" "$tmp/uses" | sort -u >>"$tmp/edges"
if ! tsort "$tmp/edges" >/dev/null 2>"$tmp/loop"; then
    echo "a dependency cycle among the objects of $*:"
    sed -n 's/^tsort: \([^:]*\)$/  \1/p' "$tmp/loop" | sort -u
    exit 1
fi
exit 0
