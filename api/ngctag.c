/*
 * ngctag: NGC image tags explained; see ngctag.h.
 *
 * A framework tag is "YY.MM" then suffixes, each a '-' word: py3, tf2, igpu,
 * sdk, min, … ("24.05-tf2-py3"). A CUDA image's tag is "X.Y[.Z]" then
 * suffixes naming cuDNN, the flavour (base / runtime / devel) and the OS
 * ("12.4.1-cudnn-devel-ubuntu22.04"). A suffix we do not know is left out
 * of the explanation rather than guessed at.
 *
 * The release table is from NVIDIA's framework containers support matrix
 * (the PyTorch and TensorFlow containers of a release share CUDA, Ubuntu
 * and Python). A release it does not list is explained by its date alone.
 */
#include "api/ngctag.h"

#include <stdlib.h>
#include <string.h>

#include "api/imageref.h"
#include "util/strbuf.h"

/* What a release pins: CUDA major.minor, Ubuntu and Python (NULL: not known here). */
static const struct release {
    int yy, mm;
    const char *cuda, *ubuntu, *python;
} releases[] = {
    {22, 1, "11.6", "20.04", "3.8"},   {22, 2, "11.6", "20.04", "3.8"},
    {22, 3, "11.6", "20.04", "3.8"},   {22, 4, "11.6", "20.04", "3.8"},
    {22, 5, "11.7", "20.04", "3.8"},   {22, 6, "11.7", "20.04", "3.8"},
    {22, 7, "11.7", "20.04", "3.8"},   {22, 8, "11.7", "20.04", "3.8"},
    {22, 9, "11.8", "20.04", "3.8"},   {22, 10, "11.8", "20.04", "3.8"},
    {22, 11, "11.8", "20.04", "3.8"},  {22, 12, "11.8", "20.04", "3.8"},
    {23, 1, "12.0", "20.04", "3.8"},   {23, 2, "12.0", "20.04", "3.8"},
    {23, 3, "12.1", "20.04", "3.8"},   {23, 4, "12.1", "20.04", "3.8"},
    {23, 5, "12.1", "22.04", "3.10"},  {23, 6, "12.1", "22.04", "3.10"},
    {23, 7, "12.1", "22.04", "3.10"},  {23, 8, "12.2", "22.04", "3.10"},
    {23, 9, "12.2", "22.04", "3.10"},  {23, 10, "12.2", "22.04", "3.10"},
    {23, 11, "12.3", "22.04", "3.10"}, {23, 12, "12.3", "22.04", "3.10"},
    {24, 1, "12.3", "22.04", "3.10"},  {24, 2, "12.3", "22.04", "3.10"},
    {24, 3, "12.4", "22.04", "3.10"},  {24, 4, "12.4", "22.04", "3.10"},
    {24, 5, "12.4", "22.04", "3.10"},  {24, 6, "12.5", "22.04", "3.10"},
    {24, 7, "12.5", "22.04", "3.10"},  {24, 8, "12.6", "22.04", "3.10"},
    {24, 9, "12.6", "22.04", "3.10"},  {24, 10, "12.6", "22.04", "3.10"},
    {24, 11, "12.6", NULL, NULL},      {24, 12, "12.6", NULL, NULL},
    {25, 1, "12.8", "24.04", "3.12"},  {25, 2, "12.8", "24.04", "3.12"},
    {25, 3, "12.8", "24.04", "3.12"},  {25, 4, "12.9", "24.04", "3.12"},
    {25, 5, "12.9", "24.04", "3.12"},  {25, 6, "12.9", "24.04", "3.12"},
};

static const char *const months[12] = {"January",   "February", "March",    "April",
                                       "May",       "June",     "July",     "August",
                                       "September", "October",  "November", "December"};

/* Framework tag suffixes, and what each adds to the line. */
static const struct suffix {
    const char *word;
    const char *meaning;
} framework_suffixes[] = {
    {"tf1", "TensorFlow 1"},
    {"tf2", "TensorFlow 2"},
    {"igpu", "for integrated GPUs (Jetson, IGX)"},
    {"sdk", "client SDK and examples"},
    {"min", "minimal, for building on"},
    {"devel", "with headers and compilers, for building"},
    {"runtime", "runtime libraries only"},
};

static const struct release *find_release(int yy, int mm)
{
    for (size_t i = 0; i < sizeof releases / sizeof releases[0]; i++)
        if (releases[i].yy == yy && releases[i].mm == mm)
            return &releases[i];
    return NULL;
}

/* Is image an NGC image (or a mirror of one)? */
static bool is_ngc(const struct imageref *ref)
{
    if (ref->registry && strcmp(ref->registry, "nvcr.io") == 0)
        return true;
    if (!ref->registry)
        return false; /* Docker Hub's nvidia/cuda is not NGC's */
    const char *p = ref->repository;
    while (p && *p) {
        size_t n = strcspn(p, "/");
        if ((n == 3 && strncmp(p, "ngc", 3) == 0) || (n == 6 && strncmp(p, "nvidia", 6) == 0))
            return true;
        p += n + (p[n] == '/');
    }
    return false;
}

/* The last path component of the repository ("pytorch", "cuda"). */
static const char *image_name(const struct imageref *ref)
{
    const char *slash = strrchr(ref->repository, '/');
    return slash ? slash + 1 : ref->repository;
}

/* Reads n digits at *s (at least one, at most max); -1 when there are none. */
static int digits(const char **s, int max)
{
    int v = 0, n = 0;
    while (n < max && **s >= '0' && **s <= '9') {
        v = v * 10 + (**s - '0');
        (*s)++;
        n++;
    }
    return n ? v : -1;
}

/* "YY.MM-…": the release line, its pins and what the suffixes say. */
static bool explain_framework(const char *tag, struct strbuf *out)
{
    const char *s = tag;
    int yy = digits(&s, 2);
    if (yy < 0 || s - tag != 2 || *s != '.')
        return false;
    s++;
    const char *m = s;
    int mm = digits(&s, 2);
    if (mm < 1 || mm > 12 || s - m != 2 || (*s != '\0' && *s != '-'))
        return false;
    const struct release *r = find_release(yy, mm);
    struct strbuf line = STRBUF_INIT;
    strbuf_addf(&line, "%s: NGC release %02d.%02d (%s 20%02d)", tag, yy, mm, months[mm - 1], yy);
    if (r && r->cuda)
        strbuf_addf(&line, ", CUDA %s", r->cuda);
    while (*s == '-') {
        s++;
        size_t n = strcspn(s, "-");
        if (n == 3 && (strncmp(s, "py3", 3) == 0 || strncmp(s, "py2", 3) == 0)) {
            bool three = s[2] == '3';
            strbuf_addf(&line, ", Python %s",
                        three && r && r->python ? r->python
                        : three                 ? "3"
                                                : "2");
        } else {
            for (size_t i = 0; i < sizeof framework_suffixes / sizeof framework_suffixes[0]; i++)
                if (strlen(framework_suffixes[i].word) == n &&
                    strncmp(s, framework_suffixes[i].word, n) == 0)
                    strbuf_addf(&line, ", %s", framework_suffixes[i].meaning);
        }
        s += n;
    }
    if (r && r->ubuntu)
        strbuf_addf(&line, ", Ubuntu %s", r->ubuntu);
    strbuf_add(out, line.buf, line.len);
    strbuf_free(&line);
    return true;
}

/* CUDA images: "12.4.1-cudnn-devel-ubuntu22.04". */
static bool explain_cuda(const char *tag, struct strbuf *out)
{
    const char *s = tag;
    if (digits(&s, 2) < 0 || *s != '.')
        return false;
    s++;
    if (digits(&s, 2) < 0)
        return false;
    if (*s == '.') {
        s++;
        if (digits(&s, 3) < 0)
            return false;
    }
    if (*s != '\0' && *s != '-')
        return false;
    struct strbuf line = STRBUF_INIT;
    strbuf_addf(&line, "%s: CUDA %.*s", tag, (int)(s - tag), tag);
    while (*s == '-') {
        s++;
        size_t n = strcspn(s, "-");
        if (n >= 5 && strncmp(s, "cudnn", 5) == 0)
            strbuf_addf(&line, " with cuDNN%s%.*s", n > 5 ? " " : "", (int)(n - 5), s + 5);
        else if (n == 4 && strncmp(s, "base", 4) == 0)
            strbuf_adds(&line, ", base (the CUDA runtime alone)");
        else if (n == 7 && strncmp(s, "runtime", 7) == 0)
            strbuf_adds(&line, ", runtime (the CUDA libraries, to run)");
        else if (n == 5 && strncmp(s, "devel", 5) == 0)
            strbuf_adds(&line, ", devel (libraries, headers and nvcc, to build)");
        else if (n > 6 && strncmp(s, "ubuntu", 6) == 0)
            strbuf_addf(&line, ", Ubuntu %.*s", (int)(n - 6), s + 6);
        else if (n > 10 && strncmp(s, "rockylinux", 10) == 0)
            strbuf_addf(&line, ", Rocky Linux %.*s", (int)(n - 10), s + 10);
        s += n;
    }
    strbuf_add(out, line.buf, line.len);
    strbuf_free(&line);
    return true;
}

bool ngctag_explain(const char *image, struct strbuf *out)
{
    struct imageref ref;
    if (!image || imageref_parse(image, &ref, NULL, NULL) != 0)
        return false;
    bool ok = false;
    if (ref.tag && is_ngc(&ref))
        ok = strcmp(image_name(&ref), "cuda") == 0 ? explain_cuda(ref.tag, out)
                                                   : explain_framework(ref.tag, out);
    imageref_free(&ref);
    return ok;
}
