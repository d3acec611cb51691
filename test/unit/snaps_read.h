/* The snaps file of this run (g.dir), read by the unit tests that drive the
 * snapshot thread (test_threads, test_snap_start, test_snap_fds): each
 * function's deltas summed into cum[id] (ids under SNAPS_READ_IDS, deltas
 * never negative: snapshots are cumulative). Returns the records read; 0
 * when no snapshot was written yet. Include after cmocka.h and internal.h. */
#include <stdio.h>
#include <string.h>

#define SNAPS_READ_IDS 64

static int snaps_read(int64_t cum[SNAPS_READ_IDS][PIANO_SNAP_N])
{
    memset(cum, 0, sizeof(int64_t[SNAPS_READ_IDS][PIANO_SNAP_N]));
    char path[PIANO_PATH_MAX + 8];
    snprintf(path, sizeof path, "%s/" PIANO_SPOOL_SNAPS, g.dir);
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    static unsigned char buf[1 << 22];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    const unsigned char *p = buf, *end = buf + len, *next, *e;
    struct piano_snap_hdr h;
    int records = 0;
    while ((next = piano_snap_read(p, end, &h, &e)) != NULL) {
        uint32_t id = 0;
        for (uint32_t k = 0; k < h.nfns; k++) {
            int64_t d[PIANO_SNAP_N];
            e = piano_snap_entry(e, next, &id, d);
            assert_non_null(e);
            assert_true(id < SNAPS_READ_IDS);
            for (int c = 0; c < PIANO_SNAP_N; c++) {
                assert_true(d[c] >= 0);
                cum[id][c] += d[c];
            }
        }
        records++;
        p = next;
    }
    return records;
}
