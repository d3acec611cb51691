// EXIT: 7
// SETUP: echo 'not a database, just text' > text.db; sqlite3 newer.db 'PRAGMA user_version=99; CREATE TABLE t(x);'; printf 'SQLite format 3\000%4000s' garbage > corrupt.db
// A database piano cannot use: the program's output and exit status do not
// change, piano says so in one line on stderr, and the run waits in the spool.
// The check runs the program against each of: a text file, a newer schema, a
// corrupt file, a path under a regular file, and a folder it has to create.
#include <stdio.h>
int work(int n) { int s = 0; for (int i = 0; i < n; i++) s += i; return s; }
int main(void) {
    for (int i = 1; i < 4; i++) printf("work(%d) = %d\n", i, work(i));
    fprintf(stderr, "program's own line\n");
    return 7;
}
