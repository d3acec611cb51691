// PIANO_FNS: phase_one,phase_two
// push --follow: a live run's snapshot windows pushed to a Pyroscope stand-in
// (test/db/pyroscope_stub.py) as they appear (push_follow.check). The program
// is the push cases' (cases/lib/push_workload.h): it runs until the check
// has seen what it looks at.
#include "../lib/push_workload.h"
