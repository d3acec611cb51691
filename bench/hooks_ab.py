#!/usr/bin/env python3
"""hooks_ab.py - the per-call path (rt/hooks.c) of several runtimes side by side on rows (a)
recursion, (b) frame loop (PIANO_FRAMES=all) and (c) 1,000 functions: the same piano binaries
run with LD_LIBRARY_PATH=LIBDIR of each runtime, alternating with plain and the floor (two clock
reads per call). Prints per row the thread CPU ns per call added over plain (medians), each
runtime's ratio to the floor, and the second runtime's added cost over the first's, per round.

  python3 bench/hooks_ab.py [--rounds 5] [--quick] old=/tmp/old/lib new=build/lib

Builds {recursion,frames,many}.{plain,piano,floor} into OUT (default build/bench-hooks) with
clang and this tree's build/bin/piano-cc (PIANO_FNS=wk_ PIANO_MIN_SIZE=0, as bench.py).
--callgrind instead runs each piano binary once per runtime under callgrind on small inputs
(recursion 25, frames 20000 with PIANO_FRAMES=all, many 100; a first run makes the database)
and prints the instructions of rt/hooks.c per call pair (bench/README.md, "The per-call path's
instructions"). Needs a runtime built with -gdwarf-4 for valgrind 3.19 to name its functions.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CLANG = os.environ.get('BENCH_CLANG', 'clang')
ROWS = [('(a) recursion', 'recursion', '35', '25', 2 * 14930352 - 1, 2 * 121393 - 1, {}),
        ('(b) frame loop', 'frames', '1000000', '20000', 4000000, 80000, {'PIANO_FRAMES': 'all'}),
        ('(c) 1,000 functions', 'many', '20000', '100', 20020000, 100100, {})]


def env_of(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith('PIANO_') and k != 'LD_LIBRARY_PATH'}
    env.update(extra)
    return env


def build(out):
    os.makedirs(out, exist_ok=True)
    src = os.path.join(HERE, 'src')
    many = os.path.join(out, 'many.c')
    subprocess.run([sys.executable, os.path.join(HERE, 'gen.py'), 'many', '1000', many], check=True)
    fh = os.path.join(out, 'floor_hooks.o')
    subprocess.run([CLANG, '-O2', '-c', os.path.join(HERE, 'floor_hooks.c'), '-o', fh], env=env_of(), check=True)
    for name, f in (('recursion', os.path.join(src, 'recursion.c')), ('frames', os.path.join(src, 'frames.c')),
                    ('many', many)):
        common = ['-O2', '-I', src, f]
        p = lambda v: os.path.join(out, name + '.' + v)
        subprocess.run([CLANG, *common, '-o', p('plain')], env=env_of(), check=True)
        subprocess.run([os.path.join(ROOT, 'build', 'bin', 'piano-cc'), *common, '-o', p('piano')],
                       env=env_of(PIANO_FNS='wk_', PIANO_MIN_SIZE='0'), check=True)
        subprocess.run([CLANG, '-finstrument-functions', *common, fh, '-o', p('floor')], env=env_of(), check=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--out', default=os.path.join(ROOT, 'build', 'bench-hooks'))
    ap.add_argument('--callgrind', action='store_true')
    ap.add_argument('runtimes', nargs='+', help='NAME=LIBDIR')
    a = ap.parse_args()
    build(a.out)
    libs = [tuple(r.split('=', 1)) for r in a.runtimes]
    tmp = tempfile.mkdtemp(prefix='piano-hooks-ab.')
    db = os.path.join(tmp, 'x.db')

    def clean():
        for e in os.listdir(tmp):
            p = os.path.join(tmp, e)
            shutil.rmtree(p) if os.path.isdir(p) else os.unlink(p)

    if a.callgrind:
        for title, name, _, small, _, calls, extra in ROWS:
            for lname, lib in libs:
                cmd = [os.path.join(a.out, name + '.piano'), small]
                env = env_of(PIANO_DB=db, LD_LIBRARY_PATH=os.path.abspath(lib), **extra)
                clean()
                subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=True)
                cg = os.path.join(tmp, 'cg.out')
                subprocess.run(['valgrind', '--tool=callgrind', '--callgrind-out-file=' + cg, *cmd], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                ann = subprocess.run(['callgrind_annotate', cg], capture_output=True, text=True).stdout
                fns = {}
                for line in ann.splitlines():
                    m = re.match(r'\s*([\d,]+) .*rt/hooks\.c:(\w+) \[.*libpiano_rt', line)
                    if m:
                        fns[m.group(2)] = fns.get(m.group(2), 0) + int(m.group(1).replace(',', ''))
                frames = sum(v for k, v in fns.items() if k.startswith('frame_'))
                hooks = sum(fns.values()) - frames
                print('%-20s %-6s hooks %.1f instructions per call pair (%s), frame work %.1f' % (
                    title, lname, hooks / calls, ', '.join('%s %.1f' % (k, v / calls) for k, v in
                                                           sorted(fns.items(), key=lambda kv: -kv[1])[:5]),
                    frames / calls))
        return
    print('load average at start:', ' '.join(open('/proc/loadavg').read().split()[:3]))
    for title, name, big, _, _, _, extra in ROWS:
        res = {v: [] for v in ['plain', 'floor'] + [n for n, _ in libs]}
        for i in range(a.rounds):
            order = [('plain', None), ('floor', None)] + (libs if i % 2 == 0 else libs[::-1])
            for v, lib in order:
                env = env_of(PIANO_DB=db)
                path = os.path.join(a.out, name + '.' + (v if lib is None else 'piano'))
                if lib is not None:
                    env.update(extra, LD_LIBRARY_PATH=os.path.abspath(lib))
                out = subprocess.run([path, big], env=env, capture_output=True, text=True, check=True).stdout
                m = dict(re.findall(r'(\w+)=(\d+)', out.split('BENCH', 1)[1]))
                res[v].append(int(m['cpu_ns']) / int(m['calls']))
                clean()
        med = {v: statistics.median(x) for v, x in res.items()}
        fl = med['floor'] - med['plain']
        cols = ['%s +%.2fn (%.2fx floor)' % (n, med[n] - med['plain'], (med[n] - med['plain']) / fl) for n, _ in libs]
        line = '%-20s plain %.2fn  floor +%.2fn  %s' % (title, med['plain'], fl, '  '.join(cols))
        if len(libs) >= 2:
            (n0, _), (n1, _) = libs[0], libs[1]
            rounds = ' '.join('%.2f' % ((y - p) / (x - p)) for x, y, p in zip(res[n0], res[n1], res['plain']))
            line += '  %s/%s added: %.2f (rounds %s)' % (n1, n0, (med[n1] - med['plain']) / (med[n0] - med['plain']),
                                                         rounds)
        print(line, flush=True)
    print('load average at end:', ' '.join(open('/proc/loadavg').read().split()[:3]))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
