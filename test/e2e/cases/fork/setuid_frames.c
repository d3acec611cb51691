// PIANO_FNS: =work
// ENV: PIANO_INTERVAL=0.2
// setuid_frames: a program started as root that drops to nobody (setgid,
// setuid 65534) after its first frame, as a daemon's worker does, then makes
// 2,000 more frames over ~0.8 s. Its spool is root's (a folder nobody cannot
// open): the frames, the frame buffer's growth and the snapshots after the
// switch go through the files piano kept open. Not root: not switched (the
// check skips).
#include <grp.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static volatile unsigned sink;
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
void work(int i) {
    double end = now() + 0.0004;
    while (now() < end) sink += (unsigned)i;
}
int main(void) {
    work(0);
    int switched = getuid() == 0 && setgroups(0, NULL) == 0 && setgid(65534) == 0 && setuid(65534) == 0;
    for (int i = 1; i <= 2000; i++) work(i);
    printf("%s uid %u\n", switched ? "switched" : "not switched", (unsigned)geteuid());
    return 0;
}
