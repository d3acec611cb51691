// PIANO_FNS: =work
// A program run with an emptied environment (env -i, bash's exec -c, a
// service manager): no PIANO_DB and no HOME. It records into
// ~/.piano/piano.db, ~ being the home of the user's passwd entry, and says
// nothing on its stderr, which a test suite may compare (bash's does).
#include <stdio.h>
static volatile unsigned sink;
void work(int i) { sink += (unsigned)i; }
int main(void) {
    for (int i = 0; i < 5; i++) work(i);
    puts("done");
    return 0;
}
