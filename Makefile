# trainjob — one non-recursive GNU Makefile.
#
#   make run     build, then start trainjob (on the embedded engine)
#   make test    build, then run every test
#   make asan    the tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make bench   benchmarks, printed as a table
#   make fuzz    each fuzz target for FUZZ_SECONDS (clang + libFuzzer)
#   make format  clang-format every source file
#   make deps    install missing Debian packages (run by run/test/asan/bench)
#
# Objects go to $(BUILD) (build/, or build/asan for the sanitizer run), with
# -MMD dependency files beside them. CI sets CI=true: warnings become errors.

BUILD     ?= build
CC        ?= cc
PKGS      := ncursesw libcurl jansson yaml-0.1 cmocka libmicrohttpd sqlite3 libcrypto
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
CPPFLAGS  += -I. -D_GNU_SOURCE -DNCURSES_WIDECHAR=1 -DTRAINJOB_VERSION='"$(VERSION)"'
VERSION   := $(shell git describe --tags --always --dirty 2>/dev/null || echo 0.1)
ALL_CFLAGS = -std=c11 $(WARN) $(CFLAGS) $(PKG_CFLAGS)

# pkg-config is asked once per build tree, after the dependency step, and the
# answer kept in $(BUILD)/config.mk (make re-reads it when it changes).
NODEPS_GOALS := clean format deps help
ifeq ($(filter $(NODEPS_GOALS),$(MAKECMDGOALS)),)
ifneq ($(MAKECMDGOALS),fuzz)
-include $(BUILD)/config.mk
endif
endif

$(BUILD)/config.mk: Makefile scripts/deps.sh
	@scripts/deps.sh
	@mkdir -p $(@D)
	@{ echo "PKG_CFLAGS := $$(pkg-config --cflags $(PKGS))"; \
	   echo "PKG_LIBS := $$(pkg-config --libs $(PKGS)) -lm"; } > $@

# Sources by layer. main.c files are the only ones not linked into tests.
UTIL_SRC    := $(wildcard util/*.c)
API_SRC     := $(wildcard api/*.c)
THEMES_SRC  := $(wildcard themes/*.c)
WIDGETS_SRC := $(wildcard widgets/*.c)
TUI_SRC     := $(filter-out tui/main.c,$(wildcard tui/*.c))
ENGINE_SRC  := $(filter-out engine/main.c engine/shim.c,$(wildcard engine/*.c))

LIB_SRC  := $(UTIL_SRC) $(API_SRC) $(THEMES_SRC) $(WIDGETS_SRC) $(TUI_SRC) $(ENGINE_SRC)
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

.PHONY: all run test asan bench fuzz format deps clean help check-tests
# Keep objects that only chained rules make (tests, benches), so relinks do not rebuild them.
.SECONDARY:
.DEFAULT_GOAL := all

BINARIES := $(BUILD)/trainjob $(BUILD)/trainjobd $(BUILD)/trainjob-shim

all: $(BINARIES)

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

$(LIB_A): $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/trainjob: $(BUILD)/tui/main.o $(LIB_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/trainjobd: $(BUILD)/engine/main.o $(LIB_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/trainjob-shim: $(BUILD)/engine/shim.o $(LIB_A)
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS)

# Objects first, the library after them (seed.o below needs it too).
$(BUILD)/tests/%: $(BUILD)/tests/%.o $(LIB_A)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LIB_A) $(PKG_LIBS)

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(LIB_A)
	$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LIB_A) $(PKG_LIBS)

# The seeded engine (tests/tools/seed.c) for the tools and benches that use it.
SEED_USERS := $(BUILD)/tests/tools/seedjobs $(BUILD)/bench/bench_lists $(BUILD)/bench/bench_engine
$(SEED_USERS): $(BUILD)/tests/tools/seed.o

# The fuzz replay driver runs every fuzz target over its seed corpus in
# `make test`, with whatever compiler builds the rest.
$(BUILD)/fuzz-replay/%: tests/fuzz/%.c tests/fuzz/replay.c $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ tests/fuzz/$*.c tests/fuzz/replay.c $(LIB_A) $(PKG_LIBS)
FUZZ_REPLAY := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz-replay/%)

run: $(BUILD)/trainjob
	$(BUILD)/trainjob $(ARGS)

check-tests: $(BINARIES) $(TESTS) $(TOOLS) $(FUZZ_REPLAY)

test: check-tests
	@tests/run-tests.sh $(BUILD)

asan:
	@$(MAKE) --no-print-directory BUILD=build/asan SANITIZE=1 test

bench: $(BINARIES) $(BENCHES)
	@scripts/deps.sh --bench || echo "bench: no htop; its reference figures will read n/a" >&2
	@bench/run-bench.sh $(BUILD)

# libFuzzer targets, built with clang into build/fuzz; each runs for
# FUZZ_SECONDS over a copy of its seed corpus. A target that includes an
# engine/ header (fuzz_http) links the engine too, one that includes
# widgets/chart.h the chart's maths. FUZZ=NAME runs one target.
fuzz:
	@scripts/deps.sh --fuzz
	@mkdir -p build/fuzz
	@set -e; for f in $(if $(FUZZ),tests/fuzz/$(FUZZ).c,$(FUZZ_SRC)); do \
	    n=$$(basename $$f .c); \
	    extra=; if grep -q '^#include "engine/' $$f; then extra="$(ENGINE_SRC)"; fi; \
	    if grep -q '^#include "widgets/chart.h"' $$f; then extra="$$extra widgets/chart_math.c"; fi; \
	    clang -std=c11 -g -O1 -I. -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	        $$(pkg-config --cflags $(PKGS)) -o build/fuzz/$$n $$f $(UTIL_SRC) $(API_SRC) $$extra \
	        $$(pkg-config --libs $(PKGS)) -lm; \
	    mkdir -p build/fuzz/corpus-$$n; cp tests/fuzz/seeds/$${n#fuzz_}/* build/fuzz/corpus-$$n/ 2>/dev/null || true; \
	    echo "fuzz: $$n for $(FUZZ_SECONDS)s"; \
	    build/fuzz/$$n -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -print_final_stats=1 \
	        build/fuzz/corpus-$$n 2>&1 | grep -E '^(stat::|==[0-9]+==|SUMMARY|.*Test unit written)'; \
	done

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

deps:
	@scripts/deps.sh

clean:
	rm -rf build

help:
	@sed -n '3,10p' Makefile | sed 's/^# //'

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
