# What kubectl, k9s and squeue users type first, against a real trainjobd
# (tests/engine.sh): "did you mean" for a mistyped verb or kind, create -f
# and apply -f, --state in any case and as a list, every column a --sort-by
# key, start of several jobs, logs -p/-a and the -w/-f hint. Two Unix users:
# bob's view of alice's jobs goes through the same filters.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
. tests/engine.sh
tj=$TRAINJOB_BIN
unset TRAINJOB_ENDPOINT XDG_CONFIG_HOME XDG_STATE_HOME XDG_RUNTIME_DIR
E="--endpoint http+unix://$SOCK --workspace default"

cleanup() {
    engine_cleanup
    rm -rf "$TMP"
}

# job_file NAME SCRIPT [RULE_ACTION] : a one-worker job at $TMP/NAME.yaml; exit 3 takes RULE_ACTION.
job_file() {
    cat >"$TMP/$1.yaml" <<EOF
name: $1
display_name: $1-job
framework: PYTORCH_DDP
resource_pool: {name: std}
roles:
  - total_replicas: 1
    resource_spec: [{name: cpu-1}]
    image_path: local/host
    startup_script: "$2"
fault_tolerance:
  backoff_limit: 1
  rules:
    - exit_codes: "3"
      action: ${3:-FAIL_JOB}
EOF
}

# wait_state NAME STATE : bounded wait (30 s) for a job's state.
wait_state() {
    _n=0
    until "$tj" $E get job "$1" -o json 2>/dev/null | grep -q "\"state\": \"$2\""; do
        _n=$((_n + 1)); [ $_n -gt 300 ] && return 1; sleep 0.1
    done
}

tj_users || { fail "the test users exist" "tj_users could not make them (needs root)"; exit 1; }
engine_config volume <<EOF
  members: [$ME, $TJ_ALICE, $TJ_BOB]
EOF
start_engine || { fail "the engine starts" "$(cat "$TMP/engine.log")"; exit 1; }

# ---- did you mean ------------------------------------------------------------------
run "$tj" creat -f x.yaml
expect_rc "a mistyped verb is a usage error" 2
expect_grep "...that names the verb meant" "$TMP/err" "unknown command 'creat' (did you mean create?)"
run "$tj" $E get jobz
expect_rc "a mistyped kind is a usage error" 2
expect_grep "...that names the kind meant" "$TMP/err" "cannot get 'jobz' (did you mean jobs?)"
run "$tj" frobnicate
expect_no_grep "a word like no verb gets no guess" "$TMP/err" "did you mean"

# ---- create -f, apply -f -------------------------------------------------------------
job_file made "sleep 120"
run "$tj" $E create -f "$TMP/made.yaml"
expect_rc "create -f submits, as kubectl users type it" 0
expect_grep "...and says the job was created" "$TMP/out" "job made created"
job_file applied "sleep 120"
run "$tj" $E apply -f "$TMP/applied.yaml"
expect_rc "apply -f of a new job submits it" 0
expect_grep "...and says so" "$TMP/out" "job applied created"
run "$tj" $E apply -f "$TMP/applied.yaml"
expect_rc "apply of the same file again: 0, nothing to do" 0
expect_grep "...saying the job matches" "$TMP/err" "exists and matches the file"
sed 's/backoff_limit: 1/backoff_limit: 4/' "$TMP/applied.yaml" >"$TMP/applied2.yaml"
run "$tj" $E apply -f "$TMP/applied2.yaml"
expect_rc "apply of a changed file to an existing job is refused (1)" 1
expect_grep "...naming the field and both values" "$TMP/err" "fault_tolerance.backoff_limit: 1 → 4"
expect_grep "...and that jobs are not updated in place" "$TMP/err" "does not update jobs in place"
run "$tj" $E get job applied -o json
expect_grep "...and the job is unchanged" "$TMP/out" '"backoff_limit": 1'
run "$tj" apply --help
expect_grep "apply --help says why it does not update" "$TMP/out" "does not update jobs in place"

# ---- --state --------------------------------------------------------------------------
job_file broken "exit 3"
run "$tj" $E submit -f "$TMP/broken.yaml"
wait_state broken FAILED || fail "broken reaches FAILED" "$("$tj" $E get jobs)"
wait_state made RUNNING || fail "made reaches RUNNING" "$("$tj" $E get jobs)"
run "$tj" $E get jobs --state failed -o name
expect_rc "--state failed (lower case) is accepted" 0
[ "$(cat "$TMP/out")" = job/broken ] && pass "...and lists the FAILED job" ||
    fail "...and lists the FAILED job" "$(cat "$TMP/out") $(cat "$TMP/err")"
run "$tj" $E get jobs --state RUNNING,failed -o name --sort-by name
expect_rc "--state RUNNING,FAILED (several) is accepted" 0
if [ "$(cat "$TMP/out")" = "$(printf 'job/applied\njob/broken\njob/made')" ]; then
    pass "...and lists the jobs in either state"
else fail "...and lists the jobs in either state" "$(cat "$TMP/out")"; fi
run "$tj" $E get jobs --state RUNNING,FAILED
expect_grep "...also as a table" "$TMP/out" "broken"
run "$tj" $E get jobs --state runing
expect_rc "a misspelt state is a usage error" 2
expect_grep "...listing the states" "$TMP/err" "states: WAITING"

# ---- --sort-by every column ---------------------------------------------------------------
sleep 1.1
job_file newest "sleep 120"
run "$tj" $E submit -f "$TMP/newest.yaml"
run "$tj" $E get jobs --sort-by age -o name
expect_rc "--sort-by age (the AGE column) is accepted" 0
[ "$(head -n1 "$TMP/out")" = job/newest ] && pass "...youngest first, as AGE reads upwards" ||
    fail "...youngest first, as AGE reads upwards" "$(cat "$TMP/out")"
for key in AGE "DISPLAY NAME" display-name type workers reason id name created state priority restarts pool user; do
    run "$tj" $E get jobs --sort-by "$key" -o name
    expect_rc "--sort-by '$key'" 0
done
run "$tj" $E get workers made --sort-by exit
expect_rc "get workers --sort-by exit (a worker column)" 0
run "$tj" $E get events broken --sort-by message
expect_rc "get events --sort-by message" 0

# ---- start several ---------------------------------------------------------------------------
"$tj" $E stop made applied >/dev/null 2>&1
wait_state made SUSPENDED; wait_state applied SUSPENDED
run "$tj" $E start made applied
expect_rc "start takes several names, as stop and delete do" 0
expect_grep "...starting the first" "$TMP/out" "job made started"
expect_grep "...and the second" "$TMP/out" "job applied started"
run "$tj" $E start made nosuch
expect_rc "start with one unknown name: 1" 1
expect_grep "...the other still said" "$TMP/out" "made"

# ---- logs: -p, -a, -w/-f ---------------------------------------------------------------------
job_file retried "echo run-\$(date +%s%N); exit 3" RESTART_POD
run "$tj" $E submit -f "$TMP/retried.yaml"
wait_state retried FAILED || fail "retried ends FAILED after its restart" "$("$tj" $E get events retried)"
run "$tj" $E logs retried
expect_grep "the log has a marker per attempt" "$TMP/out" "(attempt 2) ---"
last_run=$(grep '^run-' "$TMP/out" | tail -n1)
first_run=$(grep '^run-' "$TMP/out" | head -n1)
run "$tj" $E logs retried --previous
expect_rc "logs --previous" 0
expect_grep "...starts at the previous attempt's marker" "$TMP/out" "(attempt 1) ---"
expect_grep "...holds what that attempt wrote" "$TMP/out" "$first_run"
expect_no_grep "...and not the last attempt" "$TMP/out" "(attempt 2)"
[ "$first_run" != "$last_run" ] && expect_no_grep "...nor its output" "$TMP/out" "$last_run"
run "$tj" $E logs broken -p
expect_rc "logs -p of a worker never restarted: 1" 1
expect_grep "...saying it was not restarted" "$TMP/err" "has not been restarted"
run "$tj" $E logs retried --all-workers
expect_rc "logs --all-workers" 0
expect_grep "...every line after its worker" "$TMP/out" "[master-0] run-"
run "$tj" $E logs retried -a -f
expect_rc "logs -a -f is refused (usage)" 2
expect_grep "...pointing to the job screen's a" "$TMP/err" "press a"
run "$tj" $E logs retried -w
expect_rc "logs NAME -w without a worker: usage" 2
expect_grep "...saying -w names a worker and -f follows" "$TMP/err" "use -f"
run "$tj" $E logs --worker master-0 retried
expect_rc "--worker is the long form of -w" 0
job_file timed "echo early; sleep 2; echo late; sleep 120"
run "$tj" $E submit -f "$TMP/timed.yaml"
_n=0
until "$tj" $E logs timed 2>/dev/null | grep -q '^late'; do
    _n=$((_n + 1)); [ $_n -gt 300 ] && break; sleep 0.1
done
run "$tj" $E logs timed --timestamps
expect_rc "logs --timestamps" 0
if grep -Eq '^20[0-9-]+T[0-9:.]+Z early$' "$TMP/out"; then pass "...each line after the time it was written"; else
    fail "...each line after the time it was written" "$(cat "$TMP/out" "$TMP/err")"; fi
late_at=$(sed -n 's/ late$//p' "$TMP/out")
early_at=$(sed -n 's/ early$//p' "$TMP/out")
[ -n "$late_at" ] && [ "$late_at" != "$early_at" ] && pass "...two seconds apart, two times" ||
    fail "...two seconds apart, two times" "$(cat "$TMP/out")"
run "$tj" $E logs timed --since "$late_at"
expect_rc "logs --since TIME" 0
expect_grep "...keeps the lines written from then" "$TMP/out" late
expect_no_grep "...and drops those before" "$TMP/out" early
run "$tj" $E logs timed --since 1h
expect_grep "logs --since 1h keeps the last hour" "$TMP/out" early
run "$tj" $E logs timed --since 5q
expect_rc "a --since that is no duration or time: usage" 2

# ---- completion: the generated scripts, run as each shell runs them ------------------------
export TRAINJOB_ENDPOINT="http+unix://$SOCK"
mkdir -p "$TMP/bin" "$TMP/fishhome"
ln -sf "$tj" "$TMP/bin/trainjob"
"$tj" completion bash >"$TMP/c.bash"
"$tj" completion zsh >"$TMP/c.zsh"
"$tj" completion fish >"$TMP/c.fish"
bash_complete() { # WORD... : the candidates for the last word
    PATH="$TMP/bin:$PATH" bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _trainjob
             printf "%s\n" "${COMPREPLY[@]}"' sh "$TMP/c.bash" "$@" 2>&1
}
zsh_complete() { # WORD... : what _trainjob hands compadd
    PATH="$TMP/bin:$PATH" zsh -fc 'compdef() { :; }; compadd() { print -rl -- "$@"; }; _files() { print _files; }
             . "$1"; shift; words=("$@"); CURRENT=$#; _trainjob' sh "$TMP/c.zsh" "$@" 2>&1
}
fish_complete() { # COMMANDLINE
    PATH="$TMP/bin:$PATH" HOME="$TMP/fishhome" XDG_CONFIG_HOME="$TMP/fishhome/.config" \
        XDG_DATA_HOME="$TMP/fishhome/data" \
        fish --no-config -c 'source $argv[1]; complete -C $argv[2]' "$TMP/c.fish" "$1" 2>&1
}
bash_complete trainjob get "" >"$TMP/c"
expect_grep "bash: get <Tab> offers catalog" "$TMP/c" catalog
bash_complete trainjob get jobs -o "" >"$TMP/c"
expect_grep "bash: get -o <Tab> offers name" "$TMP/c" name
bash_complete trainjob get jobs --so >"$TMP/c"
expect_grep "bash: --sort-by" "$TMP/c" --sort-by
bash_complete trainjob get jobs --sort-by "" >"$TMP/c"
expect_grep "bash: --sort-by <Tab> offers age" "$TMP/c" age
bash_complete trainjob get jobs -w "" >"$TMP/c"
expect_no_grep "bash: get -w is watch, so no file or worker follows it" "$TMP/c" master-0
bash_complete trainjob cre >"$TMP/c"
expect_grep "bash: create is a verb" "$TMP/c" create
zsh_complete trainjob get jobs -- >"$TMP/c"
for f in --no-headers --sort-by --watch --mine --user --state; do
    expect_grep "zsh: get offers $f" "$TMP/c" "$f"
done
zsh_complete trainjob metrics made -o "" >"$TMP/c"
expect_grep "zsh: metrics -o offers csv" "$TMP/c" csv
expect_grep "...and table" "$TMP/c" table
expect_no_grep "...not yaml, which metrics refuses" "$TMP/c" yaml
zsh_complete trainjob logs made -- >"$TMP/c"
expect_grep "zsh: logs offers --previous" "$TMP/c" --previous
expect_grep "...and --all-workers" "$TMP/c" --all-workers
zsh_complete trainjob apply -f "" >"$TMP/c"
expect_grep "zsh: apply -f completes files" "$TMP/c" _files
fish_complete "trainjob metrics made --" >"$TMP/c"
expect_grep "fish: metrics offers --tag (a verb after describe)" "$TMP/c" --tag
fish_complete "trainjob describe " >"$TMP/c"
expect_grep "fish: describe <Tab> offers job" "$TMP/c" job
fish_complete "trainjob start " >"$TMP/c"
expect_grep "fish: start <Tab> offers jobs (several)" "$TMP/c" made
fish_complete "trainjob start made " >"$TMP/c"
expect_grep "...and again after the first name" "$TMP/c" applied
fish_complete "trainjob get jobs --m" >"$TMP/c"
expect_grep "fish: get --mine" "$TMP/c" --mine
unset TRAINJOB_ENDPOINT

# ---- two users: bob lists alice's jobs through the same filters ------------------------------
shared_tmp "$TMP/run"
chmod 0666 "$SOCK"
job_file alices "exit 3"
chmod 0644 "$TMP/alices.yaml"
run as_user "$TJ_ALICE" "$tj" $E create -f "$TMP/alices.yaml"
expect_rc "$TJ_ALICE creates a job with create -f" 0
wait_state alices FAILED || fail "alice's job fails" "$("$tj" $E get jobs)"
run as_user "$TJ_BOB" "$tj" $E get jobs --state Failed,SUCCEEDED -o name --sort-by AGE
if [ "$(head -n1 "$TMP/out")" = job/alices ]; then pass "$TJ_BOB lists $TJ_ALICE's failed job by --state Failed --sort-by AGE"; else
    fail "$TJ_BOB lists $TJ_ALICE's failed job by --state Failed --sort-by AGE" "$(cat "$TMP/out" "$TMP/err")"; fi
run as_user "$TJ_BOB" "$tj" $E get jobs --state failed --user "$TJ_ALICE" -o name
[ "$(cat "$TMP/out")" = job/alices ] && pass "...and with --user $TJ_ALICE only hers" ||
    fail "...and with --user $TJ_ALICE only hers" "$(cat "$TMP/out" "$TMP/err")"
run as_user "$TJ_BOB" "$tj" $E apply -f "$TMP/alices.yaml"
expect_rc "$TJ_BOB's apply of the same file: nothing to do (0)" 0

cleanup
