#!/usr/bin/env python3
"""asm_guard_ab.py - guarded hook calls (today's form) against one inline-asm statement per hook,
side by side, alternating rounds (bench/README.md, "One inline-assembly statement per hook").
Needs a build with bench/asm_guard.patch applied (PIANO_ASM_GUARD=1 picks the asm form).

  python3 bench/asm_guard_ab.py compile ROUNDS SRC [PIANO_CC [CLANG]]
      user+sys CPU of `CC -O2 -c SRC`: clang, piano's calls, piano's asm (PIANO_FNS='*',
      PIANO_MIN_SIZE=0), e.g. SRC from `python3 bench/gen.py compile 1000 c1000.c`
  python3 bench/asm_guard_ab.py hooks ROUNDS [PIANO_CC [LIBDIR [OUT]]]
      rows (a) (b) (c) of bench.py built both ways by one piano-cc and run on one runtime:
      thread CPU ns a call over plain, recording (rec), run-time PIANO_FNS selecting none
      (unsel), PIANO_DISABLE=1 (disable); medians.
"""
import os, re, shutil, statistics, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def env_of(**x):
    e = {k: v for k, v in os.environ.items() if not k.startswith('PIANO_') and k != 'LD_LIBRARY_PATH'}
    e.update(x)
    return e


def compile_ab(rounds, src, pcc, clang):
    pe = env_of(PIANO_FNS='*', PIANO_MIN_SIZE='0')
    V = [('clang', clang, env_of()), ('calls', pcc, pe), ('asm', pcc, dict(pe, PIANO_ASM_GUARD='1'))]
    res = {n: [] for n, _, _ in V}
    obj = tempfile.mktemp(suffix='.o')
    print('load average at start:', ' '.join(open('/proc/loadavg').read().split()[:3]), flush=True)
    for r in range(rounds):
        for n, c, e in (V if r % 2 == 0 else V[::-1]):
            b = os.times()
            subprocess.run([c, '-O2', '-c', src, '-o', obj], env=e, check=True)
            a = os.times()
            res[n].append(a.children_user - b.children_user + a.children_system - b.children_system)
        print('round %d: ' % (r + 1) + '  '.join('%s %.2f' % (n, res[n][-1]) for n, _, _ in V), flush=True)
    os.unlink(obj)
    m = {n: statistics.median(v) for n, v in res.items()}
    print('median: ' + '  '.join('%s %.2f s (%+.1f%%)' % (n, m[n], 100 * (m[n] / m['clang'] - 1)) for n in m))
    print('load average at end:', ' '.join(open('/proc/loadavg').read().split()[:3]))


def hooks_ab(rounds, pcc, lib, out):
    src = os.path.join(HERE, 'src')
    os.makedirs(out, exist_ok=True)
    many = os.path.join(out, 'many.c')
    subprocess.run([sys.executable, os.path.join(HERE, 'gen.py'), 'many', '1000', many], check=True)
    rows = [('(a) recursion', 'recursion', os.path.join(src, 'recursion.c'), '35', {}),
            ('(b) frame loop', 'frames', os.path.join(src, 'frames.c'), '1000000', {'PIANO_FRAMES': 'all'}),
            ('(c) 1,000 functions', 'many', many, '20000', {})]
    for _, n, f, _, _ in rows:
        c = ['-O2', '-I', src, f]
        sel = dict(PIANO_FNS='wk_', PIANO_MIN_SIZE='0')
        subprocess.run(['clang', *c, '-o', os.path.join(out, n + '.plain')], env=env_of(), check=True)
        subprocess.run([pcc, *c, '-o', os.path.join(out, n + '.calls')], env=env_of(**sel), check=True)
        subprocess.run([pcc, *c, '-o', os.path.join(out, n + '.asm')], env=env_of(PIANO_ASM_GUARD='1', **sel),
                       check=True)
    tmp = tempfile.mkdtemp(prefix='asm-guard-ab.')
    db = os.path.join(tmp, 'x.db')
    modes = {'rec': {}, 'unsel': {'PIANO_FNS': 'zz_none'}, 'disable': {'PIANO_DISABLE': '1'}}
    print('load average at start:', ' '.join(open('/proc/loadavg').read().split()[:3]), flush=True)
    for title, n, _, big, extra in rows:
        V = [('plain', 'plain', {})] + [(b + '.' + m, b, me) for m, me in modes.items() for b in ('calls', 'asm')]
        res = {v: [] for v, _, _ in V}
        for i in range(rounds):
            for v, b, me in (V if i % 2 == 0 else V[::-1]):
                e = env_of(PIANO_DB=db, LD_LIBRARY_PATH=os.path.abspath(lib), **me)
                if b != 'plain':
                    e.update(extra)
                o = subprocess.run([os.path.join(out, n + '.' + b), big], env=e, capture_output=True, text=True,
                                   check=True).stdout
                m = dict(re.findall(r'(\w+)=(\d+)', o.split('BENCH', 1)[1]))
                res[v].append(int(m['cpu_ns']) / int(m['calls']))
                for x in os.listdir(tmp):
                    p = os.path.join(tmp, x)
                    shutil.rmtree(p) if os.path.isdir(p) else os.unlink(p)
        med = {v: statistics.median(x) for v, x in res.items()}
        print('%-20s plain %.2fn  ' % (title, med['plain']) +
              '  '.join('%s +%.2fn' % (v, med[v] - med['plain']) for v, _, _ in V[1:]), flush=True)
    print('load average at end:', ' '.join(open('/proc/loadavg').read().split()[:3]))
    shutil.rmtree(tmp, ignore_errors=True)


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ('compile', 'hooks'):
        sys.exit(__doc__)
    pcc_default = os.path.join(ROOT, 'build', 'bin', 'piano-cc')
    if sys.argv[1] == 'compile':
        if len(sys.argv) < 4:
            sys.exit(__doc__)
        a = sys.argv[2:] + [None, None]
        compile_ab(int(a[0]), a[1], a[2] or pcc_default, a[3] or 'clang')
    else:
        a = sys.argv[2:] + [None, None, None]
        hooks_ab(int(a[0]), a[1] or pcc_default, a[2] or os.path.join(ROOT, 'build', 'lib'),
                 a[3] or os.path.join(ROOT, 'build', 'bench-asm-guard'))


if __name__ == '__main__':
    main()
