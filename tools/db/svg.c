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

/* Length of the valid UTF-8 sequence at s (XML-allowed code point), or 0. */
static int xml_seq(const unsigned char *s)
{
    int len;
    unsigned cp;
    if (s[0] < 0x80)
        return (s[0] >= 0x20 || s[0] == '\t' || s[0] == '\n' || s[0] == '\r') && s[0] != 0x7f ? 1 : 0;
    else if ((s[0] & 0xE0) == 0xC0)
        len = 2, cp = s[0] & 0x1F;
    else if ((s[0] & 0xF0) == 0xE0)
        len = 3, cp = s[0] & 0x0F;
    else if ((s[0] & 0xF8) == 0xF0)
        len = 4, cp = s[0] & 0x07;
    else
        return 0;
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE || cp == 0xFFFF)
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
