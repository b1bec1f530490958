# The create-task wizard driven the way a person uses it: in tmux, keys typed
# with send-keys, the screen read back with capture-pane, against a real
# trainjobd on a private socket (started here, stopped by pid).
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1

SESSION="tj-wizard-$$"
. tests/tui.sh
start_engine

# wizard FILE ("" for none) [WIDTH HEIGHT]: `trainjob new` at 100×30 unless
# told; with no file the last wizard's draft stays, to be offered.
wizard() {
    tmux kill-session -t "$SESSION" 2>/dev/null
    if [ -n "$1" ]; then # a file offers its own draft first (tests/wizard_drafts.test.sh)
        sleep 0.5      # the killed wizard saves its draft on the way out
        rm -rf "$HOME/.local/state/trainjob/drafts"
    fi
    start_tui "${2:-100}" "${3:-30}" "--endpoint '$EP' new ${1:+-f '$1'}"
}

wizard examples/pytorch-ddp.yaml 120 40
see "the wizard opens on Basics" "Basics"
see "the file prefills the display name" "ResNet50-DDP-基线"
see "the catalog fills the workspace" "default"
see "every section is listed" "TensorBoard"

# An invalid display name: the message appears under the field, the section is marked.
keys Tab End " x"
see "an invalid character shows its message" "character ' ' at position 16 is not allowed"
see "the section shows its error count" "Basics 1"
keys C-s
see "submit is blocked while there are errors" "1 error to fix before submitting"

# Resizing mid-form keeps what was typed.
tmux resize-window -t "$SESSION" -x 80 -y 24
see "after a resize from 120x40 to 80x24 the input is still there" "ResNet50-DDP-基线 x"

# Other sections, through PgDn.
keys PgDn
see "PgDn goes to Resources" "Resource spec"
see "the replica field says what it means" "1 master + 1"
keys PgDn PgDn PgDn PgDn PgDn PgDn # Image, Fault tolerance, Data, Environment, TensorBoard, Review
see "the review page shows the job as YAML" "display_name: ResNet50-DDP-"

# Fix it and submit.
keys PgUp PgUp PgUp PgUp PgUp PgUp PgUp
keys BSpace BSpace
see "fixing the name clears the error" "✓ Basics"
keys C-s
see "submit opens the created job, live" "job resnet50-ddp"
see "...with its workers" "master-0"
keys q q
see "the wizard exits 0 after submitting" "EXIT=0"
run "$TRAINJOB_BIN" --endpoint "http+unix://$SOCK" get job resnet50-ddp -o json
expect_grep "the job exists on the engine with the typed fields" "$TMP/out" '"display_name": "ResNet50-DDP-基线"'
# The file's lists, untouched in the form, are sent as the file has them.
expect_grep "...its variables" "$TMP/out" '"key": "OMP_NUM_THREADS"'
expect_grep "...its mount's directory" "$TMP/out" '"subdir": "/resnet"'
expect_grep "...its rule (the engine joins runs: 254,255 is 254-255)" "$TMP/out" '"exit_codes": "254-255"'
expect_grep "...its rule's node marking" "$TMP/out" '"mark_node_unschedulable": true'
expect_grep "...its log path, under the mount" "$TMP/out" '"log_path": "/mnt/afs/tb/resnet50"'

# Text from a file never reaches the terminal raw.
printf 'display_name: "evil\\e]0;pwned\\a\\e[2Jname"\nframework: MPI\n' >"$TMP/evil.yaml"
wizard "$TMP/evil.yaml"
see "a display name with escape sequences is shown harmlessly" "evil"
see "...its control characters drawn as replacement characters" "evil�"
title=$(tmux display-message -p -t "$SESSION" '#{pane_title}')
if [ "$title" = pwned ]; then fail "the file cannot retitle the terminal"; else pass "the file cannot retitle the terminal"; fi
see "...nor clear the screen (the form is still drawn)" "Display name"
keys Tab x
keys Escape
see "Esc with changes asks first" "Leave without submitting?"
keys Escape
see "a second Esc leaves without submitting" "left without submitting"
see "...with exit 1" "EXIT=1"

# A dropped session keeps what was typed: the next start offers the draft.
rm -rf "$HOME/.local/state/trainjob/drafts"
wizard ""
see "a new wizard opens empty" "Display name"
keys Tab "draft-行1"
sleep 0.6 # the draft is written once typing pauses
tmux kill-session -t "$SESSION"
sleep 0.3
wizard ""
see "the next start offers the draft" "Resume it?"
keys y
see "resuming restores the typed field" "draft-行1"

# The lists — variables, fault-tolerance rules, mounts — typed row by row in a
# fresh wizard, checked inline on the row's own field, and sent as typed.
rm -rf "$HOME/.local/state/trainjob/drafts"
wizard ""
see "a fresh wizard for the lists opens" "Display name"
keys Tab "lists-demo"
keys Tab "lists-demo"
keys PgDn PgDn Tab Tab "echo lists" # Image: (the catalog's list, the reference) the startup script
see "Data is a section of its own" "✓ Data"
keys PgDn PgDn PgDn # Fault tolerance, Data, Environment
see "Environment shows its empty list of variables" "Alt-N or Insert adds a variable"
keys M-n MASTER_PORT Tab 1
see "a variable the platform sets is refused on its row" "MASTER_PORT is a system variable"
see "...and counted in the section list" "Environment 1"
keys BTab C-u MY_FLAG
gone "renaming the variable clears its message" "set by the platform"
keys M-n ZZ_LAST Tab 2
see "Alt-N adds a second variable" "env[1]   ZZ_LAST"
keys M-Up
see "Alt-Up moves it above the first" "env[0]   ZZ_LAST"
keys M-d
see "Alt-D removes it" "env[0]   MY_FLAG"
gone "...and only it" "ZZ_LAST"

keys PgUp PgUp # Fault tolerance
see "rules are greyed while max restarts is 0" "no effect while max restarts is 0"
keys 3
gone "a max restarts above 0 enables the rules" "no effect while max restarts is 0"
keys Tab M-n
see "a new rule is labelled by its place, as paths name it" "rules[0]"
see "...with any exit code until codes are typed" "any exit code"
keys "1,256"
see "an exit code out of range is reported on the rule" "256 is out of range 1-255"
see "...and counted in the section list" "Fault tolerance 1"
keys C-u 201
gone "fixing the codes clears the message" "out of range"
keys Tab Enter POD Enter
see "the action is chosen from its list, with its hint" "RESTART_POD  only the failed worker restarts"

keys PgDn # Data
see "Data notes who sets volume permissions" "POSIX permissions of a volume are set by the tenant admin"
keys M-n
see "a new mount offers the catalog's volumes with their zone" "scratch  scratch · local-1z"
keys Enter scratch Enter Tab Tab /mnt/data
see "the mount path is typed on the row" "/mnt/data"
keys PgDn PgDn Space Tab # TensorBoard: enabled, the log path
see "TensorBoard offers the mount paths as log paths" "/mnt/data  mount[0]"
keys Tab tb # a directory under it
keys C-s
see "the job with lists is created and opened" "job lists-demo"
keys q q
see "...and the wizard exits 0" "EXIT=0"
run "$TRAINJOB_BIN" --endpoint "http+unix://$SOCK" get job lists-demo -o json
expect_grep "the variable is sent as typed (name)" "$TMP/out" '"key": "MY_FLAG"'
expect_grep "the variable is sent as typed (value)" "$TMP/out" '"value": "1"'
expect_no_grep "the removed variable is not sent" "$TMP/out" 'ZZ_LAST'
expect_grep "max restarts is sent" "$TMP/out" '"backoff_limit": 3'
expect_grep "the rule's exit codes are sent as typed" "$TMP/out" '"exit_codes": "201"'
expect_grep "the rule's action is sent" "$TMP/out" '"action": "RESTART_POD"'
expect_grep "the mount's volume is sent" "$TMP/out" '"id": "scratch"'
expect_grep "the mount path is sent as typed" "$TMP/out" '"mount_path": "/mnt/data"'
expect_grep "the mount is an AFS volume" "$TMP/out" '"type": "PV_AFS"'
expect_no_grep "no directory was typed, none is sent" "$TMP/out" '"subdir"'
expect_grep "the log path is the mount path and the directory under it" "$TMP/out" \
    '"log_path": "/mnt/data/tb"'

# A file's lists come back unchanged when nothing is edited.
wizard examples/pytorch-ddp.yaml
see "the file opens again" "ResNet50-DDP"
keys PgDn PgDn PgDn PgDn PgDn
see "the file's variables are rows" "env[1]   OMP_NUM_THREADS"
keys PgDn
see "the file's log path is split into mount path and directory" "tb/resnet50"
keys PgUp PgUp PgUp
see "the file's rule is a row with its exit codes" "254,255"

# Keys are the keymap's: the help lists them, generated from it.
rm -rf "$HOME/.local/state/trainjob/drafts"
wizard examples/pytorch-ddp.yaml
see "the wizard opens for the key tests" "ResNet50-DDP"
see "the key bar shows the keymap's keys" "F1 Help"
keys F1
see_row "F1 opens the help with the submit key" "C-s" "submit"
see "...and what submit does" "send the job to the backend"
see "...and the keys every screen has" "global"
keys Escape
gone "Esc closes the help" "send the job to the backend"
keys "?" # on Workspace: a list, not a text field
see "? outside a text field opens the help" "show the keys of this screen"
keys q
gone "q closes the help" "show the keys of this screen"
keys Tab End "?"
see "? in a text field types a ?" "ResNet50-DDP-基线?"
gone "...and opens no help" "show the keys of this screen"
keys BSpace

# A user's keys file (under XDG_CONFIG_HOME) rebinds submit; its bad line is
# reported with its place and skipped.
mkdir -p "$HOME/cfg/trainjob"
cat >"$HOME/cfg/trainjob/keys" <<'EOF'
# submit on Ctrl-G instead of Ctrl-S
unbind wizard C-s
bind wizard C-g submit
bind wizard F9 sumbit
EOF
TUI_ENV="XDG_CONFIG_HOME='$HOME/cfg'"
wizard examples/pytorch-ddp.yaml
see "a bad line in the keys file is reported with its line, column and word" \
    'keys:4:16: unknown action "sumbit" (did you mean submit?)'
see "...and the wizard runs on (the key bar shows the rebound submit)" "C-g Submit"
keys F1
see_row "the help shows the user's key for submit" "C-g" "submit"
gone "...and not the unbound one" "C-s"
see "...and lists the problems in the keys file" "those lines are skipped"
keys F1
gone "F1 closes the help too" "those lines are skipped"
keys Tab End " x"
keys C-g
# (2 errors: the space, and resnet50-ddp, which exists by now)
see "the rebound key submits (held back by the errors)" "2 errors to fix before submitting"
TUI_ENV=""

# F2 saves the form as a job file; F3 loads one the way -f does.
wizard examples/pytorch-ddp.yaml
see "the wizard opens for save and load" "ResNet50-DDP"
keys F2
see "F2 asks where to save, offering the file the form came from" "examples/pytorch-ddp.yaml"
keys C-u "$TMP/saved.yaml" Enter
see "the form is saved" "saved to $TMP/saved.yaml"
run "$TRAINJOB_BIN" validate "$TMP/saved.yaml"
expect_rc "trainjob validate accepts the saved file" 0
expect_grep "...which has the form's display name" "$TMP/saved.yaml" "ResNet50-DDP-基线"
keys F2
see "F2 again offers the file just saved" "$TMP/saved.yaml"
keys Enter
see "saving over a file asks first" "Replace it with the form?"
keys n
see "No keeps the file" "not saved"

sed 's/ResNet50-DDP-基线/Known-Value-7/' examples/pytorch-ddp.yaml >"$TMP/known.yaml"
keys F3
see "F3 asks for a file" "the YAML or JSON job file to fill the form from"
keys "$TMP/known.yaml" Enter
see "loading a file shows its value in the field" "Known-Value-7"
see "...and says so" "loaded $TMP/known.yaml"
keys F3 "$TMP/nonexistent.yaml" Enter
see "a file that cannot be read is said" "not loaded:"
see "...and the form kept" "Known-Value-7"

sed -e 's/total_replicas: 2/total_replicas: many/' examples/pytorch-ddp.yaml >"$TMP/broken.yaml"
keys Tab End x
keys F3 "$TMP/broken.yaml" Enter
see "loading over unsaved changes asks first" "changes that are not saved"
keys y
see "the loaded file's error is counted in its section" "Resources 1"
keys PgDn
see "...and shown next to its field, with its line" "line 14: expected an integer, got a string"
keys Tab Tab Up # Replicas: 2
gone "editing the field clears the file's message" "expected an integer"
see "...and its section's mark" "✓ Resources"

# Under an NGC image the Image section says what its tag means.
keys PgDn Tab C-u "nvcr.io/nvidia/pytorch:24.05-py3" # the reference, under the catalog's list
see "an NGC image's tag is explained under the field" \
    "24.05-py3: NGC release 24.05 (May 2024), CUDA 12.4"
see "...and trainjobd (no container runtime) warns that it would run on the host" \
    "no container runtime on this backend"
keys BTab Enter
see "the catalog's images are offered in a list, with their source" "host · run on this machine"
keys Escape Tab C-u "registry.example.com/team/train:v1"
gone "...and only an NGC image's" "NGC release"

# A name already used in the workspace is caught while typing (the backend is asked).
wizard examples/pytorch-ddp.yaml
see "a file naming an existing job opens" "Basics"
see "...and its name is flagged as taken, next to the field" "already used in workspace default"
keys Tab Tab End "-2"
gone "a new name clears it" "already used in workspace default"

# Other terminals, and none with colour: every mark still reads (icons).
for t in screen-256color xterm linux; do
    TUI_ENV="TERM=$t"
    wizard examples/pytorch-ddp.yaml 80 24
    see "under TERM=$t the wizard draws its sections" "TensorBoard"
    see "...with the marks of each section" "✓ Resources"
done
TUI_ENV=""
wizard examples/pytorch-ddp.yaml 80 24
see "(a 256-colour terminal again)" "TensorBoard"
tmux capture-pane -t "$SESSION" -p -e >"$TMP/escapes"
if grep -q "$(printf '\033')\[38;5;" "$TMP/escapes"; then
    pass "a 256-colour terminal gets the scheme's colours"
else
    fail "a 256-colour terminal gets the scheme's colours" "$(head -c 300 "$TMP/escapes")"
fi
TUI_ENV="NO_COLOR=1"
wizard "$TMP/evil.yaml" 80 24
see "with NO_COLOR the sections still show their state by icon" "✓ Resources"
tmux capture-pane -t "$SESSION" -p -e >"$TMP/escapes"
if grep -q "$(printf '\033')\[3[0-7]m\|$(printf '\033')\[38;5;" "$TMP/escapes"; then
    fail "...and no colour is drawn" "$(head -c 300 "$TMP/escapes")"
else
    pass "...and no colour is drawn"
fi
TUI_ENV=""

# In a terminal, trainjob with no command opens the full-screen program.
tmux kill-session -t "$SESSION" 2>/dev/null
sleep 0.5 # the killed wizard saves its draft on the way out
rm -rf "$HOME/.local/state/trainjob/drafts" # (else it first offers the draft above)
start_tui 100 30 "--endpoint '$EP'"
see "bare trainjob in a terminal opens the jobs view" "PRIORITY"
keys n
see "...where n opens the wizard" "Resource pool"
keys Escape
see "...and leaving the wizard comes back to the jobs view" "PRIORITY"
