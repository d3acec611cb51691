// PIANO_FNS: work
// The import at exit (libpiano_import.so) holds its own SQLite, bound inside:
// its load resolves no SQLite symbol and maps no libsqlite3 (issue 23: ~0.5 ms
// of a short run). A process that has the system's libsqlite3 loaded (here:
// USE_SQLITE=1 opens it) gets libpiano_import_shared.so instead, which uses
// that one: a second SQLite in the process would keep its own POSIX locks on
// the database file, and drop the first's when it closes it.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int work(int x) { return x * 3; }
int main(void) {
    if (getenv("USE_SQLITE") && !dlopen("libsqlite3.so.0", RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    int s = 0;
    for (int i = 0; i < 1000; i++) s += work(i);
    printf("%d\n", s);
    return 0;
}
