/*
 * replay: a main() for fuzz targets built without libFuzzer. Each argument is
 * a file or a directory; every regular file (directories are read one level
 * deep, in name order) is passed to LLVMFuzzerTestOneInput once, so `make
 * test` replays the seed corpora with any compiler. A target reports a
 * failure by crashing (abort), as under libFuzzer; this program fails only
 * when an input cannot be read.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads the whole file into a malloc'd buffer; NULL (and a message) on error. */
static uint8_t *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 0, len = 0;
    uint8_t *buf = NULL;
    for (;;) {
        if (len == cap) {
            size_t ncap = cap ? cap * 2 : 4096;
            uint8_t *bigger = realloc(buf, ncap);
            if (bigger == NULL) {
                fprintf(stderr, "replay: %s: out of memory\n", path);
                goto fail;
            }
            buf = bigger;
            cap = ncap;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0)
            break;
    }
    if (ferror(f)) {
        fprintf(stderr, "replay: %s: read error\n", path);
        goto fail;
    }
    fclose(f);
    *size = len;
    return buf;
fail:
    fclose(f);
    free(buf);
    return NULL;
}

/* Runs one file through the target. Returns 0, or -1 if it could not be read. */
static int run_file(const char *path)
{
    size_t size = 0;
    uint8_t *data = slurp(path, &size);
    if (data == NULL)
        return -1;
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file directly inside dir, sorted by name. */
static int run_dir(const char *dir, size_t *count)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    char **paths = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        size_t len = strlen(dir) + 1 + strlen(e->d_name) + 1;
        char *path = malloc(len);
        if (path == NULL) {
            rc = -1;
            break;
        }
        snprintf(path, len, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(path);
            continue;
        }
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            char **bigger = realloc(paths, ncap * sizeof *paths);
            if (bigger == NULL) {
                free(path);
                rc = -1;
                break;
            }
            paths = bigger;
            cap = ncap;
        }
        paths[n++] = path;
    }
    closedir(d);
    if (rc != 0)
        fprintf(stderr, "replay: %s: out of memory\n", dir);
    if (n > 0)
        qsort(paths, n, sizeof *paths, by_name);
    for (size_t i = 0; i < n; i++) {
        if (rc == 0 && run_file(paths[i]) != 0)
            rc = -1;
        else if (rc == 0)
            (*count)++;
        free(paths[i]);
    }
    free(paths);
    return rc;
}

int main(int argc, char **argv)
{
    size_t count = 0;
    int failed = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE-OR-DIRECTORY...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
            failed = 1;
        } else if (S_ISDIR(st.st_mode)) {
            if (run_dir(argv[i], &count) != 0)
                failed = 1;
        } else if (run_file(argv[i]) != 0) {
            failed = 1;
        } else {
            count++;
        }
    }
    printf("replay: %zu inputs\n", count);
    return failed;
}
