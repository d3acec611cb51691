#!/usr/bin/env python3
"""frames_ab.py - row (b) (bench/src/frames.c: 1,000,000 frames of 4 calls with a malloc/free)
on one piano binary run on several runtimes, side by side with plain and the floor.

Builds frames.{plain,piano,floor} into OUT (default build/bench-ab) with clang and this tree's
build/bin/piano-cc (PIANO_FNS=wk_ PIANO_MIN_SIZE=0, as bench.py), then runs, ROUNDS rounds, each
variant once per round in turn: plain, floor, and the piano binary once per NAME=LIBDIR given
(LD_LIBRARY_PATH=LIBDIR: a libpiano_rt.so built from another commit, or with an experiment's
-D flag; the binary's RUNPATH is this build's lib). PIANO_FRAMES is the budget of every piano run
(default: unset, the budget's default; bench.py's row (b) uses all). Prints, per variant, the
median thread CPU ns per frame of the loop, that over plain, and its ratio to the floor's.

  python3 bench/frames_ab.py [--rounds 9] [--frames all] NAME=LIBDIR ...
  e.g. python3 bench/frames_ab.py main=/work/main/build/lib new=build/lib
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CLANG = os.environ.get('BENCH_CLANG', 'clang')


def env_of(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith('PIANO_') and k != 'LD_LIBRARY_PATH'}
    env.update(extra)
    return env


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--rounds', type=int, default=9)
    ap.add_argument('--nframes', default='1000000')
    ap.add_argument('--frames', help='PIANO_FRAMES of the piano runs (default: unset)')
    ap.add_argument('--out', default=os.path.join(ROOT, 'build', 'bench-ab'))
    ap.add_argument('runtimes', nargs='+', help='NAME=LIBDIR')
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    src = os.path.join(HERE, 'src', 'frames.c')
    common = ['-O2', '-I', os.path.join(HERE, 'src'), src]
    out = lambda v: os.path.join(a.out, 'frames.' + v)
    subprocess.run([CLANG, *common, '-o', out('plain')], env=env_of(), check=True)
    subprocess.run([os.path.join(ROOT, 'build', 'bin', 'piano-cc'), *common, '-o', out('piano')],
                   env=env_of(PIANO_FNS='wk_', PIANO_MIN_SIZE='0'), check=True)
    fh = os.path.join(a.out, 'floor_hooks.o')
    subprocess.run([CLANG, '-O2', '-c', os.path.join(HERE, 'floor_hooks.c'), '-o', fh], env=env_of(), check=True)
    subprocess.run([CLANG, '-finstrument-functions', *common, fh, '-o', out('floor')], env=env_of(), check=True)
    variants = [('plain', None), ('floor', None)] + [tuple(r.split('=', 1)) for r in a.runtimes]
    res = {name: [] for name, _ in variants}
    tmp = tempfile.mkdtemp(prefix='piano-frames-ab.')
    load = [open('/proc/loadavg').read().split()[:3]]
    for _ in range(a.rounds):
        for name, lib in variants:
            db = os.path.join(tmp, 'run.db')
            if lib is None:
                cmd, env = [out(name), a.nframes], env_of()
            else:
                env = env_of(PIANO_DB=db, LD_LIBRARY_PATH=os.path.abspath(lib))
                if a.frames:
                    env['PIANO_FRAMES'] = a.frames
                cmd = [out('piano'), a.nframes]
            p = subprocess.run(cmd, env=env, capture_output=True, check=True)
            m = re.search(rb'cpu_ns=(\d+)', p.stdout)
            res[name].append(int(m.group(1)) / int(a.nframes))
            for e in os.listdir(tmp):
                path = os.path.join(tmp, e)
                subprocess.run(['rm', '-rf', path])
    load.append(open('/proc/loadavg').read().split()[:3])
    os.rmdir(tmp)
    plain = statistics.median(res['plain'])
    floor = statistics.median(res['floor']) - plain
    print('PIANO_FRAMES=%s, %d rounds, load average %s -> %s' % (a.frames or '(unset)', a.rounds,
                                                                 '/'.join(load[0]), '/'.join(load[1])))
    print('%-10s %12s %12s %8s   rounds (ns per frame)' % ('variant', 'ns/frame', 'over plain', 'x floor'))
    for name, _ in variants:
        m = statistics.median(res[name])
        ratio = '%8.2f' % ((m - plain) / floor) if name != 'plain' else '%8s' % '-'
        print('%-10s %12.1f %12.1f %s   %s' % (name, m, m - plain, ratio, ' '.join('%.0f' % x for x in res[name])))


if __name__ == '__main__':
    main()
