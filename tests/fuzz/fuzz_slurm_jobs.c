/*
 * fuzz_slurm_jobs: one element of a Slurm /jobs reply (whatever slurmrestd,
 * or something posing as it, sends) decoded by api/slurm_shapes from its
 * text. For any input: no read past the bytes given (the input is copied to
 * an exact-size buffer); a job decoded from the text (as a listing reads
 * it) is the job decoded from jansson's tree of the same text (as a reply
 * about one job is; it was the tree decoder the text one replaced, compared
 * field by field until it went): job_id, every string, number, exit and
 * allocated node; no job is decoded from text jansson refuses;
 * every string decoded is UTF-8 without NUL. The object read in place at
 * the start of the input (jobsum_members_head, as a /jobs element whole in
 * a piece is read) takes the bytes jobsum_members accepts as one object.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/apierror.h"
#include "api/jobsum.h"
#include "api/slurm_shapes.h"
#include "util/strbuf.h"
#include "util/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_slurm_jobs: %s:%d: check failed: %s\n", __FILE__, __LINE__,      \
                    #cond);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static bool same(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

static void check_text(const char *s)
{
    if (s)
        CHECK(utf8_valid(s, strlen(s)));
}

static void check_same(const struct slurm_job *a, const struct slurm_job *b)
{
    CHECK(a->id == b->id);
    CHECK(same(a->name, b->name) && same(a->state, b->state) && same(a->reason, b->reason));
    CHECK(same(a->partition, b->partition) && same(a->qos, b->qos) && same(a->nodes, b->nodes));
    CHECK(same(a->cwd, b->cwd) && same(a->user, b->user) && same(a->comment, b->comment));
    CHECK(a->restarts == b->restarts && a->has_exit == b->has_exit);
    CHECK(a->exit_status == b->exit_status && a->exit_signal == b->exit_signal);
    CHECK(a->submit_time == b->submit_time && a->start_time == b->start_time &&
          a->end_time == b->end_time);
    CHECK(a->alloc_count == b->alloc_count);
    for (size_t i = 0; i < a->alloc_count; i++) {
        CHECK(same(a->alloc[i].node, b->alloc[i].node));
        CHECK(same(a->alloc[i].gpus, b->alloc[i].gpus));
        CHECK(a->alloc[i].cpus == b->alloc[i].cpus);
    }
    check_text(a->name);
    check_text(a->state);
    check_text(a->cwd);
    check_text(a->comment);
    check_text(a->user);
}

static int no_member(void *ctx, const char *key, size_t key_len, const char *value,
                     size_t value_len)
{
    (void)ctx, (void)key, (void)key_len, (void)value, (void)value_len;
    return 0;
}

/* The head of text read in place: exactly an object jobsum_members accepts, then the rest. */
static void check_head(const char *text, size_t size)
{
    struct api_error e;
    size_t took = jobsum_members_head(text, size, no_member, NULL);
    CHECK(took <= size);
    if (took > 0)
        CHECK(jobsum_members(text, took, no_member, NULL, &e) == 0);
    if (jobsum_members(text, size, no_member, NULL, &e) == 0) {
        CHECK(took > 0);
        for (size_t i = took; i < size; i++) /* only blanks after it */
            CHECK(text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r');
    }
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
    check_head(text, size);
    const struct slurm_shape *s = slurm_shape_find("v0.0.38");
    struct strbuf why = STRBUF_INIT;
    struct slurm_job a, b;
    int ra = slurm_job_decode_element(s, text, size, &a, &why);
    json_t *j = json_loadb(text, size, 0, NULL);
    if (ra == 0)
        CHECK(j != NULL); /* never laxer than jansson */
    if (j != NULL) {
        int rb = slurm_job_decode(s, j, &b, &why);
        /* jansson reads some texts the walk refuses (deeper than 32, a string over 64 KiB) */
        if (ra == 0) {
            CHECK(rb == 0);
            check_same(&a, &b);
        }
        if (rb == 0)
            slurm_job_free(&b);
        json_decref(j);
    }
    if (ra == 0)
        slurm_job_free(&a);
    strbuf_free(&why);
    free(text);
    return 0;
}
