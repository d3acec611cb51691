/*
 * blob_pack.h - a blob's bytes entropy-coded (schema 23): the stats, contexts
 * and function-list blobs (stat_trees.fns, context_trees.nodes, fn_lists.fns)
 * are streams of LEB128 varints whose bytes are far from uniform (about 6.2
 * bits of information a byte in jq's trivial run), so a Huffman code of the
 * blob's own bytes takes about a fifth off (bench/README.md "Schema 23").
 * Each format's reader sees the blob as written: blob_table.c unpacks it
 * before the format's open.
 *
 * A packed blob: the byte PIANO_BLOB_PACKED (0x7f: never a first byte of the
 * three formats: the stats and contexts blobs' header byte then says 31 fields
 * in a format that had at most 30, the function list's first byte is 0), the
 * unpacked length as an unsigned LEB128 varint, the code lengths of the 256
 * byte values as 128 bytes (two 4-bit lengths a byte, value 2i in the low
 * half: 0 for a value absent, else 1..PIANO_PACK_MAX_BITS), then the bytes'
 * codes, canonical (deflate's assignment: shorter codes first, then by value),
 * packed from each byte's lowest bit up, the first code's first bit lowest.
 * A blob is stored packed only when that makes it shorter.
 */
#ifndef PIANO_BLOB_PACK_H
#define PIANO_BLOB_PACK_H
#include <stddef.h>

#define PIANO_BLOB_PACKED 0x7f
#define PIANO_PACK_MAX_BITS 12   /* the longest code: a decoding table of 4,096 entries */

/* Whether blob b (len bytes) is packed. */
static inline int piano_blob_packed(const void *b, size_t len)
{
    return len > 0 && *(const unsigned char *)b == PIANO_BLOB_PACKED;
}

/* Packs raw (n bytes) into out (cap bytes). Returns the packed length, or 0
 * when packing would not make it shorter than n or does not fit in cap. */
size_t piano_blob_pack(const unsigned char *raw, size_t n, unsigned char *out, size_t cap);

/* The unpacked length of packed blob b, or 0 when b is malformed (a length
 * its codes cannot hold: more than one byte a bit of them). */
size_t piano_blob_unpacked_size(const unsigned char *b, size_t len);

/* Unpacks packed blob b (len bytes) into out, which holds exactly
 * piano_blob_unpacked_size(b, len) bytes. Returns 0, or -1 when b is
 * malformed (then out holds garbage). */
int piano_blob_unpack(const unsigned char *b, size_t len, unsigned char *out, size_t n);

#endif
