#include "proj.h"
int util_trim(int x) { return x & 0xff; }
