#!/bin/sh
# docs_lists_test.sh PIANO_DB SRCDIR: the lists the documentation repeats agree
# with the ones piano-db makes from spool/metrics.h (report --help's are
# generated): report --json's keys in doc/piano-db.md, report --sort's keys in
# doc/piano-db.1 and doc/piano-db.bash. Fails naming the file that disagrees.
DB=$1 SRC=$2
[ -x "$DB" ] && [ -d "$SRC/doc" ] || { echo "usage: docs_lists_test.sh PIANO_DB SRCDIR" >&2; exit 2; }
fail=0
same() { # what want got
    if [ "$2" != "$3" ]; then
        printf 'FAIL %s\n  list: %s\n  docs: %s\n' "$1" "$2" "$3"; fail=1
    else
        printf 'ok   %s\n' "$1"
    fi
}
# normalise a list: words one per line, joined by spaces
words() { tr -s ', |\n' '    ' | sed 's/^ *//; s/ *$//'; }
help=$("$DB" report --help | tr '\n' ' ' | tr -s ' ')
keys=$(printf '%s' "$help" | sed -n 's/.*array of {function, file, line, \([^}]*\)}.*/\1/p' | words)
sort=$(printf '%s' "$help" | sed -n 's/.*--sort KEY \(.*\) --group.*/\1/p' | sed 's/ (default)//' | words)
[ -n "$keys" ] && [ -n "$sort" ] || { echo "FAIL: no key lists in report --help"; exit 1; }
md=$(tr '\n' ' ' < "$SRC/doc/piano-db.md" | tr -s ' ' |
     sed -n 's/.*`report --json`: array of `{function, file, line, \([^}]*\)}`.*/\1/p' | words)
same "doc/piano-db.md: report --json keys" "$keys" "$md"
bash=$(sed -n 's/.*--sort) COMPREPLY=($(compgen -W "\([^"]*\)".*/\1/p' "$SRC/doc/piano-db.bash" | words)
same "doc/piano-db.bash: --sort keys" "$sort" "$bash"
man=$(sed -n 's/^\.BR "\\-\\-sort self" | \(.*\) ,$/self | \1/p' "$SRC/doc/piano-db.1" | words)
same "doc/piano-db.1: --sort keys" "$sort" "$man"
# the man page names report's keys by report --help, not a copy of them
if grep -q 'p50_total_ns, p99_total_ns' "$SRC/doc/piano-db.1"; then
    echo "FAIL doc/piano-db.1 copies report --json's keys (name report --help instead)"; fail=1
fi
exit $fail
