// PIANO_FNS: frame,work
// A live run (issue 13): while the program runs, piano-db runs lists its run
// as 'running' and report shows its figures so far, without storing it or
// touching its spool; at exit it is stored as usual. With an argument the
// program runs until that file exists (at most 20 s).
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned sink;
void work(int i) { sink += (unsigned)i; }
void frame(int i) { work(i); work(i + 1); }
int main(int argc, char **argv) {
    if (argc < 2) {
        for (int i = 0; i < 10; i++) frame(i);
    } else {
        time_t start = time(NULL);
        for (int i = 0; access(argv[1], F_OK) != 0 && time(NULL) - start < 20; i++) {
            frame(i);
            if (i % 100 == 0) usleep(1000);
        }
    }
    printf("done\n");
    return 0;
}
