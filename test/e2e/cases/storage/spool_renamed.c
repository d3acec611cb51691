// PIANO_FNS: frame,leaf
// ENV: PIANO_FRAMES=all PIANO_DB=rel.db
// The run's spool folder is renamed away while the program runs (another
// process of the same user could): piano writes nothing into another folder
// of that name, counts the frames it could not store, says so in one line,
// and the renamed folder is stored by the next piano-db command, complete
// (the program exited: its mapped header says so).
#include <dirent.h>
#include <stdio.h>
#include <string.h>
static volatile unsigned sink;
void leaf(int i) { sink += (unsigned)i; }
void frame(int i) { leaf(i); leaf(i + 1); }
int main(void) {
    for (int i = 0; i < 1000; i++) frame(i);
    DIR *d = opendir("rel.db.spool");
    struct dirent *e;
    char from[512] = "", to[512] = "rel.db.spool/moved";
    while (d && (e = readdir(d)))
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9')
            snprintf(from, sizeof from, "rel.db.spool/%s", e->d_name);
    if (d) closedir(d);
    if (!from[0] || rename(from, to) != 0) return 2;
    for (int i = 0; i < 400000; i++) frame(i);   /* past one frame buffer */
    printf("done\n");
    return 0;
}
