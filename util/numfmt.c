/*
 * numfmt: see numfmt.h. The fast path tries precisions 1, 2, … : the value
 * scaled by a power of ten, rounded to an integer of p digits, read back
 * by one exact operation and compared. The first p that reads back gives
 * the digits; the text is laid out as %g lays it out.
 */
#include "util/numfmt.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every power of ten a double holds exactly. */
static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static bool is_float(double v)
{
    return (double)(float)v == v;
}

/*
 * Does back (the double nearest some decimal) stand for the same float as
 * v? 1 yes, 0 no, -1 cannot tell: rounded twice (decimal to double to
 * float), the answer is wrong only when back sits exactly halfway between
 * two floats, and such a value is left to strtod.
 */
static int reads_back_float(double back, double v)
{
    float fb = (float)back;
    if ((double)fb == back)
        return fb == (float)v;
    float other = nextafterf(fb, back > (double)fb ? INFINITY : -INFINITY);
    if (((double)fb + (double)other) / 2 == back)
        return -1;
    return fb == (float)v;
}

size_t numfmt_shortest_slow(char buf[NUMFMT_SIZE], double v)
{
    bool f = is_float(v);
    int n = 0;
    for (int prec = f ? 6 : 15; prec <= 17; prec++) {
        n = snprintf(buf, NUMFMT_SIZE, "%.*g", prec, v);
        double back = strtod(buf, NULL);
        if (f ? (float)back == (float)v : back == v)
            break;
    }
    return (size_t)n;
}

/*
 * Lays out digits (the decimal d, n digits with no trailing zero, the first
 * of them worth 10^x) as "%.*g" with precision prec does.
 */
static size_t layout(char *buf, bool neg, uint64_t d, int n, int x, int prec)
{
    char dig[20];
    for (int i = n - 1; i >= 0; i--, d /= 10)
        dig[i] = (char)('0' + d % 10);
    size_t o = 0;
    if (neg)
        buf[o++] = '-';
    if (x < -4 || x >= prec) {
        buf[o++] = dig[0];
        if (n > 1) {
            buf[o++] = '.';
            memcpy(buf + o, dig + 1, (size_t)n - 1);
            o += (size_t)n - 1;
        }
        buf[o++] = 'e';
        buf[o++] = x < 0 ? '-' : '+';
        int ax = x < 0 ? -x : x;
        if (ax >= 100)
            buf[o++] = (char)('0' + ax / 100);
        buf[o++] = (char)('0' + ax / 10 % 10);
        buf[o++] = (char)('0' + ax % 10);
    } else if (x < 0) {
        buf[o++] = '0';
        buf[o++] = '.';
        for (int i = -1; i > x; i--)
            buf[o++] = '0';
        memcpy(buf + o, dig, (size_t)n);
        o += (size_t)n;
    } else {
        for (int i = 0; i <= x; i++)
            buf[o++] = i < n ? dig[i] : '0';
        if (n > x + 1) {
            buf[o++] = '.';
            memcpy(buf + o, dig + x + 1, (size_t)(n - x - 1));
            o += (size_t)(n - x - 1);
        }
    }
    buf[o] = '\0';
    return o;
}

/* The fast path: 0 when it cannot vouch for the answer. */
static size_t fast(char buf[NUMFMT_SIZE], double v)
{
    bool f = is_float(v), neg = signbit(v) != 0;
    double a = fabs(v);
    if (a == 0)
        return layout(buf, neg, 0, 1, 0, 6);
    if (!(a >= 1e-22 && a < 1e22))
        return 0;
    /* the first digit's power from the binary exponent: floor(k log10 2), or one below */
    int k2;
    frexp(a, &k2);
    int e = (int)floor((double)(k2 - 1) * 0.30102999566398120);
    /*
     * From %g's own first precision: at most one decimal of 6 digits lies
     * within a float's rounding interval (nor of 15 within a double's), so
     * when the nearest one reads back, its digits less trailing zeros are
     * the shortest.
     */
    int base = f ? 6 : 15, maxp = f ? 9 : 15, moved = 0;
    for (int p = base; p <= maxp; p++) {
        int k = p - 1 - e;
        if (k > 22 || k < -22)
            return 0;
        double s = k >= 0 ? a * pow10_exact[k] : a / pow10_exact[-k];
        if (s < pow10_exact[p - 1] * 0.05 || s >= pow10_exact[p] * 20 || moved > 2)
            return 0; /* the estimate far off, or going back and forth: not worth a guess */
        if (s < pow10_exact[p - 1]) { /* e one too high */
            e--;
            p--;
            moved++;
            continue;
        }
        if (s >= pow10_exact[p]) { /* e one too low */
            e++;
            p--;
            moved++;
            continue;
        }
        double r = nearbyint(s);
        /* s carries the product's rounding: too near a tie to tell which way it goes */
        if (fabs(fabs(s - floor(s)) - 0.5) <= s * 0x1p-50)
            return 0;
        double back = k >= 0 ? r / pow10_exact[k] : r * pow10_exact[-k];
        int same = f ? reads_back_float(back, v) : back == v;
        if (same < 0)
            return 0;
        if (!same)
            continue;
        uint64_t d = (uint64_t)r;
        int x = e;
        int n = p;
        if (d == (uint64_t)pow10_exact[p]) { /* 9.99… rounded up to 10 */
            d /= 10;
            x++;
        }
        while (n > 1 && d % 10 == 0) {
            d /= 10;
            n--;
        }
        return layout(buf, neg, d, n, x, p);
    }
    return 0;
}

size_t numfmt_shortest(char buf[NUMFMT_SIZE], double v)
{
    if (isfinite(v)) {
        size_t n = fast(buf, v);
        if (n)
            return n;
    }
    return numfmt_shortest_slow(buf, v);
}

void numfmt_add(struct strbuf *out, double v)
{
    char buf[NUMFMT_SIZE];
    size_t n = numfmt_shortest(buf, v);
    strbuf_add(out, buf, n);
}

void numfmt_add_int(struct strbuf *out, long long v)
{
    char buf[24];
    size_t o = sizeof buf;
    unsigned long long a = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324"
                                   "25262728293031323334353637383940414243444546474849"
                                   "50515253545556575859606162636465666768697071727374"
                                   "75767778798081828384858687888990919293949596979899";
    while (a >= 100) { /* two digits a division */
        unsigned r = (unsigned)(a % 100);
        a /= 100;
        buf[--o] = pairs[2 * r + 1];
        buf[--o] = pairs[2 * r];
    }
    if (a >= 10) {
        buf[--o] = pairs[2 * a + 1];
        buf[--o] = pairs[2 * a];
    } else {
        buf[--o] = (char)('0' + a);
    }
    if (v < 0)
        buf[--o] = '-';
    strbuf_add(out, buf + o, sizeof buf - o);
}
