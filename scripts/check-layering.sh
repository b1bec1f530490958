#!/bin/sh
# Checks the dependency direction ARCHITECTURE.md draws, by #include lines:
#   util     uses nothing of ours
#   themes   util only
#   api      util only; no curses
#   widgets  util and themes; nothing from api, tui or engine
#   engine   util and api; no curses, no curl
#   tui      anything but cli/
#   cli      util, api and tui/tui.h (the full-screen programs' entry points) only
# and, given the build's objects, that no circle closes inside a folder
# (scripts/check-cycles.sh, by the functions each object uses): engine/
# and api/ between modules (the engine core is one, engine.h its
# interface; each driver registers in api/drivers.c instead of backend.c
# knowing it), tui/ and cli/ between objects.
# usage: scripts/check-layering.sh [ROOT [BUILD_DIR]]   exits 1 and names each violation
set -u
root=${1:-.}
build=${2:-}
status=0

# forbid DIR REGEX WHY [ALLOWED]: no file under ROOT/DIR may have an include
# matching REGEX, unless it is of the header ALLOWED (a regex) names
forbid() {
    [ -d "$root/$1" ] || return 0
    hits=$(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]($2)" "$root/$1" \
        --include='*.c' --include='*.h' 2>/dev/null)
    if [ -n "$hits" ] && [ -n "${4:-}" ]; then
        hits=$(printf '%s\n' "$hits" | grep -vE "#[[:space:]]*include[[:space:]]*[<\"]($4)[\">]")
    fi
    if [ -n "$hits" ]; then
        echo "$hits" | sed "s|^$root/||; s|\$|  <- $3|"
        status=1
    fi
}

curses='n?curses\.h|ncursesw/|curses\.h|panel\.h|form\.h|menu\.h|term\.h'
forbid util "$curses|(\.\./)?(api|widgets|tui|cli|engine|themes)/" "util/ depends on nothing of ours"
forbid themes "$curses|(\.\./)?(api|widgets|tui|cli|engine)/" "themes/ may use util/ only"
forbid api "$curses|(\.\./)?(widgets|tui|cli|engine|themes)/" "api/ must not know curses or the layers above it"
forbid widgets "(\.\./)?(api|tui|cli|engine)/" "widgets/ are generic: no api/, tui/, cli/ or engine/"
forbid engine "$curses|curl/|(\.\./)?(widgets|tui|cli|themes)/" "engine/ has no curses, no curl, no UI"
forbid tui "(\.\./)?cli/" "tui/ is entered from cli/, never the other way"
forbid cli "$curses|(\.\./)?(widgets|themes|engine|tui)/" \
    "cli/ uses api/, util/ and only tui/tui.h of tui/" '(\.\./)?tui/tui\.h'
if [ -n "$build" ]; then
    here=$(cd "$(dirname "$0")" && pwd)
    (cd "$root" && "$here/check-cycles.sh" -m "$build" engine) || status=1
    (cd "$root" && "$here/check-cycles.sh" -m "$build" api) || status=1
    (cd "$root" && "$here/check-cycles.sh" "$build" tui cli) || status=1
fi
exit $status
