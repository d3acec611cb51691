#!/usr/bin/env bash
# redis.sh BINDIR REDIS_GIT [WORK] - the Redis trial of doc/testing.md "Real programs", by hand
# (not in ctest: builds take 6-18 min each on 2 cores). Builds redis plain and with
# BINDIR/piano-cc (PIANO_FNS='*', MALLOC=${MALLOC:-jemalloc}), runs a server of each with
# redis-benchmark and BGSAVE, checks that piano's `call` counts equal the sum of INFO
# commandstats' calls and that the BGSAVE child is a run linked to the server, under its own
# title (redis-rdb-bgsave), then runs the
# same test units on both and compares the passing test names. Ports 27000-27999.
set -eu
BINDIR=$(cd "$1" && pwd) GIT=$2 WORK=${3:-/tmp/redis-piano}
MALLOC=${MALLOC:-jemalloc} UNITS=${UNITS:-unit/other integration/rdb unit/expire integration/aof
unit/shutdown integration/shutdown unit/info unit/type/list}
mkdir -p "$WORK" && cd "$WORK"
for v in plain piano; do
  [ -d "$v" ] || git clone -q "$GIT" "$v"
  cc=cc; [ $v = piano ] && cc=$BINDIR/piano-cc
  [ -x $v/src/redis-server ] || PIANO_FNS='*' PIANO_DB=$WORK/build.db \
    make -C $v -j2 MALLOC="$MALLOC" CC="$cc" > $v.build.log 2>&1
done
cli=plain/src/redis-cli
export PIANO_DB=$WORK/piano.db PIANO_INTERVAL=1
piano/src/redis-server --port 27901 --save '' --dir "$WORK" --logfile "$WORK/server.log" > server.out 2> server.err & pid=$!
for _ in $(seq 200); do $cli -p 27901 ping 2> /dev/null | grep -q PONG && break; sleep 0.1; done
plain/src/redis-benchmark -p 27901 -n 20000 -c 4 -t set,get,lpush,incr -q > /dev/null
$cli -p 27901 bgsave
until $cli -p 27901 info persistence | grep -q 'rdb_bgsave_in_progress:0'; do sleep 0.1; done
calls=$($cli -p 27901 info commandstats | sed -n 's/.*:calls=\([0-9]*\),.*/\1/p' | paste -sd+ | bc)
$cli -p 27901 shutdown nosave || true
wait $pid || { echo "FAIL: redis-server exited $?"; exit 1; }
[ ! -s server.out ] && [ ! -s server.err ] || { echo "FAIL: server output"; cat server.out server.err; exit 1; }
db() { "$BINDIR/piano-db" "$@"; }
server=$(db runs --json | jq '[.[] | select(.parent == null and (.command | test("redis-server")))][0].run')
piano_calls=$(db report "$server" --json | jq '[.[] | select(.function == "call") | .calls] | add')
# the INFO that counted them is itself counted by `call` once it returns, the SHUTDOWN too
echo "commandstats calls $calls (+ info, shutdown), piano's call: $piano_calls"
[ "$piano_calls" = $((calls + 2)) ] || { echo "FAIL: call counts"; exit 1; }
children=$(db runs --json | jq "[.[] | select(.parent == $server)] | length")
echo "runs linked to the server (BGSAVE children): $children"
[ "$children" = 1 ] || { echo "FAIL: BGSAVE child run"; exit 1; }
# it ends with _exit, under the title it set (rt/exit_now.c), not its server's
title=$(db runs --json | jq -r "[.[] | select(.parent == $server)][0].command")
echo "the BGSAVE child's title: $title"
case $title in redis-rdb-bgsave*) ;; *) echo "FAIL: BGSAVE child's title"; exit 1 ;; esac
singles=(); for u in $UNITS; do singles+=(--single "$u"); done
port=27000
for v in plain piano; do
  (cd $v && PIANO_DB=$WORK/tests.db ./runtest --baseport $port --portcount 400 --clients 2 "${singles[@]}") > $v.test.log 2>&1 ||
    echo "note: $v tests exited $?"
  sed 's/\x1b\[[0-9;]*m//g' $v.test.log | grep '^\[ok\]' | sed 's/ ([0-9]* ms)$//' | sort > $v.ok
  port=$((port + 400))
done
diff plain.ok piano.ok > /dev/null || { echo "FAIL: tests differ"; diff plain.ok piano.ok | head; exit 1; }
echo "ok: $(wc -l < piano.ok) tests passed in both builds; $(db --db "$WORK/tests.db" runs --json | jq length) runs stored"
