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
 * (dlopen) only by push: linked, its libraries cost every other command 6 MB
 * and 29 shared objects at start.
 *
 * The files: this one (the options checked, the series' names, a run
 * pushed, the command), push_client.c (libcurl, the URL, the PushRequest,
 * one POST and its tries), push_tables.c (the pushes and pushed tables),
 * push_profiles.c (the profiles per group, folded past the samples limit),
 * push_follow.c (--follow, --follow-all); push_int.h what they share.
 */
#include "push_int.h"
#include <stdlib.h>
#include <string.h>

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
        text_adds(t, o->app);
        return;
    }
    const char *cmd = r->command, *base = cmd;
    size_t len = strcspn(cmd, " ");
    for (size_t i = 0; i < len; i++)
        if (cmd[i] == '/')
            base = cmd + i + 1;
    if (base == cmd + len)
        text_adds(t, "piano");
    for (; base < cmd + len; base++)
        text_add(t, app_char(*base) ? base : "_", 1);
}

/* APP{KEY=VALUE,...,tag=TAGS}: --label's in their order, then the run's tags
 * (joined by '+', their other characters '_') unless a --label is "tag". */
char *series_name(pdb *p, const pdb_opts *o, const run_info *r)
{
    text t = {0};
    add_app(&t, o, r);
    text_adds(&t, "{");
    int tag_given = 0;
    for (int i = 0; i < o->nlabels; i++) {
        text_adds(&t, i ? "," : "");
        text_adds(&t, o->labels[i]);
        tag_given |= !strncmp(o->labels[i], "tag=", 4);
    }
    sqlite3_stmt *st = pdb_prepare(p, "SELECT name FROM tags WHERE run = ? ORDER BY name");
    sqlite3_bind_int64(st, 1, r->id);
    size_t tag_at = 0;
    for (int k = 0; !tag_given && pdb_step(p, st) == SQLITE_ROW; k++) {
        if (!k)
            tag_at = t.n + (o->nlabels ? 5 : 4);
        text_adds(&t, k ? "+" : o->nlabels ? ",tag=" : "tag=");
        for (const char *c = pdb_col_text(st, 0); *c;) {   /* what a value cannot hold: '_' */
            int u = (unsigned char)*c < 0x80 ? value_char(*c) : utf8_len(c);
            text_add(&t, u ? c : "_", u ? (size_t)u : 1);
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
    text_adds(&t, "}");
    return t.s;
}

/* name=...&from=...&until=...: from the start rounded down to the second,
 * until its end rounded up (at least from + 1). What a kept row holds (rows
 * kept for /ingest also had &format=pprof): the series name, and the times
 * the profile covers for whoever reads the table. */
char *ingest_query(CURL *c, const char *name, const run_info *r)
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

/* Sends (or keeps) one profile of run r; adds its kind to sent or kept. */
void push_profile(pdb *p, pusher *ps, const run_info *r, int g, const char *query, const unsigned char *b,
                         size_t n, text *sent, text *kept)
{
    char why[512] = "";
    int tried = !ps->down && !stop_requested;
    int res = tried ? post(ps, ps->tenant, query, group_kind[g], b, n, why, sizeof why) : TRANSIENT;
    text *to = res == SENT ? sent : res == TRANSIENT ? kept : NULL;
    if (to) {
        text_adds(to, to->n ? ", " : "");
        text_adds(to, group_kind[g]);
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

/* Run id, whole; or, when a --follow sent its first windows, the rest;
 * nothing when it went to this server and tenant before (but --again). */
void push_run(pdb *p, pusher *ps, const pdb_opts *o, int64_t id)
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
