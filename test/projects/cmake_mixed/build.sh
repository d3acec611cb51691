# Sourced by ../check.sh: configure and build with the wrappers as compilers.
export PIANO_FNS=tok_,app::Resolver,frame,missing_fn
cmake -S . -B _build -DCMAKE_C_COMPILER="$PIANO_CC" -DCMAKE_CXX_COMPILER="$PIANO_CXX" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build _build -j4
PROG=$SRC/_build/app
# tok_count from the archive is in the program, Resolver in libresolver.so.
nm "$PROG" | grep -q ' T tok_count$'
nm -DC _build/libresolver.so | grep -q ' T app::Resolver::resolve'
! nm -C "$PROG" | grep -q ' T app::Resolver::resolve'
