#!/bin/sh
# The demo in one command: a private trainjobd with four simulated 8-GPU
# nodes (its own config, state and socket under ${TMPDIR:-/tmp}, so your
# engine and engine.yaml are left alone), four jobs that show GPU jobs,
# preemption of an idle job and a fault rule (examples/demo/), and the live
# view on them. Quit the view (q): the demo's jobs, engine and files go.
# usage: examples/demo.sh [BUILD_DIR]   (default: ./build, else trainjob on PATH)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
if [ -x "$build/trainjob" ]; then
    tj="$build/trainjob" tjd="$build/trainjobd"
else
    tj=trainjob tjd=trainjobd
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/trainjob-demo.XXXXXX")
sock="$dir/engine.sock"
jobs="demo-gpu-ddp demo-idle-sweep demo-flaky demo-urgent"
pid=""
t() { "$tj" --endpoint "http+unix://$sock" "$@"; }
# Workers outlive trainjobd by design: the jobs are deleted (their workers
# stopped) before the engine is stopped, then the demo's directory goes.
stop() {
    if [ -n "$pid" ]; then
        t delete $jobs >/dev/null 2>&1 || true
        n=0
        while [ $n -lt 50 ] && t get jobs 2>/dev/null | grep -q demo-; do
            sleep 0.2
            n=$((n + 1))
        done
        kill "$pid" 2>/dev/null || true
        pid=""
    fi
    rm -rf "$dir"
}
trap stop EXIT
trap 'exit 130' INT TERM
"$tjd" --demo --grace 1 --config "$dir/engine.yaml" --state-dir "$dir/state" --socket "$sock"
pid=$(sed -n 's/^pid //p' "$dir/state/trainjobd.lock")
t submit -f "$here/demo/gpu-ddp.yaml"     # 2 x 8 simulated GPUs
t submit -f "$here/demo/idle-sweep.yaml"  # an idle (SPOT) job on the other two nodes
t submit -f "$here/demo/flaky.yaml"       # a fault rule restarts its failing worker
sleep 2
t submit -f "$here/demo/urgent.yaml"      # no node free: the idle job is preempted
t top ${DEMO_TOP_ARGS:-}
