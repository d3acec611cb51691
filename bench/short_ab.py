# short_ab.py ROUNDS - row (f)'s short process (build/bench/shortproc.piano, made by bench/run.sh) under
# several runtimes side by side: edit `libs` (name -> folder holding libpiano_rt.so); each into its
# own database; wall medians and CPU means of the children.
import os, subprocess, time, statistics, sys, shutil
binary = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "bench", "shortproc.piano")
libs = {"9fe33b9": "/tmp/rt_9fe33b9/build/lib", "07c1e30": "/tmp/rt_07c1e30/build/lib", "HEAD": os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "lib")}
res = {k: [] for k in libs}; cpu = {k: [] for k in libs}
for k in libs:
    d = "/tmp/ab_short/" + k; shutil.rmtree(d, ignore_errors=True); os.makedirs(d, mode=0o700)
for rnd in range(int(sys.argv[1]) if len(sys.argv) > 1 else 5):
    for k, lib in libs.items():
        env = dict(os.environ, LD_LIBRARY_PATH=lib, PIANO_DB="/tmp/ab_short/%s/p.db" % k)
        for i in range(10):
            r0 = os.times()
            t = time.perf_counter()
            subprocess.run([binary], env=env, stdout=subprocess.DEVNULL)
            res[k].append((time.perf_counter() - t) * 1e3)
            r1 = os.times()
            cpu[k].append(((r1.children_user - r0.children_user) + (r1.children_system - r0.children_system)) * 1e3)
for k in libs:
    print("%-8s wall median %.2f ms  cpu mean %.2f ms  (n=%d)" % (k, statistics.median(res[k]), statistics.mean(cpu[k]), len(res[k])))
