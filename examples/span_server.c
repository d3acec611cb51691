/*
 * span_server.c - spans on a small event-loop server (doc/spans.md).
 *
 * One thread serves requests on 127.0.0.1 (a port the system picks) with
 * poll(); a client thread in the same program sends REQUESTS requests over
 * CONNS connections, one in flight per connection. A GET waits on a timer
 * (2 ms, a timerfd), a PUT on a backend reached through a second socket (a
 * thread that answers after 1 ms). Each request is a span: opened when its
 * line is read (its method a field: request{method=GET}), entered while the
 * server starts its wait and while it answers, idle while it waits, closed
 * when answered. Functions alone would show
 * parse_request and respond taking microseconds; the spans show each request's
 * milliseconds, and how little of them is work.
 *
 *   PIANO_FNS=parse_request,respond,backend_send build/bin/piano-cc -O2 examples/span_server.c \
 *     -o /tmp/span_server -pthread && PIANO_DB=/tmp/spans.db /tmp/span_server
 *   build/bin/piano-db report --spans --db /tmp/spans.db
 */
#include <piano/span.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define REQUESTS 200
#define CONNS 4

struct request {
    piano_span *span;   /* NULL: none in flight on this connection */
    int fd;             /* its connection */
    int timer;          /* a GET's timer, or -1 */
    int is_get;
};
static struct request reqs[CONNS];
static int backend_fd[2];   /* the server's end [0], the backend's [1] */
static uint16_t port;

static void die(const char *what)
{
    perror(what);
    exit(1);
}

/* ---------------------------------------------------------------- the server */

__attribute__((noinline)) int parse_request(const char *line)
{
    return strncmp(line, "GET", 3) == 0;
}

__attribute__((noinline)) void respond(struct request *r)
{
    if (write(r->fd, "ok\n", 3) != 3)
        die("write");
}

__attribute__((noinline)) void backend_send(int conn)
{
    uint32_t id = (uint32_t)conn;
    if (write(backend_fd[0], &id, sizeof id) != sizeof id)
        die("backend write");
}

/* A request's line arrived on connection c: its span opens, named by its
 * method, is entered while its wait starts, and waits (idle) for a timer or
 * the backend. */
static void request_start(int c, const char *line)
{
    struct request *r = &reqs[c];
    r->span = piano_span_open("request");
    r->is_get = parse_request(line);   /* the field, before the first enter: the frame's name */
    piano_span_field(r->span, "method", r->is_get ? "GET" : "PUT");
    piano_span_enter(r->span);
    if (r->is_get) {
        r->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
        struct itimerspec t = {{0, 0}, {0, 2000000}};
        if (r->timer < 0 || timerfd_settime(r->timer, 0, &t, NULL) != 0)
            die("timerfd");
    } else {
        backend_send(c);
    }
    piano_span_exit(r->span);
}

/* What request c waited for is there: the span is entered again, answers, closes. */
static void request_finish(int c)
{
    struct request *r = &reqs[c];
    piano_span_enter(r->span);
    respond(r);
    piano_span_exit(r->span);
    piano_span_close(r->span);
    r->span = NULL;
    if (r->timer >= 0)
        close(r->timer);
    r->timer = -1;
}

static int serve(int lfd)
{
    int served = 0, accepted = 0;
    while (served < REQUESTS) {
        struct pollfd p[2 + 2 * CONNS];
        int n = 0, who[2 + 2 * CONNS];
        p[n] = (struct pollfd){.fd = lfd, .events = POLLIN};
        who[n++] = -1;
        p[n] = (struct pollfd){.fd = backend_fd[0], .events = POLLIN};
        who[n++] = -2;
        for (int c = 0; c < accepted; c++) {
            if (reqs[c].fd < 0)
                continue;
            if (!reqs[c].span)
                p[n] = (struct pollfd){.fd = reqs[c].fd, .events = POLLIN}, who[n++] = c;
            else if (reqs[c].timer >= 0)
                p[n] = (struct pollfd){.fd = reqs[c].timer, .events = POLLIN}, who[n++] = CONNS + c;
        }
        if (poll(p, (nfds_t)n, 20000) <= 0)
            die("poll (nothing for 20 s)");
        for (int i = 0; i < n; i++) {
            if (!(p[i].revents & (POLLIN | POLLHUP)))
                continue;
            if (who[i] == -1) {
                int fd = accept(lfd, NULL, NULL);
                if (fd < 0 || accepted == CONNS)
                    die("accept");
                reqs[accepted++] = (struct request){.fd = fd, .timer = -1};
            } else if (who[i] == -2) {
                uint32_t id;
                if (read(backend_fd[0], &id, sizeof id) != sizeof id || id >= CONNS)
                    die("backend read");
                request_finish((int)id);
                served++;
            } else if (who[i] >= CONNS) {
                uint64_t ticks;
                if (read(p[i].fd, &ticks, sizeof ticks) != sizeof ticks)
                    die("timer read");
                request_finish(who[i] - CONNS);
                served++;
            } else {
                char line[16];
                ssize_t k = read(p[i].fd, line, sizeof line - 1);
                if (k == 0) {   /* the client is done with this connection */
                    close(p[i].fd);
                    reqs[who[i]].fd = -1;
                    continue;
                }
                if (k < 0)
                    die("request read");
                line[k] = 0;
                request_start(who[i], line);
            }
        }
    }
    return served;
}

/* ---------------------------------------------------------------- the backend and the client */

static void *backend(void *arg)
{
    (void)arg;
    uint32_t id;
    while (read(backend_fd[1], &id, sizeof id) == sizeof id) {
        struct timespec t = {0, 1000000};
        while (nanosleep(&t, &t) != 0)
            ;
        if (write(backend_fd[1], &id, sizeof id) != sizeof id)
            break;
    }
    return NULL;
}

static void *client(void *arg)
{
    (void)arg;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fds[CONNS];
    for (int c = 0; c < CONNS; c++)
        if ((fds[c] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
            connect(fds[c], (struct sockaddr *)&a, sizeof a) != 0)
            die("connect");
    for (int i = 0; i < REQUESTS; i++) {   /* connection i % CONNS, one request in flight on each */
        int fd = fds[i % CONNS];
        char reply[4];
        if (i >= CONNS && read(fd, reply, 3) != 3)
            die("reply");
        if (write(fd, i % 2 ? "PUT\n" : "GET\n", 4) != 4)
            die("request write");
    }
    for (int c = 0; c < CONNS; c++) {
        char reply[4];
        if (read(fds[c], reply, 3) != 3)
            die("last reply");
        close(fds[c]);
    }
    return NULL;
}

int main(void)
{
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(lfd, CONNS) != 0 ||
        getsockname(lfd, (struct sockaddr *)&a, &len) != 0)
        die("listen");
    port = ntohs(a.sin_port);
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, backend_fd) != 0)
        die("socketpair");
    pthread_t b, c;
    pthread_create(&b, NULL, backend, NULL);
    pthread_create(&c, NULL, client, NULL);
    int served = serve(lfd);
    pthread_join(c, NULL);
    shutdown(backend_fd[0], SHUT_RDWR);
    pthread_join(b, NULL);
    printf("served %d\n", served);
    return 0;
}
