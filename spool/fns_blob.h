/*
 * fns_blob.h - the encoding of frames.fns, the self time of each function that
 * ran in a frame. Written by the import (import.c), read by piano-db.
 *
 * One entry per function, in no particular order: the function id, then its
 * self time in ns, each as an unsigned LEB128 varint (7 bits a byte, low bits
 * first, the high bit set on every byte but the last). A frame of 4 functions
 * of a few microseconds each takes about 16 bytes instead of the 48 of fixed
 * { uint32 id; uint64 ns; } records (schema version 2): the bytes of a stored
 * frame are most of what storing a run costs.
 */
#ifndef PIANO_FNS_BLOB_H
#define PIANO_FNS_BLOB_H
#include <stddef.h>
#include <stdint.h>

#define PIANO_FNS_ENTRY_MAX 15   /* bytes of one entry at most: 5 (id) + 10 (ns) */

static inline size_t piano_varint_put(unsigned char *out, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (unsigned char)v;
    return n;
}

/* Reads a varint of at most max_bytes from b[*at..len). Returns 0, or -1 when
 * it runs past the end, is longer than max_bytes or overflows 64 bits. */
static inline int piano_varint_get(const unsigned char *b, size_t len, size_t *at, unsigned max_bytes,
                                   uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned i = 0; i < max_bytes && *at < len; i++) {
        unsigned char c = b[(*at)++];
        if (i == 9 && c > 1)
            return -1;   /* bits beyond 64 */
        x |= (uint64_t)(c & 0x7f) << (7 * i);
        if (!(c & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

/* Appends one entry at out; returns its length (at most PIANO_FNS_ENTRY_MAX). */
static inline size_t piano_fns_put(unsigned char *out, uint32_t fn, uint64_t ns)
{
    size_t n = piano_varint_put(out, fn);
    return n + piano_varint_put(out + n, ns);
}

/* Reads the entry at b[*at] and moves *at past it. Returns 0, or -1 when the
 * blob is malformed there. */
static inline int piano_fns_get(const unsigned char *b, size_t len, size_t *at, uint32_t *fn, uint64_t *ns)
{
    uint64_t id;
    if (piano_varint_get(b, len, at, 5, &id) != 0 || id > UINT32_MAX)
        return -1;
    *fn = (uint32_t)id;
    return piano_varint_get(b, len, at, 10, ns);
}

#endif
