/* fuzz_frames.c - libFuzzer target: the frame records of a spool buffer
 * (spool/spool.h), read the way the import reads a damaged one (store/import.c): a
 * scan that checks each record up to the first malformed one (import_chunk),
 * then a second read of the checked records with only that span's end known
 * (insert_frames and bind_frame), which must accept every record and agree
 * with the first on every field. The input is what follows a chunk header;
 * it is copied to a buffer of its exact size, so ASan sees any read past it.
 *
 * Seeds: test/fuzz/corpus/frames (the start of real buffers). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "spool.h"

/* Reads the records from p to end; returns where the checked span ends, and
 * the number of records and a hash of every field read. */
static const unsigned char *read_all(const unsigned char *p, const unsigned char *end, int strict,
                                     uint64_t *records, uint64_t *hash)
{
    uint64_t base = 0, base_n = 0, h = 1469598103934665603ull;
    *records = 0;
    while (p < end) {
        struct piano_frame_view f;
        const unsigned char *next = piano_frame_read(p, end, base, base_n, &f);
        if (!next) {
            if (strict)
                abort();   /* a record the scan checked must read again */
            break;
        }
        uint64_t fields[] = { f.start, f.total, f.allocs, f.alloc_bytes, f.frees, f.free_bytes, f.nfns, f.n, f.kept };
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
            h = (h ^ fields[i]) * 1099511628211ull;
        const unsigned char *q = f.fns;
        uint32_t id = 0;
        for (uint32_t k = 0; k < f.nfns; k++) {
            uint64_t self;
            q = piano_frame_fn(q, end, &id, &self);
            if (!q || id >= PIANO_FN_CAP)
                abort();   /* piano_frame_read checked the entries */
            h = (h ^ id ^ self << 17) * 1099511628211ull;
        }
        if (q != next)
            abort();
        base = f.start + f.total;
        base_n = f.n;
        p = next;
        ++*records;
    }
    *hash = h;
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    uint64_t n1, h1, n2, h2;
    const unsigned char *checked = read_all(buf, buf + size, 0, &n1, &h1);
    if (read_all(buf, checked, 1, &n2, &h2) != checked || n1 != n2 || h1 != h2)
        abort();
    free(buf);
    return 0;
}
