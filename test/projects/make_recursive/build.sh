# Sourced by ../check.sh: the user's commands, verbatim but for paths.
export PIANO_FNS=frame,parse_,util_,resolve_,no_such_function
make -j4 CC="$PIANO_CC" CFLAGS="-O2 -g"
PROG=$SRC/app/app
# parse_token comes from the archive into the program; resolve_name stays in
# the shared library.
nm "$PROG" | grep -q ' T parse_token$'
! nm "$PROG" | grep -q ' T resolve_name$'
nm -D shlib/libresolve.so | grep -q ' T resolve_name$'
