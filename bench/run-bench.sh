#!/bin/sh
# Runs every benchmark binary and prints their tables. Each prints its own
# rows (name, median, p99 or ratio); this only strings them together.
set -u
build=${1:-build}
cd "$(dirname "$0")/.." || exit 2
for b in "$build"/bench/bench_*; do
    [ -x "$b" ] || continue
    case "$b" in *.o | *.d) continue ;; esac
    "$b" || exit 1
    echo
done
