/*
 * push.c - `piano-db push URL [RUN|TAG]`: a run's profiles to a Pyroscope
 * server, through its connect Push API (POST /push.v1.PusherService/Push, a
 * push.v1.PushRequest in protobuf: one series, its labels, the gzipped pprof).
 *
 * Why that API and not /ingest (read in grafana/pyroscope at 3fe6a457,
 * pkg/ingester/pyroscope/ingest_handler.go, ingest_adapter.go,
 * pkg/distributor/distributor.go, pkg/validation/validate.go):
 *  - /ingest with format=pprof takes the whole body as the pprof (a
 *    multipart body then fails to decode: 422); without format, a multipart
 *    body's `profile` field. Either works, but /ingest answers 422 for
 *    everything that goes wrong after the body is read: a profile it refuses
 *    (decoding, validation) and a backend that failed (ingesters down, a
 *    write that timed out), only a rate limit gets 429. A client cannot tell
 *    "never send this again" from "send it later".
 *  - Push answers as connect does: 400 (invalid_argument) for a profile or
 *    labels it refuses, 429 (resource_exhausted) for limits, 401 for a
 *    missing or bad tenant, 5xx (unavailable, internal, deadline) for a
 *    backend failure. So a 400 is final and a 5xx is kept, as for any server.
 *    It is what Grafana Alloy and the SDKs use and Grafana Cloud serves.
 *  - With Push the labels are piano's to set (/ingest derived them from the
 *    name): __name__ (wall, process_cpu, memory, spans: the profile type's name, as
 *    /ingest's metricName gives it), service_name (the app), __delta__=false
 *    (a run's figures are totals, not deltas to merge), then the --label's
 *    and tag.
 *
 * One profile per sample-type group: wall (self time, as wall/nanoseconds,
 * and calls/count), cpu (self CPU time, cpu/nanoseconds) for a run that
 * measured it (PIANO_CPU), and memory (alloc_objects/count, alloc_space/bytes
 * and, for a run that tracked heap in use (PIANO_HEAP), inuse_objects/count,
 * inuse_space/bytes), and for a run with spans a fourth, spans (wall,
 * wall_busy, wall_idle: see group_kind): see group_shape.
 *
 * What the server refuses is checked before sending (its defaults, limits.go
 * at the same commit), each with one line: the app and label names, label
 * values valid UTF-8, at most 30 label names, the tenant's characters and
 * length; a profile of more than 16,000 samples has its lightest calling
 * contexts folded into their callers (totals kept); one over 4 MiB
 * uncompressed is not sent. The server refuses a profile whose time_nanos is
 * more than 1 hour old or 10 minutes ahead: a profile is sent with its run's
 * start as its time, or, when that is out of the window (an old run, a
 * tagged baseline, a profile kept through an outage), with the time it is
 * sent.
 *
 * Nothing is lost: a profile that could not be sent (no connection, a
 * timeout, a 5xx, 408 or 429) after a few tries, or that the server wants
 * credentials for (401, 403), goes into the pushes table and is sent first by
 * the next push to the same URL. Rows kept before this API was used (an
 * /ingest query) hold the same name, so they are sent the same way. Other
 * 4xx answers are the server refusing that profile: said with its message,
 * not retried, not kept (the run is still in the database to push again).
 *
 * Never twice: Pyroscope adds up what it receives. The pushed table records,
 * per server and tenant, each run sent or kept (whole, or its --follow
 * windows up to a snapshot); pushing it again sends nothing (--again does),
 * or only the windows a stopped --follow did not send.
 *
 * Credentials (http://USER:TOKEN@HOST, --auth USER:TOKEN, PIANO_PUSH_AUTH, or
 * ~/.netrc) are used, never stored nor printed: the URL is kept and shown
 * without them.
 *
 * HTTP comes from libcurl: https and what a real network needs (proxies,
 * IPv6, TLS, chunked answers) for one dependency Debian ships. It is loaded
 * (dlopen) only here: linked, its libraries cost every other command 6 MB
 * and 29 shared objects at start.
 */
#include "piano_db.h"
#include "piano_schema.h"
#define CURL_DISABLE_TYPECHECK   /* its checking macros would call the linked names */
#include <curl/curl.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PUSH_TRIES = 3, PUSH_BACKOFF_MS = 250, FOLLOW_POLL_MS = 200, FOLLOW_LIVE_POLL_MS = 500, FOLLOW_RETRY_S = 10 };
enum { SENT, TRANSIENT, REFUSED };

/* Pyroscope's defaults (pkg/validation/limits.go): what it refuses. */
enum { MAX_SAMPLES = 16000, MAX_LABEL_NAMES = 30, MAX_NAME_LEN = 1024, MAX_VALUE_LEN = 2048, MAX_TENANT_LEN = 150 };
#define MAX_PROFILE_BYTES (4 << 20)
/* Its ingestion window (-validation.reject-older-than 1h, -newer-than 10m),
 * with 5 minutes for the clocks' difference and the time to send. */
#define WINDOW_OLD_NS (55LL * 60 * 1000000000)
#define WINDOW_NEW_NS (5LL * 60 * 1000000000)
#define PUSH_PATH "/push.v1.PusherService/Push"

static volatile sig_atomic_t stop_requested;

/* ---- libcurl, loaded ---- */
#define CURL_FNS(X) X(curl_global_init) X(curl_global_cleanup) X(curl_easy_init) X(curl_easy_cleanup) X(curl_easy_reset) X(curl_easy_setopt) X(curl_easy_perform) X(curl_easy_getinfo) X(curl_easy_strerror) X(curl_easy_escape) X(curl_easy_unescape) X(curl_free) X(curl_slist_append) X(curl_slist_free_all) X(curl_url) X(curl_url_set) X(curl_url_get) X(curl_url_cleanup) X(curl_url_strerror)
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
    char *url;          /* the server as normalised, without credentials: the queue's key */
    char *endpoint;     /* its Push API */
    char *user, *pass;  /* basic authentication, or NULL */
    const char *tenant; /* X-Scope-OrgID, or NULL */
    int again;          /* --again: send runs pushed before */
    long restamped;     /* profiles sent with the time they were sent */
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

/* ---- text ---- */

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

/* ---- the server's URL ---- */

/* url as it may be shown: a password in it (scheme://USER:PASS@HOST)
 * replaced by "***", control characters escaped. A new string. */
static char *redact_url(const char *url)
{
    const char *auth = strstr(url, "://");
    auth = auth ? auth + 3 : url;
    size_t alen = strcspn(auth, "/?#"), ulen = alen;
    while (ulen && auth[ulen - 1] != '@')
        ulen--;
    text t = {0};
    if (!ulen) {
        adds(&t, url);
    } else {   /* USERINFO@ at auth: keep the user, hide what follows its ':' */
        const char *colon = memchr(auth, ':', ulen - 1);
        add(&t, url, (size_t)((colon ? colon : auth + ulen - 1) - url));
        adds(&t, colon ? ":***" : "");
        adds(&t, auth + ulen - 1);
    }
    char *e = esc_ctrl(t.s);
    free(t.s);
    return e;
}

/* Checks url and sets ps->url (scheme://host[:port][/path], no credentials,
 * no trailing '/' nor "/ingest" nor the Push API's path), ps->endpoint, and
 * ps->user and ps->pass from credentials in it. Dies (usage) on anything
 * else, the URL shown without its password. */
static void set_url(pusher *ps, const char *url)
{
    char *shown = redact_url(url);
    for (const char *c = url; *c; c++)
        if ((unsigned char)*c <= ' ' || *c == 0x7f)
            pdb_usage_die("push: '%s' is not a URL (it holds a blank or a control character)", shown);
    CURLU *h = cu.curl_url();
    char *scheme = NULL, *part = NULL, *norm = NULL, bad[256] = "";
    CURLUcode uc = h ? cu.curl_url_set(h, CURLUPART_URL, url, 0) : CURLUE_OUT_OF_MEMORY;
    if (uc)
        snprintf(bad, sizeof bad, "is not a URL (%s): give http://HOST:PORT", cu.curl_url_strerror(uc));
    else if (cu.curl_url_get(h, CURLUPART_SCHEME, &scheme, 0) || (strcmp(scheme, "http") && strcmp(scheme, "https")))
        snprintf(bad, sizeof bad, "only http:// and https:// URLs");
    else if (cu.curl_url_get(h, CURLUPART_QUERY, &part, 0) == CURLUE_OK ||
             cu.curl_url_get(h, CURLUPART_FRAGMENT, &part, 0) == CURLUE_OK)
        snprintf(bad, sizeof bad, "give the server without '?' or '#'");
    if (!*bad) {   /* credentials: used, kept out of the URL that is stored and shown */
        char *v = NULL;
        if (cu.curl_url_get(h, CURLUPART_USER, &v, CURLU_URLDECODE) == CURLUE_OK) {
            ps->user = xstrdup(v);
            cu.curl_free(v);
            v = NULL;
        }
        if (cu.curl_url_get(h, CURLUPART_PASSWORD, &v, CURLU_URLDECODE) == CURLUE_OK) {
            ps->pass = xstrdup(v);
            cu.curl_free(v);
        }
        cu.curl_url_set(h, CURLUPART_USER, NULL, 0);
        cu.curl_url_set(h, CURLUPART_PASSWORD, NULL, 0);
        cu.curl_url_set(h, CURLUPART_OPTIONS, NULL, 0);
        if (cu.curl_url_get(h, CURLUPART_URL, &norm, 0) != CURLUE_OK)
            snprintf(bad, sizeof bad, "is not a URL");
    }
    cu.curl_free(scheme);
    cu.curl_free(part);
    cu.curl_url_cleanup(h);
    if (*bad)   /* all freed: sanitizers see no leak */
        pdb_usage_die("push: '%s' %s", shown, bad);
    free(shown);
    size_t n = strlen(norm);
    while (n && norm[n - 1] == '/')
        n--;
    if (n >= 7 && !strncmp(norm + n - 7, "/ingest", 7))
        n -= 7;
    else if (n >= sizeof PUSH_PATH - 1 && !strncmp(norm + n - (sizeof PUSH_PATH - 1), PUSH_PATH, sizeof PUSH_PATH - 1))
        n -= sizeof PUSH_PATH - 1;
    ps->url = xmalloc(n + 1);
    memcpy(ps->url, norm, n);
    ps->url[n] = 0;
    ps->endpoint = xmalloc(n + sizeof PUSH_PATH);
    snprintf(ps->endpoint, n + sizeof PUSH_PATH, "%s%s", ps->url, PUSH_PATH);
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

/* What a refusal says: a connect error's "message" (its JSON answer), else
 * the first line of the answer; blanks trimmed, control characters escaped,
 * cut to 300 bytes. */
static void first_line(const answer *a, char *out, size_t n)
{
    char line[301];
    size_t i = 0, j = 0;
    const char *m = a->b[0] == '{' ? strstr(a->b, "\"message\"") : NULL;
    if (m) {
        m += 9;
        m += strspn(m, " \t\r\n:");
    }
    if (m && *m == '"') {   /* a JSON string: \" and \\ unescaped, other escapes left as they are */
        for (m++; *m && *m != '"' && j < sizeof line - 1; m++)
            line[j++] = *m == '\\' && m[1] ? *++m : *m;
        line[j] = 0;
        char *e = esc_ctrl(line);
        snprintf(out, n, "%s", e);
        free(e);
        return;
    }
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

/* ---- the request: a push.v1.PushRequest ---- */

static void pb_varint(text *t, uint64_t v)
{
    char b[10];
    size_t n = 0;
    do {
        b[n++] = (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    add(t, b, n);
}

static void pb_bytes(text *t, unsigned field, const void *p, size_t n)
{
    pb_varint(t, (uint64_t)field << 3 | 2);
    pb_varint(t, n);
    add(t, p, n);
}

/* types.v1.LabelPair {name = 1, value = 2} as field 1 of a RawProfileSeries. */
static void pb_label(text *series, const char *name, const char *value, size_t vlen)
{
    text l = {0};
    pb_bytes(&l, 1, name, strlen(name));
    pb_bytes(&l, 2, value, vlen);
    pb_bytes(series, 1, l.s, l.n);
    free(l.s);
}

/* What Pyroscope calls a group's profiles (__name__): /ingest's names for
 * them (pkg/og/convert/pprof/profile.go, metricName). */
static const char *type_name(const char *kind)
{
    return !strcmp(kind, "cpu") ? "process_cpu" : kind;   /* wall, memory, spans */
}

/* The series name from a kept query ("name=APP{k=v,...}&from=...", as
 * /ingest took it; pushes made since keep the same form): a new string, or
 * NULL. */
static char *query_name(CURL *c, const char *query)
{
    const char *v = !strncmp(query, "name=", 5) ? query + 5 : strstr(query, "&name=");
    if (!v)
        return NULL;
    v += v[0] == '&' ? 6 : 0;
    int len = (int)strcspn(v, "&");
    char *raw = cu.curl_easy_unescape(c, v, len, NULL);
    char *name = raw ? xstrdup(raw) : NULL;
    cu.curl_free(raw);
    return name;
}

/* The PushRequest for one profile: its series (labels from name and kind),
 * its pprof (restamped when its time is out of the server's window). Returns
 * 0, or -1 with why (the profile is not to be sent: REFUSED); *restamped:
 * it goes with the time it is sent. */
static int make_request(pusher *ps, const char *query, const char *kind, const unsigned char *gz, size_t n,
                        text *req, int *restamped, char *why, size_t whyn)
{
    *restamped = 0;
    char *name = query_name(ps->curl, query), *brace = name ? strchr(name, '{') : NULL;
    size_t nl = brace ? strlen(brace) : 0;
    if (!brace || nl < 2 || brace[nl - 1] != '}' || brace == name) {
        snprintf(why, whyn, "a kept profile without a series name (query '%.100s')", query);
        free(name);
        return -1;
    }
    pprof_info pi;
    if (pprof_inspect(gz, n, MAX_PROFILE_BYTES, &pi) < 0) {
        snprintf(why, whyn, "not a gzipped pprof profile");
        free(name);
        return -1;
    }
    if (pi.too_big || pi.samples > MAX_SAMPLES) {
        if (pi.too_big)   /* said before sending: what the server would answer */
            snprintf(why, whyn, "not sent: over 4 MiB uncompressed (Pyroscope's limit)");
        else
            snprintf(why, whyn, "not sent: %zu samples (Pyroscope takes up to %d)", pi.samples, MAX_SAMPLES);
        free(pi.raw);
        free(name);
        return -1;
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t now_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    unsigned char *stamped = NULL;
    size_t slen = 0;
    if (pi.time_ns > 0 && (pi.time_ns < now_ns - WINDOW_OLD_NS || pi.time_ns > now_ns + WINDOW_NEW_NS)) {
        stamped = pprof_restamp(&pi, now_ns, &slen);
        *restamped = 1;
    }
    free(pi.raw);
    text series = {0}, sample = {0};
    pb_label(&series, "__name__", type_name(kind), strlen(type_name(kind)));
    pb_label(&series, "service_name", name, (size_t)(brace - name));
    pb_label(&series, "__delta__", "false", 5);
    brace[nl - 1] = 0;
    for (char *kv = brace + 1; *kv;) {
        size_t len = strcspn(kv, ",");
        char *eq = memchr(kv, '=', len);
        if (eq) {
            *eq = 0;
            pb_label(&series, kv, eq + 1, len - (size_t)(eq + 1 - kv));
        }
        kv += len + (kv[len] == ',');
    }
    pb_bytes(&sample, 1, stamped ? stamped : gz, stamped ? slen : n);   /* RawSample.raw_profile */
    pb_bytes(&series, 2, sample.s, sample.n);                         /* RawProfileSeries.samples */
    req->n = 0;
    pb_bytes(req, 1, series.s, series.n);                             /* PushRequest.series */
    free(series.s);
    free(sample.s);
    free(stamped);
    free(name);
    return 0;
}

/* One try: SENT, TRANSIENT or REFUSED (why says how it failed); *again: a
 * TRANSIENT worth another try now (not 401, 403). */
static int post_once(pusher *ps, const char *tenant, const text *req, char *why, size_t whyn, int *again)
{
    CURL *c = ps->curl;
    cu.curl_easy_reset(c);
    char err[CURL_ERROR_SIZE] = "";
    struct curl_slist *hdr = cu.curl_slist_append(NULL, "Expect:"); /* no 100-continue wait */
    hdr = cu.curl_slist_append(hdr, "Content-Type: application/proto");
    hdr = cu.curl_slist_append(hdr, "Connect-Protocol-Version: 1");
    char org[300];
    if (tenant) {
        snprintf(org, sizeof org, "X-Scope-OrgID: %s", tenant);
        hdr = cu.curl_slist_append(hdr, org);
    }
    answer a = {.n = 0};
    cu.curl_easy_setopt(c, CURLOPT_URL, ps->endpoint);
    cu.curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    cu.curl_easy_setopt(c, CURLOPT_POST, 1L);
    cu.curl_easy_setopt(c, CURLOPT_POSTFIELDS, req->s);
    cu.curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->n);
    cu.curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
    cu.curl_easy_setopt(c, CURLOPT_NETRC, (long)CURL_NETRC_OPTIONAL);   /* ~/.netrc, when it names the host */
    if (ps->user) {
        cu.curl_easy_setopt(c, CURLOPT_USERNAME, ps->user);
        cu.curl_easy_setopt(c, CURLOPT_PASSWORD, ps->pass ? ps->pass : "");
    }
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
    char msg[320];
    first_line(&a, msg, sizeof msg);
    *again = 1;
    if (rc == CURLE_ABORTED_BY_CALLBACK) {
        snprintf(why, whyn, "interrupted");
        r = TRANSIENT;
    } else if (rc != CURLE_OK) {
        snprintf(why, whyn, "%s", *err ? err : cu.curl_easy_strerror(rc));
        r = TRANSIENT;
    } else {
        snprintf(why, whyn, "HTTP %ld%s%s", status, *msg ? ": " : "", msg);
        r = status >= 200 && status < 300 ? SENT
            : status >= 500 || status == 408 || status == 429 || status == 401 || status == 403 ? TRANSIENT
                                                                                                : REFUSED;
        if (status == 401 || status == 403) {   /* kept until the credentials (or tenant) are right */
            *again = 0;
            size_t l = strlen(why);
            snprintf(why + l, whyn - l, " (credentials: --auth, PIANO_PUSH_AUTH or ~/.netrc; the tenant: --tenant)");
        } else if (status == 404) {
            size_t l = strlen(why);
            snprintf(why + l, whyn - l, " (no Pyroscope Push API at %s)", ps->url);
        }
    }
    cu.curl_slist_free_all(hdr);
    return r;
}

/* Up to PUSH_TRIES tries, waiting PUSH_BACKOFF_MS, then twice as long,
 * between them: bounded by PUSH_TRIES x (timeout + backoff). */
static int post(pusher *ps, const char *tenant, const char *query, const char *kind, const unsigned char *b,
                size_t n, char *why, size_t whyn)
{
    text req = {0};
    int restamped;
    if (make_request(ps, query, kind, b, n, &req, &restamped, why, whyn) < 0)
        return REFUSED;
    int r = TRANSIENT, tries = 0, again = 1;
    for (long wait = PUSH_BACKOFF_MS; tries < PUSH_TRIES && again && !stop_requested; wait *= 2) {
        if (tries)
            sleep_ms(wait);
        tries++;
        r = post_once(ps, tenant, &req, why, whyn, &again);
        if (r != TRANSIENT)
            break;
    }
    free(req.s);
    ps->restamped += r == SENT && restamped;
    size_t l = strlen(why);
    if (r == TRANSIENT && tries > 1)
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
        int r = post(ps, tenant, pdb_col_text(st, 2), pdb_col_text(st, 1), sqlite3_column_blob(st, 3),
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

/* A label name's characters (labelset.IsLabelNameRuneAllowed), not first a
 * digit (validation.SanitizeLegacyLabelName). */
static int name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

/* An app name's (service_name's): labelset.IsServiceNameRuneAllowed. */
static int app_char(char c)
{
    return name_char(c) || c == '-' || c == '/';
}

/* What cannot stand in a label value of the name (kept rows split it at ','
 * and '}', as /ingest did) nor survive its trimming. */
static int value_char(char c)
{
    return (unsigned char)c > ' ' && c != 0x7f && !strchr(",{}=+", c);
}

/* The length of the valid UTF-8 sequence at s (1 to 4), or 0. */
static int utf8_len(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    int n = u[0] < 0x80 ? 1 : u[0] >= 0xc2 && u[0] <= 0xdf ? 2 : u[0] >= 0xe0 && u[0] <= 0xef ? 3
            : u[0] >= 0xf0 && u[0] <= 0xf4 ? 4 : 0;
    for (int i = 1; i < n; i++)
        if ((u[i] & 0xc0) != 0x80)
            return 0;
    if ((n == 3 && ((u[0] == 0xe0 && u[1] < 0xa0) || (u[0] == 0xed && u[1] >= 0xa0))) ||
        (n == 4 && ((u[0] == 0xf0 && u[1] < 0x90) || (u[0] == 0xf4 && u[1] >= 0x90))))
        return 0;   /* overlong, surrogates, past U+10FFFF */
    return n;
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
    size_t tag_at = 0;
    for (int k = 0; !tag_given && pdb_step(p, st) == SQLITE_ROW; k++) {
        if (!k)
            tag_at = t.n + (o->nlabels ? 5 : 4);
        adds(&t, k ? "+" : o->nlabels ? ",tag=" : "tag=");
        for (const char *c = pdb_col_text(st, 0); *c;) {   /* what a value cannot hold: '_' */
            int u = (unsigned char)*c < 0x80 ? value_char(*c) : utf8_len(c);
            add(&t, u ? c : "_", u ? (size_t)u : 1);
            c += u ? u : 1;
        }
    }
    sqlite3_finalize(st);
    if (tag_at && t.n - tag_at > MAX_VALUE_LEN) {   /* Pyroscope's limit for a value: the tags cut */
        size_t n = tag_at + MAX_VALUE_LEN;
        while ((t.s[n] & 0xc0) == 0x80)   /* not inside a character */
            n--;
        t.s[t.n = n] = 0;
    }
    adds(&t, "}");
    return t.s;
}

/* name=...&from=...&until=...: from the start rounded down to the second,
 * until its end rounded up (at least from + 1). What a kept row holds (rows
 * kept for /ingest also had &format=pprof): the series name, and the times
 * the profile covers for whoever reads the table. */
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
    snprintf(q, n, "name=%s&from=%lld&until=%lld", esc, (long long)from, (long long)until);
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
enum { GROUP_WALL = PPROF_GROUP_WALL, GROUP_CPU = PPROF_GROUP_CPU, GROUP_MEMORY = PPROF_GROUP_MEMORY,
       GROUP_SPANS = PPROF_NGROUPS, NGROUPS };
/* A run with spans has a fourth profile, its spans' times as export's pprof
 * has them (tracing-prof's wall, wall_busy, wall_idle, the span the root
 * frame). Its series is named "spans", not "wall": Pyroscope names a series
 * __name__:type:unit:period, and the wall group's self time already goes as
 * wall:wall:nanoseconds:wall:nanoseconds; the span's wall under the same name
 * would be added up with it. So: spans:wall, spans:wall_busy, spans:wall_idle
 * (each :nanoseconds:wall:nanoseconds). */
static const char *const group_kind[NGROUPS] = {"wall", "cpu", "memory", "spans"};

/* Group g's shape for a tree: NULL when it did not measure g's figures (CPU
 * time without PIANO_CPU; in use without PIANO_HEAP: only alloc_*). */
static const pprof_shape *group_shape(int g, const ctree *t, int inuse_known, pprof_shape *s)
{
    /* the sample types of pprof.c's table, per group (the group's own shape: CPU time is asked below) */
    static pprof_value values[NGROUPS][PPROF_NSAMPLES];
    static const pprof_value span_values[] = {{"wall", "nanoseconds", PPROF_WALL},
                                              {"wall_busy", "nanoseconds", PPROF_WALL_BUSY},
                                              {"wall_idle", "nanoseconds", PPROF_WALL_IDLE}};
    if (g == GROUP_SPANS) {   /* only asked of a tree with its spans added */
        *s = (pprof_shape){span_values, 3, "wall", "nanoseconds", "wall", 1};
        return s;
    }
    int n = pprof_values(g, 1, inuse_known, values[g]);
    switch (g) {
    case GROUP_WALL: *s = (pprof_shape){values[g], n, "wall", "nanoseconds", "wall", 1}; break;
    case GROUP_CPU: *s = (pprof_shape){values[g], n, "cpu", "nanoseconds", "cpu", 1}; break;
    default: *s = (pprof_shape){values[g], n, "space", "bytes", "alloc_space", 1}; break;
    }
    return g == GROUP_CPU && !(t->cpu_known && t->n > 1) ? NULL : s;
}

/* Moves node i's own figures onto node to. */
static void fold_into(cnode *to, cnode *c)
{
    to->calls += c->calls, to->self_ns += c->self_ns, to->allocs += c->allocs, to->alloc_bytes += c->alloc_bytes;
    to->frees += c->frees, to->free_bytes += c->free_bytes, to->cpu_ns += c->cpu_ns;
    to->inuse_objects += c->inuse_objects, to->inuse_bytes += c->inuse_bytes;
    to->peak_inuse_bytes += c->peak_inuse_bytes;
    to->busy_ns += c->busy_ns, to->idle_ns += c->idle_ns;
    c->calls = c->self_ns = c->allocs = c->alloc_bytes = c->frees = c->free_bytes = c->cpu_ns = 0;
    c->inuse_objects = c->inuse_bytes = c->peak_inuse_bytes = 0;
    c->busy_ns = c->idle_ns = 0;
}

static const int64_t *fold_weight;   /* for by_weight: each node's weight */
static int by_weight(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    if (fold_weight[i] != fold_weight[j])
        return fold_weight[i] > fold_weight[j] ? -1 : 1;
    return i - j;   /* a parent before its children (they come after it) */
}

/* When shape s would make more than MAX_SAMPLES samples of t: t's lightest
 * calling contexts (by the weight of their subtree in s's first figure, then
 * calls) folded into their nearest kept caller, so a sample of that caller
 * holds them; every figure's totals are kept. Top-level functions are never
 * folded (nothing above them). Returns how many were folded; -1 when the
 * top-level functions alone are too many. */
static long fold_light(ctree *t, const pprof_shape *s)
{
    size_t samples = 0, roots = 0;
    for (size_t i = 1; i < t->n; i++) {
        int any = 0;
        for (int v = 0; v < s->nvalues && !any; v++)
            any = pprof_field(&t->v[i], s->values[v].field) != 0;
        samples += any;
        roots += t->v[i].parent == 0;
    }
    if (samples <= MAX_SAMPLES)
        return 0;
    if (roots > MAX_SAMPLES)
        return -1;
    int64_t *w = xmalloc(t->n * sizeof *w);
    for (size_t i = 0; i < t->n; i++) {
        const cnode *c = &t->v[i];
        int f = s->values[0].field;
        w[i] = f == PPROF_SELF_NS ? c->self_ns : f == PPROF_CPU_NS ? c->cpu_ns : f == PPROF_WALL ? pprof_field(c, f)
                                                                                                 : c->alloc_bytes;
        w[i] = w[i] * 4 + (c->calls > 0 || c->allocs > 0);   /* ties: what happened at all first */
    }
    for (size_t i = t->n - 1; i >= 1; i--)   /* subtree weights: children come after their parent */
        if (t->v[i].parent > 0)
            w[t->v[i].parent] += w[i];
    /* Kept: the top-level functions, then the heaviest contexts (a parent
     * always before its children: its weight is at least theirs, ties by
     * index), up to MAX_SAMPLES nodes in all. */
    char *keep = calloc(t->n, 1);
    int *order = xmalloc(t->n * sizeof *order);
    size_t m = 0, kept = 0;
    for (size_t i = 1; i < t->n; i++) {
        if (t->v[i].parent == 0)
            keep[i] = 1, kept++;
        else
            order[m++] = (int)i;
    }
    fold_weight = w;
    qsort(order, m, sizeof *order, by_weight);
    for (size_t k = 0; k < m && kept < MAX_SAMPLES; k++)
        if (keep[t->v[order[k]].parent])
            keep[order[k]] = 1, kept++;
    long folded = 0;
    for (size_t i = t->n - 1; i >= 1; i--) {
        if (keep[i])
            continue;
        int to = t->v[i].parent;
        while (!keep[to])
            to = t->v[to].parent;
        fold_into(&t->v[to], &t->v[i]);
        folded++;
    }
    free(keep);
    free(order);
    free(w);
    return folded;
}

/* The profiles of tree t (run r's, or a window as a run) per group: gz[g]
 * NULL where g was not measured or left no sample. Past MAX_SAMPLES, a copy
 * of t with its lightest contexts folded (said on stdout). */
static void build_group(const ctree *t, const run_info *r, int inuse_known, int g, unsigned char *gz[NGROUPS],
                        size_t len[NGROUPS])
{
    pprof_shape s;
    gz[g] = NULL;
    if (!group_shape(g, t, inuse_known, &s))
        return;
    ctree f = *t;
    f.v = xmalloc(t->n * sizeof *f.v);
    memcpy(f.v, t->v, t->n * sizeof *f.v);
    long folded = fold_light(&f, &s);
    if (folded < 0)
        fprintf(stderr, "piano-db: push: run %lld's %s profile has more than %d top-level functions "
                        "(Pyroscope takes up to %d samples a profile): not sent\n",
                (long long)r->id, group_kind[g], MAX_SAMPLES, MAX_SAMPLES);
    else
        gz[g] = pprof_build(&f, r, &s, &len[g]);
    if (folded > 0)
        printf("run %lld's %s profile: its %ld lightest calling contexts folded into their callers "
               "(Pyroscope takes up to %d samples a profile; totals kept)\n",
               (long long)r->id, group_kind[g], folded, MAX_SAMPLES);
    free(f.v);
}

/* The groups of functions' figures (not spans: gz[GROUP_SPANS] NULL). */
static void build_groups(const ctree *t, const run_info *r, int inuse_known, unsigned char *gz[NGROUPS],
                         size_t len[NGROUPS])
{
    for (int g = 0; g < NGROUPS; g++)
        if (g == GROUP_SPANS)
            gz[g] = NULL;
        else
            build_group(t, r, inuse_known, g, gz, len);
}

/* A window's profiles, made while the live runs are read, sent after. */
typedef struct {
    char *query, *label;
    unsigned char *gz[NGROUPS];
    size_t len[NGROUPS];
} window_push;

/* ---- never twice: the pushed table ---- */

enum { NOT_PUSHED, WINDOWS_PUSHED, WHOLE_PUSHED };

/* What of run `key` went to ps's server and tenant (sent or kept):
 * NOT_PUSHED, WINDOWS_PUSHED (*snapshots: the windows up to that snapshot,
 * by --follow) or WHOLE_PUSHED. */
static int pushed_get(pdb *p, const pusher *ps, const char *key, int64_t *snapshots)
{
    sqlite3_stmt *st = pdb_prepare(p, "SELECT snapshots, whole FROM pushed WHERE url = ? AND tenant = ? AND run_key = ?");
    pdb_bind_text(st, 1, ps->url);
    pdb_bind_text(st, 2, ps->tenant ? ps->tenant : "");
    pdb_bind_text(st, 3, key);
    int r = NOT_PUSHED;
    *snapshots = 0;
    if (pdb_step(p, st) == SQLITE_ROW) {
        *snapshots = sqlite3_column_int64(st, 0);
        r = sqlite3_column_int(st, 1) ? WHOLE_PUSHED : WINDOWS_PUSHED;
    }
    sqlite3_finalize(st);
    return r;
}

static void pushed_set(pdb *p, const pusher *ps, const char *key, int64_t snapshots, int whole)
{
    sqlite3_stmt *st = pdb_prepare(p, "INSERT OR REPLACE INTO pushed(url, tenant, run_key, snapshots, whole) "
                                      "VALUES(?, ?, ?, ?, ?)");
    pdb_bind_text(st, 1, ps->url);
    pdb_bind_text(st, 2, ps->tenant ? ps->tenant : "");
    pdb_bind_text(st, 3, key);
    sqlite3_bind_int64(st, 4, snapshots);
    sqlite3_bind_int(st, 5, whole);
    pdb_step(p, st);
    sqlite3_finalize(st);
}

/* Sends (or keeps) one profile of run r; adds its kind to sent or kept. */
static void push_profile(pdb *p, pusher *ps, const run_info *r, int g, const char *query, const unsigned char *b,
                         size_t n, text *sent, text *kept)
{
    char why[512] = "";
    int tried = !ps->down && !stop_requested;
    int res = tried ? post(ps, ps->tenant, query, group_kind[g], b, n, why, sizeof why) : TRANSIENT;
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

static int collect_windows(pdb *p, pusher *ps, const pdb_opts *o, const char *key, int64_t *done, int64_t *run_id,
                           window_push **out, size_t *n);
static void send_windows(pdb *p, pusher *ps, int64_t run, const char *key, window_push *v, size_t n);

/* Run id, whole; or, when a --follow sent its first windows, the rest;
 * nothing when it went to this server and tenant before (but --again). */
static void push_run(pdb *p, pusher *ps, const pdb_opts *o, int64_t id)
{
    run_info r;
    pdb_run_load(p, id, &r);
    int64_t snaps;
    int before = ps->again ? NOT_PUSHED : pushed_get(p, ps, r.key, &snaps);
    if (before == WHOLE_PUSHED) {
        printf("run %lld went to %s before (sent, or kept for the next push): not sent again (--again sends it anew)\n",
               (long long)id, ps->url);
        fflush(stdout);
        pdb_run_free(&r);
        return;
    }
    if (before == WINDOWS_PUSHED) {   /* a --follow stopped: the windows after its last */
        printf("run %lld: its first %lld snapshot window%s went to %s by --follow: sending the rest\n", (long long)id,
               (long long)snaps, snaps == 1 ? "" : "s", ps->url);
        window_push *v = NULL;
        size_t n = 0;
        int64_t run = id;
        collect_windows(p, ps, o, r.key, &snaps, &run, &v, &n);
        send_windows(p, ps, id, r.key, v, n);
        free(v);
        pushed_set(p, ps, r.key, snaps, 1);
        pdb_run_free(&r);
        return;
    }
    ctree t;
    ctree_load(p, id, -1, &t);
    char *name = series_name(p, o, &r), *query = ingest_query(ps->curl, name, &r);
    text sent = {0}, kept = {0};
    unsigned char *gz[NGROUPS];
    size_t len[NGROUPS];
    build_groups(&t, &r, r.heap_tracked, gz, len);
    /* the spans, added after the other groups are made (their profiles as without spans) */
    if (ctree_add_spans(p, &t, id) > 0)
        build_group(&t, &r, r.heap_tracked, GROUP_SPANS, gz, len);
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
    if (sent.n || kept.n)
        pushed_set(p, ps, r.key, 0, 1);
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
    int ended = 0, before = ps->again ? NOT_PUSHED : pushed_get(p, ps, key, &done);
    if (before == WHOLE_PUSHED) {
        printf("run %s went to %s before (sent, or kept for the next push): not sent again (--again sends it anew)\n",
               key, ps->url);
        return;
    }
    if (done)
        printf("its first %lld snapshot windows went before: following from there\n", (long long)done);
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
        if (n)
            pushed_set(p, ps, key, done, ended);
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

/* A valid UTF-8 string? */
static int utf8_ok(const char *s)
{
    for (int n; *s; s += n)
        if (!(n = utf8_len(s)))
            return 0;
    return 1;
}

/* --label KEY=VALUE: KEY a label name (letters, digits, '_' and '.', not
 * first a digit, not "__..." nor service_name: piano's), VALUE printable
 * UTF-8 without ",{}=+" or blanks; each KEY once; the lengths and the count
 * of label names within Pyroscope's limits. */
static void check_labels(const pdb_opts *o)
{
    int tag_given = 0;
    for (int i = 0; i < o->nlabels; i++) {
        const char *kv = o->labels[i], *eq = strchr(kv, '=');
        if (!eq || eq == kv)
            pdb_usage_die("push: --label wants KEY=VALUE, not '%s'", esc_ctrl(kv));
        int ok = !(kv[0] >= '0' && kv[0] <= '9') && strncmp(kv, "__", 2) && eq - kv <= MAX_NAME_LEN;
        for (const char *c = kv; c < eq; c++)
            ok &= name_char(*c);
        if (!ok)
            pdb_usage_die("push: label '%.*s': a key is letters, digits, '_' and '.' (not first a digit, not '__...', "
                          "up to %d)", (int)(eq - kv > 100 ? 100 : eq - kv), esc_ctrl(kv), MAX_NAME_LEN);
        if (eq - kv == 12 && !strncmp(kv, "service_name", 12))
            pdb_usage_die("push: label 'service_name' is the app: give --app");
        ok = eq[1] != 0 && utf8_ok(eq + 1) && strlen(eq + 1) <= MAX_VALUE_LEN;
        for (const char *c = eq + 1; *c; c++)
            ok &= (unsigned char)*c >= 0x80 || value_char(*c);
        if (!ok)
            pdb_usage_die("push: label '%.*s': a value is printable UTF-8, without blanks or any of , { } = +, up to %d bytes",
                          (int)(eq - kv > 100 ? 100 : eq - kv), esc_ctrl(kv), MAX_VALUE_LEN);
        for (int j = 0; j < i; j++)
            if (!strncmp(o->labels[j], kv, (size_t)(eq - kv) + 1))
                pdb_usage_die("push: label '%.*s' given twice", (int)(eq - kv), kv);
        tag_given |= !strncmp(kv, "tag=", 4);
    }
    /* __name__, service_name, __delta__, the --label's and tag */
    if (3 + o->nlabels + !tag_given > MAX_LABEL_NAMES)
        pdb_usage_die("push: %d --label's: Pyroscope takes up to %d label names a series, and piano sets __name__, "
                      "service_name, __delta__%s", o->nlabels, MAX_LABEL_NAMES, tag_given ? "" : " and tag");
}

/* A tenant id as Pyroscope takes it (dskit's tenant.ValidTenantID): up to
 * 150 of [A-Za-z0-9!-_.*'()], not "." nor "..". */
static int tenant_ok(const char *t)
{
    size_t n = strlen(t);
    if (!n || n > MAX_TENANT_LEN || !strcmp(t, ".") || !strcmp(t, ".."))
        return 0;
    for (; *t; t++)
        if (!((*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z') || (*t >= '0' && *t <= '9') || strchr("!-_.*'()", *t)))
            return 0;
    return 1;
}

static void check_options(const pdb_opts *o)
{
    if (o->npos < 1)
        pdb_usage_die("push: give the server: piano-db push URL [RUN|TAG] (e.g. http://localhost:4040)");
    check_labels(o);
    int ok = o->app && *o->app && strlen(o->app) <= MAX_VALUE_LEN;
    for (const char *c = o->app; ok && *c; c++)
        ok = app_char(*c);
    if (o->app && !ok)
        pdb_usage_die("push: --app '%s': letters, digits, '_', '-', '.' and '/' only (up to %d)", esc_ctrl(o->app),
                      MAX_VALUE_LEN);
    if (o->tenant && !tenant_ok(o->tenant))
        pdb_usage_die("push: --tenant '%s': up to %d of letters, digits and ! - _ . * ' ( ) (not . or ..)",
                      esc_ctrl(o->tenant), MAX_TENANT_LEN);
    if (o->auth && !strchr(o->auth, ':'))
        pdb_usage_die("push: --auth wants USER:TOKEN");
    if (o->timeout_set && o->timeout == 0)
        pdb_usage_die("push: --timeout wants seconds >= 1");
    if ((o->follow_all || o->kept) && o->npos > 1)
        pdb_usage_die("push: --%s takes no RUN", o->follow_all ? "follow-all" : "kept");
    if (o->follow_all + o->kept + o->follow > 1)
        pdb_usage_die("push: --follow, --follow-all and --kept exclude each other");
    if (o->count_set && !o->follow_all)
        pdb_usage_die("push: --count goes with --follow-all");
}

/* Rows kept before credentials were kept out of the database: their URL
 * without them (the same server's queue). */
static void strip_stored_credentials(pdb *p)
{
    sqlite3_stmt *st = pdb_prepare(p, "SELECT DISTINCT url FROM pushes WHERE url LIKE '%@%'");
    char **urls = NULL;
    size_t n = 0;
    while (pdb_step(p, st) == SQLITE_ROW) {
        urls = xrealloc(urls, (n + 1) * sizeof *urls);
        urls[n++] = xstrdup(pdb_col_text(st, 0));
    }
    sqlite3_finalize(st);
    for (size_t i = 0; i < n; i++) {
        pusher tmp = {0};
        set_url(&tmp, urls[i]);
        st = pdb_prepare(p, "UPDATE pushes SET url = ? WHERE url = ?");
        pdb_bind_text(st, 1, tmp.url);
        pdb_bind_text(st, 2, urls[i]);
        pdb_step(p, st);
        sqlite3_finalize(st);
        free(tmp.url), free(tmp.endpoint), free(tmp.user), free(tmp.pass), free(urls[i]);
    }
    free(urls);
}

int cmd_push(pdb *p, const pdb_opts *o)
{
    check_options(o);
    load_curl();
    if (cu.curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        pdb_die("push: cannot start libcurl");
    pusher ps = {.tenant = o->tenant, .timeout_s = o->timeout_set ? o->timeout : 10, .again = o->again};
    set_url(&ps, o->pos[0]);
    const char *auth = o->auth ? o->auth : getenv("PIANO_PUSH_AUTH");
    if (!ps.user && auth && *auth) {   /* USER:TOKEN */
        const char *colon = strchr(auth, ':');
        if (!colon)
            pdb_usage_die("push: PIANO_PUSH_AUTH wants USER:TOKEN");
        ps.user = xmalloc((size_t)(colon - auth) + 1);
        memcpy(ps.user, auth, (size_t)(colon - auth));
        ps.user[colon - auth] = 0;
        ps.pass = xstrdup(colon + 1);
    }
    if (!(ps.curl = cu.curl_easy_init()))
        pdb_die("push: cannot start libcurl");
    if (sqlite3_exec(p->db, PIANO_SCHEMA_PUSHED, NULL, NULL, NULL) != SQLITE_OK)
        pdb_die("push: cannot make the pushed table in %s: %s", p->path, sqlite3_errmsg(p->db));
    strip_stored_credentials(p);
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
    if (ps.restamped)
        printf("%ld profile%s older than Pyroscope's 1-hour window went with the time they were sent\n", ps.restamped,
               ps.restamped == 1 ? "" : "s");
    free(ps.url);
    free(ps.endpoint);
    free(ps.user);
    free(ps.pass);
    free(follow_key);
    return left ? EXIT_UNSENT : ps.refused ? EXIT_ERR : 0;
}
