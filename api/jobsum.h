/*
 * jobsum: trainjobd's job summaries (view=BASIC) read straight into rows —
 * a list page ({"training_jobs":[…],"next_page_token":…,"total_size":…})
 * and a watch stream's JOB line ({"type":"JOB","job":{…}}), parsed by a
 * small pull parser over the reply's bytes, with no jansson tree per job
 * (issue 14: building and decoding trees was ~60 % of `get jobs` over 50k
 * jobs). Called by api/acp.c for trainjobd's BASIC lists and watches.
 *
 * The input is hostile: the parser accepts only JSON that jansson would
 * (bounded depth and string length, valid UTF-8, no NUL, numbers that fit),
 * a known field must have its type, and an error names the field and the
 * byte where reading stopped. Fields it does not know are checked and skipped.
 *
 * The same parser walks any object's members for a caller that keeps a few
 * of them (jobsum_members: api/slurm_rest.c's jobs of a Slurm /jobs reply).
 */
#ifndef API_JOBSUM_H
#define API_JOBSUM_H

#include <stdbool.h>
#include <stddef.h>

struct api_error;
struct job_list;
struct jobspec;

#define JOBSUM_MAX_DEPTH 32           /* nesting of objects and arrays */
#define JOBSUM_MAX_STRING (64u << 10) /* bytes of one decoded string */
#define JOBSUM_MAX_ITEMS 64           /* roles of a job, resource specs of a role */
#define JOBSUM_MAX_ROWS 5000          /* jobs in a page (we ask for at most 500) */
#define JOBSUM_MAX_KEY 255            /* bytes of a key jobsum_members hands over */

/* A list page into out (zeroed first); -1 with err filled (502 BadReply) when it is not one. */
int jobsum_page(const char *text, size_t len, struct job_list *out, struct api_error *err);

/*
 * One watch line: 1 when it is a JOB line carrying a summary alone, decoded
 * into job (initialised here; the caller frees it either way); 0 when it is
 * some other message, for the general decoder; -1 when it is not JSON of
 * the expected shape, with err filled.
 */
int jobsum_watch_line(const char *text, size_t len, struct jobspec *job, struct api_error *err);

/*
 * Each member of the object text[0, len), checked as above (the whole
 * object, also the members fn does not keep): fn gets the key decoded
 * (NUL-terminated) and the span of its value as written; a member whose
 * key is over JOBSUM_MAX_KEY bytes is checked but not handed over (no
 * caller keeps one). Nothing is allocated unless a string has escapes. 0, fn's non-zero
 * return, or -1 with err filled (502 BadReply, naming the byte) when it is
 * not an object.
 */
typedef int (*jobsum_member_fn)(void *ctx, const char *key, size_t key_len, const char *value,
                                size_t value_len);
int jobsum_members(const char *text, size_t len, jobsum_member_fn fn, void *ctx,
                   struct api_error *err);
/*
 * The same for the object text starts with, whatever follows it: the bytes
 * it takes, through its closing brace, or 0 when it is not one (or text
 * ends first). fn may have been called for some members either way.
 */
size_t jobsum_members_head(const char *text, size_t len, jobsum_member_fn fn, void *ctx);

/*
 * One value text[0, len) as written (a span jobsum_members handed over):
 * _string gives a string's bytes decoded (escapes and all; the caller frees)
 * and true, false when it is no string; _integer gives an integer that fits
 * in 64 bits (no fraction nor exponent, as jansson tells integers from
 * reals) and true, false for anything else.
 */
bool jobsum_string(const char *text, size_t len, char **out);
bool jobsum_integer(const char *text, size_t len, long long *out);

#endif
