# Listing Slurm jobs at squeue's pace (issue 24): a `get jobs` right after
# another asks slurmrestd only whether anything changed (?update_time=, a
# 304 with no bytes) and reads each job directory once: the directory
# opened once (relative to the workspace's), its mark once however many
# Slurm jobs name it, then job.json and state.json. Counted with strace
# (bound work, never time): the old list opened every directory twice by
# its full path and the mark once per Slurm job.
#
# Held jobs submitted over REST, each with its job directory (mark and
# job.json, as a submit writes them) as working directory; one directory
# ("twice") with two Slurm jobs, as after a start; one with a state.json
# saying two restarts were used and a mark three days old; one with no
# mark and an unmarked job (a trainjob from before marks); one whose job
# carries another mark (not the user's: the directory shows as one Slurm
# no longer has a job for); one no Slurm job names any more.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
export LANG=C.UTF-8 LC_ALL=C.UTF-8

. tests/slurm/suite.sh
cleanup() {
    slurm_stop
    rm -rf "$TMP"
}
trap cleanup EXIT

slurm_start "the Slurm cluster starts"
export TRAINJOB_CONFIG="$TMP/config.yaml"
{
    printf 'current_context: lab\ncontexts:\n'
    slurm_context lab
    printf '    token_file: %s\n    workspace: default\n' "$TMP/token"
} >"$TRAINJOB_CONFIG"
export XDG_CACHE_HOME="$TMP/cache"

WS=$TJ_SLURM_JOBS_DIR/default
N=30
# jobdir NAME [MARK]: the directory a submit makes (no mark when MARK is "-").
jobdir() {
    mkdir -p "$WS/$1"
    [ "${2:-}" = - ] || printf '%s' "${2:-$(printf '%032x' "$(echo "$1" | cksum | cut -d' ' -f1)")}" >"$WS/$1/mark"
    printf '{"workspace_name":"default","name":"%s","display_name":"%s","framework":"PYTORCH_DDP","resource_pool":{"name":"standard"},"roles":[{"total_replicas":1,"resource_spec":[{"name":"gpu-1"}],"image_path":"local/host","startup_script":"sleep 600"}]}\n' \
        "$1" "$1" >"$WS/$1/job.json"
}
# held NAME [COMMENT]: a held Slurm job of SLURMRESTD_USER in NAME's directory; its id on stdout.
held() {
    _c=${2-trainjob:$(cat "$WS/$1/mark" 2>/dev/null)}
    curl -s --unix-socket "$SLURMRESTD_SOCKET" -H "X-SLURM-USER-NAME: $SLURMRESTD_USER" \
        -H "X-SLURM-USER-TOKEN: $SLURMRESTD_TOKEN" -H 'Content-Type: application/json' \
        -d "{\"script\":\"#!/bin/sh\\nsleep 600\\n\",\"job\":{\"name\":\"$1\",\"partition\":\"standard\",\"nodes\":1,\"tasks\":1,\"hold\":true,\"current_working_directory\":\"$WS/$1\",\"comment\":\"$_c\",\"environment\":{\"PATH\":\"/usr/bin:/bin\"},\"standard_output\":\"/dev/null\",\"standard_error\":\"/dev/null\"}}" \
        "http://slurmrestd/slurm/v0.0.38/job/submit" | sed -n 's/.*"job_id": *\([0-9]*\).*/\1/p'
}

i=0
while [ $i -lt $N ]; do
    name=$(printf 'j-%02d' $i)
    jobdir "$name"
    held "$name" >/dev/null
    i=$((i + 1))
done
jobdir twice
FIRST=$(held twice)
SECOND=$(held twice)
jobdir used
printf '{"restarts":2,"marked":[],"runs":3}\n' >"$WS/used/state.json"
touch -d '3 days ago' "$WS/used/mark"
held used >/dev/null
jobdir old -
held old "" >/dev/null
jobdir other
held other "trainjob:ffffffffffffffffffffffffffffffff" >/dev/null
jobdir gone
DIRS=$((N + 5)) # j-*, twice, used, old, other, gone
if [ -n "$FIRST" ] && [ -n "$SECOND" ] && [ "$(squeue -h -u "$SLURMRESTD_USER" | wc -l)" -eq $((N + 5)) ]; then
    pass "$((N + 5)) held jobs in $DIRS job directories"
else
    fail "$((N + 5)) held jobs in $DIRS job directories" "$FIRST $SECOND $(squeue -h | wc -l)"
fi

# ---- the cold list, then the one right after it ---------------------------------

tj() { "$TRAINJOB_BIN" "$@"; }
# same A B: the two listings agree but for AGE, which may have ticked between them.
same() { [ "$(sed 's/ *[0-9]*[smhd]$//' "$1")" = "$(sed 's/ *[0-9]*[smhd]$//' "$2")" ]; }
tj get jobs >"$TMP/cold" 2>&1
rows=$(grep -c '^j-[0-9]* .*QUEUEING' "$TMP/cold")
if [ "$rows" -eq $N ] && grep -q '^twice ' "$TMP/cold" && grep -q '^old ' "$TMP/cold" &&
    grep -q '^gone ' "$TMP/cold" && ! grep -q '^other .*QUEUEING' "$TMP/cold"; then
    pass "the list shows the user's jobs (by mark, and one from before marks) and the forgotten one"
else
    fail "the list shows the user's jobs (by mark, and one from before marks) and the forgotten one" \
        "$(head -c 1500 "$TMP/cold")"
fi
if grep -q '^used .* 2/[0-9]* *3d$' "$TMP/cold"; then
    pass "...with the restarts state.json says and the age of the mark"
else
    fail "...with the restarts state.json says and the age of the mark" "$(grep '^used ' "$TMP/cold")"
fi
tj get jobs twice -o json >"$TMP/twice.json" 2>&1
if grep -q "\"id\": *\"$SECOND\"" "$TMP/twice.json"; then
    pass "...and a directory's newest Slurm job"
else
    fail "...and a directory's newest Slurm job" "$FIRST $SECOND $(head -c 400 "$TMP/twice.json")"
fi

# A job of the cluster may change between two lists: up to ten pairs, a second apart.
n=0
while [ $n -lt 10 ]; do
    [ $n -gt 0 ] && sleep 1
    tj get jobs >/dev/null 2>&1
    rm -f "$TMP/stats"
    TRAINJOB_HTTP_STATS="$TMP/stats" tj get jobs >"$TMP/warm" 2>&1
    grep -q 'calls=1 bytes=0 ' "$TMP/stats" && break
    n=$((n + 1))
done
if grep -q 'calls=1 bytes=0 ' "$TMP/stats" && same "$TMP/cold" "$TMP/warm"; then
    pass "a get jobs right after another is one request answered with no bytes, the same list"
else
    fail "a get jobs right after another is one request answered with no bytes, the same list" \
        "$(cat "$TMP/stats") $(diff "$TMP/cold" "$TMP/warm" | head -c 600)"
fi

# ---- what the list reads --------------------------------------------------------

if ! command -v strace >/dev/null 2>&1; then
    fail "strace is installed (scripts/deps.sh)" "no strace: the list's reads cannot be counted"
    exit 0
fi
tj get jobs >/dev/null 2>&1
# -y: a descriptor is shown with its path, "openat(5</…/default/twice>, "mark", …".
# (LeakSanitizer cannot run under ptrace: an ASan build's leak check is left to the lists above.)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    strace -f -qq -y -e trace=openat,open -o "$TMP/trace" "$TRAINJOB_BIN" get jobs >"$TMP/traced" 2>"$TMP/traced.err"
# Opens of the job directory NAME: relative to the workspace's, or by its path.
dir_opens() { grep -c "\"\\($WS/\\)\\?$1\", O_RDONLY[^)]*O_DIRECTORY" "$TMP/trace"; }
if [ "$(dir_opens j-07)" -eq 1 ] && [ "$(dir_opens twice)" -eq 1 ] && [ "$(dir_opens used)" -eq 1 ]; then
    pass "a list opens the directory of each job Slurm has once"
else
    fail "a list opens the directory of each job Slurm has once" \
        "j-07 $(dir_opens j-07), twice $(dir_opens twice), used $(dir_opens used)"
fi
marks=$(grep -c "$WS/twice>, \"mark\"" "$TMP/trace")
if [ "$marks" -eq 1 ]; then
    pass "...reads a directory's mark once, however many Slurm jobs name it"
else
    fail "...reads a directory's mark once, however many Slurm jobs name it" "$marks opens of twice's"
fi
# Every open in the workspace: a directory by its path, or anything relative to one of it.
# Beyond 4 a directory (itself, mark, job.json, state.json): the workspace, twice (its
# listing, the descriptor the job directories are opened through), and for each of the
# 2 directories Slurm has no job of the user's for, by path, the workers' records and,
# as those do not say how it ended, its events.
# (The calls, not the "<... openat resumed>" halves strace writes when two threads interleave.)
below=$(grep -c "open\(at\)\?(.*$WS" "$TMP/trace")
if [ "$below" -le $((4 * DIRS + 2 + 2 * 4)) ] && same "$TMP/cold" "$TMP/traced"; then
    pass "...and opens at most 4 files a job in the workspace ($below for $DIRS directories)"
else
    fail "...and opens at most 4 files a job in the workspace ($below for $DIRS directories)" \
        "$(head -c 300 "$TMP/traced.err") $(grep "$WS" "$TMP/trace" | head -c 1500)"
fi
