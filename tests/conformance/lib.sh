# The conformance suite's own helpers (tests/conformance.test.sh sources
# this after tests/lib.sh): how a scenario runs the CLI on the backend under
# test, how its checks are counted, and the parity table.
#
# A backend file (tests/conformance/backends/B.sh) defines backend_up,
# backend_down, backend_context (the config.yaml lines of its context) and
# backend_unsupported SCENARIO (prints why and returns 0 when the scenario
# cannot be done there: the reasons of one backend live in that one file).
# A scenario file (tests/conformance/scenarios/NN-name.sh) defines
# scenario_NAME (dashes as underscores): a shell function that runs only
# $TRAINJOB_BIN against the context CF_BACKEND, through tj (and tmux
# through tests/tui.sh for a screen), and checks with cf_pass/cf_fail.

CF_DIR=tests/conformance
CF_RESULTS="$TMP/cf-results" # lines "SCENARIO BACKEND pass|FAIL|unsupported"
: >"$CF_RESULTS"
export TRAINJOB_CONFIG="$TMP/cf-config.yaml"

# tj ARGS…: trainjob on the backend under test (its context, from the suite's config)
tj() { "$TRAINJOB_BIN" --context "$CF_BACKEND" "$@"; }

# cf_pass / cf_fail CHECK [WHY]: one check of the scenario running
cf_pass() { echo "PASS conformance/$CF_BACKEND/$CF_SCENARIO: $1"; }
cf_fail() {
    echo "FAIL conformance/$CF_BACKEND/$CF_SCENARIO: $1${2:+: $2}"
    CF_FAILED=1
}
# cf_run CMD…: runs it, stdout in $TMP/out, stderr in $TMP/err, status in $rc
cf_run() {
    "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
}
# cf_rc CHECK WANT: the status of the last cf_run
cf_rc() {
    if [ "$rc" -eq "$2" ]; then cf_pass "$1"; else
        cf_fail "$1" "exit $rc, want $2; stderr: $(head -c 400 "$TMP/err" | tr '\n' ' ')"
    fi
}
# cf_grep CHECK FILE TEXT / cf_egrep CHECK FILE REGEX / cf_no_grep CHECK FILE TEXT
cf_grep() {
    if grep -qF -- "$3" "$2"; then cf_pass "$1"; else
        cf_fail "$1" "no '$3' in $(basename "$2"): $(head -c 240 "$2" | tr '\n' '|')"
    fi
}
cf_egrep() {
    if grep -qE -- "$3" "$2"; then cf_pass "$1"; else
        cf_fail "$1" "nothing matches /$3/ in $(basename "$2"): $(head -c 240 "$2" | tr '\n' '|')"
    fi
}
cf_no_grep() {
    if grep -qF -- "$3" "$2"; then cf_fail "$1" "unexpected '$3' in $(basename "$2"): $(grep -F -- "$3" "$2" | head -n 3 | tr '\n' '|')"; else
        cf_pass "$1"
    fi
}

# cf_job TEMPLATE NAME: writes $TMP/jobs/NAME.yaml from tests/conformance/jobs/TEMPLATE.yaml,
# the same file for every backend: @NAME@ the job's name, @WS@ the backend's
# workspace, @BK@ the backend, @VOL@ the shared volume's directory (where every backend's
# workers see it, at the same path), @TOOLS@ the test tools there, @BLOCK_N@ and
# @BLOCK_SPEC@ the workers and spec that take every slot of pool standard
# (the backend's CF_BLOCK_N and CF_BLOCK_SPEC: its capacity).
cf_job() {
    mkdir -p "$TMP/jobs"
    sed -e "s|@NAME@|$2|g" -e "s|@WS@|$CF_WS|g" -e "s|@VOL@|$CF_VOL|g" -e "s|@BK@|$CF_BACKEND|g" \
        -e "s|@BLOCK_N@|$CF_BLOCK_N|g" -e "s|@BLOCK_SPEC@|$CF_BLOCK_SPEC|g" \
        "$CF_DIR/jobs/$1.yaml" >"$TMP/jobs/$2.yaml"
}

# cf_state NAME: the job's state as `get job NAME -o json` says it ("" when it cannot)
cf_state() {
    tj get job "$1" -o json 2>/dev/null | jq -r '.state // ""' 2>/dev/null
}
# cf_wait NAME STATES SECONDS: polls until the job's state is one of STATES
# ("SUCCEEDED|FAILED"); the last state seen in $cf_seen
cf_wait() {
    _n=$(($3 * 5))
    while [ "$_n" -gt 0 ]; do
        cf_seen=$(cf_state "$1")
        case "|$2|" in *"|$cf_seen|"*) [ -n "$cf_seen" ] && return 0 ;; esac
        sleep 0.2
        _n=$((_n - 1))
    done
    return 1
}
# cf_expect_state CHECK NAME STATES SECONDS
cf_expect_state() {
    if cf_wait "$2" "$3" "$4"; then cf_pass "$1"; else
        cf_fail "$1" "state ${cf_seen:-unreadable} after $4 s, want $3"
    fi
}
# cf_submit NAME: submits $TMP/jobs/NAME.yaml (cf_job first), checking it is accepted
cf_submit() {
    cf_run tj submit -f "$TMP/jobs/$1.yaml"
    cf_rc "submit $1" 0
    [ "$rc" -eq 0 ]
}

# cf_user_dir USER: $TMP/users/USER, USER's own (for the backend's backend_user)
cf_user_dir() {
    shared_tmp "$TMP/users"
    mkdir -p "$TMP/users/$1"
    chown "$1" "$TMP/users/$1"
    chmod 700 "$TMP/users/$1"
}

# cf_scenarios: the scenario names in order (NN-name.sh → name); only those
# in $CONFORMANCE_SCENARIOS (name,name) when it is set
cf_scenarios() {
    for _f in "$CF_DIR"/scenarios/[0-9]*.sh; do
        _b=$(basename "$_f" .sh)
        case ",${CONFORMANCE_SCENARIOS:-${_b#*-}}," in *",${_b#*-},"*) echo "${_b#*-}" ;; esac
    done
}

# cf_scenario NAME: runs one scenario on the backend up now and records its result
cf_scenario() {
    CF_SCENARIO=$1
    _why=$(backend_unsupported "$1") && {
        echo "UNSUPPORTED conformance/$CF_BACKEND/$1: not supported by $CF_BACKEND: $_why"
        echo "$1 $CF_BACKEND unsupported" >>"$CF_RESULTS"
        return
    }
    CF_FAILED=0
    CF_LACKS=""
    "scenario_$(echo "$1" | tr - _)"
    if [ "$CF_FAILED" -ne 0 ]; then
        echo "$1 $CF_BACKEND FAIL" >>"$CF_RESULTS"
    elif [ -n "$CF_LACKS" ]; then
        echo "$1 $CF_BACKEND pass(unsupported:$CF_LACKS)" >>"$CF_RESULTS"
    else
        echo "$1 $CF_BACKEND pass" >>"$CF_RESULTS"
    fi
}

# cf_lacks PART: true when the backend cannot do PART of the scenario
# running (backend_unsupported PART says why): prints the UNSUPPORTED line
# for that part, which the table shows beside the scenario's result
cf_lacks() {
    _why=$(backend_unsupported "$1") || return 1
    echo "UNSUPPORTED conformance/$CF_BACKEND/$CF_SCENARIO: $1: not supported by $CF_BACKEND: $_why"
    CF_LACKS="${CF_LACKS:+$CF_LACKS,}$1"
    return 0
}

# cf_table BACKEND…: the parity table (scenario × backend) in markdown
cf_table() {
    printf '| scenario |'
    for _b in "$@"; do printf ' %s |' "$_b"; done
    printf '\n|---|'
    for _b in "$@"; do printf -- '---|'; done
    printf '\n'
    for _s in $(cf_scenarios); do
        printf '| %s |' "$_s"
        for _b in "$@"; do
            _r=$(awk -v s="$_s" -v b="$_b" '$1 == s && $2 == b { print $3 }' "$CF_RESULTS")
            case $_r in
            "pass(unsupported:"*) _r=$(echo "$_r" | sed 's/^pass(unsupported:\(.*\))$/pass; unsupported: \1/') ;;
            esac
            printf ' %s |' "${_r:-not run}"
        done
        printf '\n'
    done
}

# cf_col FILE ROW COLUMN: the word under COLUMN's title (a table's header line)
# on the line whose first word is ROW; "" when there is none
cf_col() {
    awk -v row="$2" -v col="$3" '
        NR == 1 || h == 0 { i = index($0, col); if (i) { h = i; next } }
        h && $1 == row { s = substr($0, h); sub(/^ +/, "", s); split(s, w, " "); print w[1]; exit }' "$1"
}
