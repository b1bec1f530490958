# Drafts as issue 22 asks, at 80×24 in tmux against a real trainjobd: with
# one draft, k starts afresh and keeps it (No still discards it); a draft
# remembers the context it was typed against and is offered under that
# context only (a local draft is not offered under another cluster's); a
# resumed draft keeps its resource spec (cpu-1 stays cpu-1 where gpu-1 is
# the first spec offered).
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
SESSION="tj-drafts-ctx-$$"
. tests/tui.sh
engine_config nodes="sim 1 16" specs="gpu-1:1:1:512 cpu-1:0:1:256" </dev/null
start_engine
D="$HOME/.local/state/trainjob/drafts"
mkdir -p "$HOME/.config/trainjob"
cat >"$HOME/.config/trainjob/config.yaml" <<EOF
contexts:
- name: local
  driver: trainjobd
  endpoint: $EP
  workspace: default
- name: lab
  driver: trainjobd
  endpoint: $EP
  workspace: default
current_context: local
EOF
TUI_ENV="XDG_CONFIG_HOME='$HOME/.config'"
wizard() { # ARGS for `trainjob new`
    tmux kill-session -t "$SESSION" 2>/dev/null
    sleep 0.5 # a killed wizard saves its draft on the way out
    start_tui 80 24 "$*"
}
drafts() { find "$D" -maxdepth 1 -type f -name 'draft*' 2>/dev/null | wc -l; }

# A draft typed under context local says so.
rm -rf "$D"
wizard "--context local new"
see "a new wizard opens under local" "Display name"
keys Tab "typed-under-local"
sleep 0.8
tmux kill-session -t "$SESSION"
sleep 0.5
f=$(grep -l "typed-under-local" "$D"/draft* 2>/dev/null | head -1)
if [ -n "$f" ] && sed -n 2p "$f" | grep -qx '# trainjob context: local'; then pass "a draft names the context it was typed against"; else
    fail "a draft names the context it was typed against" "$(head -3 "$f" 2>&1)"; fi

# Under lab it is not offered.
wizard "--context lab new"
see "under another context the wizard opens" "Display name"
gone "...without offering local's draft" "Resume it?"
screen
if grep -q "typed-under-local" "$TMP/screen"; then fail "...nor resuming it" "$(cat "$TMP/screen")"; else pass "...nor resuming it"; fi
tmux kill-session -t "$SESSION"
sleep 0.5

# Under local it is, and k starts afresh keeping it.
wizard "--context local new"
see "under its own context the draft is offered" "Resume it?"
see "...with the way to keep it" "k starts afresh and keeps it"
keys k
see "k opens an empty form" "Display name"
gone "...not the draft" "typed-under-local"
[ -f "$f" ] && pass "...and the draft is kept" || fail "...and the draft is kept" "$(ls "$D")"
keys Tab "second-one"
sleep 0.8
[ "$(drafts)" = 2 ] && pass "...beside the new job's own draft" || fail "...beside the new job's own draft" "$(ls "$D")"

# No still discards (the one draft of a file).
cp "$TRAINJOB_TOP/examples/pytorch-ddp.yaml" "$TMP/ddp.yaml"
wizard "--context local new -f '$TMP/ddp.yaml'"
see "a file opens" "ResNet50-DDP"
keys Tab C-u "edited-file"
sleep 0.8
wizard "--context local new -f '$TMP/ddp.yaml'"
see "the file's draft is offered" "Resume it?"
keys k
see "k opens the file afresh" "ResNet50-DDP"
gone "...not the draft" "edited-file"
keys Tab C-u "edited-again"
sleep 0.8
if grep -l "edited-file" "$D"/draft* >/dev/null 2>&1; then pass "...and editing afresh does not overwrite the kept draft"; else
    fail "...and editing afresh does not overwrite the kept draft" "$(ls "$D")"; fi

# A resumed draft keeps its spec: cpu-1, though gpu-1 is offered first.
tmux kill-session -t "$SESSION" 2>/dev/null
sleep 0.8 # the killed wizard writes its draft on the way out
rm -rf "$D"
mkdir -p "$D"
{
    echo '# trainjob draft: new job'
    echo '# trainjob context: local'
    sed '/resource_pool:/,/^[a-z]/{s/name: .*/name: std/}' "$TRAINJOB_TOP/examples/pytorch-ddp.yaml"
} >"$D/draft-00000000000000c1.yaml"
grep -q "cpu-1" "$D/draft-00000000000000c1.yaml" || fail "the spec draft names cpu-1" "$(cat "$D/draft-00000000000000c1.yaml")"
wizard "--context local new"
see "the spec draft is offered" "Resume it?"
keys y
see "...resumed" "ResNet50-DDP"
keys PgDn
see_row "a resumed draft keeps its resource spec cpu-1" "Resource spec" "cpu-1"
screen
if grep "Resource spec" "$TMP/screen" | grep -q "gpu-1"; then fail "...not gpu-1" "$(cat "$TMP/screen")"; else pass "...not gpu-1"; fi
tmux kill-session -t "$SESSION" 2>/dev/null
