# Helpers for the shell tests (tests/*.test.sh): each check prints
# "PASS name" or "FAIL name" with what went wrong; run-tests.sh counts them.
# TRAINJOB_BIN and TRAINJOB_TOP are set by run-tests.sh.
: "${TRAINJOB_TOP:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${TRAINJOB_BIN:=$TRAINJOB_TOP/build/trainjob}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# TERM or INT (run-tests.sh stopping an interrupted run) ends the suite through
# its EXIT trap, which stops what it started; a suite's own `trap … EXIT` keeps these.
trap 'exit 143' TERM
trap 'exit 130' INT
# A home of the suite's own: what a client keeps in ~ (drafts, its state, an
# engine it starts on demand) is never another suite's, nor the user's.
export HOME="$TMP/home"
mkdir -p "$HOME"
unset XDG_CONFIG_HOME XDG_STATE_HOME XDG_DATA_HOME XDG_CACHE_HOME XDG_RUNTIME_DIR

# Where suites running side by side on this machine (run-tests.sh runs them in
# parallel, other trees may too) coordinate: the port reservations and the
# locks below. One per Unix user: the files are written as that user.
TJ_TEST_SHARED="${TMPDIR:-/tmp}/trainjob-tests-$(id -u)"
export TJ_TEST_SHARED
mkdir -p "$TJ_TEST_SHARED" 2>/dev/null && chmod 700 "$TJ_TEST_SHARED" 2>/dev/null

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
# by side start apart, and reserved for this suite while it runs (in
# $TJ_TEST_SHARED/ports, under a lock): a suite that picks before another has
# bound what it picked passes over it. Fails after 100 taken tries.
free_port() {
    (
        flock -w 60 9 || { echo "free_port: no lock on $TJ_TEST_SHARED/ports.lock" >&2; exit 1; }
        _free_port_locked "${1:-1}"
    ) 9>>"$TJ_TEST_SHARED/ports.lock"
}
_free_port_locked() {
    _span=$1
    _reg="$TJ_TEST_SHARED/ports"
    # The reservations of suites still running ($$ of each; a reused pid only keeps a few ports idle).
    touch "$_reg"
    while read -r _o _lo _hi; do
        [ -d "/proc/$_o" ] && echo "$_o $_lo $_hi"
    done <"$_reg" >"$_reg.new"
    mv "$_reg.new" "$_reg"
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
        _q=$((_p + _span - 1))
        # /proc/net/tcp{,6}: field 2 is LOCALADDR:PORT, the port in hex.
        if awk -v lo="$_p" -v hi="$_q" '$2 <= hi && $3 >= lo { exit 1 }' "$_reg" &&
            awk -v lo="$_p" -v hi="$_q" '
            function hex(s,  i, v) {
                v = 0
                for (i = 1; i <= length(s); i++)
                    v = v * 16 + index("0123456789ABCDEF", toupper(substr(s, i, 1))) - 1
                return v
            }
            FNR > 1 { n = split($2, a, ":"); p = hex(a[n]); if (p >= lo && p <= hi) taken = 1 }
            END { exit taken ? 1 : 0 }' $_tables; then
            echo "$$ $_p $_q" >>"$_reg"
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
    # Under the lock every suite (and tests/slurm/cluster.sh) takes to add users:
    # suites run side by side, and useradd fails while another holds /etc/passwd.
    (
        flock -w 120 9 || { echo "tj_users: no lock on $TJ_TEST_SHARED/users.lock" >&2; exit 1; }
        # A root-run trainjobd adding its own user holds /etc/passwd too: tried again.
        _n=0
        until getent group "$TJ_TEAM" >/dev/null || groupadd "$TJ_TEAM"; do
            _n=$((_n + 1))
            [ $_n -lt 5 ] || exit 1
            sleep 1
        done
        for _u in "$TJ_ALICE" "$TJ_BOB"; do
            _n=0
            until getent passwd "$_u" >/dev/null ||
                useradd --create-home --shell /bin/sh --user-group --groups "$TJ_TEAM" "$_u"; do
                _n=$((_n + 1))
                [ $_n -lt 5 ] || exit 1
                sleep 1
            done
        done
    ) 9>>"$TJ_TEST_SHARED/users.lock" || return 1
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

# signed_home USER SK NAME=PORT… : a HOME for USER under $TMP/users (which
# shared_tmp made) whose config.yaml has one context NAME a pair, a trainjobd
# on 127.0.0.1:PORT in workspace team, signed with access key AK<SK without
# "SK"> and secret key SK; all USER's own, 0700 and 0600.
signed_home() {
    _h="$TMP/users/$1"
    _sk=$2
    mkdir -p "$_h/.config/trainjob"
    printf '%s\n' "$_sk" >"$_h/.config/trainjob/key.sk"
    echo "contexts:" >"$_h/.config/trainjob/config.yaml"
    _u=$1
    shift 2
    for _c in "$@"; do
        printf '%s\n' "- name: ${_c%%=*}" "  driver: trainjobd" \
            "  endpoint: http://127.0.0.1:${_c#*=}" "  workspace: team" \
            "  access_key: AK${_sk#SK}" "  secret_key_file: $_h/.config/trainjob/key.sk"
    done >>"$_h/.config/trainjob/config.yaml"
    chown -R "$_u:$_u" "$_h"
    chmod 0700 "$_h"
    chmod 0600 "$_h/.config/trainjob/key.sk" "$_h/.config/trainjob/config.yaml"
}

# column_starts FILE : the distinct sets of where the columns of FILE's lines
# start, one set a line ("1,9,16,"): a column starts after three spaces or
# more, as trainjob pads its tables (a cell holds single spaces: "DISPLAY NAME")
column_starts() {
    LC_ALL=C.UTF-8 awk '{ s = ""; sp = 3
        for (i = 1; i <= length($0); i++) {
            c = substr($0, i, 1)
            if (c == " ") { sp++; continue }
            if (sp >= 3) s = s i ","
            sp = 0
        }
        print s }' "$1" | sort -u | tr '\n' ' '
}
