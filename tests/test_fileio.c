/*
 * test_fileio: whole-file reads (content, size cap, the messages for a
 * missing file and a directory), atomic writes (content, mode, no temp file
 * left behind, replacing an existing file) and mkdir -p, all inside a fresh
 * temporary directory per test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <dirent.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fileio.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* Each test gets its own directory; state points to its path. */
static int make_dir(void **state)
{
    char tmpl[] = "/tmp/test_fileio.XXXXXX";
    if (mkdtemp(tmpl) == NULL)
        return -1;
    *state = xstrdup(tmpl);
    return 0;
}

/* Removes the test's directory tree (a few levels deep at most). */
static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char *child = xasprintf("%s/%s", path, e->d_name);
            remove_tree(child);
            free(child);
        }
        closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

static int remove_dir(void **state)
{
    remove_tree(*state);
    free(*state);
    return 0;
}

/* Writes data to dir/name with stdio, returning the (owned) path. */
static char *put(const char *dir, const char *name, const void *data, size_t n)
{
    char *path = xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
    return path;
}

static void test_read_all(void **state)
{
    const char *dir = *state;
    static const char text[] = "name: resnet\n\xe5\x9f\xba\xe7\xba\xbf\n";
    char *path = put(dir, "job.yaml", text, sizeof text - 1);
    struct strbuf err = STRBUF_INIT;
    char *data = NULL;
    size_t len = 0;

    assert_int_equal(file_read_all(path, 1 << 20, &data, &len, &err), 0);
    assert_int_equal(len, sizeof text - 1);
    assert_memory_equal(data, text, len);
    assert_int_equal(data[len], '\0');
    assert_int_equal(err.len, 0);
    free(data);
    free(path);

    /* empty file: "" (not NULL), length 0 */
    path = put(dir, "empty", "", 0);
    assert_int_equal(file_read_all(path, 100, &data, &len, &err), 0);
    assert_non_null(data);
    assert_int_equal(len, 0);
    assert_string_equal(data, "");
    free(data);
    free(path);
}

static void test_read_all_small_buffer(void **state)
{
    /*
     * A line's file comes back in a buffer of its order, not 64 KB: the
     * engine reads several such files per worker, and freeing a chunk that
     * large consolidated its whole heap each time.
     */
    char *path = put(*state, "status", "exit_code 0\n", 12);
    struct strbuf err = STRBUF_INIT;
    char *data = NULL;
    size_t len = 0;
    assert_int_equal(file_read_all(path, 1 << 20, &data, &len, &err), 0);
    assert_string_equal(data, "exit_code 0\n");
    assert_true(malloc_usable_size(data) <= 16384);
    free(data);
    free(path);
}

static void test_read_all_large(void **state)
{
    /* more than one read() chunk, with an embedded NUL */
    size_t n = 200000;
    char *big = xmalloc(n);
    for (size_t i = 0; i < n; i++)
        big[i] = (char)(i % 251);
    char *path = put(*state, "big", big, n);
    struct strbuf err = STRBUF_INIT;
    char *data;
    size_t len;

    assert_int_equal(file_read_all(path, n, &data, &len, &err), 0);
    assert_int_equal(len, n);
    assert_memory_equal(data, big, n);
    free(data);
    free(big);
    free(path);
}

static void test_read_all_cap(void **state)
{
    char *path = put(*state, "ten", "0123456789", 10);
    struct strbuf err = STRBUF_INIT;
    char *data = NULL;
    size_t len = 0;

    /* exactly at the cap is fine */
    assert_int_equal(file_read_all(path, 10, &data, &len, &err), 0);
    assert_int_equal(len, 10);
    free(data);

    /* one byte over is an error naming the file and the cap */
    data = NULL;
    assert_int_equal(file_read_all(path, 9, &data, &len, &err), -1);
    assert_null(data);
    char *want = xasprintf("%s: larger than 9 bytes", path);
    assert_string_equal(strbuf_str(&err), want);
    free(want);
    strbuf_free(&err);
    free(path);
}

static void test_read_all_missing(void **state)
{
    char *path = xasprintf("%s/no-such-file.yaml", (const char *)*state);
    struct strbuf err = STRBUF_INIT;
    char *data = NULL;
    size_t len;

    assert_int_equal(file_read_all(path, 100, &data, &len, &err), -1);
    assert_null(data);
    char *want = xasprintf("%s: No such file or directory", path);
    assert_string_equal(strbuf_str(&err), want);
    free(want);
    strbuf_free(&err);
    free(path);
}

static void test_read_all_directory(void **state)
{
    const char *dir = *state;
    struct strbuf err = STRBUF_INIT;
    char *data = NULL;
    size_t len;

    assert_int_equal(file_read_all(dir, 100, &data, &len, &err), -1);
    assert_null(data);
    char *want = xasprintf("%s: is a directory", dir);
    assert_string_equal(strbuf_str(&err), want);
    free(want);
    strbuf_free(&err);
}

/*
 * A settings file that is a FIFO with no writer, a directory or /dev/zero is
 * refused at once: file_read_all would wait for a writer forever (the alarm
 * turns that wait into a failed test instead of a hung one).
 */
static void test_read_regular_refuses_fifo_and_devices(void **state)
{
    const char *dir = *state;
    char *fifo = xasprintf("%s/keys", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    const char *paths[] = {fifo, dir, "/dev/zero"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        struct strbuf err = STRBUF_INIT;
        char *data = NULL;
        size_t len;
        alarm(5);
        assert_int_equal(file_read_regular(paths[i], 100, &data, &len, &err), -1);
        alarm(0);
        assert_null(data);
        char *want = xasprintf("%s: not a regular file", paths[i]);
        assert_string_equal(strbuf_str(&err), want);
        free(want);
        strbuf_free(&err);
    }
    /* A regular file reads as with file_read_all. */
    char *path = put(dir, "ok", "abc", 3);
    struct strbuf err = STRBUF_INIT;
    char *data = NULL;
    size_t len;
    assert_int_equal(file_read_regular(path, 100, &data, &len, &err), 0);
    assert_int_equal(len, 3);
    assert_string_equal(data, "abc");
    free(data);
    free(path);
    free(fifo);
    strbuf_free(&err);
}

/* The names in dir other than "." and "..", joined by spaces, sorted. */
static char *listing(const char *dir)
{
    struct dirent **names;
    struct strbuf sb = STRBUF_INIT;
    int n = scandir(dir, &names, NULL, alphasort);
    assert_true(n >= 0);
    for (int i = 0; i < n; i++) {
        const char *e = names[i]->d_name;
        if (strcmp(e, ".") != 0 && strcmp(e, "..") != 0) {
            if (sb.len)
                strbuf_addc(&sb, ' ');
            strbuf_adds(&sb, e);
        }
        free(names[i]);
    }
    free(names);
    return strbuf_detach(&sb, NULL);
}

static void test_write_atomic(void **state)
{
    const char *dir = *state;
    char *path = xasprintf("%s/out.json", dir);
    struct strbuf err = STRBUF_INIT;
    char *data;
    size_t len;

    assert_int_equal(file_write_atomic(path, "{\"a\":1}\n", 8, 0600, &err), 0);
    assert_int_equal(err.len, 0);
    assert_int_equal(file_read_all(path, 100, &data, &len, &err), 0);
    assert_int_equal(len, 8);
    assert_string_equal(data, "{\"a\":1}\n");
    free(data);

    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0600);

    /* replacing: the new content, still no temp file beside it */
    assert_int_equal(file_write_atomic(path, "x", 1, 0600, &err), 0);
    assert_int_equal(file_read_all(path, 100, &data, &len, &err), 0);
    assert_string_equal(data, "x");
    free(data);

    /* empty content makes an empty file */
    assert_int_equal(file_write_atomic(path, "", 0, 0600, &err), 0);
    assert_int_equal(file_read_all(path, 100, &data, &len, &err), 0);
    assert_int_equal(len, 0);
    free(data);

    char *names = listing(dir);
    assert_string_equal(names, "out.json"); /* no out.json.tmp.* left */
    free(names);
    free(path);
}

static void test_write_atomic_fails_cleanly(void **state)
{
    const char *dir = *state;
    char *path = xasprintf("%s/missing-dir/out.json", dir);
    struct strbuf err = STRBUF_INIT;

    assert_int_equal(file_write_atomic(path, "x", 1, 0644, &err), -1);
    char *want = xasprintf("%s: No such file or directory", path);
    assert_string_equal(strbuf_str(&err), want);
    free(want);
    strbuf_free(&err);
    free(path);

    /* the target is a directory: rename fails, the temp file is removed */
    char *sub = xasprintf("%s/taken", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    assert_int_equal(file_write_atomic(sub, "x", 1, 0644, &err), -1);
    assert_non_null(strstr(strbuf_str(&err), sub));
    strbuf_free(&err);
    char *names = listing(dir);
    assert_string_equal(names, "taken");
    free(names);
    free(sub);
}

static void assert_is_dir(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
}

static void test_mkdirs(void **state)
{
    const char *dir = *state;
    struct strbuf err = STRBUF_INIT;

    char *deep = xasprintf("%s/a/b/c/d", dir);
    assert_int_equal(file_mkdirs(deep, 0755, &err), 0);
    assert_is_dir(deep);
    /* existing directories are fine, with or without a trailing slash */
    assert_int_equal(file_mkdirs(deep, 0755, &err), 0);
    char *slash = xasprintf("%s/a/b/", dir);
    assert_int_equal(file_mkdirs(slash, 0755, &err), 0);
    char *doubled = xasprintf("%s/a//b/e", dir);
    assert_int_equal(file_mkdirs(doubled, 0755, &err), 0);
    char *e = xasprintf("%s/a/b/e", dir);
    assert_is_dir(e);
    assert_int_equal(err.len, 0);

    /* relative path, from the test directory */
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    assert_int_equal(file_mkdirs("rel/x", 0700, &err), 0);
    assert_int_equal(chdir(cwd), 0);
    char *rel = xasprintf("%s/rel/x", dir);
    assert_is_dir(rel);

    free(deep);
    free(slash);
    free(doubled);
    free(e);
    free(rel);
}

static void test_mkdirs_errors(void **state)
{
    const char *dir = *state;
    struct strbuf err = STRBUF_INIT;

    /* a regular file in the way, in the middle or at the end */
    char *file = put(dir, "plain", "x", 1);
    char *under = xasprintf("%s/sub", file);
    assert_int_equal(file_mkdirs(under, 0755, &err), -1);
    assert_non_null(strstr(strbuf_str(&err), "Not a directory"));
    strbuf_free(&err);
    assert_int_equal(file_mkdirs(file, 0755, &err), -1);
    char *want = xasprintf("%s: Not a directory", file);
    assert_string_equal(strbuf_str(&err), want);
    strbuf_free(&err);

    /* an empty path is an error, not a read past the end */
    assert_int_equal(file_mkdirs("", 0755, &err), -1);
    assert_true(err.len > 0);
    strbuf_free(&err);

    /* "/" exists */
    assert_int_equal(file_mkdirs("/", 0755, &err), 0);

    free(file);
    free(under);
    free(want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_read_all, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_read_all_small_buffer, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_read_all_large, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_read_all_cap, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_read_all_missing, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_read_all_directory, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_read_regular_refuses_fifo_and_devices, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(test_write_atomic, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_write_atomic_fails_cleanly, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_mkdirs, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_mkdirs_errors, make_dir, remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
