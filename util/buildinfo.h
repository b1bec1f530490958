/*
 * buildinfo: what this build is and where its pieces are, wherever the
 * tree was installed, moved or built: the version, the directories holding
 * the shipped data (themes/, default.keys) and the helper programs
 * (trainjob-shim). Never the current directory: a binary run from anywhere
 * finds the same files.
 *
 * Called by the CLI and trainjobd (--version), themes/theme.c (where the
 * shipped schemes are) and engine/main.c (which shim to run). The values
 * come from the Makefile ($(BUILD)/gen/build_paths.h: VERSION, PREFIX).
 */
#ifndef UTIL_BUILDINFO_H
#define UTIL_BUILDINFO_H

/* "0.3.0", "0.3.0+g1a2b3c4" or "1.2.0-5-gabcdef0": never empty or "unknown". */
const char *buildinfo_version(void);

/*
 * The directories that may hold the shipped data, best first, those that
 * exist only, NULL-terminated (free with buildinfo_strv_free):
 *   <dir of the binary>/../share/trainjob   an installed tree, moved or not
 *   PREFIX/share/trainjob                   where `make install` put it
 *   the source tree above a build directory (build/trainjob, build/asan/…,
 *   build/tests/test_*), so `make run` and the tests use the checkout's files
 */
char **buildinfo_data_dirs(void);

/*
 * A helper program (e.g. "trainjob-shim") that is executable: beside the
 * running binary (a build tree), <dir>/../libexec/trainjob/PROG (an
 * installed tree, moved or not), PREFIX/libexec/trainjob/PROG. A new string,
 * or NULL when none is.
 */
char *buildinfo_helper(const char *prog);

void buildinfo_strv_free(char **v);

#endif
