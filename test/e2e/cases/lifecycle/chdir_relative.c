// PIANO_FNS: =frame,=leaf
// ENV: PIANO_FRAMES=all PIANO_DB=rel.db
// SETUP: mkdir sub
// A daemon with a relative PIANO_DB that changes its folder after starting
// (daemons chdir("/")): the path is resolved once, at start, so every frame
// goes to ./rel.db of the folder it started in, and nothing is created in the
// new folder. 3 frames before the chdir, 100,000 after, 3,000,030 calls of leaf.
#include <stdio.h>
#include <unistd.h>
static volatile unsigned sink;
void leaf(int i) { sink += (unsigned)i; }
void frame(int n) { for (int i = 0; i < n; i++) leaf(i); }
int main(void) {
    for (int i = 0; i < 3; i++) frame(10);
    if (chdir("sub") != 0) {
        perror("chdir");
        return 1;
    }
    for (int i = 0; i < 100000; i++) frame(30);
    printf("%u\n", sink);
    return 0;
}
