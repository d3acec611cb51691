/*
 * calibrate.c - the run's clock: nanoseconds per tick of the TSC (or of
 * CLOCK_MONOTONIC, 1), and the clock's reading now.
 */
#define _GNU_SOURCE
#include "import_int.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

/* The rate measured on this boot, in the spool root: "<boot id> <ns per tick>". */
#define CALIBRATION "calibration"

static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    return mono_ns();
#endif
}

/* A reading of both clocks at one moment: the tick between two monotonic
 * readings, of 8 tries the one whose readings are closest. A thread
 * preempted between its two reads (a loaded machine) made a 20 ms
 * measurement up to 40% off (push --follow's windows showed it). */
static void clocks_now(uint64_t *t, uint64_t *m)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 8; i++) {
        uint64_t a = mono_ns(), tick = ticks(), b = mono_ns();
        if (b - a < best) {
            best = b - a;
            *t = tick;
            *m = a + (b - a) / 2;
        }
    }
}

/* The boot's id: the TSC rate measured once holds until the next boot. */
static int boot_id(char *out, size_t n)
{
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    ssize_t got = fd >= 0 ? read(fd, out, n - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (got <= 0)
        return -1;
    out[got] = 0;
    return 0;
}

/* Nanoseconds per tick of the run's clock. The run's own span calibrates best;
 * when it is short (or the machine rebooted since), use the rate measured
 * before on this boot (kept in the spool root, root_fd, as "calibration";
 * root_fd -1: none), else measure 20 ms here: the invariant TSC has one rate
 * for the machine. */
double spool_calibrate(const struct piano_spool_run *run, int complete, int root_fd)
{
    if (run->clock == PIANO_CLOCK_MONO)
        return 1.0;
    uint64_t t1 = ticks(), m1 = mono_ns();
    if (complete && t1 > run->tick0 && m1 > run->mono0 + 20000000ull)
        return (double)(m1 - run->mono0) / (double)(t1 - run->tick0);
    char boot[64], line[160];
    int have_boot = root_fd >= 0 && boot_id(boot, sizeof boot) == 0;
    if (have_boot) {
        off_t size;
        int fd = spool_open_file_at(root_fd, CALIBRATION, &size);
        ssize_t got = fd >= 0 ? read(fd, line, sizeof line - 1) : -1;
        if (fd >= 0)
            close(fd);
        if (got > 0) {
            line[got] = 0;
            char *sep = strchr(line, ' ');
            double npt = sep ? strtod(sep + 1, NULL) : 0;
            if (sep && (size_t)(sep - line) == strcspn(boot, "\n") &&
                strncmp(line, boot, (size_t)(sep - line)) == 0 && npt > 0 && npt < 1e3)
                return npt;
        }
    }
    uint64_t t0, m0;
    clocks_now(&t0, &m0);
    do
        clocks_now(&t1, &m1);
    while (m1 - m0 < 20000000ull);
    double npt = (double)(m1 - m0) / (double)(t1 - t0);
    if (have_boot) {
        boot[strcspn(boot, "\n")] = 0;
        int n = snprintf(line, sizeof line, "%s %.17g\n", boot, npt);
        char tmp[64];
        snprintf(tmp, sizeof tmp, "." CALIBRATION ".%d", (int)getpid());
        unlinkat(root_fd, tmp, 0);   /* a leftover of a process that had this pid */
        int fd = openat(root_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            int ok = write(fd, line, (size_t)n) == n;
            close(fd);
            if (!ok || renameat(root_fd, tmp, root_fd, CALIBRATION) != 0)
                unlinkat(root_fd, tmp, 0);
        }
    }
    return npt;
}

uint64_t spool_clock_now(uint32_t clock)
{
    return clock == PIANO_CLOCK_MONO ? mono_ns() : ticks();
}
