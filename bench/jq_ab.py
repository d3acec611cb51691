#!/usr/bin/env python3
# jq_ab.py N MODE NAME=LIB ... - jq's trivial run (issue 23) under several runtimes, one run of each
# in turn (the order reversed every other round), N rounds: CPU time of each child (user + system,
# from wait4's rusage: exec, run and exit) and its minor faults; medians and quartiles.
#   MODE: exit or later (PIANO_STORE); LIB: a folder holding libpiano_rt.so, or "plain" (the plain jq).
#   JQ_DIR (default /tmp/piano-short-run): plain/jq, piano/jq and in.json, as bench/short_run.sh makes them.
#   Each runtime stores into its own database, /tmp/jq_ab/NAME-MODE.db; later's spool folders are
#   removed every 50 rounds (they pile up: nothing stores them), or, with STORE_EVERY=K, stored every K
#   rounds by that build's piano-db (LIB/../bin/piano-db; not timed): a store between runs, as a
#   piano-db following them does, leaves spare run folders for the next runs (spool.h).
# Children are started with posix_spawn: a fork's copy of this process would be charged to them.
import os, shutil, statistics, subprocess, sys

n, mode = int(sys.argv[1]), sys.argv[2]
variants = [a.split("=", 1) for a in sys.argv[3:]]
jq_dir = os.environ.get("JQ_DIR", "/tmp/piano-short-run")
store_every = int(os.environ.get("STORE_EVERY", "0"))
work = "/tmp/jq_ab"
os.makedirs(work, exist_ok=True)
devnull = os.open(os.devnull, os.O_WRONLY)
cpu = {name: [] for name, _ in variants}
faults = {name: [] for name, _ in variants}


def run(name, lib):
    env = dict(os.environ)
    build = "plain" if lib == "plain" else "piano"
    if lib != "plain":
        env.update(LD_LIBRARY_PATH=lib, PIANO_STORE=mode, PIANO_DB="%s/%s-%s.db" % (work, name, mode))
    argv = ["%s/%s/jq" % (jq_dir, build), ".a|add", "%s/in.json" % jq_dir]
    pid = os.posix_spawn(argv[0], argv, env, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)])
    _, status, ru = os.wait4(pid, 0)
    if status:
        sys.exit("%s: exit status %d" % (name, status))
    return (ru.ru_utime + ru.ru_stime) * 1e3, ru.ru_minflt


def clean():
    for name, _ in variants:
        shutil.rmtree("%s/%s-%s.db.spool" % (work, name, mode), ignore_errors=True)


clean()
for name, lib in variants:   # the databases made
    run(name, lib)
for i in range(n):
    for name, lib in variants if i % 2 == 0 else variants[::-1]:
        t, f = run(name, lib)
        cpu[name].append(t)
        faults[name].append(f)
    if mode == "later" and store_every and i % store_every == store_every - 1:
        for name, lib in variants:
            if lib != "plain":
                subprocess.run(["%s/../bin/piano-db" % lib, "--db", "%s/%s-%s.db" % (work, name, mode), "runs"],
                               stdout=subprocess.DEVNULL, check=True)
    elif mode == "later" and i % 50 == 49:
        clean()
print("load average %s, %d rounds, PIANO_STORE=%s%s" % (" ".join(open("/proc/loadavg").read().split()[:3]), n, mode,
                                                         ", stored every %d rounds" % store_every if store_every else ""))
for name, _ in variants:
    q = statistics.quantiles(cpu[name], n=4)
    print("%-10s CPU ms median %6.2f (quartiles %6.2f %6.2f)  minor faults %d" % (name, q[1], q[0], q[2], statistics.median(faults[name])))
