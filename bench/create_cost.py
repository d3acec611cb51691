#!/usr/bin/env python3
# create_cost.py [DIR] - what creating a file costs on DIR's file system now (CPU us a create),
# then after 2,000 files are created and removed. On an ext4 without a journal (this VM's root), a
# new inode is never one removed in the last minute or more (fs/ext4/ialloc.c recently_deleted): each
# create scans past those, so a test suite whose runs make and remove spool files pays more and more
# per file (bench/README.md, "File creations"). Run it before timing short runs: a first figure of
# hundreds of us says the disk is still busy with earlier removals.
import os, sys, time

d = os.path.join(sys.argv[1] if len(sys.argv) > 1 else "/tmp", "create_cost.%d" % os.getpid())
os.makedirs(d)


def create(n, tag):
    t = time.process_time()
    for i in range(n):
        os.close(os.open("%s/%s%d" % (d, tag, i), os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600))
    return (time.process_time() - t) / n * 1e6


def remove(n, tag):
    for i in range(n):
        os.unlink("%s/%s%d" % (d, tag, i))


print("a create now: %.1f us (100 files)" % create(100, "a"))
remove(100, "a")
print("2,000 creates: %.1f us each" % create(2000, "b"))
remove(2000, "b")
print("a create after removing them: %.1f us (100 files)" % create(100, "c"))
remove(100, "c")
os.rmdir(d)
