# `make install` as a packager runs it (issue 12): into a temporary DESTDIR,
# then the installed tree moved elsewhere and run from an unrelated
# directory. Its binaries must find their own themes, keys and shim (never
# the current directory's), print a real version, render their man pages
# without warnings, and their completion scripts must complete verbs and a
# job name from a running trainjobd in bash, zsh and fish. `make uninstall`
# must leave no file of ours. The engine is started here and stopped by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
. tests/engine.sh
unset TRAINJOB_ENDPOINT TRAINJOB_CONFIG TRAINJOB_SHIM XDG_CONFIG_HOME XDG_STATE_HOME
unset MAKEFLAGS MFLAGS MAKELEVEL
export XDG_RUNTIME_DIR="$TMP/run"

# The build tree the test runs against (build/ or build/asan/).
BUILD_DIR=$(dirname "$TRAINJOBD_BIN")
BUILD_DIR=${BUILD_DIR#"$TRAINJOB_TOP"/}
DEST="$TMP/dest"
make -s -C "$TRAINJOB_TOP" BUILD="$BUILD_DIR" DESTDIR="$DEST" PREFIX=/usr/local install \
    >"$TMP/install.log" 2>&1
rc=$?
expect_rc "make install into a DESTDIR" 0
[ "$rc" -eq 0 ] || cat "$TMP/install.log"
P="$DEST/usr/local"
for f in bin/trainjob bin/trainjobd libexec/trainjob/trainjob-shim share/trainjob/default.keys \
    share/trainjob/themes/solarized.theme share/man/man1/trainjob.1 share/man/man8/trainjobd.8 \
    share/man/man5/trainjob-job.5 share/bash-completion/completions/trainjob \
    share/zsh/site-functions/_trainjob share/fish/vendor_completions.d/trainjob.fish; do
    check "installed $f" test -s "$P/$f"
done
# The docs the README points at, beside it as in the tree (its doc/… paths hold).
check "installed share/doc/trainjob/README.md" cmp -s README.md "$P/share/doc/trainjob/README.md"
for d in $(grep -o 'doc/[a-z-]*\.md' README.md | sort -u); do
    check "...and $d, which the README points at" cmp -s "$d" "$P/share/doc/trainjob/$d"
done
check "the installed default.keys is the one compiled in" cmp -s tui/default.keys "$P/share/trainjob/default.keys"

# The tree moved (a relocated install) and run from a directory that has a
# themes/ of its own: only the tree's files count.
MOVED="$TMP/opt/tj"
mkdir -p "$TMP/opt" "$TMP/elsewhere/themes"
cp -a "$P" "$MOVED"
printf 'inherit default\n' >"$TMP/elsewhere/themes/planted.theme"
cd "$TMP/elsewhere" || exit 1
TJ="$MOVED/bin/trainjob"

run "$TJ" --version
expect_rc "installed trainjob --version" 0
check "...prints a version, not a commit or 'unknown'" \
    grep -Eq '^trainjob [0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$' "$TMP/out"
run "$MOVED/bin/trainjobd" --version
check "installed trainjobd --version prints the same version" \
    test "$(cut -d' ' -f2 "$TMP/out")" = "$("$TJ" --version | cut -d' ' -f2)"

run "$TJ" __complete top --theme ""
expect_grep "the moved tree finds its shipped themes" "$TMP/out" solarized
expect_grep "...every one of them" "$TMP/out" high-contrast
expect_no_grep "...and not the current directory's" "$TMP/out" planted
check "...each name once" test "$(grep -c "^default$" "$TMP/out")" = 1

# A version outside any git checkout: the VERSION file, never "unknown".
mkdir -p "$TMP/tarball/scripts"
cp scripts/version.sh "$TRAINJOB_TOP/scripts/version.sh" "$TMP/tarball/scripts/" 2>/dev/null
cp "$TRAINJOB_TOP/VERSION" "$TMP/tarball/VERSION"
check "outside a git checkout the version is VERSION's" \
    test "$(sh "$TMP/tarball/scripts/version.sh")" = "$(cat "$TRAINJOB_TOP/VERSION")"
rm "$TMP/tarball/VERSION"
check "...and without VERSION still a version" test "$(sh "$TMP/tarball/scripts/version.sh")" = 0.0.0

# Man pages: roff that man and groff render without a warning.
for m in man1/trainjob.1 man8/trainjobd.8 man5/trainjob-job.5; do
    MANWIDTH=80 man -l "$MOVED/share/man/$m" >"$TMP/man.out" 2>"$TMP/man.err"
    check "man -l $m renders" test -s "$TMP/man.out"
    check "...without warnings" test ! -s "$TMP/man.err"
    groff -man -ww -z "$MOVED/share/man/$m" >"$TMP/groff.err" 2>&1
    check "groff -man -ww finds nothing in $m" test ! -s "$TMP/groff.err"
done
check "trainjob(1) documents every verb of --help" sh -c '
    "$1" --help | sed -n "s/^  \([a-z][a-z-]*\) .*/\1/p" | while read -r v; do
        grep -q "^\\*$v[* ]" "$2" || { echo "missing $v"; exit 1; }
    done' sh "$TJ" "$TRAINJOB_TOP/doc/trainjob.1.scd"

# The installed trainjobd runs a job with the installed shim (libexec/trainjob,
# found relative to the moved binary): no --shim, no $TRAINJOB_SHIM.
TRAINJOBD_BIN="$MOVED/bin/trainjobd"
engine_config </dev/null
start_engine
check "the moved trainjobd starts" kill -0 "$ENGINE_PID"
submit inst-job "echo hello from the installed shim"
check "...accepts a job" test "$code" = 200
check "...and runs it to SUCCEEDED with the installed shim" wait_for inst-job .state SUCCEEDED
submit other-job "sleep 300"

export TRAINJOB_ENDPOINT="http+unix://$SOCK"
export PATH="$MOVED/bin:$PATH"

# bash: the installed script, asked as bash asks (COMP_WORDS/COMP_CWORD).
bash_complete() { # WORD... : the candidates for the last word
    bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _trainjob
             printf "%s\n" "${COMPREPLY[@]}"' sh \
        "$MOVED/share/bash-completion/completions/trainjob" "$@" 2>&1
}
bash_complete trainjob st >"$TMP/c"
expect_grep "bash completes a verb" "$TMP/c" stop
expect_grep "...every verb with the prefix" "$TMP/c" start
expect_no_grep "...and only those" "$TMP/c" submit
bash_complete trainjob logs "" >"$TMP/c"
expect_grep "bash completes a job name from trainjobd" "$TMP/c" inst-job
expect_grep "...every job" "$TMP/c" other-job
bash_complete trainjob logs inst-job -w "" >"$TMP/c"
expect_grep "bash completes a worker of the job" "$TMP/c" master-0
bash_complete trainjob --workspace "" >"$TMP/c"
expect_grep "bash completes a workspace from the catalog" "$TMP/c" default
bash_complete trainjob get --o >"$TMP/c"
expect_grep "bash completes a flag" "$TMP/c" --output

# zsh: the installed function with compadd and compdef as stubs that print.
zsh_complete() { # WORD... : what _trainjob hands compadd
    zsh -fc 'compdef() { :; }; compadd() { print -rl -- "$@"; }; _files() { print _files; }
             . "$1"; shift; words=("$@"); CURRENT=$#; _trainjob' sh \
        "$MOVED/share/zsh/site-functions/_trainjob" "$@" 2>&1
}
zsh_complete trainjob de >"$TMP/c"
expect_grep "zsh completes a verb" "$TMP/c" delete
zsh_complete trainjob stop "" >"$TMP/c"
expect_grep "zsh completes a job name from trainjobd" "$TMP/c" inst-job
zsh_complete trainjob submit -f "" >"$TMP/c"
expect_grep "zsh completes files for -f" "$TMP/c" _files

# fish: its own completion engine over the installed file.
fish_complete() { # COMMANDLINE
    HOME="$TMP/fishhome" XDG_CONFIG_HOME="$TMP/fishhome/.config" XDG_DATA_HOME="$TMP/fishhome/data" \
        fish --no-config -c 'source $argv[1]; complete -C $argv[2]' \
        "$MOVED/share/fish/vendor_completions.d/trainjob.fish" "$1" 2>&1
}
mkdir -p "$TMP/fishhome"
fish_complete "trainjob sta" >"$TMP/c"
expect_grep "fish completes a verb" "$TMP/c" start
fish_complete "trainjob delete " >"$TMP/c"
expect_grep "fish completes a job name from trainjobd" "$TMP/c" other-job

stop_engine

# A Tab with no engine running starts none: the engine it would start is a
# stand-in that leaves a mark.
unset TRAINJOB_ENDPOINT
export XDG_RUNTIME_DIR="$TMP/run-none"
printf '#!/bin/sh\ntouch "%s"\nexit 1\n' "$TMP/started" >"$TMP/fake-trainjobd"
chmod +x "$TMP/fake-trainjobd"
TRAINJOBD_BIN="$TMP/fake-trainjobd" bash_complete trainjob logs "" >"$TMP/c"
check "completing with no engine running starts none" test ! -e "$TMP/started"
check "...and offers nothing" test -z "$(tr -d '\n' <"$TMP/c")"
TRAINJOBD_BIN="$TMP/fake-trainjobd" "$TJ" get jobs >/dev/null 2>&1
check "...while a verb would start it (the stand-in ran)" test -e "$TMP/started"
cd "$TRAINJOB_TOP" || exit 1

run make -s -C "$TRAINJOB_TOP" BUILD="$BUILD_DIR" DESTDIR="$DEST" PREFIX=/usr/local uninstall
expect_rc "make uninstall" 0
check "...leaves no file in DESTDIR" test -z "$(find "$DEST" -type f -o -type l)"
check "...nor trainjob's own directories" test ! -e "$P/share/trainjob" -a ! -e "$P/libexec/trainjob" \
    -a ! -e "$P/share/doc/trainjob"
