# Two real users on one Slurm cluster (issue 20): tj-alice's jobs cannot be
# run, taken over or blocked by tj-bob, a member of the same team.
#
# A throw-away cluster (tests/slurm/cluster.sh, as in slurm.test.sh) with a
# JWT per user; the jobs root is $TMP/shared/jobs (root's, sticky, like a
# site's /lustre/jobs), the team's workspace root's with the group tj-team.
#  1. In a team workspace the group may write without the sticky bit, bob
#     moves alice's job directory aside and puts his own in its place, with
#     a job.json whose script is his: alice's start refuses the workspace,
#     naming it and the chmod that fixes it; with the sticky bit bob can no
#     longer rename hers, and a job directory bob made under her job's name
#     is refused too. Bob's script never runs as alice.
#  2. Bob runs sbatch --chdir=<alice's job directory>: alice's ended job
#     still shows SUCCEEDED (never RUNNING "by tj-bob"), and her start, stop
#     and delete work on her own job.
#  3. Alice's last list is kept in her cache (issue 24): a `get jobs` right
#     after another asks only whether anything changed and gets no bytes;
#     a cache file she did not write herself (bob's, one behind a symlink,
#     one in a directory others may write) is never believed.
#  4. The clock's base a node keeps for a user's next jobs: bob's job neither
#     uses nor writes in a directory alice planted under his name; alice's
#     next job takes the base her first one kept.
# Every attack here passed on the old code (the job directory and the newest
# Slurm job in it were trusted whoever owned them).
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
export LANG=C.UTF-8 LC_ALL=C.UTF-8

. tests/slurm/suite.sh
cleanup() {
    [ -n "$BOB_JOB" ] && scancel "$BOB_JOB" 2>/dev/null
    slurm_stop
    # the clock's base the users' jobs kept in /tmp (those without TMPDIR)
    for u in "$TJ_ALICE" "$TJ_BOB"; do
        id -u "$u" >/dev/null 2>&1 && rm -rf "/tmp/trainjob-clock.$(id -u "$u")"
    done
    rm -rf "$TMP"
}
trap cleanup EXIT

tj_users || { echo "FAIL the two users can be made"; exit 1; }
slurm_start "the Slurm cluster starts"

JOBS=$TMP/shared/jobs
shared_tmp "$TMP/shared"
mkdir -p "$JOBS/team"
chmod 1777 "$JOBS"
chgrp "$TJ_TEAM" "$JOBS/team"
chmod 3775 "$JOBS/team" # the team's: set-gid, sticky

# user_setup USER: USER's token (its own JWT), config and job files in $TMP/USER.
user_setup() {
    d=$TMP/$1
    shared_tmp "$d"
    tok=$(scontrol token username="$1" lifespan=3600 | sed -n 's/^SLURM_JWT=//p')
    [ -n "$tok" ] || { fail "a token for $1" "scontrol token gave none"; exit 1; }
    printf '%s\n' "$tok" >"$d/token"
    {
        printf 'current_context: lab\ncontexts:\n'
        printf '  - name: lab\n    driver: slurm\n    endpoint: http+unix://%s\n' "$SLURMRESTD_SOCKET"
        printf '    user: %s\n    jobs_dir: %s\n    token_file: %s\n    workspace: %s\n' \
            "$1" "$JOBS" "$d/token" "$2"
    } >"$d/config.yaml"
    chown -R "$1" "$d"
    chmod 600 "$d/token"
}
user_setup "$TJ_ALICE" team
user_setup "$TJ_BOB" team

job_yaml() { # NAME SCRIPT
    cat <<EOF
workspace_name: team
name: $1
display_name: $1
framework: PYTORCH
resource_pool:
  name: standard
roles:
  - total_replicas: 1
    resource_spec:
      - name: gpu-1
    image_path: local/host
    startup_script: |
      $2
EOF
}
job_yaml victim 'echo alice-ran' >"$TMP/$TJ_ALICE/victim.yaml"
job_yaml short 'echo short-done' >"$TMP/$TJ_ALICE/short.yaml"
chown "$TJ_ALICE" "$TMP/$TJ_ALICE"/*.yaml

alice() { as_user "$TJ_ALICE" env XDG_CACHE_HOME="$TMP/$TJ_ALICE/cache" TRAINJOB_CONFIG="$TMP/$TJ_ALICE/config.yaml" "$TRAINJOB_BIN" "$@"; }
# wait_alice NAME STATE SECONDS: until alice's `get jobs` shows NAME in STATE
wait_alice() { wait_state "$1" "$2" "$3" alice; }
expect_refused() { # CHECK: the last run exited 1 (refused)
    if [ "$rc" -eq 1 ]; then pass "$1"; else
        fail "$1" "exit $rc, want 1; stdout: $(head -c 300 "$TMP/out") stderr: $(head -c 600 "$TMP/err")"
    fi
}
expect_alice() { # CHECK NAME STATE SECONDS
    if wait_alice "$2" "$3" "$4"; then pass "$1"; else fail "$1" "$(cat "$TMP/jobs")"; fi
}

# ---- 1. a job directory swapped in a group-writable workspace -------------------

run alice submit -f "$TMP/$TJ_ALICE/victim.yaml"
expect_rc "alice submits a job in the team workspace" 0
expect_alice "...and it succeeds" victim SUCCEEDED 60

mkdir -p "$TMP/shared/drop"
chmod 1777 "$TMP/shared/drop" # where bob's script, run as alice, would leave its trace
PWNED=$TMP/shared/drop/pwned
chmod 2775 "$JOBS/team" # group-writable without the sticky bit
as_user "$TJ_BOB" sh -c "cd '$JOBS/team' && mv victim victim.old && mkdir victim && chmod 777 victim"
cat >"$JOBS/team/victim/job.json" <<EOF
{"name": "victim", "workspace_name": "team", "framework": "PYTORCH",
 "resource_pool": {"name": "standard"},
 "roles": [{"name": "Worker", "total_replicas": 1, "resource_spec": [{"name": "gpu-1"}],
            "image_path": "local/host", "startup_script": "touch $PWNED"}]}
EOF
chown "$TJ_BOB:$TJ_TEAM" "$JOBS/team/victim/job.json"
if [ -d "$JOBS/team/victim.old" ] && [ "$(stat -c %U "$JOBS/team/victim")" = "$TJ_BOB" ]; then
    pass "bob can swap a job directory in a workspace the group may write without the sticky bit"
else
    fail "bob can swap a job directory in a workspace the group may write without the sticky bit" \
        "$(ls -la "$JOBS/team")"
fi

run alice start victim
expect_refused "alice's start refuses that workspace"
expect_grep "...naming it" "$TMP/err" "workspace directory $JOBS/team is writable by its group without the sticky bit"
expect_grep "...and saying what to fix" "$TMP/err" "chmod +t $JOBS/team"
run alice get jobs
expect_refused "alice's get jobs refuses it too"
expect_grep "...naming it" "$TMP/err" "workspace directory $JOBS/team"

chmod 3775 "$JOBS/team" # the sticky bit: only a directory's owner may rename it
if as_user "$TJ_BOB" mv "$JOBS/team/victim.old" "$JOBS/team/stolen" 2>/dev/null; then
    fail "with the sticky bit bob cannot rename alice's job directory"
else
    pass "with the sticky bit bob cannot rename alice's job directory"
fi
run alice start victim
expect_refused "a job directory bob made under alice's job name is refused"
expect_grep "...naming it and its owner" "$TMP/err" "job directory $JOBS/team/victim is owned by $TJ_BOB"
run alice get jobs
expect_rc "alice's get jobs works in the sticky workspace" 0
cp "$TMP/out" "$TMP/sticky-jobs"
if awk '$1 == "victim" { f = 1 } END { exit !f }' "$TMP/out"; then
    fail "...and does not list bob's directory as hers" "$(cat "$TMP/out")"
else
    pass "...and does not list bob's directory as hers"
fi
n=0 # a Slurm job of alice's in bob's directory would leave its trace within seconds
while [ $n -lt 50 ] && squeue -h -u "$TJ_ALICE" -o %Z | grep -q "/team/victim\$"; do
    sleep 0.2
    n=$((n + 1))
done
if [ -e "$PWNED" ]; then
    fail "bob's script never ran as alice" "$(ls -l "$PWNED")"
else
    pass "bob's script never ran as alice"
fi
if grep -q "alice-ran\|$PWNED" "$JOBS/team/victim"/slurm-*.out 2>/dev/null || [ -n "$(ls "$JOBS/team/victim"/slurm-*.out 2>/dev/null)" ]; then
    fail "no Slurm job of alice's ran in bob's directory" "$(ls -la "$JOBS/team/victim")"
else
    pass "no Slurm job of alice's ran in bob's directory"
fi

# ---- 2. sbatch --chdir=<alice's job directory> as bob ---------------------------

run alice submit -f "$TMP/$TJ_ALICE/short.yaml"
expect_rc "alice submits another job" 0
expect_alice "...which succeeds" short SUCCEEDED 60
SHORT_DIR=$JOBS/team/short
BOB_JOB=$(as_user "$TJ_BOB" sbatch --parsable --chdir="$SHORT_DIR" -J x -o /dev/null --wrap 'sleep 90')
n=0
while [ $n -lt 100 ] && [ "$(squeue -h -j "$BOB_JOB" -o %T 2>/dev/null)" != RUNNING ]; do
    sleep 0.2
    n=$((n + 1))
done
if [ "$(squeue -h -j "$BOB_JOB" -o '%T %u %Z')" = "RUNNING $TJ_BOB $SHORT_DIR" ]; then
    pass "bob's sbatch --chdir runs in alice's job directory"
else
    fail "bob's sbatch --chdir runs in alice's job directory" "$(squeue -h -o '%A %T %u %Z')"
fi
sleep 1.2 # past the driver's one-second reuse of GET /jobs
run alice get jobs
expect_grep "alice's job still shows as its own Slurm job left it" "$TMP/out" "SUCCEEDED"
expect_no_grep "...never RUNNING" "$TMP/out" "RUNNING"
expect_no_grep "...nor created by bob" "$TMP/out" "$TJ_BOB"
run alice start short
expect_rc "alice's start works" 0
expect_no_grep "...not 'already started'" "$TMP/err" "already"
expect_alice "...and her job runs again" short SUCCEEDED 60
run alice get jobs -o json
if grep -q "\"id\": *\"$BOB_JOB\"" "$TMP/out"; then
    fail "...as a Slurm job of hers, not bob's" "$(head -c 600 "$TMP/out")"
else
    pass "...as a Slurm job of hers, not bob's"
fi
job_yaml longer 'sleep 60' >"$TMP/$TJ_ALICE/longer.yaml"
chown "$TJ_ALICE" "$TMP/$TJ_ALICE/longer.yaml"
run alice submit -f "$TMP/$TJ_ALICE/longer.yaml"
LONG_JOB=$(squeue -h -u "$TJ_ALICE" -n longer -o %A | head -n 1)
as_user "$TJ_BOB" sbatch --parsable --chdir="$JOBS/team/longer" -J y -o /dev/null --wrap 'sleep 1' >/dev/null
expect_alice "alice's running job is RUNNING" longer RUNNING 60
run alice stop longer
expect_rc "alice's stop works beside bob's job" 0
expect_no_grep "...without Slurm's permission error" "$TMP/err" "denied"
expect_alice "...and her job is SUSPENDED" longer SUSPENDED 30
run alice delete short
expect_rc "alice's delete works though bob's job runs in its directory" 0
expect_no_grep "...without Slurm's permission error" "$TMP/err" "denied"
if [ "$(squeue -h -j "$BOB_JOB" -o %T 2>/dev/null)" = RUNNING ]; then
    pass "bob's own job is not touched"
else
    pass "bob's own job is not touched (it ended by itself)"
fi
[ -n "$LONG_JOB" ] && scancel "$LONG_JOB" 2>/dev/null

# ---- 3. the list kept in alice's cache --------------------------------------------

job_yaml kept 'sleep 300' >"$TMP/$TJ_ALICE/kept.yaml"
chown "$TJ_ALICE" "$TMP/$TJ_ALICE/kept.yaml"
run alice submit -f "$TMP/$TJ_ALICE/kept.yaml"
expect_alice "alice's job to list from her cache is RUNNING" kept RUNNING 60
# A get jobs right after another: one call, no bytes (304). A job of the
# cluster may change between the two (the one just started still does), so
# up to ten pairs, a second apart.
n=0
while [ $n -lt 10 ]; do
    [ $n -gt 0 ] && sleep 1
    alice get jobs >/dev/null 2>&1
    rm -f "$TMP/$TJ_ALICE/stats"
    as_user "$TJ_ALICE" env TRAINJOB_HTTP_STATS="$TMP/$TJ_ALICE/stats" \
        XDG_CACHE_HOME="$TMP/$TJ_ALICE/cache" TRAINJOB_CONFIG="$TMP/$TJ_ALICE/config.yaml" \
        "$TRAINJOB_BIN" get jobs >"$TMP/out" 2>&1
    grep -q 'calls=1 bytes=0 ' "$TMP/$TJ_ALICE/stats" && break
    n=$((n + 1))
done
if grep -q 'calls=1 bytes=0 ' "$TMP/$TJ_ALICE/stats" && grep -q '^kept .*RUNNING' "$TMP/out"; then
    pass "a get jobs right after another asks only for changes and shows the kept list"
else
    fail "a get jobs right after another asks only for changes and shows the kept list" \
        "$(cat "$TMP/$TJ_ALICE/stats") $(head -c 600 "$TMP/out")"
fi
CACHED=$(ls "$TMP/$TJ_ALICE/cache/trainjob"/slurm-jobs-*.json 2>/dev/null | head -n 1)
if [ -n "$CACHED" ] && [ "$(stat -c '%a %U' "$CACHED")" = "600 $TJ_ALICE" ]; then
    pass "...kept in alice's own cache file, mode 600"
else
    fail "...kept in alice's own cache file, mode 600" "$(ls -la "$TMP/$TJ_ALICE/cache/trainjob" 2>&1)"
    CACHED=
fi
if [ -n "$CACHED" ]; then
    # forge FILE: the kept list with alice's running jobs pending, and a since
    # in the future (Slurm would answer 304), written in place (owner and mode kept).
    forge() {
        sed -e 's/"job_state":"RUNNING"/"job_state":"PENDING"/g' -e 's/"since":[0-9]*/"since":4000000000/' \
            "$CACHED.orig" >"$1.new" && cat "$1.new" >"$1" && rm -f "$1.new"
    }
    cp -p "$CACHED" "$CACHED.orig"
    forge "$CACHED"
    alice get jobs >"$TMP/out" 2>&1
    if grep -q '^kept .*QUEUEING' "$TMP/out"; then
        pass "...her own cache file is what the list shows (the check below can see a forged one)"
    else
        fail "...her own cache file is what the list shows (the check below can see a forged one)" \
            "$(head -c 600 "$TMP/out")"
    fi
    # expect_real CHECK: alice's list shows kept as Slurm has it, not as the forged file says.
    expect_real() {
        alice get jobs >"$TMP/out" 2>&1
        if grep -q '^kept .*RUNNING' "$TMP/out"; then pass "$1"; else fail "$1" "$(head -c 600 "$TMP/out")"; fi
    }
    forge "$CACHED"
    chown "$TJ_BOB" "$CACHED"
    expect_real "a cache file bob owns in alice's cache is not believed"
    rm -f "$CACHED"
    cp "$CACHED.orig" "$TMP/shared/forged.json"
    forge "$TMP/shared/forged.json"
    chown "$TJ_BOB" "$TMP/shared/forged.json"
    chmod 644 "$TMP/shared/forged.json"
    ln -s "$TMP/shared/forged.json" "$CACHED"
    expect_real "...nor one behind a symlink to bob's file"
    rm -f "$CACHED"
    cp -p "$CACHED.orig" "$CACHED"
    forge "$CACHED"
    chmod 777 "$TMP/$TJ_ALICE/cache/trainjob"
    expect_real "...nor one in a cache directory others may write"
    chmod 700 "$TMP/$TJ_ALICE/cache/trainjob"
fi
run alice delete kept

# ---- 4. the clock's base a node keeps for each user's next jobs -----------------
# The jobs run with TMPDIR=$CLK (sticky, anyone may write there, as /tmp).
# Alice plants a directory of hers under bob's name, open to all, holding a
# base of 1970: bob's job neither uses it nor writes in it. Alice's first
# job keeps her own base there (in a directory hers alone, with this boot's
# id); her next job takes it as it is (no new base written).
CLK=$TMP/shared/clock
mkdir -p "$CLK"
chmod 1777 "$CLK"
clock_yaml() { # NAME: a job that runs with TMPDIR=$CLK
    job_yaml "$1" 'echo clocked'
    printf 'env:\n  - key: TMPDIR\n    value: %s\n' "$CLK"
}
bob() { as_user "$TJ_BOB" env XDG_CACHE_HOME="$TMP/$TJ_BOB/cache" TRAINJOB_CONFIG="$TMP/$TJ_BOB/config.yaml" "$TRAINJOB_BIN" "$@"; }
clock_yaml clockb >"$TMP/$TJ_BOB/clockb.yaml"
clock_yaml clocka >"$TMP/$TJ_ALICE/clocka.yaml"
clock_yaml clocka2 >"$TMP/$TJ_ALICE/clocka2.yaml"
chown "$TJ_BOB" "$TMP/$TJ_BOB/clockb.yaml"
chown "$TJ_ALICE" "$TMP/$TJ_ALICE"/clocka*.yaml
BOOT=$(cat /proc/sys/kernel/random/boot_id)
UP=$(awk '{ printf "%d", $1 * 100 }' /proc/uptime)
BOB_CLOCK=$CLK/trainjob-clock.$(id -u "$TJ_BOB")/base
ALICE_CLOCK=$CLK/trainjob-clock.$(id -u "$TJ_ALICE")/base
as_user "$TJ_ALICE" sh -c "mkdir -m 777 '${BOB_CLOCK%/base}' && printf '%s 100 %s\\n' '$BOOT' '$UP' > '$BOB_CLOCK' && chmod 666 '$BOB_CLOCK'"
cp "$BOB_CLOCK" "$TMP/planted"
YEAR=$(date -u +%Y)
run bob submit -f "$TMP/$TJ_BOB/clockb.yaml"
expect_rc "bob submits a job that runs with TMPDIR where alice planted his clock file" 0
if wait_state clockb SUCCEEDED 60 bob; then pass "...and it succeeds"; else fail "...and it succeeds" "$(cat "$TMP/jobs")"; fi
expect_this_year() { # CHECK JOB: JOB's Scheduled event carries this year's time
    if grep '"reason":"Scheduled"' "$JOBS/team/$2/events.jsonl" | grep -qF "{\"time\":\"$YEAR-"; then
        pass "$1"
    else
        fail "$1" "$(head -c 600 "$JOBS/team/$2/events.jsonl")"
    fi
}
expect_this_year "...its events carry this year's time, not the planted base's" clockb
if [ "$(stat -c %U "$BOB_CLOCK")" = "$TJ_ALICE" ] && cmp -s "$BOB_CLOCK" "$TMP/planted" &&
    [ "$(ls -A "${BOB_CLOCK%/base}")" = base ]; then
    pass "...and alice's planted directory is left as it was"
else
    fail "...and alice's planted directory is left as it was" "$(ls -la "${BOB_CLOCK%/base}"; cat "$BOB_CLOCK")"
fi
run alice submit -f "$TMP/$TJ_ALICE/clocka.yaml"
expect_alice "alice's job in the same TMPDIR succeeds" clocka SUCCEEDED 60
if [ "$(stat -c '%U %a' "${ALICE_CLOCK%/base}" 2>/dev/null)" = "$TJ_ALICE 700" ] &&
    [ "$(stat -c '%U' "$ALICE_CLOCK" 2>/dev/null)" = "$TJ_ALICE" ] &&
    [ "$(cut -d ' ' -f 1 "$ALICE_CLOCK")" = "$BOOT" ]; then
    pass "...and keeps her clock's base in a directory hers alone, with this boot's id"
else
    fail "...and keeps her clock's base in a directory hers alone, with this boot's id" \
        "$(ls -la "$CLK"; cat "$ALICE_CLOCK" 2>&1)"
fi
cp "$ALICE_CLOCK" "$TMP/alice-clock"
run alice submit -f "$TMP/$TJ_ALICE/clocka2.yaml"
expect_alice "alice's next job succeeds" clocka2 SUCCEEDED 60
if cmp -s "$ALICE_CLOCK" "$TMP/alice-clock"; then
    pass "...on the base her first job kept (none taken anew)"
else
    fail "...on the base her first job kept (none taken anew)" "$(cat "$TMP/alice-clock" "$ALICE_CLOCK")"
fi
expect_this_year "...with this year's time" clocka2
exit 0
