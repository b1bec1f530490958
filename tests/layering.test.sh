# The layering check passes on the tree and catches each kind of violation.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1

run scripts/check-layering.sh .
expect_rc "the tree keeps the layering" 0

# A scratch tree per forbidden include: each must be caught and named.
check_violation() { # name dir file include
    t="$TMP/tree-$1"
    mkdir -p "$t/$2"
    printf '#include %s\nint x;\n' "$4" >"$t/$2/$3"
    run scripts/check-layering.sh "$t"
    expect_rc "$1 is caught" 1
    expect_grep "$1 is named" "$TMP/out" "$2/$3"
}
check_violation "curses in api" api bad.c '<curses.h>'
check_violation "ncursesw in engine" engine bad.c '<ncursesw/curses.h>'
check_violation "curl in engine" engine bad.h '<curl/curl.h>'
check_violation "curses in util" util bad.c '<ncurses.h>'
check_violation "api in widgets" widgets bad.c '"api/jobspec.h"'
check_violation "tui in widgets" widgets bad.c '"../tui/app.h"'
check_violation "tui in api" api bad.c '"tui/cli.h"'
check_violation "cli in api" api bad.c '"cli/cli.h"'
check_violation "cli in engine" engine bad.c '"cli/cli.h"'
check_violation "cli in widgets" widgets bad.h '"../cli/cli.h"'
# tui/ is entered from cli/ through tui/tui.h; nothing points back.
check_violation "cli in tui" tui bad.c '"cli/cli.h"'
check_violation "cli in a tui header" tui bad.h '"../cli/cli.h"'
# cli/ knows api/, util/ and tui/tui.h: no other tui/ header, no curses, no widgets.
check_violation "a tui screen in cli" cli bad.c '"tui/monitor_app.h"'
check_violation "a tui header beside tui.h in cli" cli bad.c '"tui/tui.hh"'
check_violation "curses in cli" cli bad.c '<curses.h>'
check_violation "widgets in cli" cli bad.h '"widgets/table.h"'
check_violation "themes in cli" cli bad.c '"themes/theme.h"'
check_violation "engine in cli" cli bad.c '"engine/store.h"'

# One bad include among allowed ones is still caught, and only it is named.
t="$TMP/tree-mixed"
mkdir -p "$t/cli"
printf '#include "tui/tui.h"\n#include "tui/wizard.h"\n#include "api/backend.h"\n' >"$t/cli/mixed.c"
run scripts/check-layering.sh "$t"
expect_rc "a tui header next to tui.h in cli is caught" 1
expect_grep "the screen header is named" "$TMP/out" 'cli/mixed.c:2:#include "tui/wizard.h"'
expect_no_grep "the entry header is not named" "$TMP/out" 'cli/mixed.c:1:'
expect_no_grep "an api header in cli is not named" "$TMP/out" 'cli/mixed.c:3:'

# Allowed includes are not flagged.
t="$TMP/tree-ok"
mkdir -p "$t/widgets" "$t/engine" "$t/cli" "$t/tui"
printf '#include "util/strbuf.h"\n#include <curses.h>\n' >"$t/widgets/ok.c"
printf '#include "api/jobspec.h"\n' >"$t/engine/ok.c"
printf '#include "api/session.h"\n#include "util/exitstatus.h"\n#include "tui/tui.h"\n' >"$t/cli/ok.c"
printf '#include "tui/app.h"\n#include "api/backend.h"\n#include <curses.h>\n' >"$t/tui/ok.c"
run scripts/check-layering.sh "$t"
expect_rc "allowed includes pass" 0

# No dependency cycle among the objects of tui/ and cli/ (scripts/check-cycles.sh:
# who uses whose functions, by nm): the app's core, its screens and its parts,
# and the verb table and its verbs, each point one way.
BUILD_DIR=$(dirname "${TRAINJOB_BIN:-build/trainjob}")
if [ -f "$BUILD_DIR/tui/monitor.o" ]; then
    run scripts/check-cycles.sh "$BUILD_DIR" tui cli
    expect_rc "tui/ and cli/ objects use each other without a cycle" 0
fi
if command -v cc >/dev/null 2>&1 && command -v nm >/dev/null 2>&1; then
    mkdir -p "$TMP/cyc/x"
    printf 'void b(void);\nvoid a(void);\nvoid a(void) { b(); }\n' >"$TMP/cyc/a.c"
    printf 'void a(void);\nvoid b(void);\nvoid b(void) { a(); }\nint c;\n' >"$TMP/cyc/b.c"
    printf 'extern int c;\nint d(void);\nint d(void) { return c; }\n' >"$TMP/cyc/d.c"
    for f in a b d; do cc -c "$TMP/cyc/$f.c" -o "$TMP/cyc/x/$f.o"; done
    run scripts/check-cycles.sh "$TMP/cyc" x
    expect_rc "a cycle between two objects is caught" 1
    expect_grep "...and its first object is named" "$TMP/out" "x/a"
    expect_grep "...and its second object is named" "$TMP/out" "x/b"
    expect_no_grep "...and an object outside it is not" "$TMP/out" "x/d"
    rm "$TMP/cyc/x/a.o"
    run scripts/check-cycles.sh "$TMP/cyc" x
    expect_rc "a one-way use (d needs b's variable) passes" 0
fi
run scripts/check-cycles.sh
expect_rc "check-cycles.sh run bare says how to run it" 2
expect_grep "...naming its arguments" "$TMP/err" "BUILD_DIR DIR"

# trainjob loads libcurl (and the TLS, Kerberos and LDAP libraries it brings)
# only when a TCP endpoint needs it (api/curl_dl): the binary must not need it.
TJ_BIN=${TRAINJOB_BIN:-build/trainjob}
if [ -x "$TJ_BIN" ] && command -v readelf >/dev/null 2>&1; then
    readelf -d "$TJ_BIN" >"$TMP/needed" 2>&1
    expect_grep "trainjob's dynamic section is readable" "$TMP/needed" NEEDED
    expect_no_grep "trainjob does not link libcurl" "$TMP/needed" libcurl
fi

# Circles between modules (scripts/check-layering.sh ROOT BUILD_DIR runs
# scripts/check-cycles.sh -m on engine/ and api/): the tree has none — the
# engine core is one module with engine.h its interface, the drivers register
# in api/drivers.c — and one closed through a module's header is caught.
if [ -f "$BUILD_DIR/engine/engine.o" ] && [ -f "$BUILD_DIR/api/drivers.o" ]; then
    run scripts/check-layering.sh . "$(cd "$BUILD_DIR" && pwd)"
    expect_rc "engine/ and api/ modules use each other without a circle" 0
    # The circles the issue named stay gone: backend.c knows no driver.
    run sh -c 'nm "$1/api/backend.o" | grep -E " U (acp|slurm)_"' sh "$BUILD_DIR"
    expect_rc "api/backend.o uses no driver's function" 1
fi
if command -v cc >/dev/null 2>&1 && command -v nm >/dev/null 2>&1; then
    t="$TMP/modcyc"
    mkdir -p "$t/engine" "$t/build/engine"
    printf 'void core_a(void);\nvoid core_b(void);\nvoid other_use(void);\n' >"$t/engine/core.h"
    printf 'void other_use(void);\n' >"$t/engine/other.h"
    # core_a and core_b (no headers of their own, opening with core.h) call each other: one module.
    printf '#include "engine/core.h"\nvoid core_a(void) { core_b(); }\n' >"$t/engine/core_a.c"
    printf '#include "engine/core.h"\nvoid core_b(void) { core_a(); }\n' >"$t/engine/core_b.c"
    printf '#include "engine/other.h"\nint other_x;\nvoid other_use(void) { other_x++; }\n' >"$t/engine/other.c"
    build_modcyc() {
        for f in core_a core_b other; do
            cc -I"$t" -c "$t/engine/$f.c" -o "$t/build/engine/$f.o" || return 1
        done
    }
    build_modcyc
    run scripts/check-layering.sh "$t" "$t/build"
    expect_rc "files of one module calling each other are no circle" 0
    # other (its own module) now calls back into the core that uses it.
    printf '#include "engine/other.h"\n#include "engine/core.h"\nint other_x;\nvoid other_use(void) { other_x++; core_a(); }\n' >"$t/engine/other.c"
    printf '#include "engine/core.h"\nvoid core_b(void) { core_a(); other_use(); }\n' >"$t/engine/core_b.c"
    build_modcyc
    run scripts/check-layering.sh "$t" "$t/build"
    expect_rc "a circle between two modules is caught" 1
    expect_grep "...and the core module is named" "$TMP/out" "engine/core"
    expect_grep "...and the other module is named" "$TMP/out" "engine/other"
    expect_no_grep "...by module, not by file" "$TMP/out" "engine/core_b"
fi
