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

# free_port [SPAN] : prints a port P such that P…P+SPAN-1 (SPAN 1) are all
# unbound now and below the kernel's ephemeral range, where no outgoing
# connection takes its local port: a listener there can only collide with
# another listener, which this checks. Chosen from the pid, so suites run side
# by side start apart; fails after 100 taken tries.
free_port() {
    _span=${1:-1}
    # (not `read`: dash reads a byte at a time, which /proc/sys answers badly)
    _eph=$(awk '{ print $1 }' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
    case $_eph in '' | *[!0-9]*) _eph=32768 ;; esac
    _slots=$(((_eph - 10000) / _span))
    [ "$_slots" -ge 1 ] || _slots=$(((65535 - 10000) / _span))
    # tcp6 is missing where IPv6 is off; a table awk cannot open would read as "taken".
    _tables=""
    for _t in /proc/net/tcp /proc/net/tcp6; do [ -r "$_t" ] && _tables="$_tables $_t"; done
    [ -n "$_tables" ] || _tables=/dev/null
    _try=0
    while [ $_try -lt 100 ]; do
        _p=$((10000 + (($$ + _try * 7919) % _slots) * _span))
        # /proc/net/tcp{,6}: field 2 is LOCALADDR:PORT, the port in hex.
        if awk -v lo="$_p" -v hi="$((_p + _span - 1))" '
            function hex(s,  i, v) {
                v = 0
                for (i = 1; i <= length(s); i++)
                    v = v * 16 + index("0123456789ABCDEF", toupper(substr(s, i, 1))) - 1
                return v
            }
            FNR > 1 { n = split($2, a, ":"); p = hex(a[n]); if (p >= lo && p <= hi) taken = 1 }
            END { exit taken ? 1 : 0 }' $_tables; then
            echo "$_p"
            return 0
        fi
        _try=$((_try + 1))
    done
    return 1
}

# Two ordinary Unix users for the tests that matter on a shared cluster
# (issue 20): TJ_ALICE and TJ_BOB, both in the group TJ_TEAM (a team that
# shares a workspace directory), and `nobody` as the outsider. Made when
# missing, which needs root; a suite that needs them and cannot have them
# says so and fails rather than passing as one user.
TJ_ALICE=tj-alice
TJ_BOB=tj-bob
TJ_TEAM=tj-team
tj_users() {
    [ "$(id -u)" -eq 0 ] || { echo "tj_users: needs root to make $TJ_ALICE and $TJ_BOB" >&2; return 1; }
    getent group "$TJ_TEAM" >/dev/null || groupadd "$TJ_TEAM" || return 1
    for _u in "$TJ_ALICE" "$TJ_BOB"; do
        getent passwd "$_u" >/dev/null ||
            useradd --create-home --shell /bin/sh --user-group --groups "$TJ_TEAM" "$_u" || return 1
    done
    id nobody >/dev/null || return 1
}

# as_user USER CMD… : runs CMD as USER (own uid, gid and groups, HOME and
# USER set, the environment otherwise kept), the way that user's shell would.
as_user() {
    _u=$1
    shift
    _home=$(getent passwd "$_u" | cut -d: -f6)
    setpriv --reuid="$_u" --regid="$_u" --init-groups -- \
        env HOME="${_home:-/nonexistent}" USER="$_u" LOGNAME="$_u" "$@"
}

# shared_tmp DIR : a directory every test user can reach (o+x on it and its
# parents' chain under $TMP), for files two users' clients must both see.
shared_tmp() {
    mkdir -p "$1" && chmod 0755 "$TMP" "$1"
}
