// spool_file_size(name): the size of this process's run file `name` in the
// spool (<PIANO_DB>.spool/<pid>-*/name), or -1 when there is not exactly one.
// Cases wait on it (a snapshot written: "snaps" grew) instead of sleeping.
// A header, not a case (heap_snapshots.c, span_snapshots.c,
// snapshots_short_threads.c include it).
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
static off_t spool_file_size(const char *name) {
    char p[4200];
    snprintf(p, sizeof p, "%s.spool/%u-*/%s", getenv("PIANO_DB"), (unsigned)getpid(), name);
    glob_t g;
    struct stat st;
    off_t s = -1;
    if (glob(p, 0, NULL, &g) == 0 && g.gl_pathc == 1 && stat(g.gl_pathv[0], &st) == 0)
        s = st.st_size;
    globfree(&g);
    return s;
}
