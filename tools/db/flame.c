/*
 * flame.c - `piano-db flamegraph`: an interactive SVG flame graph of a run's
 * calling contexts (threads merged), and with --diff a differential one.
 *
 * The SVG is self-contained: inline style and script, no external resource.
 * Each frame is a <g class="f"> holding a <title> (function, inclusive time,
 * share of the total, calls, self time), a <rect> and a <text> label cut to
 * fit. Widths are inclusive time; the root is at the bottom. The script shows
 * the hovered frame's <title> on the info line and zooms on click (an
 * ancestor stays full width, the rest hides); "Reset zoom" or a click on
 * "all" restores. Frames narrower than 0.1 px at full view are left out.
 *
 * --diff A B: widths from B (the newer run); colour from the change of self
 * time of the same context path (functions matched by name and file, as diff
 * does): red slower, blue faster, saturation relative to the largest change;
 * grey unchanged. Paths only in A are not drawn (their self time is listed in
 * the subtitle).
 */
#include "piano_db.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FG_W 1200
#define FG_PAD 10
#define FG_ROW 17
#define FG_TOP 64
#define FG_BOTTOM 34
#define FG_CHAR 7.0
#define FG_MINW 0.1

/* A child node by its label: emit draws children in label order. */
typedef struct {
    const char *label;
    int node;
} child_entry;

static int cmp_children(const void *a, const void *b)
{
    const child_entry *x = a, *y = b;
    int c = strcmp(x->label, y->label);
    return c ? c : (x->node > y->node) - (x->node < y->node);
}

static unsigned name_hash(const char *s)
{
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* flamegraph.pl's "hot" palette, chosen by the name so a function keeps its colour. */
static void hot_color(char *buf, size_t n, const char *name)
{
    unsigned h = name_hash(name);
    double v1 = (h & 0xff) / 255.0, v2 = ((h >> 8) & 0xff) / 255.0, v3 = ((h >> 16) & 0xff) / 255.0;
    (void)v3;
    snprintf(buf, n, "rgb(%d,%d,%d)", 205 + (int)(50 * v3), (int)(230 * v1), (int)(55 * v2));
}

static void diff_color(char *buf, size_t n, double delta, double maxabs)
{
    if (maxabs <= 0 || delta == 0) {
        snprintf(buf, n, "rgb(220,220,220)");
        return;
    }
    double f = fabs(delta) / maxabs;
    if (f > 1)
        f = 1;
    int c = (int)lround(230 - 190 * f);
    if (delta > 0)
        snprintf(buf, n, "rgb(255,%d,%d)", c, c);
    else
        snprintf(buf, n, "rgb(%d,%d,255)", c, c);
}

static void label_fit(char *buf, size_t n, const char *s, double w)
{
    long c = (long)floor((w - 6) / FG_CHAR);
    if (c < 3) {
        buf[0] = 0;
        return;
    }
    if ((long)utf8_width(s) <= c) {
        snprintf(buf, n, "%s", s);
        return;
    }
    /* c - 2 code points, then "..". */
    snprintf(buf, n, "%.*s..", (int)utf8_offset(s, (size_t)(c - 2)), s);
}

typedef struct {
    const ctree *t, *base;  /* base: A of --diff, or NULL */
    int *base_key;          /* key of t -> key of base (by name and file), -1 none */
    int *base_node;         /* node of t -> node of base, -1 none */
    double maxabs;
    int maxdepth;
    FILE *f;
    int bytes;              /* the metric is bytes (else ns) */
    double scale;           /* px per ns */
    size_t drawn;
} fg;

/* flamegraph --metric: what a box's width is, one line each. Each is a
 * figure of a context's own (self) that the tree sums for the inclusive width;
 * CPU time's (self_off 0) are ctxtree.c's ctree_use_metric. */
typedef struct {
    const char *name, *what;   /* --metric NAME; the subtitle's "width: WHAT" */
    size_t self_off;           /* of its int64_t own figure in cnode */
    int bytes;                 /* shown as bytes (else ns) */
} fg_metric;
static const fg_metric fg_metrics[] = {
    {"wall", "inclusive time", offsetof(cnode, self_ns), 0},
    {"cpu", "inclusive CPU time", 0, 0},
    {"offcpu", "inclusive off-CPU time", 0, 0},
    {"alloc", "bytes allocated", offsetof(cnode, alloc_bytes), 1},
    {"inuse", "bytes in use at the end", offsetof(cnode, inuse_bytes), 1},
    /* spans (include/piano/span.h): ctree_add_spans first */
    {"busy", "time in spans (entered)", offsetof(cnode, busy_ns), 0},
    {"idle", "spans' idle time (open, not entered)", offsetof(cnode, idle_ns), 0},
};
enum { FG_NMETRICS = sizeof fg_metrics / sizeof *fg_metrics };

static const fg_metric *metric_of(const char *name)
{
    for (int i = 0; i < FG_NMETRICS; i++)
        if (!strcmp(fg_metrics[i].name, name ? name : "wall"))
            return &fg_metrics[i];
    return NULL;
}

int flame_metric_known(const char *name)
{
    return metric_of(name) != NULL;
}

const char *flame_metric_names(void)
{
    static char list[128];
    if (!list[0])
        for (int i = 0; i < FG_NMETRICS; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? "|" : "", fg_metrics[i].name);
    return list;
}

/* Makes the tree's self_ns/total_ns the metric's own and inclusive figures
 * (wall: as stored). Children come after their parent: one backward pass. */
static void apply_metric(pdb *p, ctree *t, const fg_metric *m, int64_t run)
{
    if (m->self_off == offsetof(cnode, busy_ns) || m->self_off == offsetof(cnode, idle_ns)) {
        if (ctree_add_spans(p, t, run) == 0)
            pdb_die("flamegraph: run %lld has no spans (--metric %s: include/piano/span.h, doc/spans.md)",
                    (long long)run, m->name);
    }
    if (!m->self_off) {
        ctree_use_metric(t, m->name, run);
        return;
    }
    if (m->self_off == offsetof(cnode, self_ns))
        return;
    for (size_t i = 0; i < t->n; i++) {
        cnode *c = &t->v[i];
        c->self_ns = i ? *(const int64_t *)((const char *)c + m->self_off) : 0;
        c->total_ns = c->self_ns;
    }
    for (size_t i = t->n; i-- > 1;)
        t->v[t->v[i].parent].total_ns = sat_add(t->v[t->v[i].parent].total_ns, t->v[i].total_ns);
}

/* A figure of the metric in use, as text. */
static void fmt_metric(char *buf, size_t n, double v, int bytes)
{
    if (bytes)
        fmt_bytes(buf, n, (int64_t)v);
    else
        fmt_ns(buf, n, v);
}

static int64_t base_self(const fg *g, int node)
{
    return g->base_node && g->base_node[node] >= 0 ? g->base->v[g->base_node[node]].self_ns : 0;
}

static void depth_pass(fg *g, int node, double w)
{
    const cnode *c = &g->t->v[node];
    if (w < FG_MINW)
        return;
    if (c->depth > g->maxdepth)
        g->maxdepth = c->depth;
    if (g->base_node) {
        double d = (double)(c->self_ns - base_self(g, node));
        if (node && fabs(d) > g->maxabs)
            g->maxabs = fabs(d);
    }
    for (int k = c->first_child; k >= 0; k = g->t->v[k].next_sibling)
        depth_pass(g, k, (double)g->t->v[k].total_ns * g->scale);
}

static void draw(fg *g, int node, double x, int height)
{
    const ctree *t = g->t;
    const cnode *c = &t->v[node];
    double w = (double)c->total_ns * g->scale;
    if (w < FG_MINW)
        return;
    FILE *f = g->f;
    /* as the tables show it: a C++ name without its return type */
    char *label = name_without_return(node ? t->keys.labels[c->key] : "all");
    double y = height - FG_BOTTOM - (c->depth + 1) * FG_ROW;
    char tot[32], self[32], col[32], text[1024];
    fmt_metric(tot, sizeof tot, (double)c->total_ns, g->bytes);
    fmt_metric(self, sizeof self, (double)c->self_ns, g->bytes);
    double pct = t->v[0].total_ns > 0 ? 100.0 * (double)c->total_ns / (double)t->v[0].total_ns : 0;
    if (g->base_node)
        diff_color(col, sizeof col, node ? (double)(c->self_ns - base_self(g, node)) : 0, g->maxabs);
    else if (node)
        hot_color(col, sizeof col, label);
    else
        snprintf(col, sizeof col, "rgb(230,230,230)");
    fprintf(f, "<g class=\"f\" data-x=\"%.4f\" data-w=\"%.4f\" data-d=\"%d\" data-n=\"", x - FG_PAD, w, c->depth);
    xml_str(f, label);
    fputs("\"><title>", f);
    xml_str(f, label);
    fprintf(f, " | %s (%.2f%%)", tot, pct);
    if (node) {
        fprintf(f, ", %lld call%s, self %s", (long long)c->calls, c->calls == 1 ? "" : "s", self);
        if (c->allocs)
            fprintf(f, ", %lld alloc%s", (long long)c->allocs, c->allocs == 1 ? "" : "s");
    }
    if (g->base_node && node) {
        char a[32], d[32];
        int64_t sa = base_self(g, node);
        fmt_ns(a, sizeof a, (double)sa);
        fmt_delta_ns(d, sizeof d, (double)(c->self_ns - sa));
        if (g->base_node[node] < 0)
            fprintf(f, " | new in B (self %s)", d);
        else if (sa > 0)
            fprintf(f, " | self %s -> %s (%s, %+.1f%%)", a, self, d, 100.0 * (double)(c->self_ns - sa) / (double)sa);
        else
            fprintf(f, " | self %s -> %s (%s)", a, self, d);
    }
    fprintf(f, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\" rx=\"2\"/>",
            x, y, w, FG_ROW - 1, col);
    label_fit(text, sizeof text, label, w);
    fprintf(f, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + FG_ROW - 5);
    xml_str(f, text);
    fputs("</text></g>\n", f);
    free(label);
    g->drawn++;
    /* Children in name order, left to right. */
    int n = 0;
    for (int k = c->first_child; k >= 0; k = t->v[k].next_sibling)
        n++;
    if (!n)
        return;
    child_entry *kids = xmalloc((size_t)n * sizeof *kids);
    n = 0;
    for (int k = c->first_child; k >= 0; k = t->v[k].next_sibling)
        kids[n++] = (child_entry){t->keys.labels[t->v[k].key], k};
    qsort(kids, (size_t)n, sizeof *kids, cmp_children);
    double cx = x;
    for (int i = 0; i < n; i++) {
        draw(g, kids[i].node, cx, height);
        cx += (double)t->v[kids[i].node].total_ns * g->scale;
    }
    free(kids);
}

static const char *fg_script =
    "<script type=\"text/ecmascript\"><![CDATA[\n"
    "(function(){\n"
    "var PAD=%d,PW=%d,CW=%.1f;\n"
    "var svg=document.documentElement,info=document.getElementById('info'),\n"
    "    reset=document.getElementById('reset'),gs=document.getElementsByClassName('f');\n"
    "var idle=info.textContent;\n"
    "function num(g,a){return parseFloat(g.getAttribute(a));}\n"
    "function fit(g,w){var t=g.getElementsByTagName('text')[0],n=g.getAttribute('data-n'),\n"
    "  c=Math.floor((w-6)/CW);t.textContent=c<3?'':(n.length<=c?n:n.substring(0,c-2)+'..');}\n"
    "function place(g,x,w){var r=g.getElementsByTagName('rect')[0],t=g.getElementsByTagName('text')[0];\n"
    "  r.setAttribute('x',(PAD+x).toFixed(2));r.setAttribute('width',w.toFixed(2));\n"
    "  t.setAttribute('x',(PAD+x+3).toFixed(2));fit(g,w);g.style.display='';}\n"
    "function zoom(z){var zx=num(z,'data-x'),zw=num(z,'data-w'),zd=num(z,'data-d'),s=PW/zw,e=1e-3;\n"
    "  for(var i=0;i<gs.length;i++){var g=gs[i],x=num(g,'data-x'),w=num(g,'data-w'),d=num(g,'data-d');\n"
    "    if(d<zd&&x<=zx+e&&x+w>=zx+zw-e){place(g,0,PW);g.classList.add('up');}\n"
    "    else if(d>=zd&&x>=zx-e&&x+w<=zx+zw+e){place(g,(x-zx)*s,w*s);g.classList.remove('up');}\n"
    "    else g.style.display='none';}\n"
    "  reset.style.display=zd>0?'':'none';}\n"
    "function unzoom(){for(var i=0;i<gs.length;i++){var g=gs[i];g.classList.remove('up');\n"
    "  place(g,num(g,'data-x'),num(g,'data-w'));}reset.style.display='none';}\n"
    "function frame(e){var n=e.target;while(n&&n!==svg){if(n.classList&&n.classList.contains('f'))return n;n=n.parentNode;}return null;}\n"
    "svg.addEventListener('mouseover',function(e){var g=frame(e);\n"
    "  if(g)info.textContent=g.getElementsByTagName('title')[0].textContent;});\n"
    "svg.addEventListener('mouseout',function(e){if(frame(e))info.textContent=idle;});\n"
    "svg.addEventListener('click',function(e){var g=frame(e);\n"
    "  if(g){if(num(g,'data-d')===0)unzoom();else zoom(g);}else if(e.target===reset)unzoom();});\n"
    "})();\n"
    "]]></script>\n";

/* --diff: each key and node of g->t to base's (keys by name and file);
 * returns the self time of base's paths that t lacks. */
static int64_t match_base(fg *g)
{
    const ctree *t = g->t, *base = g->base;
    g->base_key = xmalloc((size_t)t->keys.nkeys * sizeof *g->base_key);
    for (int i = 0; i < t->keys.nkeys; i++) {
        g->base_key[i] = -1;
        for (int j = 0; j < base->keys.nkeys; j++)
            if (!strcmp(t->keys.names[i], base->keys.names[j]) && !strcmp(t->keys.files[i], base->keys.files[j])) {
                g->base_key[i] = j;
                break;
            }
    }
    g->base_node = xmalloc(t->n * sizeof *g->base_node);
    char *hit = xcalloc(base->n, 1);
    g->base_node[0] = 0;
    hit[0] = 1;
    for (size_t i = 1; i < t->n; i++) { /* parents come first */
        const cnode *c = &t->v[i];
        int bp = g->base_node[c->parent], bk = g->base_key[c->key];
        g->base_node[i] = bp >= 0 && bk >= 0 ? ctree_child(base, bp, bk) : -1;
        if (g->base_node[i] >= 0)
            hit[g->base_node[i]] = 1;
    }
    int64_t removed = 0;
    for (size_t i = 1; i < base->n; i++)
        if (!hit[i])
            removed += base->v[i].self_ns;
    free(hit);
    return removed;
}

static void write_svg(FILE *f, const ctree *t, const ctree *base, const run_info *r, const run_info *ra,
                      const fg_metric *m)
{
    fg g;
    memset(&g, 0, sizeof g);
    g.bytes = m->bytes;
    g.t = t;
    g.base = base;
    g.f = f;
    int64_t root_total = t->v[0].total_ns;
    g.scale = root_total > 0 ? (double)(FG_W - 2 * FG_PAD) / (double)root_total : 0;
    int64_t removed = base ? match_base(&g) : 0;
    depth_pass(&g, 0, root_total > 0 ? (double)(FG_W - 2 * FG_PAD) : 0);
    int height = FG_TOP + (g.maxdepth + 1) * FG_ROW + FG_BOTTOM;
    svg_begin(f, FG_W, height,
              "text{" SVG_FONT ";fill:#000}\n"
              ".f text{font-family:'DejaVu Sans Mono',monospace;font-size:11px;pointer-events:none}\n"
              ".f:hover rect{stroke:#000;stroke-width:0.6;cursor:pointer}\n"
              ".up rect{opacity:0.6}\n"
              "#title{font-size:17px;text-anchor:middle}\n"
              "#sub{font-size:12px;text-anchor:middle;fill:#555}\n"
              "#reset{cursor:pointer;fill:#1a5fb4}\n",
              "#f8f8f4");
    fprintf(f, "<text id=\"title\" x=\"%d\" y=\"24\">", FG_W / 2);
    char buf[512], tot[32];
    fmt_metric(tot, sizeof tot, (double)root_total, m->bytes);
    if (base) {
        snprintf(buf, sizeof buf, "Differential flame graph: run %lld -> run %lld", (long long)ra->id,
                 (long long)r->id);
        xml_str(f, buf);
        fputs("</text>\n", f);
        fprintf(f, "<text id=\"sub\" x=\"%d\" y=\"44\">", FG_W / 2);
        char rm[32];
        fmt_ns(rm, sizeof rm, (double)removed);
        snprintf(buf, sizeof buf, "width: run %lld (%s); colour: self-time change per path, red slower, "
                 "blue faster; paths only in run %lld (self %s) not drawn",
                 (long long)r->id, tot, (long long)ra->id, rm);
        xml_str(f, buf);
    } else {
        char cmd[200];
        fmt_cut(cmd, sizeof cmd, r->command, 80);
        if (r->id < 0) {   /* a set of runs: its description */
            fputs("Flame graph: ", f);
            xml_str(f, cmd);
        } else {
            snprintf(buf, sizeof buf, "Flame graph: run %lld", (long long)r->id);
            xml_str(f, buf);
            fputs(" (", f);
            xml_str(f, cmd);
            fputs(")", f);
        }
        fputs("</text>\n", f);
        fprintf(f, "<text id=\"sub\" x=\"%d\" y=\"44\">", FG_W / 2);
        snprintf(buf, sizeof buf, "all threads, %s in instrumented functions; width: %s; "
                 "click a frame to zoom", tot, m->what);
        xml_str(f, buf);
    }
    fputs("</text>\n", f);
    fprintf(f, "<text id=\"reset\" x=\"%d\" y=\"24\" style=\"display:none\">Reset zoom</text>\n", FG_PAD);
    fprintf(f, "<text id=\"info\" x=\"%d\" y=\"%d\">%s</text>\n", FG_PAD, height - 12,
            root_total > 0 ? "Hover a frame for details" : "No calling contexts in this run");
    fputs("<g id=\"frames\">\n", f);
    if (root_total > 0)
        draw(&g, 0, FG_PAD, height);
    fputs("</g>\n", f);
    fprintf(f, fg_script, FG_PAD, FG_W - 2 * FG_PAD, FG_CHAR);
    fputs("</svg>\n", f);
    free(g.base_key);
    free(g.base_node);
}

int cmd_flamegraph(pdb *p, const pdb_opts *o)
{
    long thread = o->thread_set ? o->thread : -1;
    const fg_metric *m = metric_of(o->metric);
    if ((!strcmp(m->name, "busy") || !strcmp(m->name, "idle")) && thread >= 0)
        pdb_usage_die("flamegraph: --metric %s shows the whole run's spans (not --thread)", m->name);
    if (o->diff && m->bytes)
        pdb_usage_die("flamegraph: --diff compares times (--metric wall, cpu or offcpu)");
    run_info r, ra;
    ctree t, base;
    if (o->diff) {
        if (o->all_runs || o->command_sel)
            pdb_usage_die("flamegraph: --diff compares two runs (not --all-runs or --command)");
        int64_t ab[2];
        pdb_pick_runs(p, o, 0, 2, "flamegraph --diff [A [B]]", ab);
        int64_t ia = ab[0], ib = ab[1];
        pdb_run_load(p, ia, &ra);
        pdb_run_load(p, ib, &r);
        ctree_load(p, ia, thread, &base);
        ctree_load(p, ib, thread, &t);
        if (o->group) {
            ctree_group(&base);
            ctree_group(&t);
        }
        apply_metric(p, &base, m, ia);
        apply_metric(p, &t, m, ib);
    } else {
        runset set;
        if (pdb_pick_run_or_set(p, o, "flamegraph [RUN|TAG|SET]", &r, &set)) {
            if (!strcmp(m->name, "busy") || !strcmp(m->name, "idle"))
                pdb_usage_die("flamegraph: --metric %s shows one run's spans (not a SET)", m->name);
            pdb_set_ctree(p, &set, thread, &t);
        } else
            ctree_load(p, r.id, thread, &t);
        runset_free(&set);
        if (o->group)
            ctree_group(&t);
        if (!strcmp(m->name, "inuse") && !r.heap_tracked)
            pdb_die("flamegraph: run %lld did not track heap in use (run it with PIANO_HEAP=1)", (long long)r.id);
        apply_metric(p, &t, m, r.id);
    }
    FILE *f = out_open(o, 0);
    write_svg(f, &t, o->diff ? &base : NULL, &r, o->diff ? &ra : NULL, m);
    out_close(f, o);
    ctree_free(&t);
    pdb_run_free(&r);
    if (o->diff) {
        ctree_free(&base);
        pdb_run_free(&ra);
    }
    return 0;
}
