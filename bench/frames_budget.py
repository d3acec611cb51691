#!/usr/bin/env python3
"""frames_budget.py - what the frame budget (PIANO_FRAMES, doc/running.md "Frames: the budget")
costs, on two programs built with piano-cc -O2 (PIANO_FNS=wk_):

  tiny   bench/src/tiny_frames.c: 2,000,000 frames of one tiny call (20 of them 1000x longer)
  (b)    bench/src/frames.c: row (b), 1,000,000 frames of 4 calls with malloc/free

each run with PIANO_FRAMES=off, unset (the default) and =all, alternating, ROUNDS rounds, plain
(clang -O2) alongside. Per variant, medians: the whole process's wall time (start to reaped: the
import at exit included), CPU ns per frame of the measured loop (thread CPU time), the database's
bytes (with its WAL) and the frames kept. --base BUILD builds the same programs with another
build's piano-cc too (e.g. the commit before a change) and runs them in the same rounds.

  python3 bench/frames_budget.py [--rounds 5] [--base OTHER_BUILD] [--build build]
"""
import argparse
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROGS = {'tiny': ('tiny_frames.c', 2000000), '(b)': ('frames.c', 1000000)}


def env_of(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith('PIANO_')}
    env.update(extra)
    return env


def build(cc, src, out, piano):
    env = env_of(PIANO_FNS='wk_', PIANO_MIN_SIZE='0') if piano else env_of()
    subprocess.run([cc, '-O2', '-I', os.path.join(HERE, 'src'), os.path.join(HERE, 'src', src), '-o', out],
                   env=env, check=True)


def run(prog, frames, mode, tmp):
    db = os.path.join(tmp, 'b.db')
    for f in (db, db + '-wal', db + '-shm'):
        if os.path.exists(f):
            os.unlink(f)
    shutil.rmtree(db + '.spool', ignore_errors=True)
    env = env_of(PIANO_DB=db)
    if mode not in ('plain', 'default'):
        env['PIANO_FRAMES'] = mode
    t0 = time.monotonic_ns()
    out = subprocess.run([prog, str(frames)], env=env, stdout=subprocess.PIPE, check=True).stdout
    wall = time.monotonic_ns() - t0
    cpu = int(re.search(rb'cpu_ns=(\d+)', out).group(1))
    size = kept = 0
    if mode != 'plain':
        size = sum(os.stat(f).st_size for f in (db, db + '-wal') if os.path.exists(f))
        c = sqlite3.connect(db)
        kept = c.execute('SELECT frames_kept FROM runs ORDER BY id DESC LIMIT 1').fetchone()[0]
        c.close()
    return wall, cpu / frames, size, kept


def main():
    a = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument('--rounds', type=int, default=5)
    a.add_argument('--build', default=os.path.join(ROOT, 'build'))
    a.add_argument('--base', help='another build folder: its piano-cc and runtime, measured alongside')
    o = a.parse_args()
    tmp = tempfile.mkdtemp(prefix='piano-frames-budget.')
    builds = {'new': o.build}
    if o.base:
        builds['base'] = o.base
    progs = {}
    for name, (src, frames) in PROGS.items():
        plain = os.path.join(tmp, name + '.plain')
        build('clang', src, plain, False)
        progs[(name, 'plain')] = plain
        for b, d in builds.items():
            p = os.path.join(tmp, '%s.%s' % (name, b))
            build(os.path.join(d, 'bin', 'piano-cc'), src, p, True)
            progs[(name, b)] = p
    res = {}
    for _ in range(o.rounds):
        for name, (_, frames) in PROGS.items():
            res.setdefault((name, 'plain', 'plain'), []).append(run(progs[(name, 'plain')], frames, 'plain', tmp))
            for b in builds:
                for mode in ('off', 'default', 'all'):
                    res.setdefault((name, b, mode), []).append(run(progs[(name, b)], frames, mode, tmp))
    print('%-5s %-5s %-8s %10s %8s %12s %12s %10s' % ('prog', 'build', 'frames', 'wall ms', 'vs off', 'CPU ns/frame',
                                                      'db bytes', 'kept'))
    for name in PROGS:
        for b in ['plain'] + list(builds):
            for mode in (['plain'] if b == 'plain' else ['off', 'default', 'all']):
                xs = res[(name, b, mode)]
                wall = statistics.median(x[0] for x in xs) / 1e6
                off = res.get((name, b, 'off'))
                ratio = wall / (statistics.median(x[0] for x in off) / 1e6) if off else float('nan')
                print('%-5s %-5s %-8s %10.1f %8.2f %12.1f %12d %10d' % (
                    name, b, mode, wall, ratio, statistics.median(x[1] for x in xs),
                    int(statistics.median(x[2] for x in xs)), int(statistics.median(x[3] for x in xs))))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
