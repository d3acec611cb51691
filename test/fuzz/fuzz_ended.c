/* fuzz_ended.c - libFuzzer target: the import of a spool folder whose ended
 * file (spool/spool.h: the records of short threads whose slots were reused) is
 * the input, read as a killed run's: every record checked (magic, size, part
 * table, check), each whole one rebuilt as a thread's state and stored, a
 * damaged one skipped. An input whose first byte is odd has its records'
 * checks recomputed first (where a magic and a size fit), so that mutations
 * of a record's parts and contents reach the import behind the check; an even
 * one is read as it is (the skipping of damage). Each stored run is deleted
 * again: the next input is a new run.
 *
 * Seeds: test/fuzz/corpus/ended (ended files of real runs: a few short
 * threads with calls, histograms and frames). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "import.h"
#include "spool.h"
#include "store.h"

static char run_dir[512], ended_path[600];
static sqlite3 *db;

static void write_file(const char *path, const void *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || (n && write(fd, p, n) != (ssize_t)n))
        abort();
    close(fd);
}

/* A spool root in a fresh folder, its one run folder with a run header and
 * no states (every thread is in ended), and the database. */
static void setup(void)
{
    char tmpl[] = "/tmp/fuzz_ended.XXXXXX";
    if (!mkdtemp(tmpl))
        abort();
    char db_path[300], root[320];
    snprintf(db_path, sizeof db_path, "%s/piano.db", tmpl);
    snprintf(root, sizeof root, "%s" PIANO_SPOOL_SUFFIX, db_path);
    snprintf(run_dir, sizeof run_dir, "%s/1-2", root);
    snprintf(ended_path, sizeof ended_path, "%s/" PIANO_SPOOL_ENDED, run_dir);
    if (mkdir(root, 0700) || mkdir(run_dir, 0700))
        abort();
    static struct piano_spool_run run;
    run.magic = PIANO_SPOOL_MAGIC;
    run.version = PIANO_SPOOL_VERSION;
    run.pid = 1;
    snprintf(run.key, sizeof run.key, "1-2");
    run.clock = PIANO_CLOCK_MONO;
    run.status = 1;
    run.end_tick = 1000000000;
    char run_path[640];
    snprintf(run_path, sizeof run_path, "%s/" PIANO_SPOOL_RUN, run_dir);
    write_file(run_path, &run, sizeof run);
    char err[512];
    db = piano_store_open(db_path, PIANO_STORE_WRITE, err, sizeof err);
    if (!db)
        abort();
}

/* Recomputes the check of every record whose magic and size fit. */
static void fix_checks(unsigned char *p, size_t n)
{
    size_t at = 0;
    while (at + sizeof(struct piano_ended_hdr) <= n) {
        struct piano_ended_hdr h;
        memcpy(&h, p + at, sizeof h);
        if (h.magic != PIANO_ENDED_MAGIC || h.size % 8 || h.size < sizeof h || h.size > n - at) {
            at += 8;
            continue;
        }
        h.check = 0;
        memcpy(p + at, &h, sizeof h);
        h.check = piano_ended_mix(piano_ended_start(h.size), p + at, h.size);
        memcpy(p + at, &h, sizeof h);
        at += h.size;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!db)
        setup();
    if (!size)
        return 0;
    unsigned char *buf = malloc(size);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    if (buf[0] & 1)
        fix_checks(buf + 1, size - 1);
    write_file(ended_path, buf + 1, size - 1);
    free(buf);
    char err[1024];
    piano_import_spool(db, run_dir, 1, err, sizeof err);
    if (sqlite3_exec(db, "DELETE FROM runs", NULL, NULL, NULL) != SQLITE_OK)
        abort();
    return 0;
}
