// PIANO_FNS: parse_request,respond,backend_send
// CFLAGS: -pthread
// examples/span_server.c: an event-loop server on 127.0.0.1 (a port the
// system picks) whose requests wait on a timer (GET) or a second socket (PUT).
#include "../../../../examples/span_server.c"
