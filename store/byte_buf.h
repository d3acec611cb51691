/*
 * byte_buf.h - the growing byte buffer of the blob writers (stats_blob.c,
 * contexts_blob.c, functions_blob.c, frames_blob.c): buf, malloc'd, holds cap
 * bytes; its capacity doubles as it fills, and out of memory the writer's
 * failed flag is set and stays set for the rest of its blob.
 */
#ifndef PIANO_BYTE_BUF_H
#define PIANO_BYTE_BUF_H
#include <stddef.h>

/* Makes *buf hold at least need bytes: as it is when it does, else its
 * capacity *cap doubled (from first when it has none) until it does. Returns
 * 0, or -1 when *failed was set already or memory runs out (then *failed is
 * set and *buf is as it was). */
int piano_byte_buf_grow(unsigned char **buf, size_t *cap, size_t need, size_t first, int *failed);

#endif
