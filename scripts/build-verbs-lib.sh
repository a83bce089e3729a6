#!/bin/sh
# build-verbs-lib.sh OUT: build rocelab's drop-in libibverbs.so.1 (the
# verbs ABI over a lab's endpoint nodes) into OUT, and its librdmacm.so.1
# beside it. Needs a C compiler and the verbs headers (Debian: gcc,
# libibverbs-dev), and for librdmacm the rdma_cm headers (librdmacm-dev).
# Exit 3 when the first are missing, 4 when only the rdma_cm headers are
# (libibverbs.so.1 is built), so that callers can say what to install.
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
# rocelab's librdmacm.so.1 beside it (rdma_cm over the same socket), when
# the rdma_cm headers are there (Debian: librdmacm-dev).
rsrc=$(dirname "$0")/../lab/emulation/datapath/verbs/librdmacm
rout=$(dirname "$out")/librdmacm.so.1
if ! printf '#include <rdma/rdma_cma.h>\n' | "$cc" -E -x c - >/dev/null 2>&1; then
	echo "build-verbs-lib: no <rdma/rdma_cma.h>: install librdmacm-dev to build rocelab's librdmacm (rping, perftest -R, qperf, libfabric)" >&2
	exit 4
fi
"$cc" -O2 -g -Wall -Wextra -Werror -fPIC -shared -fvisibility=default \
	-Wl,--version-script="$rsrc/librdmacm.map" -Wl,-soname,librdmacm.so.1 -Wl,-z,defs \
	-o "$rout.tmp" "$rsrc"/*.c -L"$(dirname "$out")" -l:"$(basename "$out")" -lpthread
mv "$rout.tmp" "$rout"
