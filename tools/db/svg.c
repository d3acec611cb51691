/* svg.c - output files and XML escaping shared by flamegraph, plot and export. */
#include "piano_db.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>

FILE *out_open(const pdb_opts *o, int binary)
{
    if (!o->output || !strcmp(o->output, "-")) {
        if (binary && isatty(STDOUT_FILENO))
            pdb_usage_die("%s: the output is binary: name a file with -o FILE", o->cmd);
        return stdout;
    }
    FILE *f = fopen(o->output, binary ? "wb" : "w");
    if (!f)
        pdb_die("cannot write %s: %s", o->output, strerror(errno));
    return f;
}

void out_close(FILE *f, const pdb_opts *o)
{
    if (f == stdout)
        return;
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        pdb_die("cannot write %s: %s", o->output, strerror(errno ? errno : EIO));
}

/* Length of the valid UTF-8 sequence at s if XML 1.0 allows its code point
 * (tab, newline, carriage return, U+0020 on, but not DEL, U+FFFE, U+FFFF), or 0. */
static int xml_seq(const unsigned char *s)
{
    unsigned cp;
    int len = utf8_seq(s, &cp);
    if (!len || (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7f || cp == 0xFFFE || cp == 0xFFFF)
        return 0;
    return len;
}

void xml_str(FILE *f, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    while (*u) {
        switch (*u) {
        case '&': fputs("&amp;", f); u++; continue;
        case '<': fputs("&lt;", f); u++; continue;
        case '>': fputs("&gt;", f); u++; continue;
        case '"': fputs("&quot;", f); u++; continue;
        case '\'': fputs("&#39;", f); u++; continue;
        case '\n': case '\r': case '\t': fputc(' ', f); u++; continue;
        }
        int len = xml_seq(u);
        if (!len) {
            fputs("\xEF\xBF\xBD", f); /* U+FFFD */
            u++;
        } else {
            fwrite(u, 1, (size_t)len, f);
            u += len;
        }
    }
}
