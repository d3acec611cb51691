#include "proj.h"
static int resolve_step(int x) { return x * 3; }
int resolve_name(int x) { return resolve_step(x) + resolve_step(x + 1); }
