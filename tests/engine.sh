# The scaffolding of every shell test that runs a real trainjobd (engine,
# workers, sandbox, access, logs, state, resources, daemon, sched, watchers,
# scale, and through tests/tui.sh wizard, wizard_limits and monitor): one
# engine on a private Unix socket with its state and config in the test's
# $TMP, started here and stopped by pid; requests over the socket; bounded
# waits for a job's field; the config it runs on. Sourced after lib.sh, from
# $TRAINJOB_TOP.
#
# Knobs a test may set before it calls start_engine:
#   GRACE               trainjobd --grace (1)
#   ENGINE_UP_SECONDS   how long start_engine waits for an answer (10)
#   ENGINE_ARGS         more trainjobd flags for every start (split on blanks)
#   ENGINE_NOFILE       a soft descriptor limit for trainjobd (none)
#   API_TIMEOUT         curl -m for api (60)
#   JOB_SPEC, JOB_REPLICAS   job_json's resource spec (cpu-1) and replicas (1)

: "${TRAINJOBD_BIN:=$TRAINJOB_TOP/build/trainjobd}"
ME=$(id -un)
export HOME="$TMP/home"
mkdir -p "$HOME" "$TMP/run"
SOCK="$TMP/run/engine.sock"
STATE="$TMP/state"
CONF="$TMP/engine.yaml"
ENGINE_PID=""
ENGINE_RC=""
# The ACP paths of the local zone's workspaces and of workspace default's jobs.
ACP=/compute/acp/data/v2/subscriptions/local/resourceGroups/default/zones/local-1z/workspaces
JOBS=$ACP/default/trainingJobs

# end_workers STATE_DIR : trainjobd's workers outlive it by design; ends the
# shims and workers a test started. Each shim's .pid file names the shim, its
# worker's process group and that leader's start time; numbers are reused
# (other test runs share this machine), so a group is killed only while its
# leader is that worker or gone (the kernel keeps a live group's number), and
# a shim only while it is a trainjob-shim of this state directory. The shims
# are left 3 s to end by themselves once their worker has: one whose engine
# is gone removes the worker's cgroups then, which a KILL would leave behind.
end_workers() {
    _shims=""
    for _f in "$1"/status/*.pid; do
        [ -f "$_f" ] || continue
        read -r _shim _pgid _ticks <"$_f" || continue
        if [ ! -e "/proc/$_pgid" ] || [ "$(start_ticks "$_pgid")" = "$_ticks" ]; then
            kill -KILL "-$_pgid" 2>/dev/null
        fi
        _shims="$_shims $_shim"
    done
    _n=0
    for _shim in $_shims; do
        while is_shim_of "$_shim" "$1" && [ $_n -lt 60 ]; do
            sleep 0.05
            _n=$((_n + 1))
        done
        is_shim_of "$_shim" "$1" && kill -KILL "$_shim" 2>/dev/null
    done
}

# is_shim_of PID STATE_DIR : PID is a live trainjob-shim of that state directory
is_shim_of() {
    [ "$(cat "/proc/$1/comm" 2>/dev/null)" = trainjob-shim ] &&
        ! grep -q '^[^)]*) Z' "/proc/$1/stat" 2>/dev/null &&
        tr '\0' '\n' <"/proc/$1/cmdline" 2>/dev/null | grep -qF "$2/"
}

# shims_of STATE_DIR : the pids of the live shims of that state directory, one a line
shims_of() {
    for _p in /proc/[0-9]*; do
        is_shim_of "${_p#/proc/}" "$1" && echo "${_p#/proc/}"
    done
}

# start_ticks PID : field 22 of /proc/PID/stat (after the command name, which may hold spaces).
start_ticks() {
    sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20
}

# engine_cleanup: ends the workers the engine started, then the engine (by
# pid); a test with more to end redefines cleanup and calls this from it. The
# engine is asked to stop first (TERM, then KILL 10 s later): a clean stop
# removes its cgroups, which a KILL leaves on the machine for good, and every
# cpu quota written later walks them all. Workers the engine started again
# meanwhile are ended after it.
engine_cleanup() {
    end_workers "$STATE"
    if [ -n "$ENGINE_PID" ] && kill -TERM "$ENGINE_PID" 2>/dev/null; then
        wait_gone "$ENGINE_PID" 10 || kill -KILL "$ENGINE_PID" 2>/dev/null
        wait "$ENGINE_PID" 2>/dev/null
    fi
    end_workers "$STATE"
    # A start the engine made as it stopped (a restarting job's next attempt)
    # has a shim whose pid file came after the scan above: once it is
    # written, its worker goes too (5 s at most), else the shim itself.
    _n=0
    while [ -n "$(shims_of "$STATE")" ] && [ $_n -lt 25 ]; do
        sleep 0.2
        end_workers "$STATE"
        _n=$((_n + 1))
    done
    for _shim in $(shims_of "$STATE"); do kill -KILL "$_shim" 2>/dev/null; done
    # The worker status files' directory on a tmpfs (trainjobd(8), FILES): a
    # clean stop removes it when empty; what a killed engine or a file left
    # there would outlive the suite's state dir.
    _rt=$(readlink "$STATE/status" 2>/dev/null)
    case $_rt in */trainjobd-[0-9]*/*) rm -rf "$_rt" ;; esac
}
cleanup() {
    engine_cleanup
    rm -rf "$TMP"
}
trap cleanup EXIT

# team_with_keys A B : engine_config's input for workspace team (owned by
# $ME, members A and B) and signing keys AKA/SKA for A and AKB/SKB for B, the
# keys lib.sh's signed_home gives them
team_with_keys() {
    printf '%s\n' "- name: team" "  owners: [$ME]" "  members: [$1, $2]" "keys:" \
        "- {access_key: AKA, secret_key: SKA, user: $1}" \
        "- {access_key: AKB, secret_key: SKB, user: $2}"
}

# sleeper_job WORKSPACE NAME : a job file (to stdout) of one worker on the
# cpu-1 spec in pool std that sleeps 600 s: a job that stays RUNNING
sleeper_job() {
    cat <<EOF
workspace_name: $1
name: $2
display_name: $2
framework: PYTORCH_DDP
resource_pool: {name: std}
roles:
  - total_replicas: 1
    resource_spec: [{name: cpu-1}]
    image_path: local/host
    startup_script: sleep 600
EOF
}

# engine_config [PARAM…] < REST : writes $CONF: the local zone and region,
# workspace default owned by $ME, then REST (stdin; </dev/null for none: more
# workspaces as "- name: …" items first, then any other keys), then from the
# PARAMs (defaults in brackets):
#   nodes="sim N CPUS"  N simulated nodes n1…nN of 8 GPUs, CPUS each, 64 GiB
#   nodes="cpu CPUS"    one node n1 without GPUs          ["cpu 64"]
#   pools="P…"          P = NAME (dedicated) or NAME:TYPE (in zone local-1z) ["std"]
#   specs="S…"          S = NAME:GPUS:CPUS:MIB             ["cpu-1:0:1:256"]
#   volume              volume scratch at $TMP/vol
# and image local/host.
engine_config() {
    _nodes="cpu 64" _pools=std _specs=cpu-1:0:1:256 _vol=""
    for _a in "$@"; do
        case $_a in
        nodes=*) _nodes=${_a#nodes=} ;;
        pools=*) _pools=${_a#pools=} ;;
        specs=*) _specs=${_a#specs=} ;;
        volume) _vol=1 ;;
        *) echo "engine_config: unknown parameter $_a" >&2 && return 2 ;;
        esac
    done
    {
        cat <<EOF
subscription: local
resource_group: default
zone: local-1z
regions:
- {name: local-1, zones: [local-1z], vpcs: [vpc-local]}
workspaces:
- name: default
  owners: [$ME]
EOF
        cat
        echo "nodes:"
        set -- $_nodes
        if [ "$1" = sim ]; then
            _i=1
            while [ $_i -le "$2" ]; do
                echo "- {name: n$_i, gpus: 8, gpu_type: simulated, cpus: $3, memory_mib: 65536, simulated: true}"
                _i=$((_i + 1))
            done
        else
            echo "- {name: n1, gpus: 0, cpus: $2, memory_mib: 65536}"
        fi
        echo "pools:"
        for _p in $_pools; do
            case $_p in
            *:*) echo "- {name: ${_p%%:*}, type: ${_p#*:}, zones: [local-1z]}" ;;
            *) echo "- {name: $_p, type: dedicated}" ;;
            esac
        done
        echo "specs:"
        for _s in $_specs; do
            IFS=: read -r _sn _sg _sc _sm <<EOF
$_s
EOF
            echo "- {name: $_sn, gpus: $_sg, cpus: $_sc, memory_mib: $_sm}"
        done
        printf 'images:\n- {path: local/host}\n'
        [ -z "$_vol" ] || printf 'volumes:\n- {id: scratch, zone: local-1z, path: %s}\n' "$TMP/vol"
    } >"$CONF"
}

# engine_up [SOCK] [SECONDS] : waits, at most SECONDS (10), until an engine
# answers the catalog on SOCK ($SOCK); fails early if $ENGINE_PID has ended.
engine_up() {
    _n=0
    while [ $_n -lt $((${2:-10} * 20)) ]; do
        curl -s -o /dev/null --unix-socket "${1:-$SOCK}" http://x/trainjob/v1/catalog && return 0
        [ -z "$ENGINE_PID" ] || kill -0 "$ENGINE_PID" 2>/dev/null || return 1
        sleep 0.05
        _n=$((_n + 1))
    done
    return 1
}

# start_engine [FLAG…] : trainjobd in the foreground on $SOCK with $CONF and
# $STATE and FLAGs, appending to $TMP/engine.log; its pid in $ENGINE_PID.
# Waits until it answers (see engine_up); fails if it does not, printing the
# end of the log.
start_engine() {
    (
        if [ -n "${ENGINE_NOFILE:-}" ]; then ulimit -Sn "$ENGINE_NOFILE" || exit 2; fi
        exec "$TRAINJOBD_BIN" --foreground --grace "${GRACE:-1}" --config "$CONF" \
            --state-dir "$STATE" --socket "$SOCK" ${ENGINE_ARGS:-} "$@"
    ) >>"$TMP/engine.log" 2>&1 &
    ENGINE_PID=$!
    engine_up "$SOCK" "${ENGINE_UP_SECONDS:-10}" && return 0
    # Say why in the suite's log: the checks that follow only see no answer.
    echo "start_engine: trainjobd did not answer on $SOCK; its log ends:"
    tail -c 800 "$TMP/engine.log" | sed 's/^/    /'
    return 1
}

# wait_gone PID [SECONDS] : waits, at most SECONDS (5), until the process
# (or, for -PGID, every process of the group) has ended.
wait_gone() {
    _n=0
    while [ $_n -lt $((${2:-5} * 20)) ]; do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.05
        _n=$((_n + 1))
    done
    return 1
}

# stop_engine [SIGNAL] : sends SIGNAL (TERM) to the engine and reaps it; one
# that has not ended 10 s later is killed. Its exit status in $ENGINE_RC;
# fails if it had to be killed.
stop_engine() {
    [ -n "$ENGINE_PID" ] || return 0
    _ok=0
    kill "-${1:-TERM}" "$ENGINE_PID" 2>/dev/null
    wait_gone "$ENGINE_PID" 10 || { kill -KILL "$ENGINE_PID" 2>/dev/null; _ok=1; }
    wait "$ENGINE_PID" 2>/dev/null
    ENGINE_RC=$?
    ENGINE_PID=""
    return $_ok
}

# api METHOD PATH [BODY] : a request over $SOCK as the user running the test;
# status in $code, reply in $TMP/body
api() {
    if [ -n "${3:-}" ]; then
        code=$(curl -s -m "${API_TIMEOUT:-60}" -o "$TMP/body" -w '%{http_code}' --unix-socket "$SOCK" \
            -X "$1" -H 'Content-Type: application/json' --data-binary "$3" "http://x$2")
    else
        code=$(curl -s -m "${API_TIMEOUT:-60}" -o "$TMP/body" -w '%{http_code}' --unix-socket "$SOCK" \
            -X "$1" "http://x$2")
    fi
}

# job_json NAME SCRIPT [JQ] : a PYTORCH_DDP job in pool std, $JOB_REPLICAS
# workers of $JOB_SPEC running SCRIPT, then changed by the jq filter JQ
job_json() {
    jq -n --arg name "$1" --arg script "$2" --arg spec "${JOB_SPEC:-cpu-1}" \
        --argjson n "${JOB_REPLICAS:-1}" '{
        display_name: $name, framework: "PYTORCH_DDP", resource_pool: {name: "std"},
        roles: [{total_replicas: $n, resource_spec: [{name: $spec}],
                 image_path: "local/host", startup_script: $script}]
    }' | jq "${3:-.}"
}

# submit NAME SCRIPT [JQ] : creates job_json's job in workspace default
submit() {
    api POST "$JOBS?training_job_name=$1" "$(job_json "$1" "$2" "${3:-.}")"
}

# field NAME JQ [WS] : prints a field of the job in workspace WS (default);
# the whole reply stays in $TMP/job, for failure messages
field() {
    : >"$TMP/job"
    curl -s -m 10 -o "$TMP/job" --unix-socket "$SOCK" "http://x$ACP/${3:-default}/trainingJobs/$1"
    jq -r "$2" "$TMP/job"
}

# wait_for NAME JQ WANT [SECONDS] [WS] : polls, at most SECONDS (20), until
# the job's field equals WANT
wait_for() {
    _w=0
    while [ $_w -lt $((${4:-20} * 20)) ]; do
        [ "$(field "$1" "$2" "${5:-default}")" = "$3" ] && return 0
        sleep 0.05
        _w=$((_w + 1))
    done
    return 1
}

# check NAME COMMAND… : passes when the command succeeds; a failure shows the
# last reply and the last job read
check() {
    _name=$1
    shift
    if "$@"; then pass "$_name"; else
        fail "$_name" "code ${code:-}: $(tail -c 400 "$TMP/body" 2>/dev/null) job: $(tail -c 200 "$TMP/job" 2>/dev/null)"
    fi
}
