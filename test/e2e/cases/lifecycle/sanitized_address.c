// CFLAGS: -fsanitize=address,undefined -pthread
// sanitized_memory's program under AddressSanitizer and UndefinedBehaviorSanitizer.
#include "sanitized_memory.c"
