/*
 * fault_cost.c - what a first touch of a 4 KiB page costs here, by the kind of memory (issue 23:
 * where a short run's page faults go). Writes one byte in each of 256 pages and prints us a page.
 *   cc -O2 bench/fault_cost.c -o /tmp/fault_cost && (cd DIR && /tmp/fault_cost MODE)
 *   MODE: anon | anon-populate | thp | file | file-fallocated | file-populate | file-read-first
 *   (file modes: a sparse file "fault_cost.tmp" in the current folder, mapped MAP_SHARED as the
 *   spool's states are, MADV_RANDOM; thp: anonymous, 2 MiB aligned, MADV_HUGEPAGE)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define PAGES 256

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "anon";
    size_t len = 64u << 20;
    int fd = -1, file = !strncmp(mode, "file", 4);
    char *p;
    if (!file) {
        p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED && !strcmp(mode, "thp")) {
            p = (char *)(((uintptr_t)p + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1));
            madvise(p, 32u << 20, MADV_HUGEPAGE);
        }
    } else {
        unlink("fault_cost.tmp");
        fd = open("fault_cost.tmp", O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0 || ftruncate(fd, (off_t)len) != 0) {
            perror("fault_cost.tmp");
            return 1;
        }
        if (!strcmp(mode, "file-fallocated"))
            fallocate(fd, 0, 0, PAGES * 4096);
        p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
        if (p != MAP_FAILED)
            madvise(p, len, MADV_RANDOM);
    }
    if (p == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    double a = now_ns();
    if (strstr(mode, "populate"))
        madvise(p, PAGES * 4096, MADV_POPULATE_WRITE);
    if (!strcmp(mode, "file-read-first"))
        for (int i = 0; i < PAGES; i++)
            (void)*(volatile char *)(p + (size_t)i * 4096);
    for (int i = 0; i < PAGES; i++)
        p[(size_t)i * 4096] = 1;
    double b = now_ns();
    printf("%-16s %.2f us a page\n", mode, (b - a) / 1e3 / PAGES);
    if (fd >= 0) {
        close(fd);
        unlink("fault_cost.tmp");
    }
    return 0;
}
