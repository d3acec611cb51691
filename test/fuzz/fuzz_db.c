/* fuzz_db.c - libFuzzer target: piano-db reading a database file.
 *
 * The input bytes are written to a temporary file, opened the way piano-db
 * opens a database (pdb_open: piano_store_open, schema checks, recovery of
 * spooled runs), and read by the commands that only read: runs, tag (list),
 * report (table, JSON per thread, frames table and JSON) and diff of the two
 * latest runs. Output goes to /dev/null. pdb_die does not exit here: its hook
 * longjmps back, so an input piano-db rejects with one error line is a normal
 * outcome, and only a sanitizer report or a crash is a finding. Memory still
 * held when pdb_die jumps out is not freed (run with -detect_leaks=0).
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
        pdb_open(&p, path);
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
    return 0;
}
