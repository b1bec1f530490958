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

# Allowed includes are not flagged.
t="$TMP/tree-ok"
mkdir -p "$t/widgets" "$t/engine"
printf '#include "util/strbuf.h"\n#include <curses.h>\n' >"$t/widgets/ok.c"
printf '#include "api/jobspec.h"\n' >"$t/engine/ok.c"
run scripts/check-layering.sh "$t"
expect_rc "allowed includes pass" 0

# trainjob loads libcurl (and the TLS, Kerberos and LDAP libraries it brings)
# only when a TCP endpoint needs it (api/curl_dl): the binary must not need it.
TJ_BIN=${TRAINJOB_BIN:-build/trainjob}
if [ -x "$TJ_BIN" ] && command -v readelf >/dev/null 2>&1; then
    readelf -d "$TJ_BIN" >"$TMP/needed" 2>&1
    expect_grep "trainjob's dynamic section is readable" "$TMP/needed" NEEDED
    expect_no_grep "trainjob does not link libcurl" "$TMP/needed" libcurl
fi
