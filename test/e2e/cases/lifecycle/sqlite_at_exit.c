// PIANO_FNS: work
// ENV: PIANO_DISABLE=1
// SQLite (libpiano_import.so, libsqlite3) is mapped only by the import at exit:
// a disabled run never maps it, a recording one not before it ends (issue 23:
// loading it was ~4 ms and 20 page faults of every short run). CHDIR=dir: the
// program changes its folder first (the runtime, found through a relative
// LD_LIBRARY_PATH, still finds the import library at exit).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int work(int x) { return x * 3; }
int main(void) {
    const char *to = getenv("CHDIR");
    if (to && chdir(to) != 0) {
        perror("chdir");
        return 1;
    }
    int s = 0;
    for (int i = 0; i < 1000; i++) s += work(i);
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) {
        perror("/proc/self/maps");
        return 1;
    }
    char line[4096];
    int sqlite = 0, import = 0;
    while (fgets(line, sizeof line, f)) {
        sqlite |= strstr(line, "libsqlite3") != NULL;
        import |= strstr(line, "libpiano_import") != NULL;
    }
    fclose(f);
    printf("%d sqlite %d import %d\n", s, sqlite, import);
    return 0;
}
