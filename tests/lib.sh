# Helpers for the shell tests (tests/*.test.sh): each check prints
# "PASS name" or "FAIL name" with what went wrong; run-tests.sh counts them.
# TRAINJOB_BIN and TRAINJOB_TOP are set by run-tests.sh.
: "${TRAINJOB_TOP:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${TRAINJOB_BIN:=$TRAINJOB_TOP/build/trainjob}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1${2:+: $2}"; }

# run CMD… : runs it, keeping stdout in $TMP/out, stderr in $TMP/err, status in $rc
run() {
    "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
}

# expect_rc NAME WANT : checks the status of the last run
expect_rc() {
    if [ "$rc" -eq "$2" ]; then pass "$1"; else
        fail "$1" "exit $rc, want $2; stderr: $(head -c 600 "$TMP/err")"
    fi
}

# expect_grep NAME FILE PATTERN : the file has a line matching the fixed string
expect_grep() {
    if grep -qF -- "$3" "$2"; then pass "$1"; else
        fail "$1" "no '$3' in $(basename "$2"): $(head -c 600 "$2")"
    fi
}

expect_no_grep() {
    if grep -qF -- "$3" "$2"; then fail "$1" "unexpected '$3' in $(basename "$2")"; else
        pass "$1"
    fi
}
