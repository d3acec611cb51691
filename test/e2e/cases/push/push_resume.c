// PIANO_FNS: phase_one,phase_two
// push --follow stopped, then the stored run pushed: the windows it had not
// sent, each call received once (push_resume.check). The program is the push
// cases' (cases/lib/push_workload.h).
#include "../lib/push_workload.h"
