# The README's screens, captured from the built program: a trainjobd with
# four simulated 8-GPU nodes (trainjobd --demo), the demo's 16-GPU job on
# it, then trainjob at 80×24 in tmux — the wizard on examples/pytorch-ddp.yaml,
# `top`, and the job screen (`top --job demo-gpu-ddp`) — each written as the
# text capture-pane -p gives into SCREENS_DIR (wizard.txt, top.txt, job.txt).
# Sourced by tests/readme.test.sh after lib.sh and tui.sh (engine started);
# run alone it writes build/screens/ to paste into README.md:
#   sh tests/readme_screens.sh [BUILD_DIR]
# readme_screens: captures the three screens; 0, or 1 naming the one that did not show.
readme_screens() {
    mkdir -p "$SCREENS_DIR"
    tj submit -f examples/demo/gpu-ddp.yaml >"$TMP/screens.out" 2>&1 ||
        { echo "submit: $(cat "$TMP/screens.out")"; return 1; }
    wait_state demo-gpu-ddp RUNNING 20 || { echo "the job did not run: $(cat "$TMP/out")"; return 1; }
    start_wizard examples/pytorch-ddp.yaml || { echo "the wizard did not open"; return 1; }
    cp "$TMP/screen" "$SCREENS_DIR/wizard.txt"
    start_tui 80 24 "--endpoint '$EP' top"
    wait_screen "demo-gpu-ddp" 10 && see_quiet "RUNNING" || { echo "top did not list the job"; return 1; }
    sleep 1 # a refresh: ages and usage settle
    screen
    cp "$TMP/screen" "$SCREENS_DIR/top.txt"
    start_tui 80 24 "--endpoint '$EP' top --job demo-gpu-ddp"
    wait_screen "master-0" 15 || { echo "the job screen did not show its workers: $(cat "$TMP/screen")"; return 1; }
    sleep 3 # a log line or two
    screen
    cp "$TMP/screen" "$SCREENS_DIR/job.txt"
    tmux kill-session -t "$SESSION" 2>/dev/null
    return 0
}
see_quiet() { wait_screen "$1" 10; }

# Run alone: its own engine, tmux and temp dir, the screens into build/screens/.
if [ -z "${README_SCREENS_SOURCED:-}" ]; then
    top=$(cd "$(dirname "$0")/.." && pwd)
    b=${1:-build}
    export TRAINJOB_BIN="$top/$b/trainjob" TRAINJOB_TOP="$top" TRAINJOBD_BIN="$top/$b/trainjobd" \
        TRAINJOB_SHIM="$top/$b/trainjob-shim"
    . "$top/tests/lib.sh"
    cd "$top" || exit 1
    SESSION="tj-screens-$$"
    . tests/tui.sh
    trap cleanup EXIT
    ENGINE_ARGS=--demo
    start_engine || exit 1
    SCREENS_DIR="$top/$b/screens"
    readme_screens || exit 1
    echo "screens in $SCREENS_DIR: wizard.txt top.txt job.txt"
fi
