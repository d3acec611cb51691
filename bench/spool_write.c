/*
 * spool_write.c - what it costs to get frame records into files that outlive
 * the process, the way piano's runtime could do it. Writes 320 MiB in 8-byte
 * stores through 4 MiB chunks, three ways, and prints the thread CPU time per
 * 16 bytes (one frame record of the old format):
 *   fresh   each chunk a new file, fallocated and mapped MAP_SHARED (piano before
 *           this benchmark: one page fault per 4 KiB written)
 *   reused  one file mapped once, copied into a new chunk file by one pwrite when
 *           full and reused (piano now: rt/record.c, buffer_flush)
 *   anon    anonymous memory reused, copied the same way (no crash safety)
 * Usage: cc -O2 bench/spool_write.c -o /tmp/spool_write && /tmp/spool_write DIR
 * (DIR on the file system the database lives on; it is emptied of c* files).
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

#define CHUNK (4u << 20)
#define TOTAL (320ull << 20)

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void fill(uint64_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = i;
    __asm__ volatile("" ::: "memory");
}

static int run(const char *dir, const char *how)
{
    char path[4200];
    uint64_t *buf = NULL;
    if (strcmp(how, "reused") == 0) {
        snprintf(path, sizeof path, "%s/c.buffer", dir);
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || posix_fallocate(fd, 0, CHUNK) != 0)
            return -1;
        buf = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
    } else if (strcmp(how, "anon") == 0) {
        buf = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    }
    if (buf == MAP_FAILED)
        return -1;
    double t0 = cpu_ms();
    for (size_t k = 0; k < TOTAL / CHUNK; k++) {
        snprintf(path, sizeof path, "%s/c%zu", dir, k);
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0)
            return -1;
        if (!buf) {
            if (posix_fallocate(fd, 0, CHUNK) != 0)
                return -1;
            uint64_t *p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (p == MAP_FAILED)
                return -1;
            fill(p, CHUNK / 8);
            munmap(p, CHUNK);
        } else {
            fill(buf, CHUNK / 8);
            if (pwrite(fd, buf, CHUNK, 0) != (ssize_t)CHUNK)
                return -1;
        }
        close(fd);
    }
    double ms = cpu_ms() - t0;
    printf("%-7s %7.1f ms CPU for %llu MiB: %5.2f ns per 16 bytes\n", how, ms, TOTAL >> 20,
           ms * 1e6 / (double)(TOTAL / 16));
    for (size_t k = 0; k < TOTAL / CHUNK; k++) {
        snprintf(path, sizeof path, "%s/c%zu", dir, k);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/c.buffer", dir);
    unlink(path);
    if (buf)
        munmap(buf, CHUNK);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: spool_write DIR\n");
        return 2;
    }
    const char *ways[] = { "fresh", "reused", "anon" };
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 3; i++)
            if (run(argv[1], ways[i]) != 0) {
                perror("spool_write");
                return 1;
            }
    return 0;
}
