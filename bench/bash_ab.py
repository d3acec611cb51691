#!/usr/bin/env python3
# bash_ab.py N NAME=LIB ... - a bash script run by a plain bash and a piano-built bash under several
# runtimes, one run of each in turn (the order reversed every other round), N rounds: CPU time of the
# process and of the subshells it waited for (wait4's user + system time); medians and quartiles.
#   LIB: a folder holding libpiano_rt.so, or "plain" (the plain bash).
#   BASH_PLAIN, BASH_PIANO: the two bash binaries (default /tmp/rw-bash-plain/bash, /tmp/rw-bash-piano/bash:
#   bminor/bash built with ./configure --without-bash-malloc, CC=clang-14 and CC=piano-cc with PIANO_FNS='*').
#   SCRIPT: the script (default 'x=$(echo hi)': one subshell). Runs are stored at exit into
#   /tmp/bash_ab/NAME.db (PIANO_STORE from the environment).
import os, shutil, statistics, sys

n = int(sys.argv[1])
variants = [a.split("=", 1) for a in sys.argv[2:]]
script = os.environ.get("SCRIPT", "x=$(echo hi)")
binary = {"plain": os.environ.get("BASH_PLAIN", "/tmp/rw-bash-plain/bash"),
          "piano": os.environ.get("BASH_PIANO", "/tmp/rw-bash-piano/bash")}
shutil.rmtree("/tmp/bash_ab", ignore_errors=True)
os.makedirs("/tmp/bash_ab")
devnull = os.open(os.devnull, os.O_WRONLY)
cpu = {name: [] for name, _ in variants}
for i in range(n):
    for name, lib in variants if i % 2 == 0 else variants[::-1]:
        env = dict(os.environ)
        if lib != "plain":
            env.update(LD_LIBRARY_PATH=lib, PIANO_DB="/tmp/bash_ab/%s.db" % name)
        argv = [binary["plain" if lib == "plain" else "piano"], "-c", script]
        pid = os.posix_spawn(argv[0], argv, env, file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)])
        _, status, ru = os.wait4(pid, 0)
        if status:
            sys.exit("%s: exit status %d" % (name, status))
        cpu[name].append((ru.ru_utime + ru.ru_stime) * 1e3)
print("load average %s, %d rounds, script %r" % (" ".join(open("/proc/loadavg").read().split()[:3]), n, script))
for name, _ in variants:
    q = statistics.quantiles(cpu[name], n=4)
    print("%-10s CPU ms median %6.2f (quartiles %6.2f %6.2f)" % (name, statistics.median(cpu[name]), q[0], q[2]))
