#!/bin/sh
# Checks that the objects of some folders use each other without a cycle:
# an edge A -> B where A.o needs a function or variable B.o defines (nm),
# sorted with tsort, which names a loop when there is one. ARCHITECTURE.md:
# "arrows point from user to used; nothing points back" — within tui/ and
# cli/ too (the app core and its screens, the verb table and its verbs).
#
# With -m, the nodes are modules, not objects: X.c belongs to module X when
# X.h or X_priv.h is there, else (X = P_Q) to module P when P.h or P_priv.h
# is (engine/shim_init.c is shim's), else to the module its first #include
# names when that is a header of its own folder (a file without a header
# opens with the interface it implements, as engine/lifecycle.c opens with
# engine/engine.h); any other file is a module of its own. A head comment
# line " * module: NAME — why" puts a file in module NAME outright (two
# halves of one model, as api/jobspec_json.c is jobspec's). A group of files
# that call each other freely is then one module, and only a loop between
# modules is reported.
# usage: scripts/check-cycles.sh [-m] BUILD_DIR DIR...   (from the top of the tree)
#        exits 1 and names the objects (modules, with -m) of a loop
set -u
modules=0
if [ "${1:-}" = -m ]; then
    modules=1
    shift
fi
if [ $# -lt 2 ]; then
    echo "usage: scripts/check-cycles.sh [-m] BUILD_DIR DIR..." >&2
    exit 2
fi
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
        if [ "$modules" = 1 ] && [ -f "$name.c" ]; then
            stem=$(basename "$name")
            pre=${stem%%_*}
            said=$(sed -n '1,/\*\//s/^ \* module: \([A-Za-z0-9_]*\).*/\1/p' "$name.c" | head -n 1)
            if [ -n "$said" ]; then
                name=$d/$said
            elif [ -f "$d/$stem.h" ] || [ -f "$d/${stem}_priv.h" ]; then
                :
            elif [ "$pre" != "$stem" ] && { [ -f "$d/$pre.h" ] || [ -f "$d/${pre}_priv.h" ]; }; then
                name=$d/$pre
            else
                own=$(grep -m 1 -E '^[[:space:]]*#[[:space:]]*include' "$name.c" |
                    sed -n "s|^[[:space:]]*#[[:space:]]*include[[:space:]]*\"$d/\([A-Za-z0-9_]*\)\.h\".*|\1|p")
                [ -n "$own" ] && name=$d/${own%_priv}
            fi
        fi
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
    if [ "$modules" = 1 ]; then what=modules; else what=objects; fi
    echo "a dependency cycle among the $what of $*:"
    sed -n 's/^tsort: \([^:]*\)$/  \1/p' "$tmp/loop" | sort -u
    exit 1
fi
exit 0
