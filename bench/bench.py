#!/usr/bin/env python3
"""bench.py - piano's overhead benchmark (issue 5). Run through bench/run.sh.

Builds every workload in four (five) ways, runs the variants ALTERNATING
(plain, piano, disable, floor, uftrace, plain, piano, ...) for several rounds,
and reports medians. Then: storing a 1M-frame run, memory, compile time.
Everything printed is measured on this machine at run time.
"""
import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.path.join(ROOT, os.environ.get('BENCH_BUILD', 'build'))  # BENCH_BUILD=build-x: another build folder
BIN = os.path.join(BUILD, 'bin')
PIANO_CC = os.path.join(BIN, 'piano-cc')
PIANO_DB = os.path.join(BIN, 'piano-db')
CLANG = os.environ.get('BENCH_CLANG', 'clang')
UFTRACE = shutil.which('uftrace')
TIME = '/usr/bin/time' if os.access('/usr/bin/time', os.X_OK) else None
MiB = 1024 * 1024


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith('PIANO_')}
    env.update(extra)
    return env


def sh(cmd, env=None, **kw):
    r = subprocess.run(cmd, env=env or clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, **kw)
    if r.returncode != 0:
        sys.exit('bench: command failed (%d): %s\n%s%s' % (r.returncode, ' '.join(cmd), r.stdout, r.stderr))
    return r


def run_prog(cmd, env):
    """Runs a workload; returns its BENCH fields plus exit_ns (end of main -> reaped),
    and wall_ns."""
    t0 = time.monotonic_ns()
    with tempfile.TemporaryFile() as ef:
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=ef)
        out = p.stdout.read()
        _, status, ru = os.wait4(p.pid, 0)
        ef.seek(0)
        err = ef.read()
    t1 = time.monotonic_ns()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit('bench: %s exited %d\n%s' % (' '.join(cmd), p.returncode, err.decode(errors='replace')))
    m = re.search(rb'BENCH (.*)', out)
    if not m:
        sys.exit('bench: no BENCH line from %s\n%s' % (' '.join(cmd), out.decode(errors='replace')))
    f = {k: int(v) for k, v in (kv.split(b'=') for kv in m.group(1).split())}
    f = {k.decode(): v for k, v in f.items()}
    f['exit_ns'] = t1 - f['end_ns']
    f['wall_ns'] = t1 - t0
    f['proc_cpu_ns'] = int((ru.ru_utime + ru.ru_stime) * 1e9)   # every thread's, exit included
    f['stderr'] = err.decode(errors='replace')
    return f


# ---------------------------------------------------------------- build

class Build:
    def __init__(self, out, quick):
        self.out = out
        self.quick = quick
        os.makedirs(out, exist_ok=True)

    def path(self, name):
        return os.path.join(self.out, name)

    def cc(self, args, env=None):
        sh(args, env=env)

    def workload(self, name, src, extra=()):
        """Builds name.{plain,piano,floor[,pg]} from src. Every wk_ function is instrumented,
        whatever its size (PIANO_MIN_SIZE=0): the workloads measure the cost of a call."""
        common = ['-O2', '-I', os.path.join(HERE, 'src'), src, *extra]
        self.cc([CLANG, *common, '-o', self.path(name + '.plain')])
        self.cc([PIANO_CC, *common, '-o', self.path(name + '.piano')], env=clean_env(PIANO_FNS='wk_', PIANO_MIN_SIZE='0'))
        self.cc([PIANO_CC, *common, '-o', self.path(name + '.guard')],
                env=clean_env(PIANO_FNS='wk_', PIANO_MIN_SIZE='0', PIANO_GUARD='1'))
        self.cc([CLANG, '-O2', '-c', os.path.join(HERE, 'floor_hooks.c'), '-o', self.path('floor_hooks.o')])
        self.cc([CLANG, '-finstrument-functions', *common, self.path('floor_hooks.o'),
                 '-o', self.path(name + '.floor')])
        if UFTRACE:
            self.cc([CLANG, '-pg', *common, '-o', self.path(name + '.pg')])

    def heap_only(self):
        src = os.path.join(HERE, 'src')
        self.workload('heap', os.path.join(src, 'heap.c'), ['-pthread'])
        self.cc([CLANG, '-O2', '-I', src, os.path.join(src, 'rdtsc.c'), '-o', self.path('rdtsc')])

    def all(self):
        src = os.path.join(HERE, 'src')
        gen = os.path.join(HERE, 'gen.py')
        sh([sys.executable, gen, 'many', '1000', self.path('many.c')])
        sh([sys.executable, gen, 'short', str(SHORT_PROCESS_FNS), self.path('shortproc.c')])
        self.workload('recursion', os.path.join(src, 'recursion.c'))
        self.workload('frames', os.path.join(src, 'frames.c'))
        self.workload('many', self.path('many.c'))
        self.workload('threads', os.path.join(src, 'threads.c'), ['-pthread'])
        self.workload('short', os.path.join(src, 'short_threads.c'), ['-pthread'])
        self.workload('shortproc', self.path('shortproc.c'))
        self.workload('heap', os.path.join(src, 'heap.c'), ['-pthread'])
        self.cc([CLANG, '-O2', '-I', src, os.path.join(src, 'rdtsc.c'), '-o', self.path('rdtsc')])


# ---------------------------------------------------------------- runs

# guard, gdisable: the piano build made with PIANO_GUARD=1, recording and with PIANO_DISABLE=1
VARIANTS = ['plain', 'piano', 'disable', 'guard', 'gdisable', 'floor'] + (['uftrace'] if UFTRACE else [])


class Runner:
    def __init__(self, b, tmp):
        self.b = b
        self.tmp = tmp
        self.n = 0

    def cmd_env(self, name, variant, args, db=None):
        """The command and environment of one run; db: keep the piano database there."""
        self.n += 1
        if variant == 'plain':
            return [self.b.path(name + '.plain'), *args], clean_env()
        if variant == 'floor':
            return [self.b.path(name + '.floor'), *args], clean_env()
        if variant == 'uftrace':
            d = os.path.join(self.tmp, 'uftrace.%d' % self.n)
            return [UFTRACE, 'record', '--no-libcall', '-d', d, self.b.path(name + '.pg'), *args], clean_env()
        dbf = db or os.path.join(self.tmp, 'run%d.db' % self.n)
        # Every frame kept, as before the default budget became 8,000 frames (issue 20): (b) and
        # the storing figures measure writing and storing every record. frames_budget.py
        # measures the default.
        env = clean_env(PIANO_DB=dbf, PIANO_FRAMES='all')
        if variant == 'cpu':   # PIANO_CPU=1 (doc/running.md, CPU time)
            env['PIANO_CPU'] = '1'
        if variant == 'base':  # the same binary on another runtime (BENCH_BASE_LIB: its lib folder)
            env['LD_LIBRARY_PATH'] = os.environ['BENCH_BASE_LIB']
        if variant in ('disable', 'gdisable'):
            env['PIANO_DISABLE'] = '1'
        binary = name + ('.guard' if variant in ('guard', 'gdisable') else '.piano')
        return [self.b.path(binary), *args], env

    def run(self, name, variant, args, db=None):
        cmd, env = self.cmd_env(name, variant, args, db)
        f = run_prog(cmd, env)
        if variant in ('piano', 'disable', 'guard', 'gdisable', 'cpu', 'base') and f['stderr'].strip():
            log('  note: %s stderr: %s' % (variant, f['stderr'].strip()[:300]))
        if db is None:
            self.cleanup()
        return f

    def cleanup(self):
        for e in os.listdir(self.tmp):
            if e.startswith(('run', 'uftrace.')):
                p = os.path.join(self.tmp, e)
                shutil.rmtree(p) if os.path.isdir(p) else os.unlink(p)


def med(xs):
    return statistics.median(xs)


def alternate(r, name, sizes, rounds, cost='cpu_ns', keep_db=None, variants=None):
    """Runs every variant once per round, in turn. sizes: variant -> argv.
    Returns variant -> list of BENCH dicts."""
    variants = variants or VARIANTS
    res = {v: [] for v in variants}
    for i in range(rounds):
        for v in variants:
            db = keep_db if (keep_db and v == 'piano' and i == 0) else None
            res[v].append(r.run(name, v, sizes[v], db))
        log('  %s round %d/%d: %s' % (name, i + 1, rounds, '  '.join(
            '%s %.1fns' % (v, res[v][-1][cost] / res[v][-1]['calls']) for v in variants)))
    return res


def per_call(res, cost='cpu_ns'):
    """variant -> median ns per call, and overhead over plain."""
    pc = {v: med([x[cost] / x['calls'] for x in res[v]]) for v in res}
    over = {v: pc[v] - pc['plain'] for v in pc}
    return pc, over


def piano_calls(db):
    r = sh([PIANO_DB, 'report', '--db', db, '--json', '--all'])
    return {row['function']: row['calls'] for row in json.loads(r.stdout)}


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--quick', action='store_true', help='fewer rounds, smaller workloads (~1.5 min)')
    ap.add_argument('--rounds', type=int, help='rounds of alternating runs (default 5, --quick 3)')
    ap.add_argument('--out', default=os.path.join(BUILD, 'bench'), help='build folder (build/bench)')
    ap.add_argument('--skip-compile', action='store_true', help='skip the compile-time measurement')
    ap.add_argument('--snapshots', action='store_true',
                    help='only the cost of PIANO_INTERVAL: (c) without it, =1 and =0.1, and bytes per snapshot')
    ap.add_argument('--cpu-modes', action='store_true',
                    help='only the per-call rows (a), (c), (d) 1 thread, for each CPU-time mode: PIANO_CPU unset '
                         'and =1 (and, with BENCH_BASE_LIB=DIR, the same binaries on the runtime in DIR)')
    ap.add_argument('--only-heap', action='store_true', help='only row (g), heap tracking (and, with '
                    'BENCH_BASE_LIB=DIR, the same binary on the runtime in DIR)')
    ap.add_argument('--heap-frames', metavar='MODE', help='PIANO_FRAMES of row (g)\'s piano runs (default all; '
                    'off: allocation hooks without storing every call\'s frame)')
    ap.add_argument('--live-reads', action='store_true',
                    help='only the reading commands on a live run of 10,000,000 frames and 10,101 contexts')
    a = ap.parse_args()
    if a.snapshots:
        return snapshots(a)
    if a.live_reads:
        return live_reads(a)
    q = a.quick
    rounds = a.rounds or (3 if q else 5)
    t_start = time.monotonic()

    b = Build(a.out, q)
    log('bench: building workloads into %s' % a.out)
    if a.only_heap:
        b.heap_only()
    else:
        b.all()
    tmp = tempfile.mkdtemp(prefix='piano-bench.')
    r = Runner(b, tmp)
    if a.cpu_modes:
        cpu_modes(r, rounds, q)
        shutil.rmtree(tmp, ignore_errors=True)
        return
    R = {'machine': machine(b), 'rounds': rounds, 'quick': q, 'uftrace': bool(UFTRACE)}
    heap_pairs = 500000 if q else 2000000
    if a.only_heap:
        log('bench: (g) heap tracking, %d malloc/free pairs per thread' % heap_pairs)
        R['heap'] = heap_tracking(r, rounds, heap_pairs, a.heap_frames)
        shutil.rmtree(tmp, ignore_errors=True)
        heap_report(R['heap'])
        return

    # sizes: (a) fib(N)  (b) frames  (c) repetitions of 1,001 calls  (d) per-thread fib(N)
    fibn = 32 if q else 35
    nframes = 1000000
    reps = 5000 if q else 20000
    tfib = 29 if q else 31
    small = {'uftrace'}  # uftrace writes every call to disk: run it on less work
    def sizes(big, little):
        return {v: [str(little if v in small else big)] for v in VARIANTS}

    work = {}
    log('bench: (a) recursion fib(%d)' % fibn)
    work['recursion'] = alternate(r, 'recursion', sizes(fibn, 26), rounds)
    log('bench: (b) frame loop, %d frames' % nframes)
    keep = os.path.join(tmp, 'keep-1M.db')
    work['frames'] = alternate(r, 'frames', sizes(nframes, 100000), rounds, keep_db=keep)
    log('bench: (c) 1,000 functions x %d' % reps)
    work['many'] = alternate(r, 'many', sizes(reps, 500), rounds)

    # correctness of the call counts we divide by: piano's own count must match.
    check = {}
    dbf = os.path.join(tmp, 'check.db')
    for name, args, fn, expect in [('recursion', ['25'], 'wk_fib', 2 * 121393 - 1),
                                   ('many', ['10'], 'wk_f999', 10)]:
        cmd, env = r.cmd_env(name, 'piano', args, dbf)
        run_prog(cmd, env)
        got = piano_calls(dbf).get(fn)
        check[name] = (got, expect)
        if got != expect:
            log('bench: WARNING: piano recorded %s calls of %s, expected %s' % (got, fn, expect))
    got = piano_calls(keep)
    check['frames'] = (sum(got.values()), 4 * nframes)

    log('bench: (d) threads, per-thread fib(%d)' % tfib)
    threads = {}
    for t in (1, 2, 8):
        sz = {v: [str(t), str(22 if v in small else tfib)] for v in VARIANTS}
        threads[t] = alternate(r, 'threads', sz, rounds, cost='cpu_ns')

    log('bench: (g) heap tracking, %d malloc/free pairs per thread' % heap_pairs)
    R['heap'] = heap_tracking(r, rounds, heap_pairs, a.heap_frames)
    R['short'] = short_threads(r, rounds, 300, tmp)
    R['shortproc'] = short_process(r, 4 if q else 10, tmp)
    R['storing'] = storing(r, work['frames'], keep, nframes, tmp)
    R['memory'] = memory(r, q)
    if not a.skip_compile:
        R['compile'] = compile_time(b, 2000 if q else 5000, 2 if q else 3)
    shutil.rmtree(tmp, ignore_errors=True)

    check['short'] = R['short']['calls']
    check['shortproc'] = R['shortproc']['calls']
    R['check'] = check
    R['workloads'] = {}
    for name, res in work.items():
        pc, over = per_call(res)
        _, over_wall = per_call(res, 'work_ns')
        R['workloads'][name] = {'calls': res['piano'][0]['calls'], 'per_call': pc, 'over': over,
                                'over_wall': over_wall,
                                'raw': {v: [x['work_ns'] for x in res[v]] for v in res}}
    R['threads'] = {}
    for t, res in threads.items():
        pc, over = per_call(res, 'cpu_ns')
        R['threads'][t] = {'calls': res['piano'][0]['calls'], 'per_call': pc, 'over': over}
    R['seconds'] = time.monotonic() - t_start
    report(R)
    with open(os.path.join(a.out, 'results.json'), 'w') as f:
        json.dump(R, f, indent=1, default=str)
    log('bench: done in %.0f s; raw figures in %s' % (R['seconds'], os.path.join(a.out, 'results.json')))


def cpu_modes(r, rounds, q):
    """ns added per call over plain (thread CPU time, medians of alternating rounds) by
    piano without and with PIANO_CPU=1, and by the runtime in BENCH_BASE_LIB."""
    variants = ['plain'] + (['base'] if os.environ.get('BENCH_BASE_LIB') else []) + ['piano', 'cpu']
    rows = [('(a) recursion', 'recursion', [str(32 if q else 35)]),
            ('(c) 1,000 functions', 'many', [str(5000 if q else 20000)]),
            ('(d) 1 thread (CPU)', 'threads', ['1', str(29 if q else 31)])]
    out = []
    for label, name, args in rows:
        log('bench: %s' % label)
        res = alternate(r, name, {v: args for v in variants}, rounds, variants=variants)
        pc, over = per_call(res)
        out.append((label, pc, over))
    print('%-22s %9s' % ('workload', 'plain') + ''.join('%12s' % v for v in variants[1:]) +
          ('%14s' % 'piano-base' if 'base' in variants else '') + '%13s' % 'cpu-piano')
    for label, pc, over in out:
        line = '%-22s %8.2fn' % (label, pc['plain']) + ''.join('%11.2fn' % over[v] for v in variants[1:])
        if 'base' in variants:
            line += '%13.2fn' % (over['piano'] - over['base'])
        print(line + '%12.2fn' % (over['cpu'] - over['piano']))
    print('(plain: ns per call of the uninstrumented build; base, piano (PIANO_CPU unset), cpu (PIANO_CPU=1): '
          'ns added per call; last columns: differences)')


def machine(b):
    model = ''
    with open('/proc/cpuinfo') as f:
        for line in f:
            if line.startswith('model name'):
                model = line.split(':', 1)[1].strip()
                break
    ts = [run_prog([b.path('rdtsc'), '10000000'], clean_env()) for _ in range(3)]
    rd = med([x['cpu_ns'] / x['calls'] for x in ts])
    cc = sh([CLANG, '--version']).stdout.splitlines()[0]
    return {'nproc': os.cpu_count(), 'cpu': model, 'rdtsc_ns': rd, 'kernel': platform.release(), 'clang': cc,
            'uftrace': sh([UFTRACE, '--version']).stdout.split('\n')[0] if UFTRACE else None}


def heap_tracking(r, rounds, pairs, frames=None):
    """(g) malloc/free pairs of mixed sizes in an instrumented function, 1 and 4
    threads: plain, piano (allocation counts only), piano with PIANO_HEAP=1
    (heap in use); with BENCH_BASE_LIB=DIR also both on the runtime in DIR (base,
    base_heap: the same binary). frames: PIANO_FRAMES of the piano runs (all
    unless given). ns of thread CPU per pair, medians of alternating rounds."""
    out = {}
    base = ['base', 'base_heap'] if os.environ.get('BENCH_BASE_LIB') else []
    for t in (1, 4):
        res = {v: [] for v in ['plain', 'piano', 'heap'] + base}
        for i in range(rounds):
            for v in res:
                variant = 'plain' if v == 'plain' else 'base' if v.startswith('base') else 'piano'
                cmd, env = r.cmd_env('heap', variant, [str(t), str(pairs)])
                if v.endswith('heap'):
                    env['PIANO_HEAP'] = '1'
                if frames and variant != 'plain':
                    env['PIANO_FRAMES'] = frames
                f = run_prog(cmd, env)
                r.cleanup()
                res[v].append(f['cpu_ns'] / f['calls'])
            log('  heap %d thread%s round %d/%d: %s' % (t, 's' if t > 1 else '', i + 1, rounds, '  '.join(
                '%s %.1fns' % (v, res[v][-1]) for v in res)))
        pc = {v: med(x) for v, x in res.items()}
        out[t] = {'pairs': t * pairs, 'per_pair': pc, 'raw': res,
                  'tracking_pct': 100 * (pc['heap'] - pc['piano']) / pc['piano']}
    return out


def short_threads(r, rounds, n, tmp):
    """(e) n short threads, created and joined one at a time, one instrumented call each:
    wall us per thread, plain vs piano (what a thread's first call costs), and the whole
    process (start to reaped, piano's import included). piano's call count is checked."""
    log('bench: (e) %d short threads' % n)
    res = {'plain': [], 'piano': []}
    for i in range(rounds + 2):   # more rounds: a run is short
        for v in res:
            res[v].append(r.run('short', v, [str(n)]))
        log('  short round %d/%d: %s' % (i + 1, rounds + 2, '  '.join(
            '%s %.1fus' % (v, res[v][-1]['work_ns'] / n / 1e3) for v in res)))
    dbf = os.path.join(tmp, 'short.db')
    cmd, env = r.cmd_env('short', 'piano', [str(n)], dbf)
    run_prog(cmd, env)
    got = piano_calls(dbf).get('wk_task')
    if got != n:
        log('bench: WARNING: piano recorded %s calls of wk_task, expected %d' % (got, n))
    o = {'threads': n, 'calls': (got, n)}
    for v in res:
        o[v + '_us'] = med([x['work_ns'] / n / 1e3 for x in res[v]])
        o[v + '_cpu_us'] = med([x['cpu_ns'] / n / 1e3 for x in res[v]])
        o[v + '_process_ms'] = med([x['wall_ns'] / 1e6 for x in res[v]])
    o['added_us'] = o['piano_us'] - o['plain_us']
    return o


SHORT_PROCESS_FNS = 2000


def short_process(r, rounds, tmp):
    """(f) a short process with SHORT_PROCESS_FNS instrumented functions, 10 of them called:
    ms from its start to reaped (piano's start and exit store included), plain, PIANO_DISABLE=1
    and piano, each run 10 times per round in turn; piano stores into one database, as a test
    suite's many runs would. Medians."""
    log('bench: (f) a short process, %d functions' % SHORT_PROCESS_FNS)
    res = {'plain': [], 'disable': [], 'piano': []}
    dbf = os.path.join(tmp, 'shortproc.db')
    r.run('shortproc', 'piano', [], dbf)   # the database exists before the rounds
    for i in range(rounds):
        for v in res:
            for _ in range(10):
                res[v].append(r.run('shortproc', v, [], dbf if v == 'piano' else None)['wall_ns'] / 1e6)
        log('  short process round %d/%d: %s' % (i + 1, rounds, '  '.join(
            '%s %.2fms' % (v, med(res[v][-10:])) for v in res)))
    got = piano_calls(dbf).get('wk_f9')   # the latest run's
    if got != 1:
        log('bench: WARNING: piano recorded %s calls of wk_f9 in the latest run, expected 1' % got)
    o = {'functions': SHORT_PROCESS_FNS, 'runs': 10 * rounds, 'calls': (got, 1)}
    for v in res:
        o[v + '_ms'] = med(res[v])
    o['added_ms'] = o['piano_ms'] - o['plain_ms']
    return o


def storing(r, frames_res, keep, nframes, tmp):
    """Import speed (exit time of piano minus PIANO_DISABLE on the 1M-frame run),
    report time, database bytes per frame."""
    ex_p = med([x['exit_ns'] for x in frames_res['piano']])
    ex_d = med([x['exit_ns'] for x in frames_res['disable']])
    rep = []
    for _ in range(3):
        t0 = time.monotonic_ns()
        sh([PIANO_DB, 'report', '--db', keep])
        rep.append(time.monotonic_ns() - t0)
    rep_frames = []
    for _ in range(3):
        t0 = time.monotonic_ns()
        sh([PIANO_DB, 'report', '--db', keep, '--frames', '--top', '10'])
        rep_frames.append(time.monotonic_ns() - t0)
    size_big = os.stat(keep).st_size
    small_db = os.path.join(tmp, 'keep-1k.db')
    cmd, env = r.cmd_env('frames', 'piano', ['1000'], small_db)
    run_prog(cmd, env)
    size_small = os.stat(small_db).st_size
    return {'frames': nframes, 'exit_piano_ns': ex_p, 'exit_disable_ns': ex_d,
            'import_ns': ex_p - ex_d, 'frames_per_s': nframes / ((ex_p - ex_d) / 1e9),
            'report_ns': med(rep), 'report_frames_ns': med(rep_frames),
            'db_bytes': size_big, 'db_bytes_1k': size_small,
            'bytes_per_frame': (size_big - size_small) / (nframes - 1000)}


def memory(r, q):
    """Peak RSS: short vs long runs, and 1 vs 8 threads."""
    out = {}
    def rss(name, variant, args, quick_exit=False):
        # main_kb: VmHWM at the end of main. process_kb: /usr/bin/time -f %M, the whole
        # process's peak including piano's import after main (time's own small fork is what
        # exec inherits as ru_maxrss, not the harness's peak).
        xs = []
        for _ in range(2):
            cmd, env = r.cmd_env(name, variant, args)
            if quick_exit:
                env['BENCH_QUICK_EXIT'] = '1'
            if TIME:
                cmd = [TIME, '-f', 'TIMEKB %M', *cmd]
            x = run_prog(cmd, env)
            m = re.search(r'TIMEKB (\d+)', x['stderr'])
            x['process_kb'] = int(m.group(1)) if m and not quick_exit else -1
            xs.append(x)
            r.cleanup()
        return {'main_kb': med([x['maxrss_kb'] for x in xs]), 'process_kb': med([x['process_kb'] for x in xs])}
    log('bench: memory')
    long_frames = '1000000' if q else '4000000'
    long_fib = '32' if q else '36'
    for v in ('plain', 'piano'):
        out['frames_10k_' + v] = rss('frames', v, ['10000'])
        out['frames_1M_' + v] = rss('frames', v, ['1000000'])
        out['frames_%sM_' % long_frames[0] + v + '_noimport'] = rss('frames', v, [long_frames], True)
        out['fib25_' + v] = rss('recursion', v, ['25'])
        out['fib%s_' % long_fib + v + '_noimport'] = rss('recursion', v, [long_fib], True)
        out['threads1_' + v] = rss('threads', v, ['1', '27'])
        out['threads8_' + v] = rss('threads', v, ['8', '27'])
    per_thread = ((out['threads8_piano']['main_kb'] - out['threads1_piano']['main_kb']) -
                  (out['threads8_plain']['main_kb'] - out['threads1_plain']['main_kb'])) / 7
    out['per_thread_kb'] = per_thread
    return out


def compile_time(b, nfn, rounds):
    """Compile a generated TU of nfn functions with clang -O2 vs piano-cc -O2 (PIANO_FNS='*'),
    alternating; returns medians of wall and CPU (user+sys of the compiler processes).
    Also clang -O2 -finstrument-functions: the compiler's own two calls per function, for
    reference (not a target)."""
    src = b.path('compile_%d.c' % nfn)
    sh([sys.executable, os.path.join(HERE, 'gen.py'), 'compile', str(nfn), src])
    log('bench: compile time, %d functions, %d rounds' % (nfn, rounds))
    res = {'clang': [], 'piano': [], 'guard': [], 'finstr': []}
    for i in range(rounds):
        for v in res:
            cmd = [PIANO_CC if v in ('piano', 'guard') else CLANG, '-O2', '-c', src, '-o', b.path('compile.o')]
            if v == 'finstr':
                cmd.insert(1, '-finstrument-functions')
            env = clean_env()
            if v in ('piano', 'guard'):
                env = clean_env(PIANO_FNS='*', PIANO_MIN_SIZE='0', **({'PIANO_GUARD': '1'} if v == 'guard' else {}))
            before = os.times()
            t0 = time.monotonic()
            sh(cmd, env=env)
            wall = time.monotonic() - t0
            after = os.times()
            cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
            res[v].append((wall, cpu))
        log('  compile round %d/%d: clang %.2fs, piano %.2fs, piano PIANO_GUARD=1 %.2fs, '
            '-finstrument-functions %.2fs' % (i + 1, rounds, res['clang'][-1][0], res['piano'][-1][0],
                                               res['guard'][-1][0], res['finstr'][-1][0]))
    o = {'functions': nfn}
    for v in res:
        o[v + '_wall_s'] = med([w for w, _ in res[v]])
        o[v + '_cpu_s'] = med([c for _, c in res[v]])
    o['ratio_wall'] = o['piano_wall_s'] / o['clang_wall_s']
    o['ratio_cpu'] = o['piano_cpu_s'] / o['clang_cpu_s']
    o['finstr_ratio_cpu'] = o['finstr_cpu_s'] / o['clang_cpu_s']
    o['guard_ratio_cpu'] = o['guard_cpu_s'] / o['clang_cpu_s']
    return o


# ---------------------------------------------------------------- output

# ---------------------------------------------------------------- PIANO_INTERVAL

SNAP_HDR = 24   # struct piano_snap_hdr (rt/spool.h): magic, size, tick, nfns, ncounters


def snaps_file_stats(path):
    """(records, bytes, functions listed) of a snaps file, whole records only."""
    import struct
    try:
        data = open(path, 'rb').read()
    except OSError:
        return 0, 0, 0
    at = n = fns = 0
    while at + SNAP_HDR <= len(data):
        magic, size, _tick, nfns, _nc = struct.unpack_from('<IIQII', data, at)
        if magic != 0x70616e73 or size < SNAP_HDR or at + size > len(data):
            break
        at += size
        n += 1
        fns += nfns
    return n, at, fns


def snap_thread_ns(pid):
    """CPU ns of the process's piano-snap thread so far (schedstat), or -1."""
    try:
        for tid in os.listdir('/proc/%d/task' % pid):
            with open('/proc/%d/task/%s/comm' % (pid, tid)) as f:
                if f.read().strip() == 'piano-snap':
                    with open('/proc/%d/task/%s/schedstat' % (pid, tid)) as g:
                        return int(g.read().split()[0])
    except (OSError, ValueError):
        pass
    return -1


def snapshot_bytes(b, reps, tmp):
    """Runs (c) with PIANO_INTERVAL=0.1, reading its spool's snaps file and its snapshot
    thread's CPU time until it ends: (snapshots, bytes, functions listed, thread ns at that
    reading)."""
    dbf = os.path.join(tmp, 'snapbytes.db')
    env = clean_env(PIANO_DB=dbf, PIANO_INTERVAL='0.1')
    p = subprocess.Popen([b.path('many.piano'), str(reps)], env=env, stdout=subprocess.DEVNULL)
    best = (0, 0, 0, -1)
    while p.poll() is None:
        ns = snap_thread_ns(p.pid)
        for d in (os.listdir(dbf + '.spool') if os.path.isdir(dbf + '.spool') else []):
            s = snaps_file_stats(os.path.join(dbf + '.spool', d, 'snaps'))
            if s[0] > best[0] and ns >= 0:
                best = s + (ns,)
        time.sleep(0.05)
    return best


def snapshots(a):
    """Per-call cost of PIANO_INTERVAL on (c), 1,000 functions: piano without it, with 1 and
    with 0.1, alternating; thread CPU of the calling thread per call, and the process's CPU
    (the snapshot thread included); and the bytes a snapshot of 1,000 changed functions takes."""
    rounds = a.rounds or 5
    reps = 20000 if a.quick else 100000
    b = Build(a.out, a.quick)
    sh([sys.executable, os.path.join(HERE, 'gen.py'), 'many', '1000', b.path('many.c')])
    b.workload('many', b.path('many.c'))
    b.cc([CLANG, '-O2', '-I', os.path.join(HERE, 'src'), os.path.join(HERE, 'src', 'rdtsc.c'), '-o', b.path('rdtsc')])
    tmp = tempfile.mkdtemp(prefix='piano-bench.')
    variants = [('plain', None), ('piano', None), ('interval 1', '1'), ('interval 0.1', '0.1')]
    res = {v: [] for v, _ in variants}
    snaps = {}
    for i in range(rounds):
        for v, interval in variants:
            dbf = os.path.join(tmp, 'run.db')
            env = clean_env(PIANO_DB=dbf)
            if interval:
                env['PIANO_INTERVAL'] = interval
            f = run_prog([b.path('many.plain' if v == 'plain' else 'many.piano'), str(reps)], env)
            if interval and i == 0:
                r = sh(['sqlite3', dbf, 'SELECT count(*) FROM snapshot_times']) if shutil.which('sqlite3') else None
                snaps[v] = int(r.stdout) if r else -1
            res[v].append(f)
            for e in os.listdir(tmp):
                pth = os.path.join(tmp, e)
                shutil.rmtree(pth) if os.path.isdir(pth) else os.unlink(pth)
        log('  round %d/%d: %s' % (i + 1, rounds, '  '.join(
            '%s %.2fns' % (v, res[v][-1]['cpu_ns'] / res[v][-1]['calls']) for v, _ in variants)))
    n, nbytes, fns, thread_ns = snapshot_bytes(b, reps, tmp)
    shutil.rmtree(tmp, ignore_errors=True)
    m = machine(b)
    print('')
    print('PIANO_INTERVAL on (c) 1,000 functions x %d (%d calls a run): %s, nproc %d; %d alternating rounds, medians' % (
        reps, res['piano'][0]['calls'], m['cpu'], m['nproc'], rounds))
    print('%-14s %12s %12s %14s %12s' % ('variant', 'ns/call', 'added', 'process CPU', 'snapshots'))
    base = med([x['cpu_ns'] / x['calls'] for x in res['plain']])
    for v, interval in variants:
        pc = med([x['cpu_ns'] / x['calls'] for x in res[v]])
        cpu = med([x['proc_cpu_ns'] for x in res[v]]) / 1e9
        print('%-14s %11.2fn %11.2fn %13.3fs %12s' % (v, pc, pc - base, cpu, snaps.get(v, '-')))
    if n:
        print('snaps file: %d snapshots, %d bytes, %.0f functions listed a snapshot: %.0f bytes a snapshot, '
              '%.1f bytes a function' % (n, nbytes, fns / n, nbytes / n, (nbytes - n * SNAP_HDR) / max(fns, 1)))
        print('piano-snap thread: %.1f us of CPU a snapshot (schedstat, its start and the snapshots so far)' % (
            thread_ns / n / 1e3))


LIVE_COMMANDS = [['runs'], ['report'], ['report', '--threads'], ['snapshots'], ['top', '--count', '1']]


def live_reads(a):
    """Reading a live run (issue 20, item 3): bench/src/live_read.c makes F frames (10,000,000;
    --quick 1,000,000) reaching 10,101 calling contexts, then stays alive; each reading command
    is timed on its live run (wall and CPU of the piano-db process, median of the rounds), then
    the program's exit (its store) is timed with a loop of `piano-db report` running."""
    rounds = a.rounds or 5
    frames = 1000000 if a.quick else 10000000
    b = Build(a.out, a.quick)
    src = os.path.join(HERE, 'src')
    b.cc([PIANO_CC, '-O2', '-I', src, os.path.join(src, 'live_read.c'), '-o', b.path('live_read.piano')],
         env=clean_env(PIANO_FNS='wk_', PIANO_MIN_SIZE='0'))
    tmp = tempfile.mkdtemp(prefix='piano-bench.')
    dbf = os.path.join(tmp, 'live.db')
    env = clean_env(PIANO_DB=dbf)
    p = subprocess.Popen([b.path('live_read.piano'), str(frames)], env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = b''
    while b'ready' not in out:
        line = p.stdout.readline()
        if not line:
            sys.exit('bench: live_read ended early: %s' % p.stderr.read().decode(errors='replace'))
        out += line
    res = {}
    for i in range(rounds):
        # report --frames reads the kept frames (a million and more): once, in the first round
        for c in LIVE_COMMANDS + ([['report', '--frames']] if i == 0 else []):
            t0 = time.monotonic_ns()
            q = subprocess.Popen([PIANO_DB, *c], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            _, status, ru = os.wait4(q.pid, 0)
            t1 = time.monotonic_ns()
            err = q.stderr.read().decode(errors='replace')
            if os.waitstatus_to_exitcode(status) != 0 or err:
                sys.exit('bench: piano-db %s: %s' % (' '.join(c), err))
            res.setdefault(' '.join(c), []).append((t1 - t0, (ru.ru_utime + ru.ru_stime) * 1e9))
        log('  round %d/%d: %s' % (i + 1, rounds, '  '.join('%s %.0fms' % (k, v[-1][0] / 1e6) for k, v in res.items()
                                                           if len(v) == i + 1)))
    # The exit while piano-db reads the live run in a loop: stored by the program itself.
    stop = os.path.join(tmp, 'stop')
    loop = subprocess.Popen(['sh', '-c', 'while [ ! -e "$1" ]; do "$2" report >/dev/null; done', 'sh', stop, PIANO_DB],
                            env=env, stderr=subprocess.PIPE)
    time.sleep(0.5)
    t0 = time.monotonic_ns()
    p.stdin.close()
    p.wait()
    t1 = time.monotonic_ns()
    open(stop, 'w').close()
    loop.wait()
    prog_err = p.stderr.read().decode(errors='replace')
    stored = sh([PIANO_DB, '--db', dbf, 'sql', 'SELECT count(*), max(frames), (SELECT count(*) FROM contexts) FROM runs']).stdout.strip()
    shutil.rmtree(tmp, ignore_errors=True)
    m = re.search(rb'calls=(\d+)', out)
    print('')
    print('Live reads: bench/src/live_read.c, %d frames, %s calls, 10,101 calling contexts, running; %s, nproc %d, '
          'load %.1f; %d rounds, medians' % (frames, m.group(1).decode() if m else '?',
                                             platform.processor() or platform.machine(), os.cpu_count(),
                                             os.getloadavg()[0], rounds))
    print('%-22s %10s %10s' % ('piano-db', 'wall', 'CPU'))
    for k, v in res.items():
        print('%-22s %8.1fms %8.1fms' % (k, med([x[0] for x in v]) / 1e6, med([x[1] for x in v]) / 1e6))
    print('exit with a loop of reports: %.0f ms from stdin closed to reaped; stored (runs, frames, contexts): %s; '
          'stderr: %s' % ((t1 - t0) / 1e6, stored, repr(prog_err.strip()) if prog_err.strip() else 'none'))


def heap_report(H):
    p = print
    p('(g) malloc/free pairs (16 B-4 KiB, 64 live per thread) in an instrumented function, ns of thread CPU per pair:')
    for t, h in H.items():
        pp = h['per_pair']
        p('    %d thread%s: plain %.1f, piano %.1f (counts only), PIANO_HEAP=1 %.1f: tracking adds %.1f ns, %+.1f%% over piano' % (
            t, 's' if t > 1 else ' ', pp['plain'], pp['piano'], pp['heap'], pp['heap'] - pp['piano'], h['tracking_pct']))
        if 'base' in pp:
            p('             the runtime in BENCH_BASE_LIB, same binary: piano %.1f, PIANO_HEAP=1 %.1f: tracking adds %.1f ns, '
              '%+.1f%% over its piano; PIANO_HEAP=1 this runtime / base: %.3f' % (
                  pp['base'], pp['base_heap'], pp['base_heap'] - pp['base'],
                  100 * (pp['base_heap'] - pp['base']) / pp['base'], pp['heap'] / pp['base_heap']))


def verdict(ok):
    return 'MET' if ok else 'MISSED'


def report(R):
    m = R['machine']
    p = print
    p('')
    p('piano benchmark: %s, nproc %d, %s; rdtsc %.1f ns; %d alternating rounds, medians%s' % (
        m['cpu'], m['nproc'], m['clang'], m['rdtsc_ns'], R['rounds'], ' (--quick)' if R['quick'] else ''))
    p('')
    p('Per-call overhead: ns of thread CPU time added per instrumented call over the uninstrumented')
    p('build (clang -O2); "piano wall": the same from wall-clock time (includes waiting on page faults/IO)')
    p('"guard", "g.disable": the build made with PIANO_GUARD=1, recording and with PIANO_DISABLE=1')
    hdr = '%-22s %12s %9s %9s %9s %9s %9s %9s %9s %11s %11s' % (
        'workload', 'calls/run', 'plain', 'piano', 'disable', 'guard', 'g.disable', 'floor', 'uftrace',
        'piano/floor', 'piano wall')
    p(hdr)
    p('-' * len(hdr))
    names = {'recursion': '(a) recursion', 'frames': '(b) frame loop', 'many': '(c) 1,000 functions'}
    def row(label, w):
        o = w['over']
        p('%-22s %12d %8.2fn %8.2fn %8.2fn %8.2fn %8.2fn %8.2fn %9s %11.2f %10s' % (
            label, w['calls'], w['per_call']['plain'], o['piano'], o['disable'], o['guard'], o['gdisable'], o['floor'],
            ('%8.1fn' % o['uftrace']) if 'uftrace' in o else '-', o['piano'] / o['floor'],
            ('%9.2fn' % w['over_wall']['piano']) if 'over_wall' in w else '-'))
    for k, w in R['workloads'].items():
        row(names[k], w)
    for t, w in R['threads'].items():
        row('(d) %d thread%s (CPU)' % (t, 's' if t > 1 else ''), w)
    p('(plain: ns per call of the uninstrumented build itself; other columns: ns added per call.)')
    heap_report(R['heap'])
    sh_ = R['short']
    p('(e) %d short threads, one call each: plain %.1f us, piano %.1f us per thread (wall; CPU %.1f vs %.1f us);'
      ' the whole process %.1f vs %.1f ms' % (sh_['threads'], sh_['plain_us'], sh_['piano_us'], sh_['plain_cpu_us'],
                                            sh_['piano_cpu_us'], sh_['plain_process_ms'], sh_['piano_process_ms']))
    sp = R['shortproc']
    p('(f) a short process, %d functions, 10 called: plain %.2f ms, PIANO_DISABLE=1 %.2f ms, piano %.2f ms'
      ' (start to reaped, median of %d runs)' % (sp['functions'], sp['plain_ms'], sp['disable_ms'], sp['piano_ms'],
                                                 sp['runs']))
    p('')
    th = R['threads']
    s = R['storing']
    me = R['memory']
    wa, wc = R['workloads']['recursion']['over'], R['workloads']['many']['over']
    d8 = th[8]['over']['piano'] / th[1]['over']['piano'] - 1
    d2 = th[2]['over']['piano'] / th[1]['over']['piano'] - 1
    dis = max(w['over']['disable'] for w in R['workloads'].values())
    gdis = max(w['over']['gdisable'] for w in R['workloads'].values())
    p('Targets')
    p('  piano/floor on recursion <= 1.25:        %.2f  %s' % (wa['piano'] / wa['floor'], verdict(wa['piano'] / wa['floor'] <= 1.25)))
    p('  piano/floor with 1,000 functions <= 1.5: %.2f  %s' % (wc['piano'] / wc['floor'], verdict(wc['piano'] / wc['floor'] <= 1.5)))
    p('  8 threads within 10%% of 1 (per call, CPU): %+.1f%% (2 threads: %+.1f%%)  %s' % (100 * d8, 100 * d2, verdict(abs(d8) <= 0.10)))
    p('  PIANO_DISABLE < 2 ns/call (worst workload): %.2f ns  %s; built with PIANO_GUARD=1: %.2f ns  %s' % (
        dis, verdict(dis < 2), gdis, verdict(gdis < 2)))
    p("  a new thread's first call < 50 us: %.1f us added per thread  %s" % (
        R['short']['added_us'], verdict(R['short']['added_us'] < 50)))
    p('  a short process with 2,000 functions < 3 ms over plain: +%.2f ms  %s' % (
        R['shortproc']['added_ms'], verdict(R['shortproc']['added_ms'] < 3)))
    p('  storing >= 1,000,000 frames/s: %.0f frames/s (import %.0f ms for %d frames)  %s' % (
        s['frames_per_s'], s['import_ns'] / 1e6, s['frames'], verdict(s['frames_per_s'] >= 1e6)))
    p('  1M-frame report < 1 s: %.0f ms (report --frames --top 10: %.0f ms)  %s' % (
        s['report_ns'] / 1e6, s['report_frames_ns'] / 1e6, verdict(s['report_ns'] < 1e9)))
    p('  <= 8 MiB per thread: %.2f MiB (peak RSS, 8 threads vs 1, net of plain)  %s' % (
        me['per_thread_kb'] / 1024, verdict(me['per_thread_kb'] <= 8 * 1024)))
    if 'compile' in R:
        c = R['compile']
        p('  compile time +5%% max: %+.1f%% wall, %+.1f%% CPU (%d functions, clang %.2f s, piano %.2f s)  %s' % (
            100 * (c['ratio_wall'] - 1), 100 * (c['ratio_cpu'] - 1), c['functions'], c['clang_wall_s'],
            c['piano_wall_s'], verdict(c['ratio_cpu'] <= 1.05)))
        p('    (built with PIANO_GUARD=1: %+.1f%% CPU; for reference, clang -finstrument-functions: %+.1f%% CPU)' % (
            100 * (c['guard_ratio_cpu'] - 1), 100 * (c['finstr_ratio_cpu'] - 1)))
    p('')
    p('Storing: database %.1f MiB for %d frames, %.1f bytes per frame of 4 functions; exit %.0f ms (piano) vs %.0f ms (disabled)' % (
        s['db_bytes'] / MiB, s['frames'], s['bytes_per_frame'], s['exit_piano_ns'] / 1e6, s['exit_disable_ns'] / 1e6))
    p('Memory (peak RSS, KiB: at end of main / whole process incl. exit import):')
    for k, v in me.items():
        if isinstance(v, dict):
            p('  %-28s %8d %8s' % (k, v['main_kb'], v['process_kb'] if v['process_kb'] >= 0 else '-'))
    p('Call counts checked against piano-db report: %s' % ', '.join(
        '%s %s/%s' % (k, g, e) for k, (g, e) in R['check'].items()))


if __name__ == '__main__':
    main()
