#!/bin/sh
# cli_paths_test.sh SECTION PIANO_DB MAKE_FIXTURE WORKDIR
# piano-db and the database's path (issue 11): what it refuses on a shared
# machine (paths), what it can still read (readonly), option and tag-name
# details (details), and which runs it takes by default (defaults).
# The parts that need a second user (setpriv to uid 65534) or mounts need root;
# without root, 'paths' and 'readonly' exit 77 (skipped).
set -u
SECTION=$1 P=$2 FX=$3 W=$4
case $P in /*) ;; *) P=$PWD/$P ;; esac
case $FX in /*) ;; *) FX=$PWD/$FX ;; esac
export TZ=UTC NO_COLOR=1 LC_ALL=C
unset PIANO_DB
[ -d "$W" ] && chmod -R u+w "$W" 2>/dev/null
rm -rf "$W" && mkdir -p "$W" || exit 1
W=$(cd "$W" && pwd)
FAILS=0
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

# expect NAME CMD... : stdout of CMD must equal stdin, exit status 0, nothing on stderr.
expect() {
    name=$1; shift
    cat > "$W/expected"
    "$@" > "$W/out" 2> "$W/err"
    rc=$?
    if [ $rc -ne 0 ]; then fail "$name: exit $rc: $(cat "$W/err")"; return; fi
    [ -s "$W/err" ] && fail "$name: stderr: $(cat "$W/err")"
    if ! cmp -s "$W/expected" "$W/out"; then
        fail "$name: output differs"
        diff -u "$W/expected" "$W/out"
    fi
}

# same NAME FILE CMD... : exit 0, stdout equal to FILE, nothing on stderr.
same() {
    name=$1 ref=$2; shift 2
    "$@" > "$W/out" 2> "$W/err"
    rc=$?
    [ $rc -eq 0 ] || { fail "$name: exit $rc: $(cat "$W/err")"; return; }
    [ -s "$W/err" ] && fail "$name: stderr: $(cat "$W/err")"
    cmp -s "$ref" "$W/out" || { fail "$name: output differs"; diff -u "$ref" "$W/out" | head -20; }
}

# error NAME RC 'MESSAGE' CMD... : exit RC, nothing on stdout, one stderr line 'piano-db: MESSAGE'.
error() {
    name=$1 want=$2 msg=$3; shift 3
    "$@" > "$W/out" 2> "$W/err"
    rc=$?
    [ $rc -eq "$want" ] || fail "$name: exit $rc, wanted $want"
    [ -s "$W/out" ] && fail "$name: wrote to stdout: $(head -c 200 "$W/out")"
    [ "$(wc -l < "$W/err")" -eq 1 ] || fail "$name: stderr is not one line: $(cat "$W/err")"
    [ "$(cat "$W/err")" = "piano-db: $msg" ] || fail "$name: stderr '$(cat "$W/err")', wanted 'piano-db: $msg'"
}

# files DIR: every path under DIR with its type, owner and mode (to see that nothing was made)
files() { find "$1" -printf '%p %y %u %m\n' | sort; }

MOUNTS=""
cleanup() {
    for m in $MOUNTS; do umount "$m" 2>/dev/null; done
    [ -n "${STAGE:-}" ] && rm -rf "$STAGE"
}
trap cleanup EXIT

# need_root: skipped (77) unless root with setpriv. The second user must reach
# the files and piano-db, which a clone in a private folder (mode 0700 above the
# build, like root's home) closes to it: the section works in a folder of its
# own under /tmp (W) with a copy of piano-db (P) that the second user can run.
need_root() {
    if [ "$(id -u)" -ne 0 ] || ! $NOBODY true 2>/dev/null; then
        echo "skipped: $SECTION needs root and setpriv (a second user)"
        exit 77
    fi
    STAGE=$(mktemp -d /tmp/piano-db-paths.XXXXXX) || { echo "skipped: cannot make a folder under /tmp"; exit 77; }
    chmod 0755 "$STAGE" && cp "$P" "$STAGE/piano-db" && chmod 0755 "$STAGE/piano-db" || exit 1
    if ! $NOBODY "$STAGE/piano-db" --help > /dev/null 2> "$STAGE/err"; then
        echo "skipped: uid 65534 cannot run a copy of piano-db in $STAGE: $(head -1 "$STAGE/err")"
        exit 77
    fi
    P=$STAGE/piano-db W=$STAGE/w
    mkdir "$W" || exit 1
}

B=$W/basic.db
"$FX" basic "$B" || exit 1

case $SECTION in
paths)
need_root
T=$W/t && mkdir "$T" && cp "$B" "$T/basic.db" && B=$T/basic.db
# Refused paths: one line, exit 1, nothing created anywhere.
mkdir "$T/dir"
mkfifo "$T/fifo.db"
python3 -c "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$T/sock.db"
cp "$B" "$T/open.db" && chmod 0666 "$T/open.db"
cp "$B" "$T/group.db" && chmod 0660 "$T/group.db"
cp "$B" "$T/theirs.db" && chown 65534:65534 "$T/theirs.db"
cp "$B" "$T/spool777.db" && mkdir "$T/spool777.db.spool" && chmod 0777 "$T/spool777.db.spool"
cp "$B" "$T/sticky.db" && mkdir "$T/sticky.db.spool" && chmod 1777 "$T/sticky.db.spool"
cp "$B" "$T/spoolfile.db" && : > "$T/spoolfile.db.spool"
cp "$B" "$T/spoollink.db" && mkdir "$T/elsewhere" && ln -s "$T/elsewhere" "$T/spoollink.db.spool"
cp "$B" "$T/spooltheirs.db" && mkdir "$T/spooltheirs.db.spool" && chown 65534:65534 "$T/spooltheirs.db.spool"
ln -s "$T/nowhere.db" "$T/dangling.db"
mkdir "$T/shared" && chmod 1777 "$T/shared" && cp "$B" "$T/mine.db"
$NOBODY ln -s "$T/mine.db" "$T/shared/planted.db" || fail "cannot plant a link as uid 65534"
# The database's side files and the folders above it (issue 25): a log (-wal),
# its index (-shm) or a journal another user planted beside the database, or a
# folder on the way that another user owns or may write (not sticky), would
# receive the run (its command line, names, paths).
cp "$B" "$T/shared/w.db" && cp "$B" "$T/shared/s.db" && cp "$B" "$T/shared/j.db" && cp "$B" "$T/shared/l.db"
$NOBODY sh -c "umask 0 && : > '$T/shared/w.db-wal' && : > '$T/shared/s.db-shm' && : > '$T/shared/j.db-journal' &&
               : > '$T/shared/new.db-wal' && ln -s '$T/elsewhere/x' '$T/shared/l.db-wal'" ||
    fail "cannot plant side files as uid 65534"
ln -s "$T/shared/w.db" "$T/tow.db"   # the user's own link: the log is next to the file it leads to
cp "$B" "$T/ownwal.db" && : > "$T/ownwal.db-wal" && chmod 0666 "$T/ownwal.db-wal"
mkdir "$T/theirdir" && cp "$B" "$T/theirdir/x.db" && chown 65534:65534 "$T/theirdir"
mkdir "$T/open777" && chmod 0777 "$T/open777" && cp "$B" "$T/open777/x.db"
mkdir -p "$T/group770/sub" && chmod 0770 "$T/group770" && cp "$B" "$T/group770/sub/x.db"
LONG=$T/$(printf '%04000d' 0).db
LONG60=$(printf %s "$LONG" | cut -c1-60)
before=$(files "$T"; ls -d /dev/null.spool 2>&1)
LEN=${#LONG}
error slash 1 "$T/new/ ends in '/': name the database file, not a folder (e.g. $T/new/piano.db)" "$P" runs --db "$T/new/"
error slash_env 1 "$T/new/ ends in '/': name the database file, not a folder (e.g. $T/new/piano.db)" env PIANO_DB="$T/new/" "$P" runs
error devnull 1 "/dev/null is a character device, not a database file" "$P" runs --db /dev/null
error devnull_env 1 "/dev/null is a character device, not a database file" env PIANO_DB=/dev/null "$P" report
error devzero 1 "/dev/zero is a character device, not a database file" "$P" tag x --db /dev/zero
error folder 1 "$T/dir is a folder, not a database file" "$P" runs --db "$T/dir"
error fifo 1 "$T/fifo.db is a fifo, not a database file" timeout 10 "$P" runs --db "$T/fifo.db"
error socket 1 "$T/sock.db is a socket, not a database file" "$P" runs --db "$T/sock.db"
error mode_0666 1 "$T/open.db is writable by other users (mode 0666); piano will not use it: chmod go-w it" "$P" runs --db "$T/open.db"
error mode_0660 1 "$T/group.db is writable by other users (mode 0660); piano will not use it: chmod go-w it" "$P" report --db "$T/group.db"
error theirs 1 "$T/theirs.db is owned by another user (uid 65534); piano will not use it" "$P" runs --db "$T/theirs.db"
error spool_0777 1 "$T/spool777.db.spool is writable by other users (mode 0777); piano will not use it: chmod go-w it" "$P" runs --db "$T/spool777.db"
error spool_1777 1 "$T/sticky.db.spool is writable by other users (mode 1777); piano will not use it: chmod go-w it" "$P" runs --db "$T/sticky.db"
error spool_file 1 "$T/spoolfile.db.spool is a file, not a folder; piano will not use it" "$P" runs --db "$T/spoolfile.db"
error spool_link 1 "$T/spoollink.db.spool is a symbolic link, not a folder; piano will not use it" "$P" runs --db "$T/spoollink.db"
error spool_theirs 1 "$T/spooltheirs.db.spool is owned by another user (uid 65534); piano will not use it" "$P" runs --db "$T/spooltheirs.db"
error dangling 1 "$T/dangling.db is a symbolic link to nothing (No such file or directory); piano will not create a database through it" "$P" tag x --db "$T/dangling.db"
error planted_link 1 "$T/shared/planted.db is a symbolic link owned by another user (uid 65534); piano will not follow it" "$P" runs --db "$T/shared/planted.db"
error too_long 1 "$LONG60...: the path is too long ($LEN bytes, at most 3840)" "$P" runs --db "$LONG"
error under_file 1 "$B/x.db: Not a directory" "$P" runs --db "$B/x.db"
# The same as a user who is not root: mode bits and owners are what they say.
error nobody_theirs 1 "$B is owned by another user (uid 0); piano will not use it" $NOBODY "$P" runs --db "$B"
error wal_theirs 1 "$T/shared/w.db-wal is owned by another user (uid 65534); piano will not use it" "$P" runs --db "$T/shared/w.db"
error shm_theirs 1 "$T/shared/s.db-shm is owned by another user (uid 65534); piano will not use it" "$P" report --db "$T/shared/s.db"
error journal_theirs 1 "$T/shared/j.db-journal is owned by another user (uid 65534); piano will not use it" "$P" runs --db "$T/shared/j.db"
error wal_link 1 "$T/shared/l.db-wal is a symbolic link, not a file of the database; piano will not use it" "$P" runs --db "$T/shared/l.db"
error wal_new_db 1 "$T/shared/new.db-wal is owned by another user (uid 65534); piano will not use it" "$P" tag x --db "$T/shared/new.db"
error wal_through_link 1 "$T/shared/w.db-wal is owned by another user (uid 65534); piano will not use it" "$P" runs --db "$T/tow.db"
error wal_0666 1 "$T/ownwal.db-wal is writable by other users (mode 0666); piano will not use it: chmod go-w it" "$P" runs --db "$T/ownwal.db"
error folder_theirs 1 "the folder $T/theirdir is owned by another user (uid 65534); piano will not keep a database under it" "$P" runs --db "$T/theirdir/x.db"
error folder_0777 1 "the folder $T/open777 is writable by other users (mode 0777) and not sticky; piano will not keep a database under it" "$P" runs --db "$T/open777/x.db"
error folder_above 1 "the folder $T/group770 is writable by other users (mode 0770) and not sticky; piano will not keep a database under it" "$P" runs --db "$T/group770/sub/x.db"
error folder_new 1 "the folder $T/group770 is writable by other users (mode 0770) and not sticky; piano will not keep a database under it" "$P" tag x --db "$T/group770/sub/new/x.db"
after=$(files "$T"; ls -d /dev/null.spool 2>&1)
[ "$before" = "$after" ] || { fail "a refused path created or changed something"; echo "$before" > "$W/before"; echo "$after" > "$W/after"; diff "$W/before" "$W/after"; }
# A link the user made himself to his own database is followed.
ln -s "$B" "$T/mylink.db"
"$P" runs --db "$B" > "$W/runs.ref" || fail "runs"
same own_link "$W/runs.ref" "$P" runs --db "$T/mylink.db"
# A sticky folder everyone may write (root's, or the user's own) holds the user's database.
mkdir "$T/sticky" && chmod 1777 "$T/sticky" && cp "$B" "$T/sticky/x.db"
same sticky_folder "$W/runs.ref" "$P" runs --db "$T/sticky/x.db"
# Relative paths are made absolute once, against the current folder.
same relative "$W/runs.ref" sh -c "cd '$T' && '$P' runs --db basic.db"
same relative_env "$W/runs.ref" sh -c "cd '$T' && PIANO_DB=./basic.db '$P' runs"
error relative_missing 1 "no database at $T/none.db" sh -c "cd '$T' && '$P' runs --db none.db"
;;

readonly)
need_root
# Reference outputs, from the database while it can be written.
mkdir "$W/ro" && cp "$B" "$W/ro/b.db" && chown -R 65534:65534 "$W/ro"
RO=$W/ro/b.db
i=0
for cmd in "runs" "runs --json" "report" "report --json" "report --frames" "report 1" "diff" "diff --json 1 2" \
           "tag" "export --format folded" "export --format chrome" "export --format callgrind" "flamegraph" "plot frames"; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    $NOBODY "$P" $cmd --db "$RO" > "$W/ref.$i" 2> "$W/err" || fail "reference '$cmd': $(cat "$W/err")"
done
# A read-only folder (as a user whom mode bits bind): every reading command works, unchanged.
chmod 0555 "$W/ro"
state=$(files "$W/ro")
i=0
for cmd in "runs" "runs --json" "report" "report --json" "report --frames" "report 1" "diff" "diff --json 1 2" \
           "tag" "export --format folded" "export --format chrome" "export --format callgrind" "flamegraph" "plot frames"; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    same "read-only folder: $cmd" "$W/ref.$i" $NOBODY "$P" $cmd --db "$RO"
done
error ro_folder_tag 1 "cannot write $RO: permission denied: the folder $W/ro is not writable" $NOBODY "$P" tag x --db "$RO"
error ro_folder_rm 1 "cannot write $RO: permission denied: the folder $W/ro is not writable" $NOBODY "$P" rm 1 --db "$RO"
[ "$state" = "$(files "$W/ro")" ] || fail "the read-only folder changed"
# Runs of crashed processes waiting in the spool: not imported, said in one warning line.
chmod 0755 "$W/ro" && mkdir -p "$RO.spool/1234-5678" && chown -R 65534:65534 "$RO.spool" && chmod 0700 "$RO.spool" &&
    chmod 0555 "$W/ro"
same "read-only folder with a spool" "$W/ref.1" sh -c "$NOBODY '$P' runs --db '$RO' 2> '$W/warn'"
[ "$(cat "$W/warn")" = "piano-db: warning: $RO: permission denied: the folder $W/ro is not writable; the runs waiting in $RO.spool are not imported" ] ||
    fail "read-only spool warning: '$(cat "$W/warn")'"
# A read-only file in a folder that can be written.
mkdir "$W/rofile" && cp "$B" "$W/rofile/b.db" && chmod 0400 "$W/rofile/b.db" && chown -R 65534:65534 "$W/rofile"
same "read-only file: runs" "$W/ref.1" $NOBODY "$P" runs --db "$W/rofile/b.db"
same "read-only file: report" "$W/ref.3" $NOBODY "$P" report --db "$W/rofile/b.db"
error ro_file_tag 1 "cannot write $W/rofile/b.db: permission denied: the file is read-only" $NOBODY "$P" tag x --db "$W/rofile/b.db"
# A read-only file system, and a full disk (tmpfs mounts; said when they cannot be made here).
mkdir "$W/rofs" "$W/full"
if mount -t tmpfs -o size=4m tmpfs "$W/rofs" 2>/dev/null; then
    MOUNTS="$W/rofs $W/full"
    cp "$B" "$W/rofs/b.db" && mkdir -p "$W/rofs/b.db.spool/1-2" && chmod 0700 "$W/rofs/b.db.spool" &&
        mount -o remount,ro "$W/rofs" || fail "cannot make the read-only file system"
    "$P" runs --db "$B" > "$W/runs.root"
    same "read-only fs: runs" "$W/runs.root" sh -c "'$P' runs --db '$W/rofs/b.db' 2> '$W/warn'"
    [ "$(cat "$W/warn")" = "piano-db: warning: $W/rofs/b.db: read-only file system; the runs waiting in $W/rofs/b.db.spool are not imported" ] ||
        fail "read-only fs warning: '$(cat "$W/warn")'"
    error rofs_rm 1 "cannot write $W/rofs/b.db: read-only file system" "$P" rm 1 --db "$W/rofs/b.db"
    umount "$W/rofs"
    mount -t tmpfs -o size=2m tmpfs "$W/full" && cp "$B" "$W/full/b.db" &&
        { dd if=/dev/zero of="$W/full/fill" bs=64k 2>/dev/null; true; }
    "$P" report --db "$B" > "$W/report.root"
    same "full disk: runs" "$W/runs.root" "$P" runs --db "$W/full/b.db"
    same "full disk: report" "$W/report.root" "$P" report --db "$W/full/b.db"
    error full_tag 1 "cannot write $W/full/b.db: the disk is full" "$P" tag x --db "$W/full/b.db"
    umount "$W/full"
else
    echo "note: read-only file system and full disk parts not run (cannot mount a tmpfs here)"
fi
;;

details)
# Tag names: no control characters, nothing a run argument would take for a run.
error tag_digits 2 "tag: '2' is a number, which names run 2: a tag of that name could never be reached" "$P" tag 2 1 --db "$B"
error tag_digits0 2 "tag: '007' is a number, which names run 007: a tag of that name could never be reached" "$P" tag 007 --db "$B"
error tag_key 2 "tag: '1000-1700000000000000000' is shaped like a run key (PID-NS): a tag of that name could never be reached" "$P" tag 1000-1700000000000000000 --db "$B"
error tag_newline 2 'tag: a tag name cannot hold control characters (newline, tab, escape...): '"'"'a\nb'"'" "$P" tag "$(printf 'a\nb')" --db "$B"
error tag_tab 2 'tag: a tag name cannot hold control characters (newline, tab, escape...): '"'"'a\tb'"'" "$P" tag "$(printf 'a\tb')" --db "$B"
error tag_escape 2 'tag: a tag name cannot hold control characters (newline, tab, escape...): '"'"'\x1b[31mred'"'" "$P" tag "$(printf '\033[31mred')" --db "$B"
[ "$(sqlite3 "$B" 'SELECT count(*) FROM tags')" = 0 ] || fail "a refused tag was stored"
expect tag_ok "$P" tag v2 --db "$B" <<'EOF'
tagged 'v2' -> 2
EOF
# Names an older piano let in are shown escaped, each row on one line.
sqlite3 "$B" "INSERT INTO tags(name, run) VALUES ('two' || char(10) || 'lines', 1), ('tab' || char(9) || 'bed', 1),
              ('esc' || char(27) || '[31m', 2), ('c1' || char(133), 2)" || fail "inserting old tags"
expect tag_list_escaped "$P" tag --db "$B" <<'EOF'
Tag          Run              Started  Command
---------------------------------------------------
c1\u0085       2  2023-11-14 22:15:00  ./app
esc\x1b[31m    2  2023-11-14 22:15:00  ./app
tab\tbed       1  2023-11-14 22:13:20  ./app --fast
two\nlines     1  2023-11-14 22:13:20  ./app --fast
v2             2  2023-11-14 22:15:00  ./app
EOF
expect runs_escaped "$P" runs --db "$B" <<'EOF'
Run    Tags                      PID  Parent  Command                 Started  Duration  Status     Frames
----------------------------------------------------------------------------------------------------------
2      c1\u0085,esc\x1b[31m,v2  1001       1  app         2023-11-14 22:15:00     1.20s  recovered       5
1      tab\tbed,two\nlines      1000       -  app --fast  2023-11-14 22:13:20     2.50s  complete        0
EOF
expect tag_json_escaped "$P" tag --json --db "$B" <<'EOF'
[
  {"tag": "c1\u0085", "run": 2},
  {"tag": "esc\u001b[31m", "run": 2},
  {"tag": "tab\tbed", "run": 1},
  {"tag": "two\nlines", "run": 1},
  {"tag": "v2", "run": 2}
]
EOF
"$P" report --db "$B" "$(printf 'two\nlines')" > "$W/by_tag" && "$P" report --db "$B" 1 > "$W/by_id" &&
    cmp -s "$W/by_tag" "$W/by_id" || fail "an old tag with a newline cannot be reached"
error unknown_escaped 1 "no run or tag 'no\nsuch' in $B" "$P" report --db "$B" "$(printf 'no\nsuch')"
expect untag_escaped "$P" untag "$(printf 'two\nlines')" --db "$B" <<'EOF'
untagged 'two\nlines'
EOF
# Numeric options: one strict parser; out of range or not a number is refused.
error thread_big 2 "report: --thread is at most 4294967295, not '4294967297'" "$P" report --db "$B" --thread 4294967297
error thread_huge 2 "report: --thread is at most 4294967295, not '99999999999999999999999'" "$P" report --db "$B" --thread 99999999999999999999999
error thread_neg 2 "report: --thread wants a number >= 0, not '-1'" "$P" report --db "$B" --thread -1
error thread_plus 2 "report: --thread wants a number >= 0, not '+1'" "$P" report --db "$B" --thread +1
error thread_blank 2 "report: --thread wants a number >= 0, not ' 1'" "$P" report --db "$B" --thread " 1"
error thread_hex 2 "diff: --thread wants a number >= 0, not '0x1'" "$P" diff --db "$B" --thread 0x1
error thread_flame 2 "flamegraph: --thread is at most 4294967295, not '4294967296'" "$P" flamegraph --db "$B" --thread 4294967296
error thread_export 2 "export: --thread wants a number >= 0, not '1e3'" "$P" export --format folded --db "$B" --thread 1e3
error thread_empty 2 "report: --thread wants a number >= 0, not ''" "$P" report --db "$B" --thread=
error top_huge 2 "report: --top is at most 9223372036854775807, not '9223372036854775808'" "$P" report --db "$B" --top 9223372036854775808
error keep_word 2 "gc: --keep wants a number >= 0, not 'all'" "$P" gc --db "$B" --keep all
expect thread_max "$P" report --db "$B" --thread 4294967295 --json <<'EOF'
[]
EOF
for bad in nan NaN inf -inf infinity -5 1e3 0x10 abc 5%% % '' 1.2.3 . ' 5'; do
    error "fail_above '$bad'" 2 "diff: --fail-above wants a percentage >= 0, not '$bad'" "$P" diff --db "$B" --fail-above "$bad"
done
"$P" diff --db "$B" --fail-above 2.5% > /dev/null || fail "--fail-above 2.5% refused"
"$P" diff --db "$B" --fail-above 0 > /dev/null || fail "--fail-above 0 refused"
# --db before the command, as --db F or --db=F; after it as before.
"$P" runs --db "$B" > "$W/runs.ref" || fail "runs"
same global_db "$W/runs.ref" "$P" --db "$B" runs
same global_db_eq "$W/runs.ref" "$P" --db="$B" runs
same global_db_env "$W/runs.ref" env PIANO_DB=/nonexistent/x.db "$P" --db "$B" runs
error global_db_missing 2 "--db wants a file" "$P" --db
error global_unknown 2 "unknown option '--bogus' before the command (piano-db --help)" "$P" --bogus runs
error global_no_command 2 "missing command (piano-db --help lists them)" "$P" --db "$B"
# piano-db --help lists every command (made from the command table), each with its own --help.
"$P" --help > "$W/help" || fail "--help"
for c in report runs tag untag diff rm gc flamegraph plot export push top sql; do
    grep -q "^  $c\( \|$\)" "$W/help" || fail "--help does not list $c"
    "$P" $c --help > "$W/chelp" && head -1 "$W/chelp" | grep -q "^usage: piano-db $c" || fail "$c --help"
done
[ "$(grep -c '^  [a-z]' "$W/help")" -eq 14 ] || fail "--help lists $(grep -c '^  [a-z]' "$W/help") commands, not 14"
"$P" --db "$B" --help > "$W/help2" && cmp -s "$W/help" "$W/help2" || fail "--db F --help"
;;

defaults)
# Runs 3 and 4, newer than 1 and 2, recorded nothing (a build tool's exec'd
# children): a stats row with no calls, no frames.
"$P" --db "$B" sql "INSERT INTO runs(id, key, pid, command, started_ns, duration_ns, status, clock, ns_per_tick)
              VALUES (3, '1010-1700000200000000000', 1010, './child', 1700000200000000000, 1000, 'recovered', 'tsc', 1.0),
                     (4, '1011-1700000300000000000', 1011, './child', 1700000300000000000, 1000, 'complete', 'tsc', 1.0);
              INSERT INTO functions(run, id, name, file, line) VALUES (4, 1, 'main', 'child.c', 1);
              INSERT INTO stats(run, thread, fn, calls, self_ns, total_ns, allocs, alloc_bytes, frees, free_bytes)
              VALUES (4, 0, 1, 0, 0, 0, 0, 0, 0, 0)" || fail "inserting empty runs"
"$P" report --db "$B" 2 > "$W/report2" || fail "report 2"
# taken by default, the forked child says so (named, it does not)
{ cat "$W/report2"; echo 'run 2 (app), the latest, was forked from run 1 (app --fast): piano-db report 1 shows that one'; } > "$W/report2_default"
same report_default "$W/report2_default" "$P" report --db "$B"
"$P" report --db "$B" --frames 2 > "$W/frames2" || fail "report --frames 2"
same frames_default "$W/frames2" "$P" report --db "$B" --frames
"$P" diff --db "$B" 1 2 > "$W/diff12" || fail "diff 1 2"
same diff_default "$W/diff12" "$P" diff --db "$B"
same diff_one "$W/diff12" "$P" diff --db "$B" 1
for c in "export --format folded" "export --format chrome" "flamegraph" "plot frames"; do
    # shellcheck disable=SC2086
    "$P" $c 2 --db "$B" > "$W/c2" || fail "$c 2"
    # shellcheck disable=SC2086
    same "$c default" "$W/c2" "$P" $c --db "$B"
done
"$P" flamegraph --diff 1 2 --db "$B" > "$W/fd12" || fail "flamegraph --diff 1 2"
same flamegraph_diff_default "$W/fd12" "$P" flamegraph --diff --db "$B"
expect tag_default "$P" tag --db "$B" last <<'EOF'
tagged 'last' -> 2
EOF
# An empty run named is shown as it is.
expect report_empty_run "$P" report --db "$B" 4 <<'EOF'
Function            Calls       Self        p50        p99   Allocs      Bytes
------------------------------------------------------------------------------
main                    0     0.00ns     0.00ns     0.00ns        0         0B

0 frames
EOF
# Only one run recorded something: the pair is it and the latest empty one, older first.
"$P" rm 1 --db "$B" > /dev/null || fail "rm 1"
"$P" diff --db "$B" 2 4 > "$W/diff24" || fail "diff 2 4"
same diff_one_left "$W/diff24" "$P" diff --db "$B"
# None did: the latest runs, as they are.
"$P" rm 2 --db "$B" > /dev/null || fail "rm 2"
"$P" report --db "$B" 4 > "$W/report4" || fail "report 4"
same report_all_empty "$W/report4" "$P" report --db "$B"
"$P" diff --db "$B" 3 4 > "$W/diff34" || fail "diff 3 4"
same diff_all_empty "$W/diff34" "$P" diff --db "$B"
"$P" rm 3 4 --db "$B" > /dev/null || fail "rm 3 4"
error report_none 1 "no runs stored in $B yet" "$P" report --db "$B"
error diff_none 1 "diff needs two runs; $B holds none" "$P" diff --db "$B"
error flamegraph_diff_none 1 "flamegraph --diff needs two runs; $B holds none" "$P" flamegraph --diff --db "$B"
error too_many 2 "report: too many arguments (one RUN or TAG)" "$P" report 1 2 --db "$B"
error too_many_plot 2 "plot: too many arguments (plot frames [RUN|TAG])" "$P" plot frames 1 2 --db "$B"
;;
*) echo "unknown section $SECTION"; exit 2 ;;
esac

[ $FAILS -eq 0 ] && echo "ok: $SECTION" && exit 0
echo "$FAILS failure(s) in $SECTION"
exit 1
