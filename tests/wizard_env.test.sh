# The wizard's validation gaps of issue 11 (defect 13), driven at 80×24 in
# tmux as the person did: system variables (PATH, HOME, LD_LIBRARY_PATH…)
# are refused on their row and the hint lists them; a 21st variable is a
# visible refusal and what is typed next lands nowhere; a multi-line paste
# stays in the field it was pasted into; the job name's message says which
# character and rule failed; the SSH config path is shown read-only and a
# volume mounted over it is a finding. Against a real trainjobd, stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1

SESSION="tj-wizard-env-$$"
. tests/tui.sh
start_engine

start_wizard examples/pytorch-ddp.yaml
# The job name: which character, which rule.
keys Tab Tab C-u "Ab"
see "an uppercase letter in the name is named" "character 'A' at position 1 is not"
see "...with its rule" "letters must be lowercase"
keys C-u "9ab"
see "a digit first is named with its rule" "it must start with a"
keys C-u "ab-"
see "a trailing '-' is named with its rule" "it must end with a"
keys C-u "ok-name"
gone "a good name clears it" "it must end with a"

# A paste of three lines into the display name stays there (first line only).
keys BTab C-u
tmux set-buffer -b tjpaste "$(printf 'line-one\nline-two\nline-three')"
tmux paste-buffer -p -b tjpaste -t "$SESSION"
see "a multi-line paste into a one-line field says what it did" "pasted the first line only"
see "...keeping the first line in the field" "line-one"
gone "...and the other lines go to no other field" "line-two"

# System variables.
keys PgDn PgDn PgDn PgDn PgDn
see "Environment" "Variables"
keys M-n PATH
see "PATH is refused on its row" "PATH is a system variable"
keys C-u LD_LIBRARY_PATH
see "LD_LIBRARY_PATH too" "names starting LD_ are system variables"
keys C-u USER
see "USER too" "USER is a system variable"
see "the hint names the system variables" "not a system variable: PATH"
see "...all of them, wrapped rather than cut at 80 columns" "PMIX_*"
keys C-u MY_VAR_1 Tab v

# The list holds 20 (the engine's limit); the 21st is refused where it can be seen.
start_wizard ""
keys PgDn PgDn PgDn PgDn PgDn M-n MY_VAR_1 Tab v
n=2
while [ $n -le 20 ]; do
    tmux send-keys -t "$SESSION" M-n "MY_VAR_$n" Tab "v$n"
    n=$((n + 1))
done
sleep 0.5
see "twenty variables" "MY_VAR_20"
keys M-n
see "a 21st variable is refused, visibly" "full: at most 20 rows here"
keys ZZZ Tab YYY
gone "...and what is typed next lands in no field" "v20ZZZ"
screen
if grep -q "YYY" "$TMP/screen"; then fail "...nor after a Tab" "$(cat "$TMP/screen")"; else pass "...nor after a Tab"; fi
keys Escape
gone "Esc ends the refusal" "full: at most 20 rows here"
if grep -q "ZZZ" "$TMP/screen"; then fail "...nowhere at all" "$(cat "$TMP/screen")"; else pass "...nowhere at all"; fi

# SSH: the config path shown read-only; a volume over it is a finding.
start_wizard examples/mpi-ssh.yaml
keys PgDn PgDn PgDn PgDn PgDn
see "MPI shows the SSH config path" "/sensecore/compute/acp/ssh/ssh_config"
keys PgUp
keys M-n scratch Enter Tab Tab /sensecore
see "a volume mounted over the SSH config path is a finding" "Environment 1"
keys PgDn
see "...shown under the SSH config path" "lies inside mount[0].mount_path"

tmux kill-session -t "$SESSION" 2>/dev/null
stop_engine
