#!/bin/sh
# Installs what trainjob needs to build (and with --test, to test), from
# Debian 12 packages. Checks with pkg-config (and command -v for tools)
# first, so on a machine that has everything it costs a few milliseconds and
# installs nothing. As root it runs apt-get; otherwise, and always under
# fakeroot or inside a package build (dpkg-buildpackage: the Build-Depends
# are checked there), it prints the exact command and fails.
#
# usage: scripts/deps.sh [--test | --fuzz | --bench]
#        (none: building only, as plain `make` and debian/rules build;
#        --test what `make test` runs too; --fuzz also clang and libFuzzer;
#        --bench htop, the reference `make bench` measures memory against)
# DEPS_DRY_RUN=1 prints what would be installed and installs nothing.
set -u

missing=""
need_pc() { # pkg-config-name debian-package
    pkg-config --exists "$1" 2>/dev/null || missing="$missing $2"
}
need_cmd() { # command debian-package
    command -v "$1" >/dev/null 2>&1 || missing="$missing $2"
}

need_cmd pkg-config pkg-config
need_cmd cc gcc
need_cmd make make
if command -v pkg-config >/dev/null 2>&1; then
    need_pc ncursesw libncurses-dev
    need_pc libcurl libcurl4-openssl-dev
    need_pc jansson libjansson-dev
    need_pc yaml-0.1 libyaml-dev
    need_pc libmicrohttpd libmicrohttpd-dev
    need_pc sqlite3 libsqlite3-dev
    need_pc libcrypto libssl-dev
    need_pc zlib zlib1g-dev
else
    missing="$missing libncurses-dev libcurl4-openssl-dev libjansson-dev libyaml-dev libmicrohttpd-dev libsqlite3-dev libssl-dev zlib1g-dev"
fi
# The man pages are scdoc sources (doc/*.scd): scdoc is small and turns them
# into roff at build time.
need_cmd scdoc scdoc

if [ "${1:-}" = "--test" ]; then
if command -v pkg-config >/dev/null 2>&1; then
    need_pc cmocka libcmocka-dev
else
    missing="$missing libcmocka-dev"
fi
need_cmd tmux tmux
need_cmd bwrap bubblewrap
need_cmd valgrind valgrind
need_cmd curl curl
need_cmd jq jq
need_cmd openssl openssl
# tests/slurm_list.test.sh and tests/config.test.sh count the files a command opens
need_cmd strace strace
# the tests run the signer under zh_CN.UTF-8 (tests/locale.sh), made from these sources
[ -f /usr/share/i18n/locales/zh_CN ] || missing="$missing locales"
# groff and mandoc check the man pages; zsh and fish load the completion
# scripts in tests/install.test.sh.
need_cmd groff groff-base
need_cmd mandoc mandoc
need_cmd zsh zsh
need_cmd fish fish
# The TensorBoard fixtures (tests/fixtures/tensorboard/gen_events.py) are written by the
# real protobuf runtime from .proto files compiled by protoc, with Debian's python3.
need_cmd protoc protobuf-compiler
/usr/bin/python3 -c "import google.protobuf" 2>/dev/null || missing="$missing python3 python3-protobuf"
# The Kubernetes manifests (tests/k8s_render.test.sh) are read by PyYAML, a YAML 1.1
# reader as kubectl's is, and checked against their CRDs' schemas by python3-jsonschema.
/usr/bin/python3 -c "import jsonschema, yaml" 2>/dev/null ||
    missing="$missing python3 python3-jsonschema python3-yaml"
# tests/deb.test.sh builds the Debian package, lints it and checks the unit.
need_cmd dpkg-buildpackage dpkg-dev
need_cmd dh debhelper
need_cmd lintian lintian
need_cmd fakeroot fakeroot
need_cmd systemd-analyze systemd
# tests/deb.test.sh installs the package with apt into a fresh Debian 12 root
need_cmd mmdebstrap mmdebstrap
fi
if [ "${1:-}" = "--fuzz" ]; then
    need_cmd clang clang
    ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 ||
        missing="$missing libclang-rt-dev"
fi
if [ "${1:-}" = "--bench" ]; then
    need_cmd htop htop
fi

[ -z "$missing" ] && exit 0

if [ -n "${DEPS_DRY_RUN:-}" ]; then
    echo "deps: would install$missing"
    exit 0
fi
# fakeroot's uid 0 is no root, and a package build installs nothing.
if [ "$(id -u)" -eq 0 ] && [ -z "${FAKEROOTKEY:-}" ] && [ -z "${DEB_RULES_REQUIRES_ROOT:-}" ]; then
    echo "deps: installing$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null &&
        apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
        { echo "deps: apt-get install$missing failed" >&2; exit 1; }
else
    echo "deps: missing packages; run:" >&2
    echo "  sudo apt-get install$missing" >&2
    exit 1
fi
