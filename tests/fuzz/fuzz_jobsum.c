/*
 * fuzz_jobsum: api/jobsum reading whatever trainjobd (or something posing as
 * it) sends as a BASIC list page or a watch line. For any input: no read
 * past the bytes given (the input is copied to an exact-size buffer), an
 * error names a byte inside the input, and a failed page leaves no rows.
 * For an accepted input: jansson accepts it too (jobsum is never laxer than
 * the decoder it replaces), and every string of every row is UTF-8 without
 * controls the JSON escaped away wrongly (no NUL: strlen matches what was
 * decoded, as utf8_valid over it says).
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierror.h"
#include "api/backend.h"
#include "api/jobspec.h"
#include "api/jobsum.h"
#include "util/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_jobsum: %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);  \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static void check_text(const char *s)
{
    if (s)
        CHECK(utf8_valid(s, strlen(s)));
}

static void check_row(const struct jobspec *j)
{
    check_text(j->name);
    check_text(j->display_name);
    check_text(j->uid);
    check_text(j->state_message);
    check_text(j->create_time);
    check_text(j->resource_pool.name);
    check_text(j->ownership.user_name);
    for (size_t r = 0; r < j->role_count; r++) {
        check_text(j->roles[r].name);
        for (size_t s = 0; s < j->roles[r].resource_spec_count; s++) {
            check_text(j->roles[r].resource_spec[s].name);
            check_text(j->roles[r].resource_spec[s].description);
        }
    }
}

/* A refusal names a byte within the input. */
static void check_error(const struct api_error *err, size_t size)
{
    size_t at;
    CHECK(sscanf(err->message, "the reply at byte %zu", &at) == 1);
    CHECK(at <= size);
    CHECK(err->status == 502);
}

/* jansson takes what jobsum took. */
static void check_jansson(const char *text, size_t size)
{
    json_error_t jerr;
    json_t *j = json_loadb(text, size, 0, &jerr);
    if (j == NULL) {
        fprintf(stderr, "fuzz_jobsum: accepted, but jansson says: %s (at %d)\n", jerr.text,
                jerr.position);
        abort();
    }
    json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    char *text = malloc(size ? size : 1); /* exact size: a read past it is ASan's to catch */
    if (text == NULL)
        abort();
    if (size)
        memcpy(text, data, size);

    struct job_list l;
    struct api_error err = {0};
    if (jobsum_page(text, size, &l, &err) == 0) {
        check_jansson(text, size);
        for (size_t i = 0; i < l.count; i++)
            check_row(&l.jobs[i]);
        check_text(l.next_page_token);
        job_list_free(&l);
    } else {
        CHECK(l.jobs == NULL && l.count == 0);
        check_error(&err, size);
    }

    struct jobspec job;
    struct api_error werr = {0};
    int rc = jobsum_watch_line(text, size, &job, &werr);
    CHECK(rc >= -1 && rc <= 1);
    if (rc >= 0) {
        check_jansson(text, size);
        check_row(&job);
    } else {
        check_error(&werr, size);
    }
    jobspec_free(&job);
    free(text);
    return 0;
}
