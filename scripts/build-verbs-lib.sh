#!/bin/sh
# build-verbs-lib.sh OUT: build rocelab's drop-in libibverbs.so.1 (the
# verbs ABI over a lab's endpoint nodes) into OUT. Needs a C compiler and
# the verbs headers (Debian: gcc, libibverbs-dev). Exit 3 when either is
# missing, so that callers can say what to install.
set -eu
out=${1:?usage: build-verbs-lib.sh OUT}
src=$(dirname "$0")/../lab/emulation/datapath/verbs/libibverbs
cc=${CC:-cc}
if ! command -v "$cc" >/dev/null 2>&1; then
	echo "build-verbs-lib: no C compiler ($cc): install gcc to build rocelab's libibverbs" >&2
	exit 3
fi
if ! printf '#include <infiniband/verbs.h>\n' | "$cc" -E -x c - >/dev/null 2>&1; then
	echo "build-verbs-lib: no <infiniband/verbs.h>: install libibverbs-dev to build rocelab's libibverbs" >&2
	exit 3
fi
mkdir -p "$(dirname "$out")"
"$cc" -O2 -g -Wall -Wextra -Werror -fPIC -shared -fvisibility=default \
	-Wl,--version-script="$src/libibverbs.map" -Wl,-soname,libibverbs.so.1 -Wl,-z,defs \
	-o "$out.tmp" "$src"/*.c -lpthread
mv "$out.tmp" "$out"
