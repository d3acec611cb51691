// CFLAGS: -fsanitize=thread -pthread
// sanitized_memory's program under ThreadSanitizer.
#include "sanitized_memory.c"
