/*
 * push_int.h - what the files of piano-db push share (push.c: the command,
 * the series' names, a run pushed; push_client.c: HTTP; push_tables.c: the
 * pushes and pushed tables; push_profiles.c: the profiles; push_follow.c:
 * --follow, --follow-all). Not a public interface.
 */
#ifndef PIANO_PUSH_INT_H
#define PIANO_PUSH_INT_H
#include "piano_db.h"
#include "piano_schema.h"
#define CURL_DISABLE_TYPECHECK   /* its checking macros would call the linked names */
#include <curl/curl.h>
#include <signal.h>

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

extern volatile sig_atomic_t stop_requested;   /* SIGINT, SIGTERM (push_follow.c) */

/* ---- libcurl, loaded (push_client.c) ---- */
#define CURL_FNS(X) X(curl_global_init) X(curl_global_cleanup) X(curl_easy_init) X(curl_easy_cleanup) X(curl_easy_reset) X(curl_easy_setopt) X(curl_easy_perform) X(curl_easy_getinfo) X(curl_easy_strerror) X(curl_easy_escape) X(curl_easy_unescape) X(curl_free) X(curl_slist_append) X(curl_slist_free_all) X(curl_url) X(curl_url_set) X(curl_url_get) X(curl_url_cleanup) X(curl_url_strerror)
struct push_curl {
#define FIELD(f) __typeof__(&f) f;
    CURL_FNS(FIELD)
#undef FIELD
};
extern struct push_curl cu;
void load_curl(void);

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

void sleep_ms(long ms);

/* ---- text (push_client.c) ---- */
typedef struct {
    char *s;
    size_t n, cap;
} text;

void text_add(text *t, const char *s, size_t n);
void text_adds(text *t, const char *s);

/* Sets ps->url (normalised, without credentials) and ps->endpoint from url; dies on a bad one. */
void set_url(pusher *ps, const char *url);
/* Sends one profile (query: its series, as a kept row holds it; kind: its group's name) with its
 * tries: SENT, TRANSIENT or REFUSED, why says how it failed. */
int post(pusher *ps, const char *tenant, const char *query, const char *kind, const unsigned char *b, size_t n,
         char *why, size_t whyn);

/* ---- the pushes and pushed tables (push_tables.c) ---- */
void queue_add(pdb *p, pusher *ps, int64_t run, const char *kind, const char *query, const unsigned char *b,
               size_t n, int tries, const char *why);
int64_t queue_count(pdb *p, const char *url);
int64_t queue_flush(pdb *p, pusher *ps);
enum { NOT_PUSHED, WINDOWS_PUSHED, WHOLE_PUSHED };
int pushed_get(pdb *p, const pusher *ps, const char *key, int64_t *snapshots);
void pushed_set(pdb *p, const pusher *ps, const char *key, int64_t snapshots, int whole);

/* ---- the profiles (push_profiles.c) ---- */
enum { GROUP_WALL = PPROF_GROUP_WALL, GROUP_CPU = PPROF_GROUP_CPU, GROUP_MEMORY = PPROF_GROUP_MEMORY,
       GROUP_SPANS = PPROF_NGROUPS, NGROUPS };
extern const char *const group_kind[NGROUPS];
void build_group(const ctree *t, const run_info *r, int inuse_known, int g, unsigned char *gz[NGROUPS],
                 size_t len[NGROUPS]);
void build_groups(const ctree *t, const run_info *r, int inuse_known, unsigned char *gz[NGROUPS],
                  size_t len[NGROUPS]);

/* A window's profiles, made while the live runs are read, sent after. */
typedef struct {
    char *query, *label;
    unsigned char *gz[NGROUPS];
    size_t len[NGROUPS];
} window_push;

/* ---- --follow, --follow-all (push_follow.c) ---- */
int collect_windows(pdb *p, pusher *ps, const pdb_opts *o, const char *key, int64_t *done, int64_t *run_id,
                    window_push **out, size_t *n);
void send_windows(pdb *p, pusher *ps, int64_t run, const char *key, window_push *v, size_t n);
void follow_run(pdb *p, pusher *ps, const pdb_opts *o, const char *key);
void follow_all(pdb *p, pusher *ps, const pdb_opts *o);

/* ---- push.c ---- */
char *series_name(pdb *p, const pdb_opts *o, const run_info *r);
char *ingest_query(CURL *c, const char *name, const run_info *r);
void push_run(pdb *p, pusher *ps, const pdb_opts *o, int64_t id);
void push_profile(pdb *p, pusher *ps, const run_info *r, int g, const char *query, const unsigned char *b, size_t n,
                  text *sent, text *kept);

#endif
