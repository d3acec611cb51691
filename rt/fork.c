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
#include <sys/file.h>
#include <sys/mman.h>

/* The parent's states are shared mappings of the parent's file, which the
 * parent goes on writing after the fork, links of its thread lists included:
 * the child must not read them. What it needs of them the parent takes in
 * the prepare handler, holding the thread lock: a copy of the forking
 * thread's state as at the fork, the list of its states the child unmaps,
 * and a descriptor of its fns file (which its exit may remove before the
 * child reads it). All private to the fork: released in the parent's handler
 * and by the child once used. The parent used to wait until the child had
 * made its whole spool (2.2-2.6 ms a fork); now it waits (a byte, or EOF if
 * the child dies first) only when the copy could not be made (no memory),
 * until the child has read the state from the parent's slot. */
static int fork_pipe[2] = { -1, -1 };

static struct {
    unsigned char *copy;      /* the parts of state_parts, one after another */
    size_t len;
    struct piano_ended_part parts[PIANO_STATE_PARTS];
    int self_anon;            /* the forking thread's state is anonymous: the child's own copy */
    struct piano_thread **drop;   /* the parent's states but the forking thread's own */
    size_t n_drop, drop_len;
    int fns_fd;
} fork_take = { .fns_fd = -1 };

static void fork_take_release(void)
{
    if (fork_take.copy)
        munmap(fork_take.copy, fork_take.len);
    fork_take.copy = NULL;
    fork_take.self_anon = 0;
    if (fork_take.drop)
        munmap(fork_take.drop, fork_take.drop_len);
    fork_take.drop = NULL;
    fork_take.n_drop = 0;
    if (fork_take.fns_fd >= 0)
        close(fork_take.fns_fd);
    fork_take.fns_fd = -1;
}

/* Lists the states (and their signal handlers' states) of list, but the
 * forking thread's own, into fork_take.drop (room for them counted). */
/* The parts of the forking thread's state the child needs: state_parts but
 * the histogram pages, which the child starts without (reset_counts): they
 * are most of a long-running thread's state (5 of 9 MB in a redis server
 * with every function instrumented), copied here while the program's fork
 * waits. The child's states file is new, so what is not written there reads
 * as zeros. */
static void fork_parts(const struct piano_thread *ts, struct piano_ended_part parts[PIANO_STATE_PARTS])
{
    state_parts(ts, parts);
    for (int i = 0; i < PIANO_STATE_PARTS; i++)
        if (parts[i].off == PIANO_OFF_PAGES || parts[i].off == PIANO_OFF_CARRY)
            parts[i].len = 0;
}

/* A part of the state that holds calling contexts (nodes). Of each, the
 * child needs only where it is in the tree (parent, function): it zeroes the
 * rest (reset_counts). The copy keeps those 8 of its 128 bytes. */
struct node_link {
    uint32_t parent, fn;
};

static int is_nodes(const struct piano_ended_part *part)
{
    return part->off >= PIANO_OFF_NODES && part->off < PIANO_OFF_FNS;
}

/* The bytes a part takes in the copy. */
static size_t copy_len(const struct piano_ended_part *part)
{
    return is_nodes(part) ? part->len / sizeof(struct piano_node) * sizeof(struct node_link) : part->len;
}

static void list_states(struct piano_thread *list, const struct piano_thread *self, size_t room)
{
    for (struct piano_thread *t = list; t; t = t->next) {
        if (t != self && fork_take.n_drop < room)
            fork_take.drop[fork_take.n_drop++] = t;
        if (t->sig && fork_take.n_drop < room)
            fork_take.drop[fork_take.n_drop++] = t->sig;
    }
}

void atfork_prepare(void)
{
    pthread_mutex_lock(&g.threads_lock);
    snap_atfork_prepare();
    int saved = errno;
    struct piano_thread *ts = piano_tls;
    int sandboxed = atomic_load(&g.sandboxed);   /* no system call (sandbox.c): the child records nothing */
    if (!g.off && !g.finished && !sandboxed) {
        fns_settle();   /* names registered before the first call, for the child's copy (copy_fns) */
        fork_take.fns_fd = run_open(PIANO_SPOOL_FNS, O_RDONLY);
        /* Held shared until the child has read it: the parent's folder, once
         * stored, may become a spare, which a start empties only when it can
         * hold fns alone (spool.h). */
        if (fork_take.fns_fd >= 0)
            flock(fork_take.fns_fd, LOCK_SH | LOCK_NB);
        size_t room = 0;
        for (int list = 0; list < 2; list++)
            for (struct piano_thread *t = list ? heap_kept_states() : g.threads; t; t = t->next)
                room += 1 + (t->sig != NULL);
        void *p = room ? mmap(NULL, room * sizeof *fork_take.drop, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                       : MAP_FAILED;
        if (p != MAP_FAILED) {   /* else the child keeps them mapped, unused, until it execs or ends */
            fork_take.drop = p;
            fork_take.drop_len = room * sizeof *fork_take.drop;
            list_states(g.threads, ts, room);
            list_states(heap_kept_states(), ts, room);
        }
    }
    if (ts && !g.off && !g.finished && !sandboxed) {
        fork_take.self_anon = (int)ts->anon;
        /* An anonymous state is the child's own copy after the fork. */
        if (!ts->anon) {
            fork_parts(ts, fork_take.parts);
            size_t len = 0;
            for (int i = 0; i < PIANO_STATE_PARTS; i++)
                len += copy_len(&fork_take.parts[i]);
            /* Populated: a page fault apiece costs more than the copy. */
            void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
            if (p != MAP_FAILED) {
                unsigned char *at = p;
                for (int i = 0; i < PIANO_STATE_PARTS; i++) {
                    const struct piano_ended_part *part = &fork_take.parts[i];
                    const char *from = (const char *)ts + part->off;
                    if (is_nodes(part)) {
                        for (size_t j = 0; j < part->len / sizeof(struct piano_node); j++) {
                            const struct piano_node *n = (const struct piano_node *)from + j;
                            struct node_link link = { n->parent, n->fn };
                            memcpy(at + j * sizeof link, &link, sizeof link);
                        }
                    } else {
                        memcpy(at, from, part->len);
                    }
                    at += copy_len(part);
                }
                fork_take.copy = p;
                fork_take.len = len;
            }
        }
        if (!ts->anon && !fork_take.copy && pipe2(fork_pipe, O_CLOEXEC) != 0)
            fork_pipe[0] = fork_pipe[1] = -1;
    }
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
    fork_take_release();
    errno = saved;
    snap_atfork_parent();
    pthread_mutex_unlock(&g.threads_lock);
}

/* Tells the parent that the child no longer reads the parent's memory. */
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

/* Appends to ours the whole records of the parent's fns file (fd) for the
 * functions registered before the fork (ids below next_fn, as the fork left
 * it here): the parent's other threads may be appending a record right now,
 * and the parent's later functions take ids this child gives its own. */
static void copy_fns(int fd)
{
    uint32_t before = atomic_load(&g.next_fn);
    char buf[PIANO_FNS_BATCH];
    size_t have = 0;
    off_t pos = 0;
    ssize_t n;
    while ((n = pread(fd, buf + have, sizeof buf - have, pos)) > 0) {
        pos += n;
        have += (size_t)n;
        size_t at = 0, out = 0;
        while (have - at >= sizeof(struct piano_spool_fn)) {
            struct piano_spool_fn r;
            memcpy(&r, buf + at, sizeof r);
            size_t size = sizeof r + r.name_len + r.file_len;
            if (r.name_len > PIANO_FN_TEXT_MAX || r.file_len > PIANO_FN_TEXT_MAX) {
                have = at = 0;   /* not records: stop */
                n = 0;
                break;
            }
            if (have - at < size)
                break;
            if (r.id < before) {
                memmove(buf + out, buf + at, size);
                out += size;
            }
            at += size;
        }
        if (out)
            append_fns(buf, out);
        if (!n)
            break;
        memmove(buf, buf + at, have - at);
        have -= at;
    }
}

/* Zeroes what a thread has recorded while keeping its calls in flight, which
 * go on in the child from the moment of the fork. */
static void reset_counts(struct piano_thread *ts, uint64_t now, int anon)
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
        fns[i].table = 0;   /* the tables are in the pages, zeroed below */
    }
    /* A state in the child's own file has no pages (fork_parts): zeros
     * already, untouched here. An anonymous one is the parent's, copied. */
    if (anon) {
        memset(PIANO_PAGES(ts), 0, (size_t)ts->n_pages * PIANO_PAGE_BYTES);
        if (ts->hist_carried)
            memset((char *)ts + PIANO_OFF_CARRY, 0, (size_t)ts->n_pages * PIANO_PAGE_BYTES);
    }
    ts->hist_carried = 0;
    ts->n_pages = 1;
    struct piano_slot *stack = PIANO_STACK(ts);
    uint32_t depth = piano_depth(ts->depth);
    for (uint32_t i = 1; i <= depth; i++) {
        stack[i].t0 = now;
        stack[i].child = 0;
    }
    ts->pend_fn = 0;   /* the parent stores its own last sample */
    ts->frame_paused = 0;   /* the frame's call, in flight, starts at the fork too */
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

/* Moves the forking thread's state, as the parent copied it at the fork,
 * into slot 0 of the child's own states file, mapped at the same address so
 * that nothing pointing into it changes. The frame buffer (the slot's tail)
 * starts anew there. */
static int clone_state(struct piano_thread *ts)
{
    int fd = run_open(PIANO_SPOOL_STATES, O_RDWR);
    if (fd < 0)
        return -1;
    int ok = states_extend(fd, piano_slot_offset(0) + PIANO_SLOT_SIZE) == 0;
    if (ok && fork_take.copy) {
        const unsigned char *at = fork_take.copy;
        for (int i = 0; ok && i < PIANO_STATE_PARTS; i++) {
            const struct piano_ended_part *part = &fork_take.parts[i];
            /* The contexts are laid out once mapped (below). */
            ok = !part->len || is_nodes(part) ||
                 write_all(fd, at, part->len, (off_t)(piano_slot_offset(0) + part->off)) == 0;
            at += copy_len(part);
        }
    } else if (ok) {
        struct piano_ended_part parts[PIANO_STATE_PARTS];   /* no copy (no memory): as it is now */
        fork_parts(ts, parts);
        for (int i = 0; ok && i < PIANO_STATE_PARTS; i++)
            ok = !parts[i].len ||
                 write_all(fd, (const char *)ts + parts[i].off, parts[i].len, (off_t)(piano_slot_offset(0) + parts[i].off)) == 0;
    }
    void *p = ok ? mmap(ts, PIANO_SLOT_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_NORESERVE, fd,
                        (off_t)piano_slot_offset(0))
                 : MAP_FAILED;
    close(fd);
    if (p == MAP_FAILED)
        return -1;
    madvise(p, PIANO_SLOT_SIZE, MADV_RANDOM);   /* as map_thread's */
    if (fork_take.copy) {   /* each context's place in the tree; its figures stay zeros */
        const unsigned char *at = fork_take.copy;
        for (int i = 0; i < PIANO_STATE_PARTS; i++) {
            const struct piano_ended_part *part = &fork_take.parts[i];
            if (is_nodes(part)) {
                struct piano_node *n = (struct piano_node *)((char *)ts + part->off);
                for (size_t j = 0; j < part->len / sizeof *n; j++) {
                    struct node_link link;
                    memcpy(&link, at + j * sizeof link, sizeof link);
                    n[j].parent = link.parent;
                    n[j].fn = link.fn;
                }
            }
            at += copy_len(part);
        }
    }
    return 0;
}

static void set_off(void)
{
    g.off = 1;
    __atomic_store_n(&__piano_on, 0, __ATOMIC_RELAXED);
}

/* The child failed to make its own run: it records nothing. */
static void child_off(int saved, int was_starting)
{
    fork_release_parent();
    fork_take_release();
    set_off();
    piano_tls = NULL;
    tls_starting = was_starting;
    errno = saved;
}

void atfork_child(void)
{
    pthread_mutex_init(&g.threads_lock, NULL);
    snap_fork_child();
    spans_fork_child(0);   /* the parent's spans file: never written here */
    held_forget();   /* the parent's run's files, kept once it changed its user (user.c) */
    int saved = errno;
    if (g.off || g.finished) {
        fork_release_parent();
        fork_take_release();
        errno = saved;
        return;
    }
    if (atomic_load(&g.sandboxed)) {   /* no system call (sandbox.c): it records nothing */
        set_off();
        piano_tls = NULL;
        errno = saved;
        return;
    }
    struct piano_thread *self = piano_tls;
    /* Until the child's own state is mapped, nothing is recorded (a signal
     * handler's calls would go into the parent's mapping). */
    int was_starting = tls_starting;
    piano_tls = NULL;
    tls_starting = 1;
    /* The other threads do not exist here, nor do signal handlers' calls in
     * flight; their states are the parent's: unmapped as the parent listed
     * them, never read nor written (the parent goes on with them; a perf page
     * of theirs is not in the child). */
    for (size_t i = 0; i < fork_take.n_drop; i++)
        munmap(fork_take.drop[i], PIANO_SLOT_SIZE);
    g.threads = NULL;
    for (struct piano_thread *t = g.kept, *next; t; t = next) {
        next = t->next;
        munmap(t, PIANO_SLOT_SIZE);
    }
    g.kept = NULL;
    heap_atfork_child();
    slots_forget(self);
    int self_anon = self && fork_take.self_anon;
    /* The parent's lock stays held through the parent's mapping. */
    if (g.lock_map)
        munmap(g.lock_map, PIANO_LOCK_MAP);
    g.lock_map = NULL;
    /* Without a copy of its state (no memory for it), the parent waits
     * until the child has read the state from the parent's slot. */
    int copied = !self || self_anon || fork_take.copy;
    if (copied)
        fork_release_parent();
    /* Forked by a process that changed its user (sshd's session child, as
     * the user, forking the user's command): the spool is the starting
     * user's, where this child can make no folder. It records nothing, and
     * says nothing into the program's stderr (its log). */
    if (geteuid() != g.start_euid) {
        child_off(saved, was_starting);
        return;
    }
    char parent_key[sizeof g.run.key];
    snprintf(parent_key, sizeof parent_key, "%s", g.run.key);
    if (make_spool(parent_key) != 0) {
        child_off(saved, was_starting);
        return;
    }
    /* The child knows every function the parent registered before the fork. */
    if (fork_take.fns_fd >= 0)
        copy_fns(fork_take.fns_fd);
    atomic_store(&g.next_thread, 1);
    atomic_store(&g.next_slot, 1);
    if (self) {
        if (!self_anon && clone_state(self) != 0) {
            say("piano: cannot copy thread state into %s: %s; the child is not recorded", g.dir,
                strerror(errno));
            child_off(saved, was_starting);
            return;
        }
        fork_release_parent();
        /* Now the child's own (or private, when anonymous). */
        self->sig = NULL;
        self->chunk = NULL;     /* the parent's buffer: the child starts its own in its slot */
        self->chunk_room = 0;   /* ... reserved in the child's states when it does */
        g.run.fork_tick = piano_now();
        save_run_header();
        reset_counts(self, g.run.fork_tick, self_anon);
        contexts_forked(g.run.fork_tick);
        self->next = NULL;
        g.threads = self;
    }
    fork_release_parent();
    fork_take_release();
    spans_fork_child(self ? g.run.fork_tick : piano_now());   /* the child's own spans file */
    piano_tls = self;
    tls_starting = was_starting;
    snap_start();   /* the child's own snapshots */
    errno = saved;
}
