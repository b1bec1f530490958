/*
 * sizefmt: byte counts in binary units. Every size the CLI and the screens
 * show goes through here, so a unit is never chosen by integer division
 * (1000 MiB as "0 GiB") or printed by %g (1000 MiB as "1e+03 MiB").
 */
#include "util/sizefmt.h"

#include <stdio.h>
#include <string.h>

static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
#define UNITS (sizeof unit / sizeof *unit)

/* Adds bytes in the largest unit reached, at tenths (for values under 10) or whole. */
static void add(struct strbuf *out, uint64_t bytes, int tenths_ok)
{
    if (bytes < 1024) {
        strbuf_addf(out, "%llu %s", (unsigned long long)bytes, bytes == 1 ? "byte" : "bytes");
        return;
    }
    size_t u = 1;
    while (u + 1 < UNITS && bytes >> (10 * u) >= 1024)
        u++;
    uint64_t base = 1ull << (10 * u);
    uint64_t whole = bytes / base, rest = bytes % base;
    /* Tenths, rounded half up, computed without overflow. */
    uint64_t tenths = whole * 10 + (rest / (base / 1024) * 10 + 512) / 1024;
    if (tenths_ok && tenths < 100) {
        if (tenths % 10)
            strbuf_addf(out, "%llu.%llu %s", (unsigned long long)(tenths / 10),
                        (unsigned long long)(tenths % 10), unit[u]);
        else
            strbuf_addf(out, "%llu %s", (unsigned long long)(tenths / 10), unit[u]);
        return;
    }
    uint64_t n = whole + (rest >= base / 2);
    if (n >= 1024 && u + 1 < UNITS) { /* 1023.6 MiB: 1 GiB */
        n = 1;
        u++;
    }
    strbuf_addf(out, "%llu %s", (unsigned long long)n, unit[u]);
}

void sizefmt_add(struct strbuf *out, uint64_t bytes)
{
    add(out, bytes, 1);
}

void sizefmt_add_whole(struct strbuf *out, uint64_t bytes)
{
    add(out, bytes, 0);
}

const char *sizefmt(char buf[SIZEFMT_SIZE], uint64_t bytes)
{
    struct strbuf sb = STRBUF_INIT;
    add(&sb, bytes, 1);
    snprintf(buf, SIZEFMT_SIZE, "%s", strbuf_str(&sb));
    strbuf_free(&sb);
    return buf;
}

void sizefmt_add_mib(struct strbuf *out, long long mib)
{
    if (mib < 0) {
        strbuf_addf(out, "%lld MiB", mib);
        return;
    }
    if ((unsigned long long)mib > UINT64_MAX >> 20)
        mib = (long long)(UINT64_MAX >> 20);
    add(out, (uint64_t)mib << 20, 1);
}
