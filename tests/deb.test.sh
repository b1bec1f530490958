# The Debian package (issue 23), built as an admin builds it: `make deb`
# (dpkg-buildpackage -us -uc -b) in a copy of the tree, so this checkout
# stays as it was. Then its name and version, its contents (Debian's places
# for binaries, shim, man pages, completions and the systemd unit), its
# Depends (libcurl and libssl3 declared though dlopened; no cmocka), lintian, mandoc's
# lint of its man pages, the unit under systemd-analyze verify, and the
# package unpacked into a temporary root running `trainjob --version` and a
# job on its own trainjobd and shim. The engine is started here and stopped
# by pid.
. "$(dirname "$0")/lib.sh"
cd "$TRAINJOB_TOP" || exit 1
. tests/engine.sh
unset TRAINJOB_ENDPOINT TRAINJOB_CONFIG TRAINJOB_SHIM XDG_CONFIG_HOME XDG_STATE_HOME
unset MAKEFLAGS MFLAGS MAKELEVEL
# `make asan` puts BUILD and SANITIZE in the environment: the package is built
# as an admin builds it, with neither.
unset BUILD SANITIZE
export XDG_RUNTIME_DIR="$TMP/run"

for t in dpkg-buildpackage dh lintian mandoc systemd-analyze fakeroot readelf; do
    command -v "$t" >/dev/null 2>&1 || { fail "the deb test needs $t" "scripts/deps.sh --test installs it"; exit 1; }
done

# A copy of the tree as git knows it (committed, changed and new files, no
# build/): dpkg-buildpackage writes into the tree and beside it.
SRC="$TMP/src/trainjob"
mkdir -p "$SRC"
git -C "$TRAINJOB_TOP" ls-files -z --cached --others --exclude-standard |
    (cd "$TRAINJOB_TOP" && tar --null -T - -cf - 2>/dev/null) | tar -xf - -C "$SRC"
before=$(git -C "$TRAINJOB_TOP" status --porcelain)
mkdir -p "$SRC/build" && : >"$SRC/build/developers-own"

(cd "$SRC" && make deb) >"$TMP/build.log" 2>&1
rc=$?
expect_rc "make deb builds the package" 0
[ "$rc" -eq 0 ] || tail -30 "$TMP/build.log"
VERSION=$(sed -n 1p VERSION)
ARCH=$(dpkg-architecture -qDEB_HOST_ARCH)
DEB="$SRC/build/deb/trainjob_${VERSION}_$ARCH.deb"
check "...named trainjob_VERSION_ARCH.deb, VERSION the tree's ($VERSION)" test -s "$DEB"
check "...in build/deb, nothing left beside the tree" test -z "$(ls "$TMP/src" | grep -v '^trainjob$')"
check "...and this checkout is as it was" test "$(git -C "$TRAINJOB_TOP" status --porcelain)" = "$before"
check "...leaving the tree's own build/ alone (dh clean runs make clean otherwise)" \
    test -e "$SRC/build/developers-own"
[ -s "$DEB" ] || exit 1
check "the package's version is VERSION's" test "$(dpkg-deb -f "$DEB" Version)" = "$VERSION"

# One version: a changelog behind VERSION stops the build, saying so.
cp "$SRC/VERSION" "$TMP/VERSION.keep"
echo 9.9.9 >"$SRC/VERSION"
run sh -c 'cd "$1" && debian/rules override_dh_auto_configure' sh "$SRC"
check "a VERSION the changelog does not name stops the package build" test "$rc" -ne 0
expect_grep "...saying which entry to add" "$TMP/err" "dch -v 9.9.9"
cp "$TMP/VERSION.keep" "$SRC/VERSION"

# The production link lines: no cmocka (only the unit tests link it).
grep -E -- '-o [a-z/]*build/(trainjob|trainjobd|trainjob-shim) ' "$TMP/build.log" >"$TMP/links"
check "the build linked the three binaries" test "$(wc -l <"$TMP/links")" -eq 3
expect_no_grep "...none of them with -lcmocka" "$TMP/links" -lcmocka
# Building ran no test tool's installation: the deps step named nothing.
expect_no_grep "the package build installs nothing (no deps: line)" "$TMP/build.log" 'deps:'

dpkg-deb -c "$DEB" | awk '{print $6}' | sed 's|^\./|/|' >"$TMP/contents"
for f in /usr/bin/trainjob /usr/bin/trainjobd /usr/libexec/trainjob/trainjob-shim \
    /usr/share/man/man1/trainjob.1.gz /usr/share/man/man8/trainjobd.8.gz \
    /usr/share/man/man5/trainjob-job.5.gz /usr/share/bash-completion/completions/trainjob \
    /usr/share/zsh/vendor-completions/_trainjob /usr/share/fish/vendor_completions.d/trainjob.fish \
    /usr/share/trainjob/default.keys /usr/share/trainjob/themes/default.theme \
    /usr/share/doc/trainjob/copyright; do
    check "the package holds $f" grep -qx "$f" "$TMP/contents"
done
# The README and the doc/*.md it points at, under /usr/share/doc/trainjob as
# in the tree (dh_compress may have gzipped them).
for d in README.md $(grep -o 'doc/[a-z-]*\.md' README.md | sort -u); do
    check "the package holds /usr/share/doc/trainjob/$d, which the README points at" \
        grep -Eqx "/usr/share/doc/trainjob/$d(\.gz)?" "$TMP/contents"
done
check "...the unit trainjobd.service where systemd looks" \
    grep -Eqx '(/usr)?/lib/systemd/system/trainjobd.service' "$TMP/contents"
expect_no_grep "...no zsh completion in site-functions (Debian's zsh does not look there)" \
    "$TMP/contents" site-functions
expect_no_grep "...nothing under /usr/local" "$TMP/contents" /usr/local
expect_no_grep "...nothing that enables the unit (off by default)" "$TMP/contents" /etc/systemd

dpkg-deb -f "$DEB" Depends >"$TMP/depends"
expect_grep "Depends names libcurl4 (dlopened, invisible to dpkg-shlibdeps)" "$TMP/depends" 'libcurl4'
expect_grep "...and libssl3, whose libcrypto.so.3 is dlopened too" "$TMP/depends" 'libssl3'
expect_grep "...the libraries the binaries link (from dpkg-shlibdeps)" "$TMP/depends" 'libmicrohttpd'
expect_no_grep "...no cmocka" "$TMP/depends" cmocka
check "bubblewrap is recommended (trainjobd runs without it, unsandboxed)" \
    sh -c 'dpkg-deb -f "$1" Recommends | grep -qw bubblewrap' sh "$DEB"

# Installable as apt would: its Depends resolve against this Debian's archive.
if apt-cache policy libcurl4 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    run apt-get install --simulate -q "$DEB"
    expect_rc "apt-get install --simulate ./trainjob_….deb resolves" 0
    expect_grep "...and would set up trainjob" "$TMP/out" "Conf trainjob ("
else
    echo "SKIP apt-get install --simulate: this machine has no package lists (apt-get update)"
fi

# lintian: no error or warning (the accepted ones are overridden in debian/,
# each with its reason). Its output is kept in the log.
lintian "$SRC/build/deb/trainjob_${VERSION}_$ARCH.changes" >"$TMP/lintian" 2>&1
sed 's/^/    lintian: /' "$TMP/lintian"
check "lintian finds no error" sh -c '! grep -q "^E:" "$1"' sh "$TMP/lintian"
check "...and no warning" sh -c '! grep -q "^W:" "$1"' sh "$TMP/lintian"

# The package unpacked into a root of its own.
# (dpkg-deb -x: dpkg --root would run the maintainer scripts chrooted there,
# where there is no shell.)
ROOT="$TMP/root"
run dpkg-deb -x "$DEB" "$ROOT"
expect_rc "dpkg-deb -x unpacks it into a temporary root" 0
for b in usr/bin/trainjob usr/bin/trainjobd usr/libexec/trainjob/trainjob-shim; do
    readelf -d "$ROOT/$b" >"$TMP/elf" 2>&1
    expect_no_grep "$b needs no libcmocka (readelf -d)" "$TMP/elf" cmocka
    expect_no_grep "...nor libcrypto (loaded when a request is signed)" "$TMP/elf" libcrypto
done
check "...the shim links libc alone, dynamically: glibc's security fixes reach it" \
    test "$(readelf -d "$ROOT/usr/libexec/trainjob/trainjob-shim" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p')" = libc.so.6

# Man pages: mandoc's lint finds no paragraph macro it skips (scdoc's
# output, tidied by the Makefile's man rule), groff no warning.
for m in man1/trainjob.1 man8/trainjobd.8 man5/trainjob-job.5; do
    gzip -dc "$ROOT/usr/share/man/$m.gz" >"$TMP/page"
    mandoc -T lint "$TMP/page" >"$TMP/lint" 2>&1
    expect_no_grep "mandoc -T lint: no skipped paragraph macro in $m" "$TMP/lint" "skipping paragraph macro"
    groff -man -ww -z "$TMP/page" >"$TMP/groff.err" 2>&1
    check "...groff -man -ww finds nothing in $m" test ! -s "$TMP/groff.err"
done

# The unit: systemd-analyze verify in the unpacked root (with this machine's
# units for the targets it names), and it does fail on a unit that is wrong.
UNIT=$(cd "$ROOT" && ls lib/systemd/system/trainjobd.service usr/lib/systemd/system/trainjobd.service 2>/dev/null | head -1)
if systemd-analyze --version >/dev/null 2>&1 && [ -d /lib/systemd/system ]; then
    cp -an /lib/systemd/system/. "$ROOT/lib/systemd/system/" 2>/dev/null
    run systemd-analyze verify --man=no --root="$ROOT" "/$UNIT"
    expect_rc "systemd-analyze verify trainjobd.service" 0
    [ "$rc" -eq 0 ] || cat "$TMP/err"
    mv "$ROOT/usr/bin/trainjobd" "$ROOT/usr/bin/trainjobd.away"
    run systemd-analyze verify --man=no --root="$ROOT" "/$UNIT"
    check "...which fails when ExecStart's binary is missing" test "$rc" -ne 0
    mv "$ROOT/usr/bin/trainjobd.away" "$ROOT/usr/bin/trainjobd"
else
    echo "SKIP systemd-analyze verify: systemd-analyze cannot run here"
fi
for d in 'StateDirectory=trainjob' 'RuntimeDirectory=trainjobd' 'ProtectSystem=' 'NoNewPrivileges=yes' \
    'ExecStart=/usr/bin/trainjobd '; do
    expect_grep "the unit sets $d" "$ROOT/$UNIT" "$d"
done
dpkg-deb -e "$DEB" "$TMP/control"
check "the maintainer scripts never start, stop or restart the unit" \
    sh -c '! cat "$1"/preinst "$1"/postinst "$1"/prerm "$1"/postrm 2>/dev/null | grep -q deb-systemd-invoke' \
    sh "$TMP/control"
check "...nor enable it unless the admin had (was-enabled)" \
    sh -c 'grep -B2 "deb-systemd-helper enable" "$1"/postinst | grep -q was-enabled' sh "$TMP/control"

# Run from the unpacked root: its version, and a job on its own trainjobd
# with its own shim (found beside it, in usr/libexec/trainjob).
mkdir -p "$TMP/elsewhere"
cd "$TMP/elsewhere" || exit 1
run "$ROOT/usr/bin/trainjob" --version
expect_rc "the packaged trainjob --version" 0
check "...prints the package's version" test "$(cat "$TMP/out")" = "trainjob $VERSION"
# It runs with no_new_privs, as trainjobd.service sets NoNewPrivileges: the
# shim drops to the job's user and bubblewrap sets up the sandbox without
# any setuid program.
printf '#!/bin/sh\nexec setpriv --no-new-privs "%s" "$@"\n' "$ROOT/usr/bin/trainjobd" >"$TMP/trainjobd-nnp"
chmod +x "$TMP/trainjobd-nnp"
TRAINJOBD_BIN="$TMP/trainjobd-nnp"
engine_config </dev/null
start_engine
check "the packaged trainjobd starts (under no_new_privs)" kill -0 "$ENGINE_PID"
check "...with its no_new_privs set" grep -q '^NoNewPrivs:[[:space:]]*1' "/proc/$ENGINE_PID/status"
submit deb-job "echo hello from the package; cat /proc/1/comm"
check "...accepts a job" test "$code" = 200
check "...and runs it to SUCCEEDED with the packaged shim" wait_for deb-job .state SUCCEEDED
if command -v bwrap >/dev/null 2>&1; then
    expect_no_grep "...in the bubblewrap sandbox (not unsandboxed for lack of it)" "$TMP/engine.log" \
        "bubblewrap not available"
fi
run "$ROOT/usr/bin/trainjob" --endpoint "http+unix://$SOCK" get jobs
expect_grep "the packaged trainjob lists it" "$TMP/out" deb-job
run "$ROOT/usr/bin/trainjob" --endpoint "http+unix://$SOCK" logs deb-job
expect_grep "...and shows its log" "$TMP/out" "hello from the package"
if command -v bwrap >/dev/null 2>&1 && [ "$(cat /proc/1/comm)" != init ]; then
    check "...its pid 1 the sandbox's init, not the host's $(cat /proc/1/comm)" grep -qx init "$TMP/out"
fi
stop_engine
cd "$TRAINJOB_TOP" || exit 1

# ---- apt install on a fresh Debian 12 ----------------------------------------
# The package installed as an admin installs it: a minimal Debian 12 root
# (mmdebstrap --variant=apt from Debian's mirror, kept as a tarball in
# build/debroot/ so reruns only unpack it) gets `apt install ./trainjob_….deb`,
# which pulls the Depends (and Recommends: bubblewrap) from the mirror; then,
# chrooted there as on a new machine, `trainjob --version` and a job on the
# embedded engine (trainjobd started on demand by trainjob). The chroot's
# /proc and /dev are mounted in a private mount namespace (unshare), so they
# go with the test; trainjobd is stopped by the pid its lock file names.
# bubblewrap cannot run in a chroot (its root is no mount point: "Failed to
# make / slave"; made one, bwrap still cannot resolve a descriptor to bind,
# "Can't find source path /proc/self/fd/N"), so trainjobd's probe finds no
# sandbox and it runs the job unsandboxed, saying so: the sandbox itself is
# checked above, from the unpacked package on this machine. Skipped, saying
# why, when this cannot be had here: not root, no mmdebstrap or unshare, or
# the mirror does not answer.
apt_root_test() {
    if [ "$(id -u)" != 0 ]; then
        echo "SKIP apt install in a Debian 12 root: needs root (chroot, mounts)"
        return
    fi
    for t in mmdebstrap unshare chroot; do
        command -v "$t" >/dev/null 2>&1 || {
            echo "SKIP apt install in a Debian 12 root: no $t (scripts/deps.sh --test installs mmdebstrap)"
            return
        }
    done
    cache="$TRAINJOB_TOP/build/debroot"
    base="$cache/bookworm-apt.tar"
    mkdir -p "$cache"
    if [ ! -s "$base" ]; then
        # Written beside, then renamed: a suite running alongside (make asan) never reads half of it.
        if mmdebstrap --variant=apt --quiet --format=tar bookworm "$base.$$" \
            "deb http://deb.debian.org/debian bookworm main" \
            "deb http://deb.debian.org/debian bookworm-updates main" \
            "deb http://deb.debian.org/debian-security bookworm-security main" >"$TMP/mmdebstrap.log" 2>&1; then
            mv "$base.$$" "$base"
        else
            rm -f "$base.$$"
            echo "SKIP apt install in a Debian 12 root: mmdebstrap could not fetch bookworm from Debian's mirror: $(tail -c 300 "$TMP/mmdebstrap.log")"
            return
        fi
    fi
    CH="$TMP/debian12"
    mkdir -p "$CH"
    run tar -xf "$base" -C "$CH"
    expect_rc "a fresh Debian 12 root is unpacked (build/debroot/bookworm-apt.tar)" 0
    cp "$DEB" "$CH/tmp/"
    cp /etc/resolv.conf "$CH/etc/resolv.conf" 2>/dev/null
    cat >"$CH/tmp/apt-job.yaml" <<'EOF2'
workspace_name: default
name: apt-job
display_name: apt-job
framework: PYTORCH_DDP
resource_pool:
  name: local
roles:
  - total_replicas: 1
    resource_spec:
      - name: cpu-1
    image_path: local/host
    startup_script: |
      echo hello from apt; cat /proc/1/comm
EOF2
    cat >"$CH/tmp/apt-test.sh" <<EOF2
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
unset XDG_RUNTIME_DIR TRAINJOB_ENDPOINT TRAINJOB_CONFIG TRAINJOBD_BIN TRAINJOB_SHIM
cd /tmp
apt-get update -q >/tmp/update.log 2>&1 || { echo "UPDATE-FAILED"; tail -5 /tmp/update.log; exit 0; }
apt install -y -q ./$(basename "$DEB") >/tmp/install.log 2>&1
echo "install rc=\$?"
trainjob --version
echo "version rc=\$?"
command -v bwrap >/dev/null && echo "bwrap installed"
trainjob submit -f /tmp/apt-job.yaml
echo "submit rc=\$?"
n=0 s=
while [ \$n -lt 150 ]; do
    s=\$(trainjob get job apt-job -o json 2>/dev/null | sed -n 's/.*"state": "\([A-Z]*\)".*/\1/p' | head -1)
    case \$s in SUCCEEDED | FAILED) break ;; esac
    sleep 0.2
    n=\$((n + 1))
done
echo "state \$s"
trainjob logs apt-job
pid=\$(sed -n 's/^pid //p' /root/.local/state/trainjob/engine/trainjobd.lock 2>/dev/null)
echo "engine pid \${pid:-none}"
[ -n "\$pid" ] && kill "\$pid"
n=0
while [ -n "\$pid" ] && [ -e "/proc/\$pid" ] && [ \$n -lt 50 ]; do
    sleep 0.1
    n=\$((n + 1))
done
EOF2
    unshare --mount --propagation private sh -c '
        mount -t proc proc "$1/proc" && mount --rbind /dev "$1/dev" &&
            exec chroot "$1" /bin/sh /tmp/apt-test.sh' sh "$CH" >"$TMP/apt.out" 2>&1
    sed 's/^/    debian12: /' "$TMP/apt.out"
    if grep -q "^UPDATE-FAILED" "$TMP/apt.out"; then
        echo "SKIP apt install in a Debian 12 root: apt-get update could not reach Debian's mirror"
        return
    fi
    expect_grep "apt install ./$(basename "$DEB") on a fresh Debian 12 installs it with its Depends" \
        "$TMP/apt.out" "install rc=0"
    check "...dpkg has it installed" grep -q "^Status: install ok installed" "$CH/var/lib/dpkg/status"
    expect_grep "...trainjob --version prints the package's version" "$TMP/apt.out" "trainjob $VERSION"
    expect_grep "...its Recommends brought bubblewrap" "$TMP/apt.out" "bwrap installed"
    expect_grep "...a job is submitted to the embedded engine (started on demand)" "$TMP/apt.out" "submit rc=0"
    expect_grep "...and runs to SUCCEEDED" "$TMP/apt.out" "state SUCCEEDED"
    expect_grep "...its log is read back" "$TMP/apt.out" "hello from apt"
    log="$CH/root/.local/state/trainjob/engine/trainjobd.log"
    expect_grep "...unsandboxed, as trainjobd says when bubblewrap cannot run (a chroot)" "$log" \
        "bubblewrap not available: workers run without a sandbox"
    check "...and the engine it started ends by its pid" grep -q "stopping" "$log"
}
apt_root_test
