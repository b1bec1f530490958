# trainjob — one non-recursive GNU Makefile.
#
#   make run     build, then start trainjob (on the embedded engine)
#   make test    build, then run every test
#   make asan    the tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make bench   benchmarks, printed as a table
#   make fuzz    each fuzz target for FUZZ_SECONDS (clang + libFuzzer)
#   make format  clang-format every source file
#   make install PREFIX=/usr/local DESTDIR=/tmp/stage   binaries, themes, keys,
#                man pages, completions under DESTDIR+PREFIX (an empty DESTDIR
#                is the live system; make uninstall removes them)
#   make deb     the Debian package, in build/deb/ (dpkg-buildpackage -us -uc -b)
#   make deps    install missing build packages (test-deps: also the tests')
#
# Objects go to $(BUILD) (build/, or build/asan for the sanitizer run), with
# -MMD dependency files beside them. CI sets CI=true: warnings become errors.

BUILD     ?= build
CC        ?= cc
# A build uses every core unless told (-j1 builds one file at a time): on a
# fresh clone the build is half of `make test`'s wall time otherwise.
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif
PKGS      := ncursesw libcurl jansson yaml-0.1 libmicrohttpd sqlite3 libcrypto zlib
# Headers only: api/crypto_dl dlopens libcrypto on the first signature, so no
# binary links it (its load cost every exec of trainjob ~0.65 ms, issue 24).
# (libcurl stays on the line for the benches' own transfers; --as-needed
# leaves it out of the binaries, which call it through api/curl_dl.)
DLOPEN_PKGS := libcrypto
# Only the unit tests use cmocka: it is no part of a binary's link line, and
# asked for when a test is built (after `scripts/deps.sh --test` ran).
TEST_CFLAGS = $(shell pkg-config --cflags cmocka)
TEST_LIBS   = $(shell pkg-config --libs cmocka)
SANITIZE  ?=
FUZZ_SECONDS ?= 30

WARN      := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes \
             -Wpointer-arith -Wvla -Wundef -Wno-unused-parameter
CFLAGS    ?= -O2 -g
ifneq ($(CI),)
WARN      += -Werror
endif
ifneq ($(SANITIZE),)
CFLAGS    := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
LDFLAGS   += -fsanitize=address,undefined
endif

# Each binary loads only the libraries it uses (trainjob needs no microhttpd/SQLite).
LDFLAGS   += -Wl,--as-needed
CPPFLAGS  += -I. -D_GNU_SOURCE -DNCURSES_WIDECHAR=1
# A release tag, else VERSION+gHASH, else VERSION (see scripts/version.sh).
VERSION   := $(shell scripts/version.sh)

# Where `make install` puts things; the binaries find their data from PREFIX
# (compiled in) or, for a tree moved elsewhere, relative to themselves.
PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
LIBEXECDIR  ?= $(PREFIX)/libexec
DATAROOTDIR ?= $(PREFIX)/share
MANDIR      ?= $(DATAROOTDIR)/man
PKGDATADIR  := $(DATAROOTDIR)/trainjob
PKGLIBEXEC  := $(LIBEXECDIR)/trainjob
BASHCOMPDIR ?= $(DATAROOTDIR)/bash-completion/completions
# Debian's zsh searches vendor-completions under /usr, site-functions elsewhere.
ifeq ($(PREFIX),/usr)
ZSHCOMPDIR  ?= $(DATAROOTDIR)/zsh/vendor-completions
else
ZSHCOMPDIR  ?= $(DATAROOTDIR)/zsh/site-functions
endif
FISHCOMPDIR ?= $(DATAROOTDIR)/fish/vendor_completions.d
# The README and the doc/*.md it points at, beside each other as in the tree.
DOCDIR      ?= $(DATAROOTDIR)/doc/trainjob
DOCS        := README.md $(sort $(wildcard doc/*.md))
ALL_CFLAGS = -std=c11 $(WARN) $(CFLAGS) $(PKG_CFLAGS)

# pkg-config is asked once per build tree, after the dependency step, and the
# answer kept in $(BUILD)/config.mk (make re-reads it when it changes).
NODEPS_GOALS := clean format deps test-deps help uninstall deb
ifeq ($(filter $(NODEPS_GOALS),$(MAKECMDGOALS)),)
ifneq ($(MAKECMDGOALS),fuzz)
-include $(BUILD)/config.mk
endif
endif

# Only what building needs: the tests' tools come with `make test` (test-deps).
$(BUILD)/config.mk: Makefile scripts/deps.sh
	@scripts/deps.sh
	@mkdir -p $(@D)
	@{ echo "PKG_CFLAGS := $$(pkg-config --cflags $(PKGS))"; \
	   echo "PKG_LIBS := $$(pkg-config --libs $(filter-out $(DLOPEN_PKGS),$(PKGS))) -lm"; } > $@

# Sources by layer. main.c files are the only ones not linked into tests.
UTIL_SRC    := $(wildcard util/*.c)
API_SRC     := $(wildcard api/*.c)
THEMES_SRC  := $(wildcard themes/*.c)
WIDGETS_SRC := $(wildcard widgets/*.c)
TUI_SRC     := $(wildcard tui/*.c)
CLI_SRC     := $(filter-out cli/main.c,$(wildcard cli/*.c))
ENGINE_SRC  := $(filter-out engine/main.c engine/shim.c engine/shim_%.c,$(wildcard engine/*.c))

LIB_SRC  := $(UTIL_SRC) $(API_SRC) $(THEMES_SRC) $(WIDGETS_SRC) $(TUI_SRC) $(CLI_SRC) $(ENGINE_SRC)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
LIB_A    := $(BUILD)/libtrainjob.a

TESTS_SRC := $(wildcard tests/test_*.c)
TESTS     := $(TESTS_SRC:tests/%.c=$(BUILD)/tests/%)
BENCH_SRC := $(wildcard bench/bench_*.c)
BENCHES   := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
# Small programs the shell tests drive (tests/tools/NAME.c → $(BUILD)/tests/tools/NAME);
# tests/tools/seed.c is no program but the seeded engine they and the benches link.
TOOLS_SRC := $(filter-out tests/tools/seed.c,$(wildcard tests/tools/*.c))
TOOLS     := $(TOOLS_SRC:tests/%.c=$(BUILD)/tests/%)
FUZZ_SRC  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN  := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)

.PHONY: all run test conformance asan bench fuzz format deps test-deps clean help check-tests install \
        uninstall deb FORCE
# Keep objects that only chained rules make (tests, benches), so relinks do not rebuild them.
.SECONDARY:
.DEFAULT_GOAL := all

BINARIES := $(BUILD)/trainjob $(BUILD)/trainjobd $(BUILD)/trainjob-shim
# Man pages: scdoc sources in doc/ (NAME.SECTION.scd) rendered to roff.
MAN_SRC := $(wildcard doc/*.scd)
MANS    := $(MAN_SRC:doc/%.scd=$(BUILD)/man/%)

all: $(BINARIES) $(MANS)

$(BUILD)/%.o: %.c $(BUILD)/config.mk
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

# The default key bindings are a text file in the keys format, compiled in as a
# C string (sed only: no xxd on a fresh Debian). '?' is escaped so no "??x"
# becomes a trigraph.
$(BUILD)/gen/default_keys.h: tui/default.keys
	@mkdir -p $(@D)
	@{ echo '/* Generated from tui/default.keys by the Makefile; do not edit. */'; \
	   echo 'static const char default_keys_text[] ='; \
	   sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; \
	   echo ';'; } > $@.tmp && mv $@.tmp $@
$(BUILD)/tui/keymap.o: $(BUILD)/gen/default_keys.h
$(BUILD)/tui/keymap.o: CPPFLAGS += -I$(BUILD)/gen

# What this build is and where it will be installed, for util/buildinfo.c
# only. Rewritten when it would change (a new commit, another PREFIX), so
# nothing else rebuilds for it.
$(BUILD)/gen/build_paths.h: FORCE
	@mkdir -p $(@D)
	@{ echo '/* Generated by the Makefile; do not edit. */'; \
	   echo '#define TRAINJOB_VERSION "$(VERSION)"'; \
	   echo '#define TRAINJOB_PKGDATADIR "$(PKGDATADIR)"'; \
	   echo '#define TRAINJOB_PKGLIBEXEC "$(PKGLIBEXEC)"'; } > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(BUILD)/util/buildinfo.o: $(BUILD)/gen/build_paths.h
$(BUILD)/util/buildinfo.o: CPPFLAGS += -I$(BUILD)/gen
FORCE:

# Man pages: rendered by the rule below. scdoc writes a .P after each heading
# and at each blank line, also where it does nothing (mandoc -T lint:
# "skipping paragraph macro"); scripts/man-tidy.awk drops those.
$(BUILD)/man/%: doc/%.scd scripts/man-tidy.awk
	@mkdir -p $(@D)
	scdoc < $< | awk -f scripts/man-tidy.awk > $@.tmp && mv $@.tmp $@

$(LIB_A): $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/trainjob: $(BUILD)/cli/main.o $(LIB_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/trainjobd: $(BUILD)/engine/main.o $(LIB_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

SHIM_OBJ := $(patsubst %.c,$(BUILD)/%.o,engine/shim.c $(wildcard engine/shim_*.c))
# The shim is exec'd for every worker start and needs only libc: linked
# statically it skips the dynamic loader (issue 14: 5.8 -> 2.7 ms of CPU per
# exec, perf stat over 300). The cost: a glibc fix reaches it on a rebuild,
# not an upgrade (debian/rules sets SHIM_LINK= for that reason). Not under the
# sanitizers, which cannot link statically.
ifeq ($(SANITIZE),)
SHIM_LINK ?= -static
endif
$(BUILD)/trainjob-shim: $(SHIM_OBJ) $(LIB_A)
	$(CC) $(LDFLAGS) $(SHIM_LINK) -o $@ $^ -lm

# Objects first, the library after them (seed.o below needs it too). The
# unit tests alone link cmocka; their tools are built after test-deps ran.
$(TESTS_SRC:%.c=$(BUILD)/%.o): ALL_CFLAGS += $(TEST_CFLAGS)
$(TESTS_SRC:%.c=$(BUILD)/%.o) $(TOOLS_SRC:%.c=$(BUILD)/%.o): | test-deps
$(TESTS): $(BUILD)/tests/%: $(BUILD)/tests/%.o $(LIB_A)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LIB_A) $(PKG_LIBS) $(TEST_LIBS)
$(BUILD)/tests/%: $(BUILD)/tests/%.o $(LIB_A)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LIB_A) $(PKG_LIBS)

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(LIB_A)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LIB_A) $(PKG_LIBS)

# The seeded engine (tests/tools/seed.c) for the tools and benches that use it.
SEED_USERS := $(BUILD)/tests/tools/seedjobs $(BUILD)/bench/bench_lists $(BUILD)/bench/bench_engine \
              $(BUILD)/tests/test_ejobspec $(BUILD)/bench/bench_slurm
$(SEED_USERS): $(BUILD)/tests/tools/seed.o

# The fuzz replay driver runs every fuzz target over its seed corpus in
# `make test`, with whatever compiler builds the rest.
$(BUILD)/fuzz-replay/%: tests/fuzz/%.c tests/fuzz/replay.c $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ tests/fuzz/$*.c tests/fuzz/replay.c $(LIB_A) $(PKG_LIBS)
FUZZ_REPLAY := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz-replay/%)

run: $(BUILD)/trainjob
	$(BUILD)/trainjob $(ARGS)

check-tests: test-deps $(BINARIES) $(MANS) $(TESTS) $(TOOLS) $(FUZZ_REPLAY)

# The suites run side by side (tests/run-tests.sh says how many and why);
# TEST_JOBS=1 runs them one after another, TEST_ONLY='slurm_* test_acp' some.
test: check-tests
	@tests/run-tests.sh $(BUILD)

# The conformance suite alone (every backend, or CONFORMANCE_BACKENDS=a,b),
# its parity table also in $(BUILD)/conformance.md (README's "Backends: parity";
# scripts/readme-parity.sh $(BUILD)/conformance.md puts it there).
conformance: check-tests
	@CONFORMANCE_TABLE=$(BUILD)/conformance.md TRAINJOB_BIN=$(CURDIR)/$(BUILD)/trainjob \
	    TRAINJOB_TOP=$(CURDIR) TRAINJOBD_BIN=$(CURDIR)/$(BUILD)/trainjobd \
	    TRAINJOB_SHIM=$(CURDIR)/$(BUILD)/trainjob-shim TRAINJOBD_SCHED_VERIFY=1 \
	    sh tests/conformance.test.sh | tee $(BUILD)/conformance.log; \
	    ! grep -q '^FAIL ' $(BUILD)/conformance.log

# The same runner over the sanitizer build. The -j is passed on: the
# sub-make cannot use a job server that the -j added above did not open.
asan:
	@$(MAKE) --no-print-directory $(filter -j%,$(MAKEFLAGS)) BUILD=build/asan SANITIZE=1 test

bench: $(BINARIES) $(BENCHES) $(BUILD)/tests/tools/cputime $(BUILD)/tests/tools/shareload \
       $(BUILD)/tests/tools/unixget
	@scripts/deps.sh --bench || echo "bench: no htop; its reference figures will read n/a" >&2
	@bench/run-bench.sh $(BUILD)

# libFuzzer targets, built with clang into build/fuzz; each runs for
# FUZZ_SECONDS over a copy of its seed corpus. A target that includes an
# engine/ header (fuzz_http) links the engine too, one that includes
# widgets/chart.h the chart's maths. FUZZ=NAME runs one target.
fuzz: $(BUILD)/gen/build_paths.h
	@scripts/deps.sh --fuzz
	@mkdir -p build/fuzz
	@set -e; for f in $(if $(FUZZ),tests/fuzz/$(FUZZ).c,$(FUZZ_SRC)); do \
	    n=$$(basename $$f .c); \
	    extra=; if grep -q '^#include "engine/' $$f; then extra="$(ENGINE_SRC)"; fi; \
	    if grep -q '^#include "widgets/chart.h"' $$f; then extra="$$extra widgets/chart_math.c"; fi; \
	    clang -std=c11 -g -O1 -I. -I$(BUILD)/gen -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	        $$(pkg-config --cflags $(PKGS)) -o build/fuzz/$$n $$f $(UTIL_SRC) $(API_SRC) $$extra \
	        $$(pkg-config --libs $(PKGS)) -lm; \
	    mkdir -p build/fuzz/corpus-$$n; cp tests/fuzz/seeds/$${n#fuzz_}/* build/fuzz/corpus-$$n/ 2>/dev/null || true; \
	    echo "fuzz: $$n for $(FUZZ_SECONDS)s"; \
	    build/fuzz/$$n -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -print_final_stats=1 \
	        build/fuzz/corpus-$$n 2>&1 | grep -E '^(stat::|==[0-9]+==|SUMMARY|.*Test unit written)'; \
	done

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

# Installs under DESTDIR+PREFIX: trainjob and trainjobd in BINDIR, the shim
# (run by trainjobd only) in LIBEXECDIR/trainjob, themes and the default keys
# (a reference copy: they are compiled in) in share/trainjob, man pages, and
# the completion scripts `trainjob completion SHELL` prints.
INSTALLED_FILES = $(BINDIR)/trainjob $(BINDIR)/trainjobd $(PKGLIBEXEC)/trainjob-shim \
    $(patsubst themes/%,$(PKGDATADIR)/themes/%,$(wildcard themes/*.theme)) \
    $(PKGDATADIR)/default.keys \
    $(foreach m,$(MAN_SRC:doc/%.scd=%),$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(m)) \
    $(BASHCOMPDIR)/trainjob $(ZSHCOMPDIR)/_trainjob $(FISHCOMPDIR)/trainjob.fish \
    $(addprefix $(DOCDIR)/,$(DOCS))

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(PKGLIBEXEC) $(DESTDIR)$(PKGDATADIR)/themes \
	    $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR) \
	    $(DESTDIR)$(DOCDIR)/doc \
	    $(sort $(foreach m,$(MAN_SRC:doc/%.scd=%),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))))
	install -m 755 $(BUILD)/trainjob $(BUILD)/trainjobd $(DESTDIR)$(BINDIR)/
	install -m 755 $(BUILD)/trainjob-shim $(DESTDIR)$(PKGLIBEXEC)/
	install -m 644 themes/*.theme $(DESTDIR)$(PKGDATADIR)/themes/
	install -m 644 tui/default.keys $(DESTDIR)$(PKGDATADIR)/default.keys
	install -m 644 README.md $(DESTDIR)$(DOCDIR)/
	install -m 644 $(filter doc/%,$(DOCS)) $(DESTDIR)$(DOCDIR)/doc/
	set -e; for m in $(MANS); do \
	    n=$${m##*/}; install -m 644 $$m $(DESTDIR)$(MANDIR)/man$${n##*.}/$$n; done
	$(BUILD)/trainjob completion bash > $(DESTDIR)$(BASHCOMPDIR)/trainjob
	$(BUILD)/trainjob completion zsh > $(DESTDIR)$(ZSHCOMPDIR)/_trainjob
	$(BUILD)/trainjob completion fish > $(DESTDIR)$(FISHCOMPDIR)/trainjob.fish

# Removes exactly what install put there, and the directories only trainjob uses.
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED_FILES))
	-rmdir $(DESTDIR)$(PKGDATADIR)/themes $(DESTDIR)$(PKGDATADIR) $(DESTDIR)$(PKGLIBEXEC) \
	    $(DESTDIR)$(DOCDIR)/doc $(DESTDIR)$(DOCDIR) 2>/dev/null

deps:
	@scripts/deps.sh

test-deps:
	@scripts/deps.sh --test

# The Debian package (debian/), built from this tree; the .deb and its
# .buildinfo/.changes are moved to $(BUILD)/deb. debian/changelog must name
# the version this tree builds (scripts/version.sh): debian/rules checks.
deb:
	dpkg-buildpackage -us -uc -b
	@mkdir -p $(BUILD)/deb
	mv ../trainjob_*.deb ../trainjob-dbgsym_*.deb ../trainjob_*.buildinfo ../trainjob_*.changes \
	    $(BUILD)/deb/ 2>/dev/null; ls $(BUILD)/deb/trainjob_*.deb

clean:
	rm -rf build

help:
	@sed -n '3,13p' Makefile | sed 's/^# //'

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
