#!/bin/sh
# names_test.sh PIANO_DB MAKE_FIXTURE WORKDIR
# Names in tables (issue 15, item 10): shortened only where nothing is lost,
# never two rows or two --frames headers alike, the width fitted ($COLUMNS);
# runs shows the program's name and its arguments; JSON keeps full names.
set -u
P=$1 FX=$2 W=$3
export TZ=UTC NO_COLOR=1 LC_ALL=C
unset PIANO_DB COLUMNS
rm -rf "$W" && mkdir -p "$W" || exit 1
command -v sqlite3 > /dev/null || { echo "sqlite3 missing"; exit 77; }
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
expect() {
    name=$1; shift
    cat > "$W/expected"
    "$@" > "$W/out" 2> "$W/err" || { fail "$name: exit $?: $(cat "$W/err")"; return; }
    cmp -s "$W/expected" "$W/out" || { fail "$name: output differs"; diff -u "$W/expected" "$W/out"; }
}
D=$W/names.db
"$FX" empty "$D" || exit 1
"$P" --db "$D" sql <<'SQL' || exit 1
INSERT INTO runs(id,key,pid,command,started_ns,duration_ns,status,clock,ns_per_tick) VALUES
 (1,'1-1',1,'/home/user/src/redis/src/redis-server --port 7000 --save "" --appendonly no --dir /tmp/some/long/folder/name --loglevel warning',1700000000000000000,2000000000,'complete','tsc',1.0),
 (2,'2-2',2,'./db_bench',1700000100000000000,0,'recovered','tsc',1.0);
INSERT INTO functions(run,id,name,file,line) VALUES
 (1,1,'ZSTD_compressBlock_doubleFast_extDict_generic_noDict_alpha','/src/lib/compress/zstd_double_fast.c',10),
 (1,2,'ZSTD_compressBlock_doubleFast_extDict_generic_noDict_beta','/src/lib/compress/zstd_double_fast.c',90),
 (1,3,'leveldb::SkipList<char const*, leveldb::MemTable::KeyComparator>::Insert(char const* const&)','/src/db/skiplist.h',100),
 (1,4,'leveldb::SkipList<unsigned long long, leveldb::TestComparator>::Insert(unsigned long long const&)','/src/db/skiplist.h',100),
 (1,5,'leveldb::SkipList<char const*, leveldb::MemTable::KeyComparator>::FindGreaterOrEqual(char const* const&, leveldb::SkipList<char const*, leveldb::MemTable::KeyComparator>::Node**) const','/src/db/skiplist.h',200),
 (1,6,'ZSTD_highbit32','/src/lib//compress/zstd_compress.c',120),
 (1,7,'ZSTD_highbit32','/src/lib//decompress/zstd_compress.c',120),
 (1,8,'ZSTD_highbit32','/src/lib//common/bits.h',30),
 (1,9,'leveldb::DBImpl::WriteLevel0Table(leveldb::MemTable*, leveldb::VersionEdit*, leveldb::Version*)','/src/db/db_impl.cc',500),
 (1,10,'leveldb::DBImpl::Write(leveldb::WriteOptions const&, leveldb::WriteBatch*)','/src/db/db_impl.cc',1200),
 (1,11,'Foo<int>::run()','/src/foo.h',3),
 (1,12,'Foo<long>::run()','/src/foo.h',3);
INSERT INTO stats(run,thread,fn,calls,self_ns,total_ns,allocs,alloc_bytes,frees,free_bytes) VALUES
 (1,0,1,10,12000000,12000000,0,0,0,0),(1,0,2,10,11000000,11000000,0,0,0,0),
 (1,0,3,10,10000000,10000000,0,0,0,0),(1,0,4,10,9000000,9000000,0,0,0,0),
 (1,0,5,10,8000000,8000000,0,0,0,0),(1,0,6,10,7000000,7000000,0,0,0,0),
 (1,0,7,10,6000000,6000000,0,0,0,0),(1,0,8,10,5000000,5000000,0,0,0,0),
 (1,0,9,10,4000000,4000000,0,0,0,0),(1,0,10,10,3000000,3000000,0,0,0,0),
 (1,0,11,10,2000000,2000000,0,0,0,0),(1,0,12,10,1000000,1000000,0,0,0,0);
INSERT INTO frames(run,seq,thread,start_ns,total_ns,allocs,alloc_bytes,frees,free_bytes,fns) VALUES (1,1,0,0,1000,0,0,0,0,x'09640A320B140C0A'),(1,2,0,2000,1000,0,0,0,0,x'09640A320B140C0A');
SQL
# At 80 columns the figures take only what their cells need (not their usual
# widths) and leave the names the rest: rows that read the same there are told
# apart by a cut that keeps the function's own name (JSON keeps the full
# names). A label with its file (a name seen twice) loses the middle of its
# path, whose head tells the rows apart (ZSTD_highbit32 below).
expect report_80 env COLUMNS=80 "$P" report --db "$D" 1 <<'EOF'
Function                           Calls     Self     p50     p99  Allocs  Bytes
--------------------------------------------------------------------------------
ZSTD_com…ict_generic_noDict_alpha     10  12.00ms  0.00ns  0.00ns       0     0B
ZSTD_com…Dict_generic_noDict_beta     10  11.00ms  0.00ns  0.00ns       0     0B
leveld…Insert(char const* const&)     10  10.00ms  0.00ns  0.00ns       0     0B
leveldb::SkipList<…>::Insert(…)       10   9.00ms  0.00ns  0.00ns       0     0B
level…FindGreaterOrEqual(…) const     10   8.00ms  0.00ns  0.00ns       0     0B
ZSTD_highbit32 (compres…ss.c:120)     10   7.00ms  0.00ns  0.00ns       0     0B
ZSTD_highbit32 (decompr…ss.c:120)     10   6.00ms  0.00ns  0.00ns       0     0B
ZSTD_highbit32 (bits.h:30)            10   5.00ms  0.00ns  0.00ns       0     0B
leveldb::DB…::WriteLevel0Table(…)     10   4.00ms  0.00ns  0.00ns       0     0B
leveldb::DBImpl::Write(…)             10   3.00ms  0.00ns  0.00ns       0     0B
Foo<int>::run()                       10   2.00ms  0.00ns  0.00ns       0     0B
Foo<long>::run()                      10   1.00ms  0.00ns  0.00ns       0     0B

2 frames
EOF
expect report_100 env COLUMNS=100 "$P" report --db "$D" 1 <<'EOF'
Function                                  Calls       Self        p50        p99   Allocs      Bytes
----------------------------------------------------------------------------------------------------
ZSTD_comp…t_extDict_generic_noDict_alpha     10    12.00ms     0.00ns     0.00ns        0         0B
ZSTD_comp…st_extDict_generic_noDict_beta     10    11.00ms     0.00ns     0.00ns        0         0B
leveldb::Sk…::Insert(char const* const&)     10    10.00ms     0.00ns     0.00ns        0         0B
leveldb::SkipList<…>::Insert(…)              10     9.00ms     0.00ns     0.00ns        0         0B
leveldb::S…::FindGreaterOrEqual(…) const     10     8.00ms     0.00ns     0.00ns        0         0B
ZSTD_highbit32 (compress/zs…press.c:120)     10     7.00ms     0.00ns     0.00ns        0         0B
ZSTD_highbit32 (decompress/…press.c:120)     10     6.00ms     0.00ns     0.00ns        0         0B
ZSTD_highbit32 (bits.h:30)                   10     5.00ms     0.00ns     0.00ns        0         0B
leveldb::DBImpl::WriteLevel0Table(…)         10     4.00ms     0.00ns     0.00ns        0         0B
leveldb::DBImpl::Write(…)                    10     3.00ms     0.00ns     0.00ns        0         0B
Foo<int>::run()                              10     2.00ms     0.00ns     0.00ns        0         0B
Foo<long>::run()                             10     1.00ms     0.00ns     0.00ns        0         0B

2 frames
EOF
expect report_not_tty "$P" report --db "$D" 1 --top 5 <<'EOF'
Function                                                                                           Calls       Self        p50        p99   Allocs      Bytes
-------------------------------------------------------------------------------------------------------------------------------------------------------------
ZSTD_compressBlock_doubleFast_extDict_generic_noDict_alpha                                            10    12.00ms     0.00ns     0.00ns        0         0B
ZSTD_compressBlock_doubleFast_extDict_generic_noDict_beta                                             10    11.00ms     0.00ns     0.00ns        0         0B
leveldb::SkipList<char const*, leveldb::MemTable::KeyComparator>::Insert(char const* const&)          10    10.00ms     0.00ns     0.00ns        0         0B
leveldb::SkipList<unsigned long long, leveldb::TestComparator>::Insert(unsigned long long const&)     10     9.00ms     0.00ns     0.00ns        0         0B
leveldb::SkipList<…>::FindGreaterOrEqual(char const* const&, leveldb::SkipList<…>::Node**) const      10     8.00ms     0.00ns     0.00ns        0         0B
(7 more functions hidden: --top N or --all shows them)

2 frames
EOF
expect report_narrow env COLUMNS=60 "$P" report --db "$D" 1 --top 2 <<'EOF'
Function                  Calls     Self     p50     p99  Allocs  Bytes
-----------------------------------------------------------------------
ZSTD_…neric_noDict_alpha     10  12.00ms  0.00ns  0.00ns       0     0B
ZSTD_…eneric_noDict_beta     10  11.00ms  0.00ns  0.00ns       0     0B
(10 more functions hidden: --top N or --all shows them)

2 frames
EOF
expect frames_80 env COLUMNS=80 "$P" report --db "$D" 1 --frames <<'EOF'
Frame        Total  leveldb::DBImpl::WriteLevel0Table(…)   Allocs      Bytes
----------------------------------------------------------------------------
1           1.00us                              100.00ns        0         0B
2           1.00us                              100.00ns        0         0B

2 frames | 0 spikes (>2x median)
EOF
expect frames_120 env COLUMNS=120 "$P" report --db "$D" 1 --frames <<'EOF'
Frame        Total  leve…WriteLevel0Table(…)  leveldb::DBIm…::Write(…)  Foo<int>::run()   Allocs      Bytes
-----------------------------------------------------------------------------------------------------------
1           1.00us                  100.00ns                   50.00ns          20.00ns        0         0B
2           1.00us                  100.00ns                   50.00ns          20.00ns        0         0B

2 frames | 0 spikes (>2x median)
EOF
expect runs_80 env COLUMNS=80 "$P" runs --db "$D" <<'EOF'
Run    Tags  PID  Parent  Command                       Started  Duration  Status     Frames
--------------------------------------------------------------------------------------------
2      -       2       -  db_bench          2023-11-14 22:15:00   unknown  recovered       0
1      -       1       -  redis-server ...  2023-11-14 22:13:20     2.00s  complete        2
EOF
# From 80 columns on, every line of a report fits (issue 23).
for cols in 80 100 120 160; do
    w=$(COLUMNS=$cols "$P" report --db "$D" 1 --all | LC_ALL=C.UTF-8 wc -L)
    [ "$w" -le "$cols" ] || fail "COLUMNS=$cols: report is $w wide"
    # --frames: as many leading functions as fit (the spike mark counted)
    for cpu in "" --cpu; do
        w=$(COLUMNS=$cols "$P" report --db "$D" 1 --frames $cpu | sed -n 1p | LC_ALL=C.UTF-8 wc -L)
        [ $((w + 4)) -le "$cols" ] || fail "COLUMNS=$cols: report --frames $cpu is $w wide"
    done
done
# Every row and header reads differently, whatever the width.
for cols in 40 60 80 100 160 400; do
    COLUMNS=$cols "$P" report --db "$D" 1 --all | sed -n '3,14p' | sed 's/  *[0-9][0-9]* .*//' | sort | uniq -d > "$W/dups"
    [ -s "$W/dups" ] && fail "COLUMNS=$cols: rows alike: $(cat "$W/dups")"
    COLUMNS=$cols "$P" report --db "$D" 1 --frames | head -1 | sed 's/   */\n/g' | sort | uniq -d > "$W/dups"
    [ -s "$W/dups" ] && fail "COLUMNS=$cols: frame headers alike: $(cat "$W/dups")"
done
# JSON, CSV: full names, full paths.
"$P" report --db "$D" 1 --json | grep -q '"function": "leveldb::SkipList<char const\*, leveldb::MemTable::KeyComparator>::FindGreaterOrEqual(char const\* const&, leveldb::SkipList<char const\*, leveldb::MemTable::KeyComparator>::Node\*\*) const", "file": "/src/db/skiplist.h"' ||
    fail "report --json lost a full name"
"$P" report --db "$D" 1 --csv | grep -q '^ZSTD_highbit32,/src/lib//decompress/zstd_compress.c,120,' || fail "report --csv lost a path"
"$P" runs --db "$D" --json | grep -q '"command": "/home/user/src/redis/src/redis-server --port 7000 --save \\"\\" --appendonly no --dir /tmp/some/long/folder/name --loglevel warning"' ||
    fail "runs --json lost the command"
# C++ names as c++filt shows them, without the return type a template
# function's demangled name carries; cut in the middle of qualifiers and
# template arguments, never the function's own name; every table within
# COLUMNS (issue 23).
C=$W/cxx.db
"$FX" empty "$C" || exit 1
I21=$(i=0; s=""; while [ $i -lt 21 ]; do s="$s${s:+, }int const&"; i=$((i + 1)); done; echo "$s")
I20=${I21%, int const&}
"$P" --db "$C" sql <<SQL || exit 1
INSERT INTO runs(id,key,pid,command,started_ns,duration_ns,status,clock,ns_per_tick) VALUES
 (1,'1-1',1,'./format-test',1700000000000000000,2000000000,'complete','tsc',1.0);
INSERT INTO functions(run,id,name,file,line) VALUES
 (1,1,'char const* fmt::v12::detail::parse_format_specs<char>(char const*, char const*, fmt::v12::detail::dynamic_format_specs<char>&, fmt::v12::detail::parse_context<char>&, fmt::v12::detail::type)','/src/include/fmt/base.h',1500),
 (1,2,'std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > fmt::v12::format<$I21>(fmt::v12::fstring<$I21>::t, $I21)','/src/include/fmt/format.h',4200),
 (1,3,'std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > fmt::v12::format<$I20>(fmt::v12::fstring<$I20>::t, $I20)','/src/include/fmt/format.h',4200),
 (1,4,'fmt::v12::basic_appender<char> fmt::v12::detail::write<char, fmt::v12::basic_appender<char>, int, 0>(fmt::v12::basic_appender<char>, int)','/src/include/fmt/format.h',2000),
 (1,5,'decltype (({parm#1}.begin)()) std::begin<std::vector<int, std::allocator<int> > >(std::vector<int, std::allocator<int> >&)','/usr/include/c++/12/bits/range_access.h',52),
 (1,6,'fmt::v12::detail::S::operator char const*() const','/src/s.h',3),
 (1,7,'void* operator new<Pool>(unsigned long, Pool&)','/src/pool.h',9),
 (1,8,'(anonymous namespace)::utf8_decode(char const*, unsigned int*, int*)','/src/test/format-impl-test.cc',30);
INSERT INTO stats(run,thread,fn,calls,self_ns,total_ns,allocs,alloc_bytes,frees,free_bytes) VALUES
 (1,0,1,10,8000000,8000000,0,0,0,0),(1,0,2,10,7000000,7000000,0,0,0,0),(1,0,3,10,6000000,6000000,0,0,0,0),
 (1,0,4,10,5000000,5000000,0,0,0,0),(1,0,5,10,4000000,4000000,0,0,0,0),(1,0,6,10,3000000,3000000,0,0,0,0),
 (1,0,7,10,2000000,2000000,0,0,0,0),(1,0,8,10,1000000,1000000,0,0,0,0);
SQL
expect cxx_100 env COLUMNS=100 "$P" report --db "$C" 1 <<'EOF'
Function                                  Calls       Self        p50        p99   Allocs      Bytes
----------------------------------------------------------------------------------------------------
fmt::v12::det…::parse_format_specs<…>(…)     10     8.00ms     0.00ns     0.00ns        0         0B
fmt::v12::format<…>(…)                       10     7.00ms     0.00ns     0.00ns        0         0B
fmt::v12::format<…>(…) #2                    10     6.00ms     0.00ns     0.00ns        0         0B
fmt::v12::detail::write<…>(…)                10     5.00ms     0.00ns     0.00ns        0         0B
std::begin<…>(std::vector<…>&)               10     4.00ms     0.00ns     0.00ns        0         0B
fmt::v12:…::operator char const*() const     10     3.00ms     0.00ns     0.00ns        0         0B
operator new<Pool>(unsigned long, Pool&)     10     2.00ms     0.00ns     0.00ns        0         0B
(anonymous namespace)::utf8_decode(…)        10     1.00ms     0.00ns     0.00ns        0         0B

0 frames
EOF
for cols in 100 120 160 240 400; do
    COLUMNS=$cols "$P" report --db "$C" 1 > "$W/out" || fail "cxx COLUMNS=$cols: exit $?"
    # one column per character: the ellipsis is three bytes
    wide=$(sed 's/\xe2\x80\xa6/./g' "$W/out" | awk -v c="$cols" 'length($0) > c' | head -1)
    [ -z "$wide" ] || fail "cxx COLUMNS=$cols: wider: $wide"
    grep -Eq '^(char const\*|std::__cxx11|fmt::v12::basic_appender<char> |decltype|void\* )' "$W/out" &&
        fail "cxx COLUMNS=$cols: a return type shown: $(grep -E '^(char|std::__|decltype|void)' "$W/out" | head -1)"
    sed -n '3,10p' "$W/out" | sed 's/  *[0-9][0-9]* .*//' | sort | uniq -d > "$W/dups"
    [ -s "$W/dups" ] && fail "cxx COLUMNS=$cols: rows alike: $(cat "$W/dups")"
done
COLUMNS=400 "$P" report --db "$C" 1 | grep -q '^fmt::v12::detail::write<char, fmt::v12::basic_appender<char>, int, 0>(fmt::v12::basic_appender<char>, int)  ' ||
    fail "cxx COLUMNS=400: write not shown whole"
"$P" report --db "$C" 1 --json | grep -q '"function": "char const\* fmt::v12::detail::parse_format_specs<char>(' ||
    fail "cxx --json lost the full name"
# Control characters in names (issue 25): every table escapes them as report's rows do
# (\x1b, \u0085...), thread names in report --threads, function names in --frames headers,
# the allocator's name and the command too: none reaches the terminal raw.
E=$W/escapes.db
"$FX" basic "$E" || exit 1
sqlite3 "$E" "UPDATE names SET name = name || char(27) || '[31m' || char(7) || char(133) WHERE name IN ('parse', 'helper', 'main');
  UPDATE threads SET name = char(27) || '[2J' || name || char(13) || char(127);
  UPDATE runs SET command = command || ' ' || char(27) || ']0;title' || char(7), allocator = 'my' || char(27) || '[1malloc' WHERE id = 2" ||
    fail "escapes fixture"
C1=$(printf '\302[\200-\237]')
for cmd in "report" "report 1" "report --threads" "report --frames" "report --frames --spikes" "report --frames --thread 1" \
           "report --cpu" "report --all" "report --sort calls" "runs" "tag" "diff" "diff 1 2"; do
    # shellcheck disable=SC2086
    "$P" $cmd --db "$E" > "$W/out" 2> "$W/err" || fail "$cmd: exit $?: $(cat "$W/err")"
    raw=$(tr -d '\t\n\040-\176\200-\377' < "$W/out" | wc -c)
    [ "$raw" -eq 0 ] && ! grep -q "$C1" "$W/out" || fail "$cmd: control characters printed raw: $(grep -n "$(printf '[\001-\010\013-\037\177]')\|$C1" "$W/out" | head -3 | cat -v)"
done
"$P" report --threads --db "$E" | grep -qxF 'Thread 1 (tid 1005, \x1b[2Jworker "w"\r\x7f)' || fail "report --threads: the thread's name not escaped"
"$P" report --frames --db "$E" | head -1 | grep -qF '  parse\x1b[31m\x07\u0085    resolve  ' || fail "report --frames: the header not escaped"

[ $FAILS -eq 0 ] && echo "ok: names" && exit 0
echo "$FAILS failure(s) in names"
exit 1
