/*
 * tfevents: the TFRecord framing and the Event decoder (tfevents.h layers 1
 * and 2); the log directory follower is in tfevents_dir.c.
 *
 * CRC-32C runs on the SSE4.2 crc32 instruction where the CPU has it (checked
 * once at run time) and on an 8-way sliced table elsewhere: the CRC of every
 * byte read is most of the cost of reading an event file. The records of
 * simple scalars that make up most files are read in bulk
 * (tfevents_decode_simple_run): one loop checks each one's framing, both
 * CRCs and its fast layout, with no call per record but the callback.
 *
 * The decoder knows protobuf's wire format (varint, fixed64, length-delimited,
 * fixed32) and the few field numbers of event.proto, summary.proto and
 * tensor.proto that a scalar needs. It follows protobuf's merge rules where
 * they can change a scalar: the last wall_time/step/tag/plugin_name wins, a
 * message field that appears twice is merged, the last member of a oneof set
 * wins. A known field with an unexpected wire type is skipped as an unknown
 * one would be; groups (wire types 3, 4) and truncated fields make the record
 * bad.
 */
#include "api/tfevents.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/le.h"
#include "util/strbuf.h"
#include "util/utf8.h"

/* ---- CRC-32C ---- */

static uint32_t crc_table[8][256];
static int crc_hw = -1; /* -1: not yet known */

/* Fills the sliced tables for the reflected polynomial 0x82f63b78. */
static void crc_init_table(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1u)));
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
}

static uint32_t crc_sw(uint32_t crc, const uint8_t *p, size_t n)
{
    while (n >= 8) {
        uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                             (uint32_t)p[3] << 24);
        crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
              crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^ crc_table[3][p[4]] ^
              crc_table[2][p[5]] ^ crc_table[1][p[6]] ^ crc_table[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n--)
        crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
    return crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CRC_HAVE_HW 1
/*
 * glibc's view of the CPU, read by the dynamic loader at start: asking
 * libgcc (__builtin_cpu_supports) instead links its constructor, which runs
 * cpuid again in every process at start (0.1 ms where a hypervisor traps it)
 * whether or not a CRC is ever taken.
 */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <sys/platform/x86.h>
#define CRC_CPU_HAS_SSE42() CPU_FEATURE_ACTIVE(SSE4_2)
#else
#define CRC_CPU_HAS_SSE42() (__builtin_cpu_init(), __builtin_cpu_supports("sse4.2"))
#endif

/*
 * Three streams. The crc32 instruction takes 3 cycles but can start one a
 * cycle, so a long buffer goes up to three times as fast cut into three
 * adjacent blocks whose CRCs run side by side and are then joined: the CRC
 * of a block followed by another of len bytes is the first one's CRC moved
 * past len zero bytes, xor the second's (begun from 0). Moving a CRC past
 * len zeros is linear in its 32 bits; crc_short and crc_long hold it for
 * the two block sizes, one table per byte of the CRC.
 */
#define CRC_SHORT 64  /* bytes per stream: records from 3 x 64 bytes on use three */
#define CRC_LONG 1024 /* and from 3 x 1024 bytes, longer blocks with fewer joins */
_Static_assert(CRC_LONG % CRC_SHORT == 0, "a long block is whole short ones");
static uint32_t crc_short[4][256], crc_long[4][256];

/* Fills t with the shift of a CRC past len zero bytes (crc_table must be ready). */
static void crc_init_shift(uint32_t t[4][256], size_t len)
{
    static const uint8_t zeros[CRC_LONG];
    uint32_t bit[32];
    for (int i = 0; i < 32; i++)
        bit[i] = crc_sw(1u << i, zeros, len);
    for (int k = 0; k < 4; k++)
        for (uint32_t b = 0; b < 256; b++) {
            uint32_t v = 0;
            for (int i = 0; i < 8; i++)
                if (b >> i & 1)
                    v ^= bit[8 * k + i];
            t[k][b] = v;
        }
}

static inline uint32_t crc_shift(const uint32_t t[4][256], uint32_t c)
{
    return t[0][c & 0xff] ^ t[1][(c >> 8) & 0xff] ^ t[2][(c >> 16) & 0xff] ^ t[3][c >> 24];
}

/* The CRC of three adjacent blocks of len bytes each at p, continuing c. */
__attribute__((target("sse4.2"))) static inline uint64_t
crc_hw_three(uint64_t c, const uint8_t *p, size_t len, const uint32_t t[4][256])
{
    uint64_t c1 = 0, c2 = 0;
    for (size_t i = 0; i < len; i += 8) {
        uint64_t a, b, d;
        memcpy(&a, p + i, 8);
        memcpy(&b, p + len + i, 8);
        memcpy(&d, p + 2 * len + i, 8);
        c = __builtin_ia32_crc32di(c, a);
        c1 = __builtin_ia32_crc32di(c1, b);
        c2 = __builtin_ia32_crc32di(c2, d);
    }
    c = crc_shift(t, (uint32_t)c) ^ c1;
    return crc_shift(t, (uint32_t)c) ^ c2;
}

/* Runs c over n bytes at p, a multiple of 3 x CRC_SHORT (so of 3 x CRC_LONG), in three streams. */
__attribute__((target("sse4.2"), noinline)) static uint64_t
crc_hw_streams(uint64_t c, const uint8_t *p, size_t n)
{
    for (; n >= 3 * CRC_LONG; p += 3 * CRC_LONG, n -= 3 * CRC_LONG)
        c = crc_hw_three(c, p, CRC_LONG, crc_long);
    for (; n > 0; p += 3 * CRC_SHORT, n -= 3 * CRC_SHORT)
        c = crc_hw_three(c, p, CRC_SHORT, crc_short);
    return c;
}

/* c over n bytes at p in one stream: for short records, and the rest after the streams. */
__attribute__((target("sse4.2"))) static inline uint32_t crc_hw_one(uint64_t c, const uint8_t *p,
                                                                    size_t n)
{
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
        p += 8;
        n -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    if (n & 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        c32 = __builtin_ia32_crc32si(c32, v);
        p += 4;
    }
    if (n & 2) {
        uint16_t v;
        memcpy(&v, p, 2);
        c32 = __builtin_ia32_crc32hi(c32, v);
        p += 2;
    }
    if (n & 1)
        c32 = __builtin_ia32_crc32qi(c32, *p);
    return c32;
}

__attribute__((target("sse4.2"))) static inline uint32_t crc_hw_x86(uint32_t crc, const uint8_t *p,
                                                                    size_t n)
{
    uint64_t c = crc;
    if (n >= 3 * CRC_SHORT) {
        size_t streams = n - n % (3 * CRC_SHORT);
        c = crc_hw_streams(c, p, streams);
        p += streams;
        n -= streams;
    }
    return crc_hw_one(c, p, n);
}
#endif

/* Fills the tables and learns whether the CPU has the crc32 instruction. */
static void crc_init(void)
{
    crc_init_table();
#ifdef CRC_HAVE_HW
    crc_init_shift(crc_short, CRC_SHORT);
    crc_init_shift(crc_long, CRC_LONG);
    crc_hw = CRC_CPU_HAS_SSE42() ? 1 : 0;
    if (getenv("TRAINJOB_CRC_SOFTWARE") != NULL) /* tests check both paths */
        crc_hw = 0;
#else
    crc_hw = 0;
#endif
}

uint32_t tfevents_crc32c(const void *data, size_t n)
{
    if (crc_hw < 0)
        crc_init();
#ifdef CRC_HAVE_HW
    if (crc_hw)
        return ~crc_hw_x86(0xffffffffu, data, n);
#endif
    return ~crc_sw(0xffffffffu, data, n);
}

uint32_t tfevents_masked_crc32c(const void *data, size_t n)
{
    uint32_t crc = tfevents_crc32c(data, n);
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

/* ---- TFRecord framing ---- */

static inline uint32_t mask_crc(uint32_t crc)
{
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

/*
 * The masked CRC-32C of n bytes. With hw a constant true inside a function
 * compiled for SSE4.2, it is the crc32 instruction inline; with hw false,
 * the sliced table.
 */
static inline __attribute__((always_inline)) uint32_t masked(const uint8_t *p, size_t n, bool hw)
{
#ifdef CRC_HAVE_HW
    if (hw)
        return mask_crc(~crc_hw_x86(0xffffffffu, p, n));
#endif
    (void)hw;
    return mask_crc(~crc_sw(0xffffffffu, p, n));
}

/* The same for n < 3 x CRC_SHORT: one stream, with no test for the long case. */
static inline __attribute__((always_inline)) uint32_t masked_short(const uint8_t *p, size_t n,
                                                                   bool hw)
{
#ifdef CRC_HAVE_HW
    if (hw)
        return mask_crc(~crc_hw_one(0xffffffffu, p, n));
#endif
    (void)hw;
    return mask_crc(~crc_sw(0xffffffffu, p, n));
}

/* tfrecord_next's body, made twice: once on the crc32 instruction, once on the table. */
static inline __attribute__((always_inline)) enum tfrecord_status
record_next(const uint8_t *buf, size_t n, struct tfrecord *rec, bool hw)
{
    memset(rec, 0, sizeof *rec);
    if (n < TFRECORD_HEADER) {
        rec->need = TFRECORD_HEADER;
        return TFRECORD_PARTIAL;
    }
    if (masked(buf, 8, hw) != le_load32(buf + 8)) {
        /* Skip every position that has a whole header and cannot start a record. */
        size_t k = 1;
        while (k + TFRECORD_HEADER <= n && masked(buf + k, 8, hw) != le_load32(buf + k + 8))
            k++;
        rec->consumed = k;
        return TFRECORD_RESYNC;
    }
    uint64_t len = le_load64(buf);
    if (len > TFEVENTS_MAX_RECORD) {
        rec->consumed = len + TFRECORD_OVERHEAD; /* len <= 2^64 - 1; checked below */
        if (rec->consumed < len) {
            /* A length this near 2^64 cannot be skipped over: treat the header as damage. */
            rec->consumed = 1;
            return TFRECORD_RESYNC;
        }
        return TFRECORD_OVERSIZED;
    }
    if (n - TFRECORD_HEADER < len + 4) {
        rec->need = len + TFRECORD_OVERHEAD;
        return TFRECORD_PARTIAL;
    }
    rec->len = (size_t)len;
    rec->consumed = len + TFRECORD_OVERHEAD;
    if (masked(buf + TFRECORD_HEADER, rec->len, hw) != le_load32(buf + TFRECORD_HEADER + rec->len))
        return TFRECORD_BAD;
    rec->data = buf + TFRECORD_HEADER;
    return TFRECORD_OK;
}

static enum tfrecord_status next_sw(const uint8_t *buf, size_t n, struct tfrecord *rec)
{
    return record_next(buf, n, rec, false);
}

#ifdef CRC_HAVE_HW
__attribute__((target("sse4.2"))) static enum tfrecord_status next_hw(const uint8_t *buf, size_t n,
                                                                      struct tfrecord *rec)
{
    return record_next(buf, n, rec, true);
}
#endif

enum tfrecord_status tfrecord_next(const uint8_t *buf, size_t n, struct tfrecord *rec)
{
    if (crc_hw < 0)
        crc_init();
#ifdef CRC_HAVE_HW
    if (crc_hw)
        return next_hw(buf, n, rec);
#endif
    return next_sw(buf, n, rec);
}

static void put_le(struct strbuf *out, uint64_t v, int bytes)
{
    uint8_t b[8];
    for (int i = 0; i < bytes; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    strbuf_add(out, b, (size_t)bytes);
}

void tfrecord_write(struct strbuf *out, const void *data, size_t len)
{
    uint8_t head[8];
    for (int i = 0; i < 8; i++)
        head[i] = (uint8_t)((uint64_t)len >> (8 * i));
    strbuf_add(out, head, 8);
    put_le(out, tfevents_masked_crc32c(head, 8), 4);
    strbuf_add(out, data, len);
    put_le(out, tfevents_masked_crc32c(data, len), 4);
}

/* ---- protobuf wire format ---- */

enum { WT_VARINT = 0, WT_FIXED64 = 1, WT_LEN = 2, WT_FIXED32 = 5 };

struct pb {
    const uint8_t *p, *end;
};

/* One field's key and payload; for WT_LEN, sub is the payload. */
struct pb_field {
    uint32_t number;
    int type;
    uint64_t u;    /* WT_VARINT, WT_FIXED64, WT_FIXED32 */
    struct pb sub; /* WT_LEN */
};

static bool pb_varint(struct pb *b, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (b->p == b->end)
            return false;
        uint8_t c = *b->p++;
        if (shift == 63 && c > 1)
            return false; /* more than 64 bits */
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* Reads the next field of b; false at the end (ok = true) or on malformed bytes (ok = false). */
static bool pb_next(struct pb *b, struct pb_field *f, bool *ok)
{
    *ok = true;
    if (b->p == b->end)
        return false;
    *ok = false;
    uint64_t key;
    if (!pb_varint(b, &key) || (key >> 3) == 0 || (key >> 3) > 0x1fffffff)
        return false;
    f->number = (uint32_t)(key >> 3);
    f->type = (int)(key & 7);
    switch (f->type) {
    case WT_VARINT:
        if (!pb_varint(b, &f->u))
            return false;
        break;
    case WT_FIXED64:
        if (b->end - b->p < 8)
            return false;
        f->u = le_load64(b->p);
        b->p += 8;
        break;
    case WT_FIXED32:
        if (b->end - b->p < 4)
            return false;
        f->u = le_load32(b->p);
        b->p += 4;
        break;
    case WT_LEN: {
        uint64_t len;
        if (!pb_varint(b, &len) || len > (uint64_t)(b->end - b->p))
            return false;
        f->sub.p = b->p;
        f->sub.end = b->p + len;
        b->p += len;
        break;
    }
    default: /* groups and the reserved wire types */
        return false;
    }
    *ok = true;
    return true;
}

static double f64_from_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static double f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return (double)f;
}

/* IEEE half precision bits to double (subnormals, Inf and NaN included). */
static double f16_from_bits(uint32_t h)
{
    int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, frac = (int)(h & 0x3ff);
    double v;
    if (exp == 0)
        v = ldexp(frac, -24);
    else if (exp == 31)
        v = frac ? NAN : INFINITY;
    else
        v = ldexp(frac + 1024, exp - 25);
    return sign ? -v : v;
}

/* ---- TensorProto ---- */

enum { DT_FLOAT = 1, DT_DOUBLE = 2, DT_BFLOAT16 = 14, DT_HALF = 19 };

/* What a scalar needs of a (merged) TensorProto. */
struct tensor {
    uint64_t dtype;
    bool not_one;       /* the shape holds other than exactly one element */
    struct pb content;  /* tensor_content, last wins; p == NULL when absent */
    bool have_val;      /* the first float_val/double_val/half_val seen */
    uint64_t first_val; /* its bits: float, double or half as the dtype says */
    int val_field;      /* which field it came from: 5, 6 or 13 */
};

/* Reads a TensorShapeProto: exactly one element is a rank-0 shape or every dim of size 1. */
static bool decode_shape(struct pb b, struct tensor *t)
{
    struct pb_field f;
    bool ok;
    while (pb_next(&b, &f, &ok)) {
        if (f.number == 2 && f.type == WT_LEN) {
            struct pb d = f.sub;
            struct pb_field g;
            int64_t size = 0;
            while (pb_next(&d, &g, &ok))
                if (g.number == 1 && g.type == WT_VARINT)
                    size = (int64_t)g.u;
            if (!ok)
                return false;
            if (size != 1)
                t->not_one = true;
        } else if (f.number == 3 && f.type == WT_VARINT && f.u != 0) {
            t->not_one = true; /* unknown_rank */
        }
    }
    return ok;
}

/* Keeps the first element of a float/double/half value field (packed or not). */
static bool tensor_val(struct tensor *t, const struct pb_field *f)
{
    if (t->have_val)
        return true; /* the first one is the value; later ones are still well-formed */
    int want = f->number == 5 ? WT_FIXED32 : f->number == 6 ? WT_FIXED64 : WT_VARINT;
    if (f->type == want) {
        t->first_val = f->u;
    } else if (f->type == WT_LEN) {
        struct pb b = f->sub;
        size_t len = (size_t)(b.end - b.p);
        if (len == 0)
            return true;
        if (want == WT_FIXED32) {
            if (len % 4)
                return false;
            t->first_val = le_load32(b.p);
        } else if (want == WT_FIXED64) {
            if (len % 8)
                return false;
            t->first_val = le_load64(b.p);
        } else if (!pb_varint(&b, &t->first_val)) {
            return false;
        }
    } else {
        return true; /* an unexpected wire type: skipped like an unknown field */
    }
    t->have_val = true;
    t->val_field = (int)f->number;
    return true;
}

/* Merges one TensorProto occurrence into t; false when malformed. */
static bool decode_tensor(struct pb b, struct tensor *t)
{
    struct pb_field f;
    bool ok;
    while (pb_next(&b, &f, &ok)) {
        if (f.number == 1 && f.type == WT_VARINT)
            t->dtype = f.u;
        else if (f.number == 2 && f.type == WT_LEN) {
            if (!decode_shape(f.sub, t))
                return false;
        } else if (f.number == 4 && f.type == WT_LEN)
            t->content = f.sub;
        else if (f.number == 5 || f.number == 6 || f.number == 13) {
            if (!tensor_val(t, &f))
                return false;
        }
    }
    return ok;
}

/*
 * The scalar a one-element tensor holds, as TensorFlow's MakeNdarray reads
 * it: tensor_content when not empty, else the first value of the dtype's
 * field, else zero. Returns the kind, or -1 when content and dtype disagree.
 */
static int tensor_scalar(const struct tensor *t, double *out)
{
    size_t width;
    int field;
    switch (t->dtype) {
    case DT_FLOAT:
        width = 4, field = 5;
        break;
    case DT_DOUBLE:
        width = 8, field = 6;
        break;
    case DT_HALF:
    case DT_BFLOAT16:
        width = 2, field = 13;
        break;
    default:
        return TFEVENTS_OTHER;
    }
    if (t->not_one)
        return TFEVENTS_OTHER;
    size_t clen = t->content.p ? (size_t)(t->content.end - t->content.p) : 0;
    uint64_t bits = 0;
    if (clen > 0) {
        if (clen != width)
            return -1;
        for (size_t i = width; i-- > 0;)
            bits = bits << 8 | t->content.p[i];
    } else if (t->have_val && t->val_field == field) {
        bits = t->first_val;
    } else if (t->have_val) {
        return -1; /* a value in another dtype's field */
    } else {
        *out = 0;
        return TFEVENTS_TENSOR;
    }
    if (t->dtype == DT_FLOAT)
        *out = f32_from_bits((uint32_t)bits);
    else if (t->dtype == DT_DOUBLE)
        *out = f64_from_bits(bits);
    else if (t->dtype == DT_HALF)
        *out = f16_from_bits((uint32_t)bits & 0xffff);
    else
        *out = f32_from_bits(((uint32_t)bits & 0xffff) << 16);
    return TFEVENTS_TENSOR;
}

/* ---- Summary.Value, Summary, Event ---- */

/* Reads SummaryMetadata for plugin_data.plugin_name (last wins). */
static bool decode_metadata(struct pb b, struct tfevents_value *v)
{
    struct pb_field f;
    bool ok;
    while (pb_next(&b, &f, &ok)) {
        if (f.number != 1 || f.type != WT_LEN)
            continue;
        struct pb pd = f.sub;
        struct pb_field g;
        while (pb_next(&pd, &g, &ok))
            if (g.number == 1 && g.type == WT_LEN) {
                v->plugin = (const char *)g.sub.p;
                v->plugin_len = (size_t)(g.sub.end - g.sub.p);
            }
        if (!ok)
            return false;
    }
    return ok;
}

/*
 * A tag is 1 .. TFEVENTS_MAX_TAG bytes of UTF-8 without NUL (ASCII checked 8
 * bytes at a time; a tag of 8 bytes or more ends on a word that overlaps the
 * one before, so only shorter tags go byte by byte).
 */
static inline bool tag_ok(const char *tag, size_t len)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    if (len == 0 || len > TFEVENTS_MAX_TAG)
        return false;
    uint64_t zero = 0, high = 0, w;
    if (len >= 8) {
        for (size_t i = 0; i + 8 < len; i += 8) {
            memcpy(&w, tag + i, 8);
            zero |= (w - ones) & ~w & highs; /* non-zero iff some byte of w is 0 */
            high |= w & highs;
        }
        memcpy(&w, tag + len - 8, 8);
        zero |= (w - ones) & ~w & highs;
        high |= w & highs;
    } else {
        for (size_t i = 0; i < len; i++) {
            unsigned char c = (unsigned char)tag[i];
            zero |= c == 0;
            high |= c & 0x80;
        }
    }
    if (zero)
        return false;
    return !high || utf8_valid(tag, len);
}

/*
 * Decodes one Summary.Value into v (step and wall_time already set).
 * Returns 1 when it is usable, 0 when malformed in a way that spoils only
 * this value, -1 when the bytes are not a message at all.
 */
static int decode_value(struct pb b, struct tfevents_value *v)
{
    struct pb_field f;
    bool ok;
    struct tensor t;
    int which = 0; /* the oneof member set last: its field number */
    uint64_t simple = 0;
    memset(&t, 0, sizeof t);
    v->tag = NULL;
    v->tag_len = 0;
    v->plugin = NULL;
    v->plugin_len = 0;
    while (pb_next(&b, &f, &ok)) {
        switch (f.number) {
        case 1:
            if (f.type == WT_LEN) {
                v->tag = (const char *)f.sub.p;
                v->tag_len = (size_t)(f.sub.end - f.sub.p);
            }
            break;
        case 9:
            if (f.type == WT_LEN && !decode_metadata(f.sub, v))
                return -1;
            break;
        case 2:
            if (f.type == WT_FIXED32) {
                simple = f.u;
                which = 2;
            }
            break;
        case 8:
            if (f.type == WT_LEN) {
                if (which != 8)
                    memset(&t, 0, sizeof t); /* another oneof member was set between */
                if (!decode_tensor(f.sub, &t))
                    return -1;
                which = 8;
            }
            break;
        case 3:
        case 4:
        case 5:
        case 6:
            if (f.type == WT_LEN)
                which = (int)f.number;
            break;
        default:
            break;
        }
    }
    if (!ok)
        return -1;
    if (!tag_ok(v->tag, v->tag_len))
        return 0;
    if (which == 2) {
        v->kind = TFEVENTS_SIMPLE;
        v->value = f32_from_bits((uint32_t)simple);
    } else if (which == 8) {
        int kind = tensor_scalar(&t, &v->value);
        if (kind < 0)
            return 0;
        v->kind = (enum tfevents_kind)kind;
    } else {
        v->kind = TFEVENTS_OTHER;
    }
    return 1;
}

/* Values kept from the checking pass so that most records are walked once. */
#define KEEP_VALUES 16

struct event_scan {
    struct tfevents_value v; /* step and wall_time: the last of each wins */
    struct tfevents_value kept[KEEP_VALUES];
    signed char ok[KEEP_VALUES]; /* decode_value's answer per kept value */
    size_t nvalues;
};

/*
 * One pass over an Event. Without fn it checks the whole record, finds
 * wall_time and step and keeps the first KEEP_VALUES values; with fn it
 * hands every value on (the second pass, for records with more values).
 */
static enum tfevents_decode_status event_pass(struct pb b, struct event_scan *e,
                                              tfevents_value_fn fn, void *ctx, uint64_t *bad)
{
    struct pb_field f;
    bool ok;
    struct tfevents_value *v = &e->v;
    while (pb_next(&b, &f, &ok)) {
        if (f.number == 1 && f.type == WT_FIXED64 && !fn)
            v->wall_time = f64_from_bits(f.u);
        else if (f.number == 2 && f.type == WT_VARINT && !fn)
            v->step = (int64_t)f.u;
        else if (f.number == 5 && f.type == WT_LEN) {
            struct pb s = f.sub;
            struct pb_field g;
            while (pb_next(&s, &g, &ok)) {
                if (g.number != 1 || g.type != WT_LEN)
                    continue;
                int rc = decode_value(g.sub, v);
                if (rc < 0)
                    return TFEVENTS_DECODE_BAD;
                if (fn == NULL) {
                    if (e->nvalues < KEEP_VALUES) {
                        e->kept[e->nvalues] = *v;
                        e->ok[e->nvalues] = (signed char)rc;
                    }
                    e->nvalues++;
                    continue;
                }
                if (rc == 0)
                    (*bad)++;
                else if (fn(ctx, v) != 0)
                    return TFEVENTS_DECODE_STOPPED;
            }
            if (!ok)
                return TFEVENTS_DECODE_BAD;
        }
    }
    return ok ? TFEVENTS_DECODE_OK : TFEVENTS_DECODE_BAD;
}

static bool fast_path = true;

void tfevents_decode_fast_path(bool on)
{
    fast_path = on;
}

/* The longest Event decode_simple_fast takes: wall_time, a 10-byte step, a summary of 127. */
#define SIMPLE_FAST_MAX (9 + 11 + 2 + 127)
#ifdef CRC_HAVE_HW
_Static_assert(SIMPLE_FAST_MAX < 3 * CRC_SHORT, "simple_run's records take one CRC stream");
#endif

/*
 * The one layout TF1, PyTorch and tensorboardX give a scalar event, field by
 * field in number order: wall_time (09, 8 bytes, absent when 0), step (10,
 * varint, absent when 0), summary (2a) holding one value (0a) of a tag (0a)
 * and a simple_value (15), with one-byte lengths, nothing after. Returns 1
 * and fills v when data is exactly that, else 0 (the general decoder then
 * reads it). About four times faster than the general path.
 */
static inline __attribute__((always_inline)) int decode_simple_fast(const uint8_t *p, size_t len,
                                                                    struct tfevents_value *v)
{
    const uint8_t *end = p + len;
    v->wall_time = 0;
    v->step = 0;
    if (end - p >= 9 && *p == 0x09) {
        v->wall_time = f64_from_bits(le_load64(p + 1));
        p += 9;
    }
    if (p < end && *p == 0x10) {
        uint64_t step = 0;
        int shift = 0;
        for (p++;; p++, shift += 7) {
            if (p == end || shift > 63 || (shift == 63 && *p > 1))
                return 0;
            step |= (uint64_t)(*p & 0x7f) << shift;
            if (!(*p & 0x80))
                break;
        }
        p++;
        v->step = (int64_t)step;
    }
    /* 2a S 0a V 0a T tag... 15 f32: S = V + 2, V = T + 7, all < 128. */
    if (end - p < 6 + 5 || p[0] != 0x2a || p[2] != 0x0a || p[4] != 0x0a || p[1] >= 0x80)
        return 0;
    size_t s = p[1], vl = p[3], t = p[5];
    if (s != vl + 2 || vl != t + 7 || (size_t)(end - p) != 2 + s)
        return 0;
    const uint8_t *tag = p + 6;
    if (tag[t] != 0x15 || !tag_ok((const char *)tag, t))
        return 0;
    v->tag = (const char *)tag;
    v->tag_len = t;
    v->plugin = NULL;
    v->plugin_len = 0;
    v->kind = TFEVENTS_SIMPLE;
    v->value = f32_from_bits(le_load32(tag + t + 1));
    return 1;
}

enum tfevents_decode_status tfevents_decode(const uint8_t *data, size_t len, tfevents_value_fn fn,
                                            void *ctx, uint64_t *bad_values)
{
    struct pb b = {data, data + len};
    struct event_scan e;
    uint64_t bad = 0;
    memset(&e.v, 0, sizeof e.v);
    e.nvalues = 0;
    if (bad_values)
        *bad_values = 0;
    if (fast_path && decode_simple_fast(data, len, &e.v)) {
        if (fn && fn(ctx, &e.v) != 0)
            return TFEVENTS_DECODE_STOPPED;
        return TFEVENTS_DECODE_OK;
    }
    enum tfevents_decode_status st = event_pass(b, &e, NULL, NULL, &bad);
    if (st != TFEVENTS_DECODE_OK || fn == NULL)
        return st;
    if (e.nvalues <= KEEP_VALUES) {
        for (size_t i = 0; i < e.nvalues && st == TFEVENTS_DECODE_OK; i++) {
            e.kept[i].step = e.v.step; /* a later step or wall_time field wins */
            e.kept[i].wall_time = e.v.wall_time;
            if (e.ok[i] == 0)
                bad++;
            else if (fn(ctx, &e.kept[i]) != 0)
                st = TFEVENTS_DECODE_STOPPED;
        }
    } else {
        st = event_pass(b, &e, fn, ctx, &bad);
    }
    if (bad_values)
        *bad_values = bad;
    return st;
}

/*
 * tfevents_decode_simple_run's body, made twice like record_next. Per
 * record: the header's bounds, then both CRCs (two independent chains the
 * CPU runs side by side; one branch checks both) and the fast layout. The
 * first record that is not all of that is left to the general path.
 */
static inline __attribute__((always_inline)) size_t
simple_run(const uint8_t *buf, size_t n, uint64_t max_records, uint64_t max_bytes,
           tfevents_value_fn fn, void *ctx, uint64_t *records, bool hw)
{
    size_t pos = 0;
    uint64_t count = 0;
    struct tfevents_value v;
    while (count < max_records && pos < max_bytes && n - pos >= TFRECORD_OVERHEAD) {
        const uint8_t *p = buf + pos;
        uint64_t len = le_load64(p);
        if (len > SIMPLE_FAST_MAX || len > n - pos - TFRECORD_OVERHEAD)
            break; /* partial, damaged, or no simple scalar: tfrecord_next says which */
        if (!decode_simple_fast(p + TFRECORD_HEADER, (size_t)len, &v))
            break; /* before the CRCs: another kind of record costs a few compares here */
        uint32_t head = masked_short(p, 8, hw);
        uint32_t data = masked_short(p + TFRECORD_HEADER, (size_t)len, hw);
        if ((head ^ le_load32(p + 8)) | (data ^ le_load32(p + TFRECORD_HEADER + len)))
            break;
        pos += (size_t)len + TFRECORD_OVERHEAD;
        count++;
        if (fn(ctx, &v) != 0)
            break;
    }
    *records = count;
    return pos;
}

static size_t simple_run_sw(const uint8_t *buf, size_t n, uint64_t max_records, uint64_t max_bytes,
                            tfevents_value_fn fn, void *ctx, uint64_t *records)
{
    return simple_run(buf, n, max_records, max_bytes, fn, ctx, records, false);
}

#ifdef CRC_HAVE_HW
__attribute__((target("sse4.2"))) static size_t
simple_run_hw(const uint8_t *buf, size_t n, uint64_t max_records, uint64_t max_bytes,
              tfevents_value_fn fn, void *ctx, uint64_t *records)
{
    return simple_run(buf, n, max_records, max_bytes, fn, ctx, records, true);
}
#endif

size_t tfevents_decode_simple_run(const uint8_t *buf, size_t n, uint64_t max_records,
                                  uint64_t max_bytes, tfevents_value_fn fn, void *ctx,
                                  uint64_t *records)
{
    *records = 0;
    if (!fast_path)
        return 0;
    if (crc_hw < 0)
        crc_init();
    if (max_records == 0)
        max_records = UINT64_MAX;
    if (max_bytes == 0)
        max_bytes = UINT64_MAX;
#ifdef CRC_HAVE_HW
    if (crc_hw)
        return simple_run_hw(buf, n, max_records, max_bytes, fn, ctx, records);
#endif
    return simple_run_sw(buf, n, max_records, max_bytes, fn, ctx, records);
}

/* ---- writing (tests, tools, benches) ---- */

static void pb_put_varint(struct strbuf *out, uint64_t v)
{
    while (v >= 0x80) {
        strbuf_addc(out, (char)(v | 0x80));
        v >>= 7;
    }
    strbuf_addc(out, (char)v);
}

void tfevents_write_simple(struct strbuf *out, int64_t step, double wall_time, const char *tag,
                           float value)
{
    size_t tlen = strlen(tag);
    struct strbuf val = STRBUF_INIT, ev = STRBUF_INIT;
    uint32_t vbits;
    uint64_t wbits;
    memcpy(&vbits, &value, 4);
    memcpy(&wbits, &wall_time, 8);
    /* Summary.Value: tag (1), simple_value (2). */
    pb_put_varint(&val, 1 << 3 | WT_LEN);
    pb_put_varint(&val, tlen);
    strbuf_add(&val, tag, tlen);
    pb_put_varint(&val, 2 << 3 | WT_FIXED32);
    put_le(&val, vbits, 4);
    /* Event: wall_time (1), step (2), summary (5) { value (1) }. */
    pb_put_varint(&ev, 1 << 3 | WT_FIXED64);
    put_le(&ev, wbits, 8);
    pb_put_varint(&ev, 2 << 3 | WT_VARINT);
    pb_put_varint(&ev, (uint64_t)step);
    size_t vlen = val.len, slen = 1 + (vlen < 128 ? 1 : vlen < 16384 ? 2 : 3) + vlen;
    pb_put_varint(&ev, 5 << 3 | WT_LEN);
    pb_put_varint(&ev, slen);
    pb_put_varint(&ev, 1 << 3 | WT_LEN);
    pb_put_varint(&ev, vlen);
    strbuf_add(&ev, val.buf, vlen);
    tfrecord_write(out, ev.buf, ev.len);
    strbuf_free(&val);
    strbuf_free(&ev);
}
