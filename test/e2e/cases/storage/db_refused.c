// EXIT: 3
// SETUP: mkdir adir && mkfifo fifo.db
// Database paths piano refuses (issue 11, items 12 and 13): a path ending in
// '/', /dev/null, a folder, a fifo, a database writable by other users or
// owned by another user, a spool folder open to others, a link or another
// user's. The program's output and exit status do not change, piano says why in
// exactly one line on stderr, and nothing is created (today /dev/null.spool is
// created in /dev as root). The check runs the program against each.
#include <stdio.h>
int work(int n) { int s = 0; for (int i = 0; i < n; i++) s += i; return s; }
int main(void) {
    for (int i = 1; i < 4; i++) printf("work(%d) = %d\n", i, work(i));
    fprintf(stderr, "program's own line\n");
    return 3;
}
