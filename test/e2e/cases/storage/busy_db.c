// PIANO_FNS: frame,leaf
// Another process holds the database locked when the program exits: the exit
// waits 3 s at most, says so in one line, and the run stays in the
// spool for the next piano-db command, which stores it.
#include <stdio.h>
#include <time.h>
static volatile unsigned sink;
void leaf(int i) { sink += (unsigned)i; }
void frame(int i) { leaf(i); leaf(i + 1); }
int main(void) {
    for (int i = 0; i < 100; i++) frame(i);
    printf("done\n");
    return 0;
}
