/*
 * push_client.c - piano-db push's HTTP client: libcurl (loaded when push runs),
 * the server's URL, a push.v1.PushRequest encoded (connect, protobuf), and one
 * profile POSTed with its tries: SENT, TRANSIENT (kept for later) or REFUSED.
 * Why this API and these answers: push.c.
 */
#include "push_int.h"
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- libcurl, loaded ---- */
struct push_curl cu;

void load_curl(void)
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

void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);   /* a signal cuts it short: the loops check stop_requested */
}

/* ---- text ---- */

void text_add(text *t, const char *s, size_t n)
{
    if (t->n + n + 1 > t->cap)
        t->s = xrealloc(t->s, t->cap = (t->n + n + 1) * 2);
    memcpy(t->s + t->n, s, n);
    t->s[t->n += n] = 0;
}

void text_adds(text *t, const char *s)
{
    text_add(t, s, strlen(s));
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
        text_adds(&t, url);
    } else {   /* USERINFO@ at auth: keep the user, hide what follows its ':' */
        const char *colon = memchr(auth, ':', ulen - 1);
        text_add(&t, url, (size_t)((colon ? colon : auth + ulen - 1) - url));
        text_adds(&t, colon ? ":***" : "");
        text_adds(&t, auth + ulen - 1);
    }
    char *e = esc_ctrl(t.s);
    free(t.s);
    return e;
}

/* Checks url and sets ps->url (scheme://host[:port][/path], no credentials,
 * no trailing '/' nor "/ingest" nor the Push API's path), ps->endpoint, and
 * ps->user and ps->pass from credentials in it. Dies (usage) on anything
 * else, the URL shown without its password. */
void set_url(pusher *ps, const char *url)
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
    text_add(t, b, n);
}

static void pb_bytes(text *t, unsigned field, const void *p, size_t n)
{
    pb_varint(t, (uint64_t)field << 3 | 2);
    pb_varint(t, n);
    text_add(t, p, n);
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
int post(pusher *ps, const char *tenant, const char *query, const char *kind, const unsigned char *b,
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
