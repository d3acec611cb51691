/*
 * fork.c - a forked child is a run of its own: it makes its own spool, copies
 * the forking thread's state into it and goes on recording from the fork.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

/* The forking thread's slot is shared with the child until the child has
 * copied it: the parent's forking thread waits for that (a byte, or EOF
 * if the child dies first) before it records anything more. */
static int fork_pipe[2] = { -1, -1 };

void atfork_prepare(void)
{
    pthread_mutex_lock(&g.threads_lock);
    snap_atfork_prepare();
    int saved = errno;
    if (piano_tls && !g.off && !g.finished && pipe2(fork_pipe, O_CLOEXEC) != 0)
        fork_pipe[0] = fork_pipe[1] = -1;
    errno = saved;
}

void atfork_parent(void)
{
    int saved = errno;
    if (fork_pipe[0] >= 0) {
        close(fork_pipe[1]);
        char c;
        while (read(fork_pipe[0], &c, 1) < 0 && errno == EINTR)
            ;
        close(fork_pipe[0]);
        fork_pipe[0] = fork_pipe[1] = -1;
    }
    errno = saved;
    snap_atfork_parent();
    pthread_mutex_unlock(&g.threads_lock);
}

/* Tells the parent that the child no longer reads the parent's files. */
static void fork_release_parent(void)
{
    if (fork_pipe[0] < 0)
        return;
    close(fork_pipe[0]);
    ssize_t w = write(fork_pipe[1], "", 1);
    (void)w;
    close(fork_pipe[1]);
    fork_pipe[0] = fork_pipe[1] = -1;
}

/* Appends the whole records of the parent's fns file to ours: the parent's
 * other threads may be appending a record right now. */
static void copy_fns(const char *from)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return;
    char buf[PIANO_FNS_BATCH];
    size_t have = 0;
    ssize_t n;
    while ((n = read(in, buf + have, sizeof buf - have)) > 0) {
        have += (size_t)n;
        size_t at = 0;
        while (have - at >= sizeof(struct piano_spool_fn)) {
            struct piano_spool_fn r;
            memcpy(&r, buf + at, sizeof r);
            size_t size = sizeof r + r.name_len + r.file_len;
            if (have - at < size)
                break;
            at += size;
        }
        if (at)
            append_fns(buf, at);
        memmove(buf, buf + at, have - at);
        have -= at;
    }
    close(in);
}

/* Zeroes what a thread has recorded while keeping its calls in flight, which
 * go on in the child from the moment of the fork. */
static void reset_counts(struct piano_thread *ts, uint64_t now)
{
    uint32_t nfn = atomic_load(&g.next_fn);
    if (nfn > PIANO_FN_CAP)
        nfn = PIANO_FN_CAP;
    struct piano_node *nodes = PIANO_NODES(ts);
    for (uint32_t i = 0; i < ts->n_nodes; i++)
        memset(&nodes[i].calls, 0, sizeof *nodes - offsetof(struct piano_node, calls));
    if (ts->contexts_truncated)
        for (uint32_t i = 0; i < nfn; i++)
            memset(&nodes[PIANO_NODE_CAP + i].calls, 0, sizeof *nodes - offsetof(struct piano_node, calls));
    struct piano_fnrec *fns = PIANO_FNS(ts);
    for (uint32_t i = 0; i < nfn; i++) {
        fns[i].frame_self = 0;
        memset(fns[i].page, 0, sizeof fns[i].page);
    }
    memset(PIANO_PAGES(ts), 0, (size_t)ts->n_pages * PIANO_PAGE_WORDS * sizeof(uint64_t));
    ts->n_pages = 1;
    struct piano_slot *stack = PIANO_STACK(ts);
    uint32_t depth = piano_depth(ts->depth);
    for (uint32_t i = 1; i <= depth; i++) {
        stack[i].t0 = now;
        stack[i].child = 0;
    }
    ts->pend_fn = 0;   /* the parent stores its own last sample */
    ts->heap_peak = 0;
    ts->heap_gen = 0;
    ts->allocs = ts->alloc_bytes = ts->frees = ts->free_bytes = 0;
    ts->frame_allocs = ts->frame_alloc_bytes = ts->frame_frees = ts->frame_free_bytes = 0;
    ts->frames = ts->frames_dropped = ts->deep_calls = ts->hist_dropped = ts->contexts_truncated = 0;
    frames_budget_reset(ts);
    ts->epoch++;
    ts->n_touched = 0;
    ts->chunks = 0;
    ts->chunk_used = 0;
    ts->thread = 0;
    ts->slot = 0;
    ts->tid = (uint32_t)syscall(SYS_gettid);
    cpu_state_forked(ts);
}

/* Moves the forking thread's state into slot 0 of the child's own states
 * file, mapped at the same address so that nothing pointing into it changes.
 * The frame buffer (the slot's tail) starts anew there. */
static int clone_state(struct piano_thread *ts)
{
    int fd = run_open(PIANO_SPOOL_STATES, O_RDWR);
    if (fd < 0)
        return -1;
    int ok = states_extend(fd, piano_slot_offset(0) + PIANO_SLOT_SIZE) == 0 &&
             write_state(fd, ts, piano_slot_offset(0)) == 0;
    void *p = ok ? mmap(ts, PIANO_SLOT_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_NORESERVE, fd,
                        (off_t)piano_slot_offset(0))
                 : MAP_FAILED;
    close(fd);
    if (p == MAP_FAILED)
        return -1;
    madvise(p, PIANO_SLOT_SIZE, MADV_RANDOM);   /* as map_thread's */
    return 0;
}

static void set_off(void)
{
    g.off = 1;
    __atomic_store_n(&__piano_on, 0, __ATOMIC_RELAXED);
}

void atfork_child(void)
{
    pthread_mutex_init(&g.threads_lock, NULL);
    snap_fork_child();
    int saved = errno;
    if (g.off || g.finished) {
        fork_release_parent();
        errno = saved;
        return;
    }
    struct piano_thread *self = piano_tls;
    /* The other threads do not exist here, nor do signal handlers' calls in
     * flight; their files belong to the parent. */
    for (struct piano_thread *t = g.threads, *next; t; t = next) {
        next = t->next;
        if (t->sig) {
            munmap(t->sig, PIANO_SLOT_SIZE);
            t->sig = NULL;
        }
        if (t == self)
            continue;
        cpu_state_dropped(t);
        munmap(t, PIANO_SLOT_SIZE);
    }
    g.threads = NULL;
    for (struct piano_thread *t = g.kept, *next; t; t = next) {
        next = t->next;
        munmap(t, PIANO_SLOT_SIZE);
    }
    g.kept = NULL;
    heap_atfork_child();
    slots_forget(self);
    if (self) {
        self->chunk = NULL;   /* the parent's buffer: the child starts its own in its slot */
        self->chunk_room = 0;   /* ... reserved in the child's states when it does */
    }
    char parent_key[sizeof g.run.key], parent_fns[PIANO_PATH_MAX];
    snprintf(parent_key, sizeof parent_key, "%s", g.run.key);
    int parent_fns_fit = spool_path(parent_fns, g.dir, PIANO_SPOOL_FNS) == 0;
    /* The parent's lock stays held through the parent's mapping. */
    if (g.lock_map)
        munmap(g.lock_map, PIANO_LOCK_MAP);
    g.lock_map = NULL;
    if (make_spool(parent_key) != 0) {
        fork_release_parent();
        set_off();
        piano_tls = NULL;
        errno = saved;
        return;
    }
    /* The child knows every function the parent registered. */
    if (parent_fns_fit)
        copy_fns(parent_fns);
    atomic_store(&g.next_thread, 1);
    atomic_store(&g.next_slot, 1);
    if (self) {
        if (!self->anon && clone_state(self) != 0) {
            fork_release_parent();
            say("piano: cannot copy thread state into %s: %s; the child is not recorded", g.dir,
                strerror(errno));
            set_off();
            piano_tls = NULL;
            errno = saved;
            return;
        }
        fork_release_parent();
        g.run.fork_tick = piano_now();
        save_run_header();
        reset_counts(self, g.run.fork_tick);
        self->next = NULL;
        g.threads = self;
    }
    fork_release_parent();
    snap_start();   /* the child's own snapshots */
    errno = saved;
}
