/* fuzz_db.c - libFuzzer target: piano-db reading a database file.
 *
 * The input bytes are written to a temporary file, opened the way piano-db
 * opens a database (pdb_open: piano_store_open, schema checks, recovery of
 * spooled runs), and read by the commands that only read: runs, tag (list),
 * report (table, JSON per thread, frames table and JSON) and diff of the two
 * latest runs. Output goes to /dev/null. pdb_die does not exit here: its hook
 * longjmps back, so an input piano-db rejects with one error line is a normal
 * outcome, and only a sanitizer report or a crash is a finding. What the
 * commands allocated with xmalloc and friends and did not free when pdb_die
 * jumped out is freed here (the link wraps them, see CMakeLists.txt), so the
 * fuzzer's memory stays flat; run with -detect_leaks=0 all the same.
 *
 * Seeds: test/fuzz/corpus/db (small databases from real runs). */
#include "piano_db.h"
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static jmp_buf env;

/* ---- allocations of one input: an open-addressing set of live pointers ---- */
void *__real_xmalloc(size_t n);
void *__real_xcalloc(size_t n, size_t m);
void *__real_xrealloc(void *p, size_t n);
char *__real_xstrdup(const char *s);
void __real_free(void *p);
static void **live;
static size_t live_cap, live_used;   /* used: filled or deleted slots */
#define GONE ((void *)1)

static size_t slot_of(void *p)
{
    return ((uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ull >> 20 & (live_cap - 1);
}

static void track(void *p);

static void grow(void)
{
    void **old = live;
    size_t n = live_cap;
    live_cap = n ? n * 2 : 4096;
    live = calloc(live_cap, sizeof *live);
    if (!live)
        abort();
    live_used = 0;
    for (size_t i = 0; i < n; i++)
        if (old[i] && old[i] != GONE)
            track(old[i]);
    free(old);
}

static void track(void *p)
{
    if ((live_used + 1) * 2 > live_cap)
        grow();
    size_t i = slot_of(p);
    while (live[i] && live[i] != GONE)
        i = (i + 1) & (live_cap - 1);
    if (!live[i])
        live_used++;
    live[i] = p;
}

static void untrack(void *p)
{
    if (!p || !live_cap)
        return;
    for (size_t i = slot_of(p); live[i]; i = (i + 1) & (live_cap - 1))
        if (live[i] == p) {
            live[i] = GONE;
            return;
        }
}

void *__wrap_xmalloc(size_t n) { void *p = __real_xmalloc(n); track(p); return p; }
void *__wrap_xcalloc(size_t n, size_t m) { void *p = __real_xcalloc(n, m); track(p); return p; }
char *__wrap_xstrdup(const char *s) { char *p = __real_xstrdup(s); track(p); return p; }
void *__wrap_xrealloc(void *p, size_t n)
{
    untrack(p);
    p = __real_xrealloc(p, n);
    track(p);
    return p;
}
void __wrap_free(void *p)
{
    untrack(p);
    __real_free(p);
}

static void free_all(void)
{
    for (size_t i = 0; i < live_cap; i++) {
        if (live[i] && live[i] != GONE)
            __real_free(live[i]);
        live[i] = NULL;
    }
    live_used = 0;
}
static char dir[64], path[128];

static void jump_out(const char *msg)
{
    (void)msg;
    longjmp(env, 1);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    snprintf(dir, sizeof dir, "/tmp/piano-fuzz-db-XXXXXX");
    if (!mkdtemp(dir))
        abort();
    snprintf(path, sizeof path, "%s/in.db", dir);
    if (!freopen("/dev/null", "w", stdout))
        abort();
    pdb_die_hook = jump_out;
    return 0;
}

static void remove_files(void)
{
    static const char *suffix[] = { "", "-wal", "-shm", "-journal" };
    char f[160];
    for (int i = 0; i < 4; i++) {
        snprintf(f, sizeof f, "%s%s", path, suffix[i]);
        unlink(f);
    }
}

/* Runs one command; returns after it finished or died. */
static void run(pdb *p, int (*cmd)(pdb *, const pdb_opts *), const pdb_opts *o)
{
    if (!setjmp(env))
        cmd(p, o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    remove_files();
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
    static pdb p;   /* static: set before setjmp, read after a longjmp */
    memset(&p, 0, sizeof p);
    if (!setjmp(env)) {
        pdb_open(&p, path, 0);
        pdb_opts o = { .cmd = "runs" };
        run(&p, cmd_runs, &o);
        o = (pdb_opts){ .cmd = "tag", .json = 1 };
        run(&p, cmd_tag, &o);
        o = (pdb_opts){ .cmd = "report", .all = 1 };
        run(&p, cmd_report, &o);
        o = (pdb_opts){ .cmd = "report", .json = 1, .threads = 1, .uncorrected = 1 };
        run(&p, cmd_report, &o);
        o = (pdb_opts){ .cmd = "report", .frames = 1, .all = 1 };
        run(&p, cmd_report, &o);
        o = (pdb_opts){ .cmd = "report", .frames = 1, .json = 1, .spikes = 1 };
        run(&p, cmd_report, &o);
        o = (pdb_opts){ .cmd = "diff", .all = 1 };
        run(&p, cmd_diff, &o);
    }
    /* Statements pdb_die jumped over are still open: finalize them, or the
     * connection (and its page cache) could not close. */
    if (p.db)
        for (sqlite3_stmt *st; (st = sqlite3_next_stmt(p.db, NULL));)
            sqlite3_finalize(st);
    pdb_close(&p);
    if (live_cap)
        free_all();
    return 0;
}
