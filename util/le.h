/*
 * le: little-endian loads from bytes of any alignment — one move on a
 * little-endian host, the bytes put together elsewhere. For formats that
 * fix their byte order (TFRecord framing, SipHash's words).
 */
#ifndef UTIL_LE_H
#define UTIL_LE_H

#include <stdint.h>
#include <string.h>

static inline uint64_t le_load64(const void *at)
{
    const unsigned char *p = at;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
#else
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
#endif
}

static inline uint32_t le_load32(const void *at)
{
    const unsigned char *p = at;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
#else
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
#endif
}

#endif
