/*
 * blob_pack.c - a blob's bytes as a Huffman code of their own (blob_pack.h).
 */
#include "blob_pack.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { SYMS = 256, TABLE = 1 << PIANO_PACK_MAX_BITS, LENGTHS = SYMS / 2 };

static size_t put_varint(unsigned char *o, uint64_t v)
{
    size_t n = 0;
    for (; v >= 0x80; v >>= 7)
        o[n++] = (unsigned char)(v | 0x80);
    o[n++] = (unsigned char)v;
    return n;
}

/* Sorts k[0..m-1] ascending: Shell's sort (Ciura's gaps), a few thousand
 * steps for 256 keys, where qsort's calls through a comparison took ~60,000
 * instructions. */
static void sort_keys(uint64_t *k, int m)
{
    static const int gaps[] = {132, 57, 23, 10, 4, 1};
    for (size_t g = 0; g < sizeof gaps / sizeof *gaps; g++)
        for (int i = gaps[g]; i < m; i++) {
            uint64_t v = k[i];
            int j = i;
            for (; j >= gaps[g] && k[j - gaps[g]] > v; j -= gaps[g])
                k[j] = k[j - gaps[g]];
            k[j] = v;
        }
}

/* Code lengths of a Huffman code for freq (at most PIANO_PACK_MAX_BITS: the
 * counts are halved until the tree is that shallow), 0 for an absent value. */
static void code_lengths(const uint64_t *freq, unsigned char *len)
{
    /* The values present in ascending count, then value (the same code every
     * time), sorted once: halving the counts keeps that order. */
    uint64_t key[SYMS];   /* count << 8 | value (a count is below 2^56: a blob's length) */
    int sym[SYMS], m = 0;
    memset(len, 0, SYMS);
    for (int s = 0; s < SYMS; s++)
        if (freq[s])
            key[m++] = freq[s] << 8 | (uint64_t)s;
    if (m <= 1) {   /* one value: a code of one bit (none: nothing to code) */
        if (m)
            len[key[0] & 0xff] = 1;
        return;
    }
    sort_keys(key, m);
    uint64_t w[2 * SYMS];
    for (int i = 0; i < m; i++) {
        sym[i] = (int)(key[i] & 0xff);
        w[i] = key[i] >> 8;
    }
    for (;;) {
        /* The two-queue construction: internal nodes are made in ascending
         * weight, so the two lightest are at the queues' fronts. */
        int parent[2 * SYMS];
        int leaf = 0, inner = m, made = m;
        while (made < 2 * m - 1) {
            int pick[2];
            for (int p = 0; p < 2; p++)
                pick[p] = leaf < m && (inner >= made || w[leaf] <= w[inner]) ? leaf++ : inner++;
            w[made] = w[pick[0]] + w[pick[1]];
            parent[pick[0]] = parent[pick[1]] = made++;
        }
        /* Depths from the root (the last node) down: a parent is made after
         * its children. */
        unsigned char depth[2 * SYMS];
        depth[made - 1] = 0;
        int deepest = 0;
        for (int i = made - 2; i >= 0; i--) {
            depth[i] = (unsigned char)(depth[parent[i]] + 1);
            if (i < m && depth[i] > deepest)
                deepest = depth[i];
        }
        if (deepest <= PIANO_PACK_MAX_BITS) {
            for (int i = 0; i < m; i++)
                len[sym[i]] = depth[i];
            return;
        }
        for (int i = 0; i < m; i++)   /* too deep: flatter counts, each still >= 1 */
            w[i] = (w[i] + 1) / 2;
    }
}

/* The low n bits of code (n <= 12) in reverse order: its first bit lowest,
 * as the codes are packed. Three nibbles, each reversed by a table. */
static uint32_t reversed(uint32_t code, unsigned n)
{
    static const unsigned char nibble[16] = {0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15};
    _Static_assert(PIANO_PACK_MAX_BITS <= 12, "reversed() turns codes of 12 bits at most");
    uint32_t r = (uint32_t)nibble[code & 15] << 8 | (uint32_t)nibble[code >> 4 & 15] << 4 | nibble[code >> 8 & 15];
    return r >> (12 - n);
}

/* The canonical codes of lengths len, each bit-reversed (the first bit lowest).
 * Returns 0, or -1 when the lengths are over-subscribed or too long. */
static int canonical(const unsigned char *len, uint32_t *code)
{
    unsigned count[PIANO_PACK_MAX_BITS + 1] = {0}, next[PIANO_PACK_MAX_BITS + 1];
    uint32_t room = 0;
    for (int s = 0; s < SYMS; s++) {
        if (len[s] > PIANO_PACK_MAX_BITS)
            return -1;
        if (len[s]) {
            count[len[s]]++;
            room += TABLE >> len[s];
        }
    }
    if (room > TABLE)
        return -1;
    unsigned c = 0;
    for (int b = 1; b <= PIANO_PACK_MAX_BITS; b++) {
        c = (c + count[b - 1]) << 1;
        next[b] = c;
    }
    for (int s = 0; s < SYMS; s++)
        if (len[s])
            code[s] = reversed(next[len[s]]++, len[s]);
    return 0;
}

size_t piano_blob_pack(const unsigned char *raw, size_t n, unsigned char *out, size_t cap)
{
    if (n == 0 || cap < 1 + 10 + LENGTHS)
        return 0;
    uint64_t freq[SYMS] = {0};
    for (size_t i = 0; i < n; i++)
        freq[raw[i]]++;
    unsigned char len[SYMS];
    uint32_t code[SYMS];
    code_lengths(freq, len);
    if (canonical(len, code) != 0)
        return 0;
    size_t o = 0;
    out[o++] = PIANO_BLOB_PACKED;
    o += put_varint(out + o, n);
    for (int i = 0; i < LENGTHS; i++)
        out[o++] = (unsigned char)(len[2 * i] | len[2 * i + 1] << 4);
    size_t limit = cap < n ? cap : n - 1;   /* shorter than n, or not at all */
    uint32_t entry[SYMS];   /* a value's code | its length << 24: one load a byte */
    for (int s = 0; s < SYMS; s++)
        entry[s] = len[s] ? code[s] | (uint32_t)len[s] << 24 : 0;
    uint64_t acc = 0;
    unsigned bits = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t e = entry[raw[i]];
        acc |= (uint64_t)(e & 0xffffff) << bits;
        bits += e >> 24;
        if (bits >= 32) {   /* (under 44: codes are 12 bits at most) */
            if (o + 4 > limit)
                return 0;
            uint32_t word = (uint32_t)acc;   /* its bytes lowest first */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            word = __builtin_bswap32(word);
#endif
            memcpy(out + o, &word, 4);
            o += 4;
            acc >>= 32;
            bits -= 32;
        }
    }
    for (; bits > 0; bits = bits > 8 ? bits - 8 : 0, acc >>= 8) {
        if (o >= limit)
            return 0;
        out[o++] = (unsigned char)acc;
    }
    return o;
}

/* The varint at b[*at] (at most 10 bytes, within len): 0 on success. */
static int get_varint(const unsigned char *b, size_t len, size_t *at, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 64 && *at < len; shift += 7) {
        unsigned char c = b[(*at)++];
        x |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

/* The header of packed blob b: the unpacked length and where the codes start. */
static int header(const unsigned char *b, size_t len, uint64_t *n, size_t *data)
{
    size_t at = 1;
    if (!piano_blob_packed(b, len) || get_varint(b, len, &at, n) != 0 || len - at < LENGTHS || *n == 0)
        return -1;
    *data = at + LENGTHS;
    /* every byte takes a bit at least */
    if (*n > (uint64_t)(len - *data) * 8)
        return -1;
    return 0;
}

size_t piano_blob_unpacked_size(const unsigned char *b, size_t len)
{
    uint64_t n;
    size_t data;
    if (header(b, len, &n, &data) != 0 || n > SIZE_MAX)
        return 0;
    return (size_t)n;
}

int piano_blob_unpack(const unsigned char *b, size_t len, unsigned char *out, size_t n)
{
    uint64_t want;
    size_t at;
    if (header(b, len, &want, &at) != 0 || want != n)
        return -1;
    unsigned char lens[SYMS];
    for (int i = 0; i < LENGTHS; i++) {
        unsigned char c = b[at - LENGTHS + i];
        lens[2 * i] = c & 15;
        lens[2 * i + 1] = c >> 4;
    }
    uint32_t code[SYMS];
    if (canonical(lens, code) != 0)
        return -1;
    /* Every PIANO_PACK_MAX_BITS-bit window names its first code: value | length << 8
     * (0: no code starts so, in an incomplete code). */
    uint16_t *table = calloc(TABLE, sizeof *table);
    if (!table)
        return -1;
    for (int s = 0; s < SYMS; s++)
        if (lens[s])
            for (uint32_t k = code[s]; k < TABLE; k += 1u << lens[s])
                table[k] = (uint16_t)(s | lens[s] << 8);
    uint64_t acc = 0;
    unsigned bits = 0;
    int bad = 0;
    for (size_t i = 0; i < n && !bad; i++) {
        while (bits <= 56 && at < len) {
            acc |= (uint64_t)b[at++] << bits;
            bits += 8;
        }
        unsigned e = table[acc & (TABLE - 1)], l = e >> 8;
        if (l == 0 || l > bits) {   /* no code, or past the blob's end */
            bad = 1;
            break;
        }
        out[i] = (unsigned char)e;
        acc >>= l;
        bits -= l;
    }
    free(table);
    /* Nothing left but the last byte's padding. */
    return bad || at != len || bits >= 8 ? -1 : 0;
}
