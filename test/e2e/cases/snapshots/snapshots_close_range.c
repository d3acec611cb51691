// PIANO_FNS: line
// ENV: PIANO_INTERVAL=0.01
// A program that closes every descriptor but its standard ones
// (close_range(3, ~0U)) and reopens its log, before each line it writes, for
// 1 s: a number the snapshot thread had open is the program's log the next
// moment. piano must never read, write or close the program's descriptor as
// its own (it used to end the program with exit(0), or close its log under
// it: the program's write failed with EBADF) nor write into it.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}
int line(int fd, unsigned i) {
    char buf[64];
    int n = snprintf(buf, sizeof buf, "line %u\n", i);
    return write(fd, buf, (size_t)n) == n ? 0 : errno;
}
int main(void) {
    unsigned n = 0, bad = 0;
    double t0 = now();
    while (now() - t0 < 1.0 && n < 200000) {
        syscall(SYS_close_range, 3u, ~0u, 0u);
        int fd = open("log.txt", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (fd < 0)
            return 3;
        int e = line(fd, n++);
        if (e) {
            if (!bad)
                printf("write: %s\n", strerror(e));
            bad++;
        }
    }
    printf("lines %u failed %u\n", n, bad);
    printf("done\n");
    return 0;
}
