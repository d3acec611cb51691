#!/usr/bin/env python3
"""runtime_select.py - the cost of choosing at run time (issue 24). See bench/README.md, "Run-time selection".

One piano binary per workload, built with the workload's functions compiled in
(PIANO_FNS=wk_, PIANO_MIN_SIZE=0), run ALTERNATING as:
  plain     clang -O2, no piano
  piano     recording, run-time PIANO_FNS unset (the compile-time selection)
  unsel     the same binary with a run-time PIANO_FNS that selects none of them
  disable   the same binary with PIANO_DISABLE=1
  today     (BENCH_TODAY=DIR: a piano build, e.g. main's, with bin/ and lib/) the workload
            built by DIR/bin/piano-cc, recording: the hook before this change
  floor     clang -finstrument-functions + floor_hooks.c: two clock reads per call
Rows (a) recursion, (b) frame loop, (c) 1,000 functions: thread CPU ns per call.
(h) start-up: a short process with 10,000 compiled-in functions, 10 called once:
start to reaped, plain, piano (all 10,000 recorded), narrow (the same binary,
run-time PIANO_FNS=wk_f3: one), compiled-narrow (built with PIANO_FNS==wk_f3:
how a narrow selection was made before), and today's build of all 10,000.
Compile time: a generated TU of 5,000 functions, clang -O2 vs piano-cc -O2
PIANO_FNS='*' (and today's piano-cc), CPU of the compiler.
"""
import argparse
import json
import os
import sys
import tempfile
import shutil

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
from bench import CLANG, HERE, PIANO_CC, clean_env, log, med, run_prog, sh  # noqa: E402

TODAY = os.environ.get('BENCH_TODAY')
TODAY_CC = os.path.join(TODAY, 'bin', 'piano-cc') if TODAY else None
NONE = '=no_function_has_this_name'


def build(out, today, again=True):
    os.makedirs(out, exist_ok=True)
    p = lambda n: os.path.join(out, n)  # noqa: E731
    if not again:
        return p
    src = os.path.join(HERE, 'src')
    sh([sys.executable, os.path.join(HERE, 'gen.py'), 'many', '1000', p('many.c')])
    sh([sys.executable, os.path.join(HERE, 'gen.py'), 'short', '10000', p('short10k.c')])
    sh([CLANG, '-O2', '-c', os.path.join(HERE, 'floor_hooks.c'), '-o', p('floor_hooks.o')])
    env = clean_env(PIANO_FNS='wk_', PIANO_MIN_SIZE='0')
    for name, s in (('recursion', os.path.join(src, 'recursion.c')), ('frames', os.path.join(src, 'frames.c')),
                    ('many', p('many.c')), ('short10k', p('short10k.c'))):
        common = ['-O2', '-I', src, s]
        sh([CLANG, *common, '-o', p(name + '.plain')])
        sh([PIANO_CC, *common, '-o', p(name + '.piano')], env=env)
        if today:
            sh([TODAY_CC, *common, '-o', p(name + '.today')], env=env)
        if name != 'short10k':
            sh([CLANG, '-finstrument-functions', *common, p('floor_hooks.o'), '-o', p(name + '.floor')])
        else:
            sh([PIANO_CC, *common, '-o', p(name + '.narrow')], env=clean_env(PIANO_FNS='=wk_f3'))
    return p


def cmd_env(p, name, v, args, tmp, n):
    db = os.path.join(tmp, 'run%d.db' % n)
    env = clean_env(PIANO_DB=db, PIANO_FRAMES='all')
    binary = {'plain': '.plain', 'floor': '.floor', 'today': '.today', 'compiled_narrow': '.narrow'}.get(v, '.piano')
    if v in ('plain', 'floor'):
        env = clean_env()
    if v == 'unsel':
        env['PIANO_FNS'] = NONE
    if v == 'narrow':
        env['PIANO_FNS'] = 'wk_f3'
    if v == 'disable':
        env['PIANO_DISABLE'] = '1'
    return [p(name + binary), *args], env


def cleanup(tmp):
    for e in os.listdir(tmp):
        q = os.path.join(tmp, e)
        shutil.rmtree(q) if os.path.isdir(q) else os.unlink(q)


def per_call(p, tmp, name, args, variants, rounds):
    res = {v: [] for v in variants}
    n = 0
    for i in range(rounds):
        for v in variants:
            n += 1
            cmd, env = cmd_env(p, name, v, args, tmp, n)
            f = run_prog(cmd, env)
            if f['stderr'].strip():
                log('  note: %s stderr: %s' % (v, f['stderr'].strip()[:200]))
            res[v].append(f['cpu_ns'] / f['calls'])
            cleanup(tmp)
        log('  %s round %d/%d: %s' % (name, i + 1, rounds, '  '.join('%s %.2fns' % (v, res[v][-1]) for v in variants)))
    return {v: med(res[v]) for v in variants}


def startup(p, tmp, variants, rounds):
    res = {v: [] for v in variants}
    cpu = {v: [] for v in variants}
    dbs = {v: os.path.join(tmp, 'h-%s.db' % v) for v in variants}
    for i in range(rounds):
        for v in variants:
            for _ in range(10):
                cmd, env = cmd_env(p, 'short10k', v, [], tmp, 0)
                if 'PIANO_DB' in env:
                    env['PIANO_DB'] = dbs[v]
                f = run_prog(cmd, env)
                res[v].append(f['wall_ns'] / 1e6)
                cpu[v].append(f['proc_cpu_ns'] / 1e6)
        log('  start-up round %d/%d: %s' % (i + 1, rounds, '  '.join('%s %.2fms (CPU %.2f)' % (
            v, med(res[v][-10:]), med(cpu[v][-10:])) for v in variants)))
    got = {}
    for v in ('piano', 'narrow'):
        r = sh([bench.PIANO_DB, 'report', '--db', dbs[v], '--json', '--all'])
        got[v] = len(json.loads(r.stdout))
    return {v: med(res[v]) for v in variants}, {v: med(cpu[v]) for v in variants}, got


def compile_time(p, rounds, today, n):
    src = p('compile_%d.c' % n)
    sh([sys.executable, os.path.join(HERE, 'gen.py'), 'compile', str(n), src])
    variants = ['clang', 'piano'] + (['today'] if today else [])
    res = {v: [] for v in variants}
    for i in range(rounds):
        for v in variants:
            cc = {'clang': CLANG, 'piano': PIANO_CC, 'today': TODAY_CC}[v]
            env = clean_env() if v == 'clang' else clean_env(PIANO_FNS='*', PIANO_MIN_SIZE='0')
            before = os.times()
            sh([cc, '-O2', '-c', src, '-o', p('compile.o')], env=env)
            after = os.times()
            res[v].append((after.children_user - before.children_user) + (after.children_system - before.children_system))
        log('  compile round %d/%d: %s' % (i + 1, rounds, '  '.join('%s %.2fs' % (v, res[v][-1]) for v in variants)))
    return {v: med(res[v]) for v in variants}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--quick', action='store_true', help='smaller workloads')
    ap.add_argument('--skip-compile', action='store_true')
    ap.add_argument('--no-build', action='store_true', help='reuse the binaries of the last run')
    ap.add_argument('--only-startup', action='store_true', help='only row (h) (and compile time unless skipped)')
    ap.add_argument('--only-compile', action='store_true', help='only the compile time (no binaries built or run)')
    ap.add_argument('--compile-fns', type=int, default=5000, help='functions of the compiled TU (default 5000)')
    ap.add_argument('--compile-rounds', type=int, default=3, help='rounds of the compile time (default 3)')
    ap.add_argument('--out', default=os.path.join(bench.BUILD, 'bench-select'))
    a = ap.parse_args()
    today = bool(TODAY)
    if a.only_compile:
        p = build(a.out, today, False)
        C = compile_time(p, a.compile_rounds, today, a.compile_fns)
        print('compile time, %d functions, PIANO_FNS=*, median of %d rounds: clang %.2f s, piano %.2f s (%+.1f%%)%s' % (
            a.compile_fns, a.compile_rounds, C['clang'], C['piano'], 100 * (C['piano'] / C['clang'] - 1),
            (', today %.2f s (%+.1f%%)' % (C['today'], 100 * (C['today'] / C['clang'] - 1))) if today else ''))
        return
    p = build(a.out, today, not a.no_build)
    tmp = tempfile.mkdtemp(prefix='piano-select.')
    variants = ['plain', 'piano', 'unsel', 'disable'] + (['today'] if today else []) + ['floor']
    q = a.quick
    rows = [('(a) recursion', 'recursion', ['32' if q else '35']), ('(b) frame loop', 'frames', ['1000000']),
            ('(c) 1,000 functions', 'many', ['5000' if q else '20000'])]
    R = {}
    if a.only_startup:
        rows = []
    for label, name, args in rows:
        log('select: %s' % label)
        R[label] = per_call(p, tmp, name, args, variants, a.rounds)
    log('select: (h) start-up, 10,000 functions')
    sv = ['plain', 'piano', 'narrow', 'compiled_narrow'] + (['today'] if today else [])
    H, HC, got = startup(p, tmp, sv, a.rounds)
    C = None if a.skip_compile else compile_time(p, a.compile_rounds, today, a.compile_fns)
    shutil.rmtree(tmp, ignore_errors=True)

    print('%-22s %8s %8s %8s %8s %8s %8s %12s %12s' % ('workload', 'plain', 'piano', 'unsel', 'disable',
                                                    'today', 'floor', 'piano/floor', 'today/floor'))
    for label, _, _ in rows:
        r = R[label]
        over = {v: r[v] - r['plain'] for v in r}
        fl = over['floor']
        print('%-22s %7.2fn %7.2fn %7.2fn %7.2fn %8s %7.2fn %12.2f %12s' % (
            label, r['plain'], over['piano'], over['unsel'], over['disable'],
            ('%.2fn' % over['today']) if today else '-', fl, over['piano'] / fl,
            ('%.2f' % (over['today'] / fl)) if today else '-'))
    print('(plain: ns per call of the uninstrumented build; other columns: ns added per call over plain,'
          ' thread CPU, median of %d rounds)' % a.rounds)
    print('(h) start-up, 10,000 compiled-in functions, 10 called (start to reaped, median of %d runs): %s' % (
        10 * a.rounds, ', '.join('%s %.2f ms' % (v, H[v]) for v in sv)))
    print('    the same, CPU time of the process (user + system, import at exit included): %s' % (
        ', '.join('%s %.2f ms' % (v, HC[v]) for v in sv)))
    print('    functions recorded: piano %d, narrow %d' % (got['piano'], got['narrow']))
    print('    narrow run-time selection vs the same narrow selection compiled in: %+.2f ms (CPU %+.2f ms)' % (
        H['narrow'] - H['compiled_narrow'], HC['narrow'] - HC['compiled_narrow']))
    if today:
        print('    narrow run-time selection vs today (all 10,000 recorded): %+.2f ms (CPU %+.2f ms)' % (
            H['narrow'] - H['today'], HC['narrow'] - HC['today']))
        print('    piano (all 10,000) vs today: %+.2f ms (CPU %+.2f ms)' % (H['piano'] - H['today'],
                                                                       HC['piano'] - HC['today']))
    if C:
        print('compile time, %d functions, PIANO_FNS=*: clang %.2f s, piano %.2f s (%+.1f%%)%s' % (
            a.compile_fns, C['clang'], C['piano'], 100 * (C['piano'] / C['clang'] - 1),
            (', today %.2f s (%+.1f%%)' % (C['today'], 100 * (C['today'] / C['clang'] - 1))) if today else ''))


if __name__ == '__main__':
    main()
