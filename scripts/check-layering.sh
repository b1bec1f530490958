#!/bin/sh
# Checks the dependency direction ARCHITECTURE.md draws, by #include lines:
#   util     uses nothing of ours
#   themes   util only
#   api      util only; no curses
#   widgets  util and themes; nothing from api, tui or engine
#   engine   util and api; no curses, no curl
#   tui      anything
# usage: scripts/check-layering.sh [ROOT]   exits 1 and names each violation
set -u
root=${1:-.}
status=0

# forbid DIR REGEX WHY: no file under ROOT/DIR may have an include matching REGEX
forbid() {
    [ -d "$root/$1" ] || return 0
    hits=$(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($2)" "$root/$1" \
        --include='*.c' --include='*.h' 2>/dev/null)
    if [ -n "$hits" ]; then
        echo "$hits" | sed "s|^$root/||; s|\$|  <- $3|"
        status=1
    fi
}

curses='n?curses\.h|ncursesw/|curses\.h|panel\.h|form\.h|menu\.h|term\.h'
forbid util "$curses|(\.\./)?(api|widgets|tui|engine|themes)/" "util/ depends on nothing of ours"
forbid themes "$curses|(\.\./)?(api|widgets|tui|engine)/" "themes/ may use util/ only"
forbid api "$curses|(\.\./)?(widgets|tui|engine|themes)/" "api/ must not know curses or the layers above it"
forbid widgets "(\.\./)?(api|tui|engine)/" "widgets/ are generic: no api/, tui/ or engine/"
forbid engine "$curses|curl/|(\.\./)?(widgets|tui|themes)/" "engine/ has no curses, no curl, no UI"
exit $status
