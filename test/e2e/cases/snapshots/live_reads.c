// PIANO_FNS: frame,pick,left,right,leaf
// Reading a live run costs what the command shows (issue 20): run with an
// argument (and PIANO_FRAMES=1000), the program makes 5,000 frames, creates
// "phase1" and waits for "more"; makes 3,000 more, creates "phase2" and waits
// for "stop" (20 s at most each), then exits while piano-db reads its live
// run: it still stores its own run. Each frame: frame > pick > left|right >
// leaf (six contexts).
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned sink;
void leaf(int i) { sink += (unsigned)i; }
void left(int i) { leaf(i); }
void right(int i) { leaf(i); leaf(i + 1); }
void pick(int i) { if (i % 2) left(i); else right(i); }
void frame(int i) { pick(i); }
static void phase(int *i, int n, const char *done, const char *wait_for) {
    for (int end = *i + n; *i < end; ++*i) frame(*i);
    close(open(done, O_CREAT | O_WRONLY, 0600));
    time_t start = time(NULL);
    while (access(wait_for, F_OK) != 0 && time(NULL) - start < 20) usleep(1000);
}
int main(int argc, char **argv) {
    int i = 0;
    if (argc < 2) {
        for (; i < 10; i++) frame(i);
    } else {
        phase(&i, 5000, "phase1", "more");
        phase(&i, 3000, "phase2", "stop");
    }
    printf("done %d\n", i);
    return 0;
}
