# What survives at 80×24 and 60×20 in the jobs view (issue 22), in tmux
# against a real trainjobd: low-value columns give way whole, never as
# `DE…`/`RE…` stubs; REASON shows a waiting job's reason whole at 80
# columns; at 60 columns the names that share a prefix stay told apart and
# PRIORITY is dropped rather than cut to `NOR…`. The column chooser offers
# USER, POOL, NODE and SPEC, with the job's values.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
SESSION="tj-narrow-$$"
. tests/tui.sh
engine_config nodes="sim 2 16" specs="gpu-1:1:1:512 gpu-8:8:1:512" </dev/null
start_engine
TUI_ENV="XDG_CONFIG_HOME='$HOME/.config'"

job() { # NAME SPEC REPLICAS
    cat >"$TMP/$1.yaml" <<EOF2
workspace_name: default
name: $1
display_name: $1
framework: PYTORCH_DDP
resource_pool: {name: std}
roles:
  - total_replicas: ${3:-1}
    resource_spec: [{name: $2}]
    image_path: local/host
    startup_script: sleep 600
EOF2
    run tj submit -f "$TMP/$1.yaml"
    [ "$rc" -eq 0 ] || echo "submit $1: $(cat "$TMP/err")"
}
job ddp-demo-gloo-a gpu-1
job ddp-demo-gloo-b gpu-1
job tiny-one gpu-1
job sweep-too-big gpu-8 2
wait_state ddp-demo-gloo-a RUNNING
reason=$(tj get job sweep-too-big -o json | sed -n 's/.*"state_message": "\(.*\)".*/\1/p' | head -1)

# header_stubs: the header line's words that are no whole column title.
header_stubs() {
    grep -m1 "NAME" "$TMP/screen" | tr -s ' ' '\n' | grep -v -x -e '' -e NAME -e DISPLAY -e STATE \
        -e PRIORITY -e TYPE -e WORKERS -e DEVICES -e RESTARTS -e AGE -e TIME -e ID -e JOBID -e REASON \
        -e USER -e POOL -e NODE -e SPEC -e CONTEXT | sed 's/[▲▼^v]$//' | grep -v -x -e '' -e STATE -e NAME
}

start_tui 80 24 "--endpoint '$EP' top"
see "top opens at 80×24" "ddp-demo-gloo-b" 10
see "...with the waiting job" "sweep-too-big" 10
sleep 1
screen
cp "$TMP/screen" "$TMP/screen80"; [ -n "$NARROW_SHOW" ] && cat "$TMP/screen" >&2
if [ -z "$(header_stubs)" ]; then pass "at 80 columns every column shown is whole: no stubs"; else
    fail "at 80 columns every column shown is whole: no stubs" "$(header_stubs | tr '\n' ' ') — $(cat "$TMP/screen")"; fi
if [ -n "$reason" ] && grep -F "sweep-too-big" "$TMP/screen" | grep -qF -- "$reason"; then
    pass "...and the waiting job's REASON is whole: $reason"
else
    fail "...and the waiting job's REASON is whole" "want '$reason' — $(cat "$TMP/screen")"
fi
see_row "...STATE stays" "ddp-demo-gloo-a" "RUNNING"

# 60×20: names that share a prefix stay apart; PRIORITY is not cut to NOR….
tmux resize-window -t "$SESSION" -x 60 -y 20
sleep 1
screen
cp "$TMP/screen" "$TMP/screen60"; [ -n "$NARROW_SHOW" ] && cat "$TMP/screen" >&2
if grep -q "ddp-demo-gloo-a" "$TMP/screen" && grep -q "ddp-demo-gloo-b" "$TMP/screen"; then
    pass "at 60 columns the names sharing a prefix are told apart"
else
    fail "at 60 columns the names sharing a prefix are told apart" "$(cat "$TMP/screen")"
fi
if grep -q "NOR…\|NORM…" "$TMP/screen"; then fail "...PRIORITY is dropped whole, not cut" "$(cat "$TMP/screen")"; else
    pass "...PRIORITY is dropped whole, not cut"; fi
if [ -z "$(header_stubs)" ]; then pass "...and no column is a stub"; else
    fail "...and no column is a stub" "$(header_stubs | tr '\n' ' ') — $(cat "$TMP/screen")"; fi
see_row "...STATE stays" "ddp-demo-gloo-a" "RUNNING"

# The chooser offers USER, POOL, NODE and SPEC; chosen, they show the job's values.
tmux resize-window -t "$SESSION" -x 120 -y 30
keys C
see "C offers USER" "[ ] USER"
see "...POOL" "[ ] POOL"
see "...NODE" "[ ] NODE"
see "...SPEC" "[ ] SPEC"
keys Escape
mkdir -p "$HOME/.config/trainjob"
printf 'NAME\nSTATE\nUSER\nPOOL\nNODE\nSPEC\n' >"$HOME/.config/trainjob/columns"
start_tui 120 30 "--endpoint '$EP' top"
see_row "the chosen columns show the job's user, pool, node and spec" "tiny-one" "$ME" 10
see_row "...its pool and spec" "tiny-one" "std" 5
see_row "...its spec" "tiny-one" "gpu-1" 5
see_row "...and the node it runs on (NODE, from the job summary)" "ddp-demo-gloo-a" "gpu-1" 5
screen
if grep "ddp-demo-gloo-a" "$TMP/screen" | grep -qE " n[12] "; then pass "...NODE names the node it runs on"; else
    fail "...NODE names the node it runs on" "$(cat "$TMP/screen")"; fi

# `:ws nosuch` at 80 columns: the reason first, the hint after it, whole.
start_tui 80 24 "--endpoint '$EP' top"
see "top opens again" "tiny-one" 10
keys : w s Space n o s u c h Enter
sleep 2
screen
[ -n "$NARROW_SHOW" ] && cat "$TMP/screen" >&2
status=$(sed -n 23p "$TMP/screen")
case $status in
*nosuch*"(r: ask again)") pass ":ws nosuch: the status line says why, then the hint (r: ask again)" ;;
*) fail ":ws nosuch: the status line says why, then the hint (r: ask again)" "$status — $(cat "$TMP/screen")" ;;
esac

# Help at 80 columns: a long binding's text wraps instead of being cut at the edge.
keys F1
see "F1 opens the help" "Esc, q or F1 closes"
: >"$TMP/help"
n=0
while [ $n -lt 8 ]; do
    screen
    cat "$TMP/screen" >>"$TMP/help"
    keys NPage
    n=$((n + 1))
done
[ -n "$NARROW_SHOW" ] && cat "$TMP/help" >&2
if grep -q ':theme NAME' "$TMP/help" && grep -qE '(^| ):q *$' "$TMP/help"; then
    pass "a help line too long for 80 columns wraps: its end (:q) is there"
else
    fail "a help line too long for 80 columns wraps: its end (:q) is there" "$(grep -A1 ':ws NAME' "$TMP/help" | head -4)"
fi
if grep -q '…' "$TMP/help"; then fail "...and no help line is cut" "$(grep '…' "$TMP/help" | head -3)"; else pass "...and no help line is cut"; fi
keys Escape
for j in ddp-demo-gloo-a ddp-demo-gloo-b tiny-one sweep-too-big; do tj delete "$j" >/dev/null 2>&1; done
