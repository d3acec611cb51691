# Sourced by ../check.sh: an out-of-tree autotools-style build.
export PIANO_FNS=file:lexer.c,eval_,nowhere
mkdir _build && cd _build
../configure CC="$PIANO_CC" CFLAGS="-O2 -g"
grep -q "HAVE_STRNDUP 1" config.h
make -j4
PROG=$PWD/calc
cd ..
