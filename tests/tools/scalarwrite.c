/*
 * scalarwrite: appends TensorBoard scalar events to an event file, as a
 * training job's summary writer does — for the shell tests of `trainjob
 * metrics` and trainjobd's scalars endpoint, whose jobs run it from their
 * startup scripts (no python in the worker). Written apart from
 * api/tfevents on purpose: the framing and the protobuf here are encoded
 * from the reference .proto files, so the tests check the reader against a
 * writer that is not its own mirror.
 *
 *   scalarwrite FILE [-c] [-p] TAG=STEP:VALUE...
 *
 * A new FILE starts with the file_version event ("brain.Event:2"). Each
 * TAG=STEP:VALUE is one Event {wall_time 1700000000 + STEP/4, step, summary
 * {value {tag, simple_value}}}; VALUE may be nan, inf or -inf. -c corrupts
 * the data CRC of the next record written; -p ends the file with the first
 * half of one more record (a writer caught mid-write).
 */
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/strbuf.h"

static uint32_t crc32c(const void *data, size_t n)
{
    const uint8_t *p = data;
    uint32_t crc = 0xffffffffu;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static uint32_t masked(const void *data, size_t n)
{
    uint32_t c = crc32c(data, n);
    return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

static void le(struct strbuf *out, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        strbuf_addc(out, (char)((v >> (8 * i)) & 0xff));
}

static void varint(struct strbuf *out, uint64_t v)
{
    do {
        uint8_t b = v & 0x7f;
        v >>= 7;
        strbuf_addc(out, (char)(v ? b | 0x80 : b));
    } while (v);
}

/* A length-delimited field: key, length, bytes. */
static void field_bytes(struct strbuf *out, int number, const void *data, size_t n)
{
    varint(out, (uint64_t)number << 3 | 2);
    varint(out, n);
    strbuf_add(out, data, n);
}

/* A TFRecord: length, masked CRC of the length, data, masked CRC of the data. */
static void record(struct strbuf *out, const struct strbuf *data, bool corrupt)
{
    struct strbuf len = STRBUF_INIT;
    le(&len, data->len, 8);
    strbuf_add(out, len.buf, len.len);
    le(out, masked(len.buf, len.len), 4);
    strbuf_add(out, data->buf ? data->buf : "", data->len);
    le(out, masked(data->buf ? data->buf : "", data->len) ^ (corrupt ? 1u : 0u), 4);
    strbuf_free(&len);
}

/* Event {wall_time, step, file_version | summary {value {tag, simple_value}}}. */
static void event(struct strbuf *out, double wall_time, int64_t step, const char *version,
                  const char *tag, float value)
{
    uint64_t bits;
    memcpy(&bits, &wall_time, sizeof bits);
    varint(out, 1 << 3 | 1);
    le(out, bits, 8);
    varint(out, 2 << 3 | 0);
    varint(out, (uint64_t)step);
    if (version) {
        field_bytes(out, 3, version, strlen(version));
        return;
    }
    struct strbuf v = STRBUF_INIT, summary = STRBUF_INIT;
    field_bytes(&v, 1, tag, strlen(tag));
    uint32_t fbits;
    memcpy(&fbits, &value, sizeof fbits);
    varint(&v, 2 << 3 | 5);
    le(&v, fbits, 4);
    field_bytes(&summary, 1, v.buf, v.len);
    field_bytes(out, 5, summary.buf, summary.len);
    strbuf_free(&v);
    strbuf_free(&summary);
}

static float parse_value(const char *s)
{
    if (strcmp(s, "nan") == 0)
        return NAN;
    if (strcmp(s, "inf") == 0)
        return INFINITY;
    if (strcmp(s, "-inf") == 0)
        return -INFINITY;
    return strtof(s, NULL);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: scalarwrite FILE [-c] [-p] TAG=STEP:VALUE...\n");
        return 2;
    }
    const char *path = argv[1];
    struct stat st;
    bool fresh = stat(path, &st) != 0;
    struct strbuf out = STRBUF_INIT, data = STRBUF_INIT;
    if (fresh) {
        event(&data, 1700000000.0, 0, "brain.Event:2", NULL, 0);
        record(&out, &data, false);
    }
    bool corrupt = false, partial = false;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "-c") == 0) {
            corrupt = true;
            continue;
        }
        if (strcmp(argv[i], "-p") == 0) {
            partial = true;
            continue;
        }
        char *eq = strchr(argv[i], '=');
        char *colon = eq ? strchr(eq, ':') : NULL;
        if (!eq || !colon) {
            fprintf(stderr, "scalarwrite: '%s' is not TAG=STEP:VALUE\n", argv[i]);
            return 2;
        }
        *eq = '\0';
        long long step = strtoll(eq + 1, NULL, 10);
        strbuf_reset(&data);
        event(&data, 1700000000.0 + (double)step / 4, step, NULL, argv[i], parse_value(colon + 1));
        record(&out, &data, corrupt);
        corrupt = false;
    }
    if (partial) {
        strbuf_reset(&data);
        event(&data, 1700000000.0, 999, NULL, "partial", 1);
        struct strbuf whole = STRBUF_INIT;
        record(&whole, &data, false);
        strbuf_add(&out, whole.buf, whole.len / 2);
        strbuf_free(&whole);
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, out.buf, out.len) != (ssize_t)out.len || close(fd) != 0) {
        perror(path);
        return 1;
    }
    strbuf_free(&out);
    strbuf_free(&data);
    return 0;
}
