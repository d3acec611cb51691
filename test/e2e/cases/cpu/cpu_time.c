// PIANO_FNS: spinner,spin_sleep,writer,outer,inner
// ENV: PIANO_CPU=1
// CPU time (PIANO_CPU=1) against the thread CPU clock the program reads itself
// around the same calls: a spinning function (CPU ~ wall), one that spins 1 ms
// of CPU and sleeps 2 ms (CPU ~1 ms, off-CPU 2 ms or more per call), one that makes many
// write()s (mostly system time: each copies 64 KiB into the page cache, where
// 1-byte writes to /dev/null left the split near even on some machines), and
// nested calls (self and inclusive CPU add up).
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
static long long ns(clockid_t c) { struct timespec t; clock_gettime(c, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
/* spins until the thread has used us microseconds of CPU: its CPU time is the
 * same whatever the load (a spin timed by the wall clock got less CPU the more
 * the machine preempted it) */
static void spin_us(long us) { long long end = ns(CLOCK_THREAD_CPUTIME_ID) + us * 1000; while (ns(CLOCK_THREAD_CPUTIME_ID) < end) ; }
static int scratch;
static char block[65536];
void spinner(void) { spin_us(2000); }
void spin_sleep(void) { spin_us(1000); struct timespec t = { 0, 2000000 }; nanosleep(&t, 0); }
void writer(void) { for (int i = 0; i < 2000; i++) if (pwrite(scratch, block, sizeof block, 0) != (ssize_t)sizeof block) _exit(3); }
void inner(void) { spin_us(300); }
void outer(void) { spin_us(200); inner(); inner(); }
/* CPU ns of n calls of f, as the thread CPU clock measures them around each call */
static long long cpu_of(void (*f)(void), int n) {
    long long sum = 0;
    for (int i = 0; i < n; i++) { long long t = ns(CLOCK_THREAD_CPUTIME_ID); f(); sum += ns(CLOCK_THREAD_CPUTIME_ID) - t; }
    return sum;
}
int main(void) {
    scratch = open("scratch.bin", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (scratch < 0 || unlink("scratch.bin") != 0)
        return 2;
    /* writer first and long (~50 ms): the kernel's user/system split is sampled at
     * its ticks and scaled over the thread's whole life, so the spinners' user
     * time before it, or a few ticks, would blur its split */
    long long c = cpu_of(writer, 10), a = cpu_of(spinner, 50), b = cpu_of(spin_sleep, 30), d = cpu_of(outer, 50);
    printf("%lld %lld %lld %lld\n", a, b, c, d);
    return 0;
}
