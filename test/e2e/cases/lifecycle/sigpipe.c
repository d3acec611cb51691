// EXIT: 7
// ENV: PIANO_DB=broken.db
// piano's one-line message goes to a stderr that is a pipe nobody reads (the
// database was made unusable, so the run cannot be stored): piano's write
// must not raise SIGPIPE, which would kill the program; its status is its own.
#include <stdio.h>
#include <unistd.h>
static volatile unsigned sink;
void work(int i) { sink += (unsigned)i; }
int main(void) {
    for (int i = 0; i < 10; i++) work(i);
    int p[2];
    if (pipe(p) != 0) return 2;
    close(p[0]);
    dup2(p[1], 2);
    FILE *f = fopen("broken.db", "w");   /* not a database: storing the run fails */
    fputs("this is not a database, and it is long enough to be read as one\n", f);
    fclose(f);
    printf("done\n");
    return 7;
}
