#include "proj.h"
int parse_token(int x) { return util_trim(x) + 1; }
