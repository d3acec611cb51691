/*
 * push.c - `piano-db push URL [RUN|TAG]`: a run's profiles to a Pyroscope
 * server, through its HTTP ingest API (POST /ingest?name=APP{labels}&from=
 * &until=&format=pprof, the pprof in a multipart form's `profile` field).
 *
 * One profile per sample-type group: wall (self time, as wall/nanoseconds,
 * and calls/count), cpu (self CPU time, cpu/nanoseconds) for a run that
 * measured it (PIANO_CPU), and memory (alloc_objects/count, alloc_space/bytes
 * and, for a run that tracked heap in use (PIANO_HEAP), inuse_objects/count,
 * inuse_space/bytes): see group_shape.
 *
 * Nothing is lost: a profile that could not be sent (no connection, a
 * timeout, a 5xx, 408 or 429) after a few tries goes into the pushes table
 * and is sent first by the next push to the same URL. A 4xx is the server
 * refusing that profile: said with its message, not retried, not kept (the
 * run is still in the database to push again).
 *
 * HTTP comes from libcurl: https and what a real network needs (proxies,
 * IPv6, TLS, chunked answers) for one dependency Debian ships. It is loaded
 * (dlopen) only here: linked, its libraries cost every other command 6 MB
 * and 29 shared objects at start.
 */
#include "piano_db.h"
#define CURL_DISABLE_TYPECHECK   /* its checking macros would call the linked names */
#include <curl/curl.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PUSH_TRIES = 3, PUSH_BACKOFF_MS = 250, FOLLOW_POLL_MS = 200, FOLLOW_LIVE_POLL_MS = 500, FOLLOW_RETRY_S = 10 };
enum { SENT, TRANSIENT, REFUSED };

static volatile sig_atomic_t stop_requested;

/* ---- libcurl, loaded ---- */
#define CURL_FNS(X) X(curl_global_init) X(curl_global_cleanup) X(curl_easy_init) X(curl_easy_cleanup) X(curl_easy_reset) X(curl_easy_setopt) X(curl_easy_perform) X(curl_easy_getinfo) X(curl_easy_strerror) X(curl_easy_escape) X(curl_free) X(curl_mime_init) X(curl_mime_addpart) X(curl_mime_name) X(curl_mime_filename) X(curl_mime_type) X(curl_mime_data) X(curl_mime_free) X(curl_slist_append) X(curl_slist_free_all) X(curl_url) X(curl_url_set) X(curl_url_get) X(curl_url_cleanup) X(curl_url_strerror)
static struct {
#define FIELD(f) __typeof__(&f) f;
    CURL_FNS(FIELD)
#undef FIELD
} cu;

static void load_curl(void)
{
    void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        pdb_die("push needs libcurl (Debian: apt-get install libcurl4): %s", dlerror());
#define LOAD(f)                                                                                          \
    if (!(*(void **)&cu.f = dlsym(h, #f)))                                                               \
        pdb_die("push: libcurl.so.4 lacks %s (7.87 or later is needed)", #f);
    CURL_FNS(LOAD)
#undef LOAD
}

typedef struct {
    char *url;          /* the server as normalised: the queue's key */
    char *ingest;       /* its /ingest endpoint */
    const char *tenant; /* X-Scope-OrgID, or NULL */
    long timeout_s;
    CURL *curl;
    int down;           /* a try failed for good: what is left is kept without trying */
    char why[512];      /* that failure */
    int refused;        /* profiles the server refused (4xx) */
} pusher;

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);   /* a signal cuts it short: the loops check stop_requested */
}

/* ---- the server's URL ---- */

/* Checks url and sets ps->url (scheme://host[:port][/path], no trailing '/'
 * nor "/ingest") and ps->ingest. Dies (usage) on anything else. */
static void set_url(pusher *ps, const char *url)
{
    for (const char *c = url; *c; c++)
        if ((unsigned char)*c <= ' ' || *c == 0x7f)
            pdb_usage_die("push: '%s' is not a URL (it holds a blank or a control character)", esc_ctrl(url));
    CURLU *h = cu.curl_url();
    char *scheme = NULL, *part = NULL, *norm = NULL, bad[256] = "";
    CURLUcode uc = h ? cu.curl_url_set(h, CURLUPART_URL, url, 0) : CURLUE_OUT_OF_MEMORY;
    if (uc)
        snprintf(bad, sizeof bad, "is not a URL (%s): give http://HOST:PORT", cu.curl_url_strerror(uc));
    else if (cu.curl_url_get(h, CURLUPART_SCHEME, &scheme, 0) || (strcmp(scheme, "http") && strcmp(scheme, "https")))
        snprintf(bad, sizeof bad, "only http:// and https:// URLs");
    else if (cu.curl_url_get(h, CURLUPART_QUERY, &part, 0) == CURLUE_OK ||
             cu.curl_url_get(h, CURLUPART_FRAGMENT, &part, 0) == CURLUE_OK)
        snprintf(bad, sizeof bad, "give the server without '?' or '#' (push adds /ingest?...)");
    else if (cu.curl_url_get(h, CURLUPART_URL, &norm, 0) != CURLUE_OK)
        snprintf(bad, sizeof bad, "is not a URL");
    cu.curl_free(scheme);
    cu.curl_free(part);
    cu.curl_url_cleanup(h);
    if (*bad)   /* all freed: sanitizers see no leak */
        pdb_usage_die("push: '%s' %s", url, bad);
    size_t n = strlen(norm);
    while (n && norm[n - 1] == '/')
        n--;
    if (n >= 7 && !strncmp(norm + n - 7, "/ingest", 7))
        n -= 7;
    ps->url = xmalloc(n + 1);
    memcpy(ps->url, norm, n);
    ps->url[n] = 0;
    ps->ingest = xmalloc(n + sizeof "/ingest");
    snprintf(ps->ingest, n + sizeof "/ingest", "%s/ingest", ps->url);
    cu.curl_free(norm);
}

/* ---- one POST ---- */

typedef struct {
    char b[1024];
    size_t n;
} answer;

static size_t keep_answer(char *d, size_t size, size_t nmemb, void *ud)
{
    answer *a = ud;
    size_t n = size * nmemb, room = sizeof a->b - 1 - a->n;
    memcpy(a->b + a->n, d, n < room ? n : room);
    a->n += n < room ? n : room;
    a->b[a->n] = 0;
    return n;
}

static int abort_on_stop(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    (void)ud, (void)a, (void)b, (void)c, (void)d;
    return stop_requested;   /* non-zero aborts the transfer: its profile is kept */
}

/* The first line of the server's answer, blanks trimmed, control characters
 * escaped, cut to 200 bytes: what a refusal says. */
static void first_line(const answer *a, char *out, size_t n)
{
    char line[201];
    size_t i = 0, j = 0;
    while (i < a->n && (a->b[i] == ' ' || a->b[i] == '\n' || a->b[i] == '\r' || a->b[i] == '\t'))
        i++;
    while (i < a->n && a->b[i] != '\n' && a->b[i] != '\r' && j < sizeof line - 1)
        line[j++] = a->b[i++];
    while (j && line[j - 1] == ' ')
        j--;
    line[j] = 0;
    char *e = esc_ctrl(line);
    snprintf(out, n, "%s", e);
    free(e);
}

/* One try: SENT, TRANSIENT or REFUSED (why says how it failed). */
static int post_once(pusher *ps, const char *tenant, const char *query, const unsigned char *b, size_t n,
                     char *why, size_t whyn)
{
    CURL *c = ps->curl;
    cu.curl_easy_reset(c);
    size_t ul = strlen(ps->ingest) + strlen(query) + 2;
    char *url = xmalloc(ul), err[CURL_ERROR_SIZE] = "";
    snprintf(url, ul, "%s?%s", ps->ingest, query);
    curl_mime *form = cu.curl_mime_init(c);
    curl_mimepart *part = cu.curl_mime_addpart(form);
    cu.curl_mime_name(part, "profile");
    cu.curl_mime_filename(part, "profile.pprof");
    cu.curl_mime_type(part, "application/octet-stream");
    cu.curl_mime_data(part, (const char *)b, n);
    struct curl_slist *hdr = cu.curl_slist_append(NULL, "Expect:"); /* no 100-continue wait */
    char org[300];
    if (tenant) {
        snprintf(org, sizeof org, "X-Scope-OrgID: %s", tenant);
        hdr = cu.curl_slist_append(hdr, org);
    }
    answer a = {.n = 0};
    cu.curl_easy_setopt(c, CURLOPT_URL, url);
    cu.curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    cu.curl_easy_setopt(c, CURLOPT_MIMEPOST, form);
    cu.curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
    cu.curl_easy_setopt(c, CURLOPT_USERAGENT, "piano-db/0.1.0");
    cu.curl_easy_setopt(c, CURLOPT_TIMEOUT, ps->timeout_s);
    cu.curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    cu.curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
    cu.curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_answer);
    cu.curl_easy_setopt(c, CURLOPT_WRITEDATA, &a);
    cu.curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    cu.curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, abort_on_stop);
    CURLcode rc = cu.curl_easy_perform(c);
    long status = 0;
    cu.curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    int r;
    char msg[256];
    first_line(&a, msg, sizeof msg);
    if (rc == CURLE_ABORTED_BY_CALLBACK) {
        snprintf(why, whyn, "interrupted");
        r = TRANSIENT;
    } else if (rc != CURLE_OK) {
        snprintf(why, whyn, "%s", *err ? err : cu.curl_easy_strerror(rc));
        r = TRANSIENT;
    } else {
        snprintf(why, whyn, "HTTP %ld%s%s", status, *msg ? ": " : "", msg);
        r = status >= 200 && status < 300 ? SENT
            : status >= 500 || status == 408 || status == 429 ? TRANSIENT : REFUSED;
    }
    cu.curl_slist_free_all(hdr);
    cu.curl_mime_free(form);
    free(url);
    return r;
}

/* Up to PUSH_TRIES tries, waiting PUSH_BACKOFF_MS, then twice as long,
 * between them: bounded by PUSH_TRIES x (timeout + backoff). */
static int post(pusher *ps, const char *tenant, const char *query, const unsigned char *b, size_t n, char *why,
                size_t whyn)
{
    int r = TRANSIENT, tries = 0;
    for (long wait = PUSH_BACKOFF_MS; tries < PUSH_TRIES && !stop_requested; wait *= 2) {
        if (tries)
            sleep_ms(wait);
        tries++;
        r = post_once(ps, tenant, query, b, n, why, whyn);
        if (r != TRANSIENT)
            return r;
    }
    size_t l = strlen(why);
    if (tries > 1)
        snprintf(why + l, whyn - l, " (%d tries)", tries);
    return r;
}

/* ---- the queue (the pushes table) ---- */

static void queue_add(pdb *p, pusher *ps, int64_t run, const char *kind, const char *query,
                      const unsigned char *b, size_t n, int tries, const char *why)
{
    sqlite3_stmt *st = pdb_prepare(p, "INSERT INTO pushes(url, tenant, run, query, profile, kind, tries, error) "
                                      "VALUES(?, ?, ?, ?, ?, ?, ?, ?)");
    pdb_bind_text(st, 1, ps->url);
    if (ps->tenant)
        pdb_bind_text(st, 2, ps->tenant);
    sqlite3_bind_int64(st, 3, run);
    pdb_bind_text(st, 4, query);
    sqlite3_bind_blob(st, 5, b, (int)n, SQLITE_TRANSIENT);
    pdb_bind_text(st, 6, kind);
    sqlite3_bind_int(st, 7, tries);
    if (why)
        pdb_bind_text(st, 8, why);
    pdb_step(p, st);
    sqlite3_finalize(st);
}

static int64_t queue_count(pdb *p, const char *url)
{
    sqlite3_stmt *st = pdb_prepare(p, "SELECT count(*) FROM pushes WHERE url = ?");
    pdb_bind_text(st, 1, url);
    pdb_step(p, st);
    int64_t n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

static void queue_done(pdb *p, int64_t id, int sent_or_refused, const char *why)
{
    sqlite3_stmt *st = pdb_prepare(p, sent_or_refused ? "DELETE FROM pushes WHERE id = ?1"
                                                      : "UPDATE pushes SET tries = tries + ?2, error = ?3 WHERE id = ?1");
    sqlite3_bind_int64(st, 1, id);
    if (!sent_or_refused) {
        sqlite3_bind_int(st, 2, PUSH_TRIES);
        pdb_bind_text(st, 3, why);
    }
    pdb_step(p, st);
    sqlite3_finalize(st);
}

/* Sends the profiles kept for ps->url, oldest first, until one fails for
 * good. Returns how many went. */
static int64_t queue_flush(pdb *p, pusher *ps)
{
    int64_t sent = 0, *ids = NULL;
    size_t n = 0, cap = 0;
    sqlite3_stmt *st = pdb_prepare(p, "SELECT id FROM pushes WHERE url = ? ORDER BY id");
    pdb_bind_text(st, 1, ps->url);
    while (pdb_step(p, st) == SQLITE_ROW) {
        if (n == cap)
            ids = xrealloc(ids, (cap = cap ? 2 * cap : 16) * sizeof *ids);
        ids[n++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    st = pdb_prepare(p, "SELECT run, kind, query, profile, tenant FROM pushes WHERE id = ?");
    for (size_t i = 0; i < n && !ps->down && !stop_requested; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, ids[i]);
        if (pdb_step(p, st) != SQLITE_ROW)
            continue;   /* another push sent it meanwhile */
        const char *tenant = sqlite3_column_type(st, 4) == SQLITE_NULL ? NULL : pdb_col_text(st, 4);
        char why[512];
        int r = post(ps, tenant, pdb_col_text(st, 2), sqlite3_column_blob(st, 3),
                     (size_t)sqlite3_column_bytes(st, 3), why, sizeof why);
        if (r == REFUSED) {
            fprintf(stderr, "piano-db: push: %s refused run %lld's kept %s profile: %s; not kept\n", ps->url,
                    (long long)sqlite3_column_int64(st, 0), pdb_col_text(st, 1), why);
            ps->refused++;
        } else if (r == TRANSIENT) {
            ps->down = 1;
            snprintf(ps->why, sizeof ps->why, "%s", why);
        }
        sent += r == SENT;
        sqlite3_reset(st);
        queue_done(p, ids[i], r != TRANSIENT, why);
    }
    sqlite3_finalize(st);
    free(ids);
    return sent;
}

/* ---- what a run's profiles are called ---- */

typedef struct {
    char *s;
    size_t n, cap;
} text;

static void add(text *t, const char *s, size_t n)
{
    if (t->n + n + 1 > t->cap)
        t->s = xrealloc(t->s, t->cap = (t->n + n + 1) * 2);
    memcpy(t->s + t->n, s, n);
    t->s[t->n += n] = 0;
}

static void adds(text *t, const char *s)
{
    add(t, s, strlen(s));
}

static int app_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
}

/* What cannot stand in a label value of the name (Pyroscope splits it at
 * ',' and '}') nor survive its trimming. */
static int value_char(char c)
{
    return (unsigned char)c > ' ' && c != 0x7f && !strchr(",{}=+", c);
}

/* --app, else the base name of the run's program, its other characters '_'. */
static void add_app(text *t, const pdb_opts *o, const run_info *r)
{
    if (o->app) {
        adds(t, o->app);
        return;
    }
    const char *cmd = r->command, *base = cmd;
    size_t len = strcspn(cmd, " ");
    for (size_t i = 0; i < len; i++)
        if (cmd[i] == '/')
            base = cmd + i + 1;
    if (base == cmd + len)
        adds(t, "piano");
    for (; base < cmd + len; base++)
        add(t, app_char(*base) ? base : "_", 1);
}

/* APP{KEY=VALUE,...,tag=TAGS}: --label's in their order, then the run's tags
 * (joined by '+', their other characters '_') unless a --label is "tag". */
static char *series_name(pdb *p, const pdb_opts *o, const run_info *r)
{
    text t = {0};
    add_app(&t, o, r);
    adds(&t, "{");
    int tag_given = 0;
    for (int i = 0; i < o->nlabels; i++) {
        adds(&t, i ? "," : "");
        adds(&t, o->labels[i]);
        tag_given |= !strncmp(o->labels[i], "tag=", 4);
    }
    sqlite3_stmt *st = pdb_prepare(p, "SELECT name FROM tags WHERE run = ? ORDER BY name");
    sqlite3_bind_int64(st, 1, r->id);
    for (int k = 0; !tag_given && pdb_step(p, st) == SQLITE_ROW; k++) {
        adds(&t, k ? "+" : o->nlabels ? ",tag=" : "tag=");
        for (const char *c = pdb_col_text(st, 0); *c; c++)
            add(&t, value_char(*c) ? c : "_", 1);
    }
    sqlite3_finalize(st);
    adds(&t, "}");
    return t.s;
}

/* name=...&from=...&until=...&format=pprof: from the start rounded down to
 * the second, until its end rounded up (at least from + 1). */
static char *ingest_query(CURL *c, const char *name, const run_info *r)
{
    int64_t from = r->started_ns / 1000000000, end = r->started_ns + (r->duration_ns > 0 ? r->duration_ns : 0);
    int64_t until = end / 1000000000 + (end % 1000000000 != 0);
    if (until <= from)
        until = from + 1;
    char *esc = cu.curl_easy_escape(c, name, 0);
    if (!esc)
        pdb_die("out of memory");
    size_t n = strlen(esc) + 96;
    char *q = xmalloc(n);
    snprintf(q, n, "name=%s&from=%lld&until=%lld&format=pprof", esc, (long long)from, (long long)until);
    cu.curl_free(esc);
    return q;
}

/* ---- pushing a run ---- */

/* The groups, each a profile of its own. Pyroscope names a pprof's series
 * after its sample types (any "wall": wall; "cpu": process_cpu; alloc_* or
 * inuse_*: memory), so each group shows as the profile type Go programs
 * have: wall, process_cpu:cpu:nanoseconds:cpu:nanoseconds, and memory with
 * Go's heap profile's four types (its period type space/bytes). Heap in use
 * rides in the memory group, not a group of its own: its series would be
 * memory:inuse_* either way, and one profile keeps a run's allocations and
 * the heap they left in use together (sent, or kept, as one). */
enum { GROUP_WALL, GROUP_CPU, GROUP_MEMORY, NGROUPS };
static const char *const group_kind[NGROUPS] = {"wall", "cpu", "memory"};
static const pprof_value wall_values[] = {{"wall", "nanoseconds", PPROF_SELF_NS}, {"calls", "count", PPROF_CALLS}};
static const pprof_value cpu_values[] = {{"cpu", "nanoseconds", PPROF_CPU_NS}};
static const pprof_value memory_values[] = {{"alloc_objects", "count", PPROF_ALLOCS},
                                            {"alloc_space", "bytes", PPROF_ALLOC_BYTES},
                                            {"inuse_objects", "count", PPROF_INUSE_OBJECTS},
                                            {"inuse_space", "bytes", PPROF_INUSE_BYTES}};

/* Group g's shape for a tree: NULL when it did not measure g's figures (CPU
 * time without PIANO_CPU; in use without PIANO_HEAP: only alloc_*). */
static const pprof_shape *group_shape(int g, const ctree *t, int inuse_known, pprof_shape *s)
{
    switch (g) {
    case GROUP_WALL: *s = (pprof_shape){wall_values, 2, "wall", "nanoseconds", "wall", 1}; break;
    case GROUP_CPU: *s = (pprof_shape){cpu_values, 1, "cpu", "nanoseconds", "cpu", 1}; break;
    default: *s = (pprof_shape){memory_values, inuse_known ? 4 : 2, "space", "bytes", "alloc_space", 1}; break;
    }
    return g == GROUP_CPU && !(t->cpu_known && t->n > 1) ? NULL : s;
}

/* The profiles of tree t (run r's, or a window as a run) per group: gz[g]
 * NULL where g was not measured or left no sample. */
static void build_groups(const ctree *t, const run_info *r, int inuse_known, unsigned char *gz[NGROUPS],
                         size_t len[NGROUPS])
{
    for (int g = 0; g < NGROUPS; g++) {
        pprof_shape s;
        gz[g] = group_shape(g, t, inuse_known, &s) ? pprof_build(t, r, &s, &len[g]) : NULL;
    }
}

/* Sends (or keeps) one profile of run r; adds its kind to sent or kept. */
static void push_profile(pdb *p, pusher *ps, const run_info *r, int g, const char *query, const unsigned char *b,
                         size_t n, text *sent, text *kept)
{
    char why[512] = "";
    int tried = !ps->down && !stop_requested;
    int res = tried ? post(ps, ps->tenant, query, b, n, why, sizeof why) : TRANSIENT;
    text *to = res == SENT ? sent : res == TRANSIENT ? kept : NULL;
    if (to) {
        adds(to, to->n ? ", " : "");
        adds(to, group_kind[g]);
    }
    if (res == REFUSED) {
        fprintf(stderr, "piano-db: push: %s refused run %lld's %s profile: %s; not kept\n", ps->url,
                (long long)r->id, group_kind[g], why);
        ps->refused++;
    } else if (res == TRANSIENT) {
        if (tried) {
            ps->down = 1;
            snprintf(ps->why, sizeof ps->why, "%s", why);
        }
        queue_add(p, ps, r->id, group_kind[g], query, b, n, tried ? PUSH_TRIES : 0, tried ? why : NULL);
    }
}

static void push_run(pdb *p, pusher *ps, const pdb_opts *o, int64_t id)
{
    run_info r;
    pdb_run_load(p, id, &r);
    ctree t;
    ctree_load(p, id, -1, &t);
    char *name = series_name(p, o, &r), *query = ingest_query(ps->curl, name, &r);
    text sent = {0}, kept = {0};
    unsigned char *gz[NGROUPS];
    size_t len[NGROUPS];
    build_groups(&t, &r, r.heap_peak_bytes >= 0, gz, len);
    int any = 0;
    for (int g = 0; g < NGROUPS; g++) {
        if (gz[g])
            push_profile(p, ps, &r, g, query, gz[g], len[g], &sent, &kept);
        any |= gz[g] != NULL;
        free(gz[g]);
    }
    if (sent.n)
        printf("pushed run %lld to %s as %s: %s\n", (long long)id, ps->url, name, sent.s);
    if (kept.n)
        printf("kept run %lld's %s profile%s for the next push\n", (long long)id, kept.s, strchr(kept.s, ',') ? "s" : "");
    if (!any)
        printf("run %lld recorded no calls and no allocations: nothing to push\n", (long long)id);
    fflush(stdout);
    free(sent.s);
    free(kept.s);
    free(name);
    free(query);
    ctree_free(&t);
    pdb_run_free(&r);
}

/* ---- --follow-all, --follow ---- */

static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void catch_stop(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;   /* no SA_RESTART: the poll's sleep ends at once */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* A window's profiles, made while the live runs are read, sent after. */
typedef struct {
    char *query, *label;
    unsigned char *gz[NGROUPS];
    size_t len[NGROUPS];
} window_push;

/* The profiles of run r's window w (nothing when it recorded nothing). */
static void make_window(pdb *p, pusher *ps, const pdb_opts *o, const run_info *r, pdb_window *w, window_push *out)
{
    memset(out, 0, sizeof *out);
    ctree t;
    pdb_window_tree(p, r, w, &t);
    run_info in = *r;   /* the window as a run of its own: its start and length */
    in.started_ns = r->started_ns + w->a_ns;
    in.duration_ns = w->b_ns - w->a_ns;
    char *name = series_name(p, o, r);
    out->query = ingest_query(ps->curl, name, &in);
    free(name);
    char what[64];
    snprintf(what, sizeof what, "%.3f-%.3f s%s", (double)w->a_ns / 1e9, (double)w->b_ns / 1e9,
             w->b_end ? " (its end)" : "");
    out->label = xstrdup(what);
    build_groups(&t, &in, 0, out->gz, out->len);   /* snapshots hold no heap in use */
    ctree_free(&t);
}

/* The windows of run `key` after its first *done snapshots, up to its latest
 * (to its end when it has ended): into *out (grown, *n). Snapshots are
 * counted, not matched by time: a run's clock calibration, so its times,
 * move a little when it is stored. Returns 1 when the run has ended, 0 while
 * it runs, -1 when it is not there. */
static int collect_windows(pdb *p, pusher *ps, const pdb_opts *o, const char *key, int64_t *done, int64_t *run_id,
                           window_push **out, size_t *n)
{
    sqlite3_stmt *st = pdb_prepare(p, "SELECT id, status FROM runs WHERE key = ?");
    pdb_bind_text(st, 1, key);
    int found = pdb_step(p, st) == SQLITE_ROW;
    int64_t id = found ? sqlite3_column_int64(st, 0) : -1;
    int ended = found && strcmp(pdb_col_text(st, 1), "running") != 0;
    sqlite3_finalize(st);
    if (!found)
        return -1;
    *run_id = id;
    run_info r;
    pdb_run_load(p, id, &r);
    /* From the last snapshot sent (the start before the first). */
    st = pdb_prepare(p, "SELECT t_ns FROM snapshot_times WHERE run = ? ORDER BY t_ns LIMIT -1 OFFSET ?");
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, *done > 0 ? *done - 1 : 0);
    int64_t from = 0;
    if (*done > 0 && pdb_step(p, st) == SQLITE_ROW)
        from = sqlite3_column_int64(st, 0);
    for (int more = 1; more;) {
        pdb_window w = { .set = 1, .a_ns = from };
        if (pdb_step(p, st) == SQLITE_ROW) {
            w.b_ns = sqlite3_column_int64(st, 0);
            ++*done;
        } else if (ended) {
            w.b_ns = r.duration_ns > from ? r.duration_ns : from;
            w.b_end = 1;
            more = 0;
        } else {
            break;
        }
        *out = xrealloc(*out, (*n + 1) * sizeof **out);
        make_window(p, ps, o, &r, &w, &(*out)[(*n)++]);
        from = w.b_ns;
    }
    sqlite3_finalize(st);
    pdb_run_free(&r);
    return ended;
}

/* Sends (or keeps) the windows made, and frees them. */
static void send_windows(pdb *p, pusher *ps, int64_t run, const char *key, window_push *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        text sent = {0}, kept = {0};
        run_info r = {.id = run};
        for (int g = 0; g < NGROUPS; g++)
            if (v[i].gz[g])
                push_profile(p, ps, &r, g, v[i].query, v[i].gz[g], v[i].len[g], &sent, &kept);
        if (sent.n)
            printf("pushed run %s window %s: %s\n", key, v[i].label, sent.s);
        if (kept.n)
            printf("kept run %s window %s: %s, for the next push\n", key, v[i].label, kept.s);
        fflush(stdout);
        free(sent.s);
        free(kept.s);
        free(v[i].query);
        free(v[i].label);
        for (int g = 0; g < NGROUPS; g++)
            free(v[i].gz[g]);
    }
}

/* --follow: the live run `key`'s snapshots, each window pushed as it
 * appears, until the run ends (then the rest to its end) or SIGINT/SIGTERM.
 * The live runs are read in a transaction never committed (pdb_live_reload),
 * the profiles made there; it is rolled back before anything is sent or
 * kept, so the queue is written for good. */
static void follow_run(pdb *p, pusher *ps, const pdb_opts *o, const char *key)
{
    catch_stop();
    printf("following run %s: pushing each new snapshot's window to %s (Ctrl-C stops)\n", key, ps->url);
    fflush(stdout);
    int64_t done = 0, run = -1;
    size_t windows = 0;
    double retry_at = pdb_now_s() + FOLLOW_RETRY_S;
    int ended = 0;
    while (!stop_requested && !ended) {
        pdb_recover_pending(p);   /* a process that died: its run stored from its spool */
        pdb_live_reload(p);
        window_push *v = NULL;
        size_t n = 0;
        int r = collect_windows(p, ps, o, key, &done, &run, &v, &n);
        if (!sqlite3_get_autocommit(p->db))
            sqlite3_exec(p->db, "ROLLBACK", NULL, NULL, NULL);
        if (r < 0)
            pdb_die("push --follow: run %s is gone (neither running nor stored in %s)", key, p->path);
        ended = r == 1;
        if (n || pdb_now_s() >= retry_at) {
            ps->down = 0;   /* new windows or the time to retry: try the server again */
            queue_flush(p, ps);
            retry_at = pdb_now_s() + FOLLOW_RETRY_S;
        }
        send_windows(p, ps, run, key, v, n);
        windows += n;
        free(v);
        if (!ended)
            sleep_ms(FOLLOW_LIVE_POLL_MS);
    }
    printf("pushed %zu window%s of run %s%s\n", windows, windows == 1 ? "" : "s", key,
           stop_requested ? " (stopped)" : ended ? " (it ended)" : "");
}

/* Pushes each run stored from now on (complete, or recovered from a crashed
 * process's spool) until SIGINT or SIGTERM, or --count runs. What the server
 * could not take is tried again with the next run, or every FOLLOW_RETRY_S. */
static void follow_all(pdb *p, pusher *ps, const pdb_opts *o)
{
    catch_stop();
    sqlite3_stmt *st = pdb_prepare(p, "SELECT coalesce(max(id), 0) FROM runs");
    pdb_step(p, st);
    int64_t last = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    st = pdb_prepare(p, "SELECT id FROM runs WHERE id > ? ORDER BY id LIMIT 1");
    printf("following %s: pushing each new run to %s (Ctrl-C stops)\n", p->path, ps->url);
    fflush(stdout);
    long done = 0;
    double retry_at = pdb_now_s() + FOLLOW_RETRY_S, recover_at = 0;
    while (!stop_requested && (!o->count_set || done < o->count)) {
        if (pdb_now_s() >= recover_at) {   /* crashed processes' runs, once a second */
            pdb_recover_pending(p);
            recover_at = pdb_now_s() + 1;
        }
        sqlite3_bind_int64(st, 1, last);
        int64_t id = pdb_step(p, st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
        sqlite3_reset(st);   /* no read transaction held between polls */
        if (id < 0 && (pdb_now_s() < retry_at || !queue_count(p, ps->url))) {
            sleep_ms(FOLLOW_POLL_MS);
            continue;
        }
        ps->down = 0;   /* a new run or the time to retry: try the server again */
        queue_flush(p, ps);
        if (id >= 0) {
            push_run(p, ps, o, id);
            last = id;
            done++;
        }
        retry_at = pdb_now_s() + FOLLOW_RETRY_S;
    }
    sqlite3_finalize(st);
    printf("pushed %ld new run%s%s\n", done, done == 1 ? "" : "s", stop_requested ? " (stopped)" : "");
}

/* ---- the command ---- */

/* --label KEY=VALUE: KEY a Pyroscope label name (letters, digits, '_', not
 * first a digit, not "__" reserved), VALUE printable without ",{}=+" or blanks,
 * each KEY once. */
static void check_labels(const pdb_opts *o)
{
    for (int i = 0; i < o->nlabels; i++) {
        const char *kv = o->labels[i], *eq = strchr(kv, '=');
        if (!eq || eq == kv)
            pdb_usage_die("push: --label wants KEY=VALUE, not '%s'", esc_ctrl(kv));
        int ok = !(kv[0] >= '0' && kv[0] <= '9') && strncmp(kv, "__", 2);
        for (const char *c = kv; c < eq; c++)
            ok &= app_char(*c) && *c != '-' && *c != '.';
        if (!ok)
            pdb_usage_die("push: label '%.*s': a key is letters, digits and '_' (not first a digit, not '__...')",
                          (int)(eq - kv), esc_ctrl(kv));
        ok = eq[1] != 0;
        for (const char *c = eq + 1; *c; c++)
            ok &= value_char(*c);
        if (!ok)
            pdb_usage_die("push: label '%s': a value is printable, without blanks or any of , { } = +", esc_ctrl(kv));
        for (int j = 0; j < i; j++)
            if (!strncmp(o->labels[j], kv, (size_t)(eq - kv) + 1))
                pdb_usage_die("push: label '%.*s' given twice", (int)(eq - kv), kv);
    }
}

static void check_options(const pdb_opts *o)
{
    if (o->npos < 1)
        pdb_usage_die("push: give the server: piano-db push URL [RUN|TAG] (e.g. http://localhost:4040)");
    check_labels(o);
    int ok = o->app && *o->app;
    for (const char *c = o->app; ok && *c; c++)
        ok = app_char(*c);
    if (o->app && !ok)
        pdb_usage_die("push: --app '%s': letters, digits, '_', '-' and '.' only", esc_ctrl(o->app));
    if (o->tenant && (!*o->tenant || has_ctrl(o->tenant) || strlen(o->tenant) > 200))
        pdb_usage_die("push: --tenant wants a tenant id (printable, up to 200 bytes)");
    if (o->timeout_set && o->timeout == 0)
        pdb_usage_die("push: --timeout wants seconds >= 1");
    if ((o->follow_all || o->kept) && o->npos > 1)
        pdb_usage_die("push: --%s takes no RUN", o->follow_all ? "follow-all" : "kept");
    if (o->follow_all + o->kept + o->follow > 1)
        pdb_usage_die("push: --follow, --follow-all and --kept exclude each other");
    if (o->count_set && !o->follow_all)
        pdb_usage_die("push: --count goes with --follow-all");
}

int cmd_push(pdb *p, const pdb_opts *o)
{
    check_options(o);
    load_curl();
    if (cu.curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        pdb_die("push: cannot start libcurl");
    pusher ps = {.tenant = o->tenant, .timeout_s = o->timeout_set ? o->timeout : 10};
    set_url(&ps, o->pos[0]);
    if (!(ps.curl = cu.curl_easy_init()))
        pdb_die("push: cannot start libcurl");
    int64_t id = -1;
    char *follow_key = NULL;
    if (o->follow) {   /* a live run: read with the live runs, known by its key */
        pdb_live_reload(p);
        pdb_pick_runs(p, o, 1, 1, "push URL [RUN|TAG] --follow", &id);
        run_info r;
        pdb_run_load(p, id, &r);
        follow_key = xstrdup(r.key);
        pdb_run_free(&r);
        if (!sqlite3_get_autocommit(p->db))
            sqlite3_exec(p->db, "ROLLBACK", NULL, NULL, NULL);
        id = -1;
    } else if (!o->follow_all && !o->kept) {   /* the run first: a wrong name sends nothing */
        pdb_pick_runs(p, o, 1, 1, "push URL [RUN|TAG]", &id);
    }
    int64_t flushed = queue_flush(p, &ps);
    if (flushed)
        printf("sent %lld kept profile%s to %s\n", (long long)flushed, flushed == 1 ? "" : "s", ps.url);
    else if (o->kept && !ps.down)
        printf("no profiles kept for %s\n", ps.url);
    if (follow_key)
        follow_run(p, &ps, o, follow_key);
    else if (o->follow_all)
        follow_all(p, &ps, o);
    else if (id >= 0)
        push_run(p, &ps, o, id);
    int64_t left = queue_count(p, ps.url);
    if (left)
        fprintf(stderr, "piano-db: push: %s: %s; %lld profile%s kept in %s for the next push\n", ps.url,
                *ps.why ? ps.why : "interrupted", (long long)left, left == 1 ? "" : "s", p->path);
    cu.curl_easy_cleanup(ps.curl);
    cu.curl_global_cleanup();
    free(ps.url);
    free(ps.ingest);
    free(follow_key);
    return left ? EXIT_UNSENT : ps.refused ? EXIT_ERR : 0;
}
