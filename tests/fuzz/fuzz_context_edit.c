/*
 * fuzz_context_edit: libFuzzer target for `trainjob config use-context`'s
 * edit of config.yaml in its text (api/context_edit.c). The input's first
 * line is the context name, the rest the file. Any bytes: no crash, no leak;
 * a refusal says why; an accepted edit reads back with the strict parser as
 * current_context NAME, and keeps every comment line of the file.
 *
 * Built by `make fuzz` with libFuzzer, and by `make check-tests` with
 * tests/fuzz/replay.c to replay tests/fuzz/seeds/context_edit/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/context.h"
#include "api/context_edit.h"
#include "api/finding.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every line of text that is a comment from its first column is somewhere in out. */
static void check_comments_kept(const char *text, size_t len, const char *out)
{
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (text + i)) : len - i;
        if (n > 0 && text[i] == '#' && memchr(text + i, '\0', n) == NULL) {
            char *line = strndup(text + i, n);
            if (line == NULL || strstr(out, line) == NULL)
                abort();
            free(line);
        }
        i += n + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data;
    const char *nl = memchr(in, '\n', size);
    if (nl == NULL)
        return 0;
    char *name = strndup(in, (size_t)(nl - in));
    if (name == NULL)
        return 0;
    const char *text = nl + 1;
    size_t len = size - (size_t)(text - in);
    struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
    if (context_edit_set_current(text, len, name, &out, &err) != 0) {
        if (err.len == 0)
            abort();
    } else {
        struct context_file cf;
        struct findings fs = FINDINGS_INIT;
        if (context_file_parse(strbuf_str(&out), out.len, &cf, &fs) != 0 ||
            cf.current_context == NULL || strcmp(cf.current_context, name) != 0)
            abort();
        context_file_free(&cf);
        findings_free(&fs);
        check_comments_kept(text, len, strbuf_str(&out));
    }
    strbuf_free(&out);
    strbuf_free(&err);
    free(name);
    return 0;
}
