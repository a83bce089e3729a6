#!/bin/bash
# Build ASTRA-sim's analytical network backends (congestion_aware and
# congestion_unaware) offline and run the microbenchmark Chakra traces on the
# network and system configurations of this folder; optionally run rocelab's
# simulator on the same collectives. See ../astra-sim.md. Not run by tests.
#
# Usage: build-and-run.sh SRC [ROCELAB]
#   SRC      a folder holding the ASTRA-sim superproject (astra-sim/astra-sim at
#            518bd51) with its submodules unpacked under extern/ and
#            jbeder/yaml-cpp (a83cd31) unpacked in SRC/yaml-cpp. With
#            MIRROR_ROOT set (e.g. /work/.mirror, bare repos at
#            MIRROR_ROOT/OWNER+NAME/repo) and SRC missing or empty, the
#            script unpacks them itself, at the commits listed below.
#   ROCELAB  a rocelab source tree (make build is run there); when given,
#            rocelab's simulator runs the same collectives for comparison.
# Needs: cmake g++ make libprotobuf-dev protobuf-compiler (Debian 12:
# cmake 3.25.1, g++ 12.2.0, protobuf 3.21.12). Builds with -j2.
set -euo pipefail

SRC=${1:?usage: build-and-run.sh SRC [ROCELAB]}
ROCELAB=${2:-}
CFG=$(cd "$(dirname "$0")" && pwd)
JOBS=${JOBS:-2}

# The commits used: the superproject's pins where the mirror has them, else
# the newest the mirror has (analytical, chakra, spdlog: see astra-sim.md).
unpack() {
  local m=${MIRROR_ROOT:?SRC is empty: set MIRROR_ROOT to unpack from mirrors}
  x() { # repo commit dir [pathspec…]
    local repo=$1 commit=$2 dir=$3; shift 3
    mkdir -p "$dir"
    git --git-dir="$m/$repo/repo" archive "$commit" -- "$@" | tar -x -C "$dir"
  }
  x astra-sim+astra-sim 518bd513ae110428cd62eb60efc0f3993fd53c70 "$SRC" .
  x astra-sim+astra-network-analytical 599a0473a9a74f5383f73b3cea5a12b9bc5ebaef "$SRC/extern/network_backend/analytical" .
  # chakra's tests/data/chakra.0 is not in the mirror (a large blob): leave tests/data out.
  x astra-sim+chakra f37c2bb50afa8b0e99b32ba9921662ab77502e85 "$SRC/extern/graph_frontend/chakra" . ':(exclude)tests/data'
  x astra-sim+astra-memory-analytical 641cce854d256bfd288b1de9607b6757313363f9 "$SRC/extern/remote_memory_backend/analytical" .
  x fmtlib+fmt 7e73566ce7bd3617cd4b14a2e3a19a2a30b524c7 "$SRC/extern/helper/fmt" .
  x gabime+spdlog 62302019babd8fdf63c1c6dc4c9faa48d441a7f0 "$SRC/extern/helper/spdlog" .
  x jbeder+yaml-cpp a83cd31548b19d50f3f983b069dceb4f4d50756d "$SRC/yaml-cpp" .
}
if [[ ! -d "$SRC/astra-sim/system" ]]; then unpack; fi
SRC=$(cd "$SRC" && pwd)

# Two patches (each applied once; see astra-sim.md for why).
for p in analytical-yaml-cpp-once chakra-etfeeder-alias; do
  if patch -d "$SRC" -p1 -R --dry-run -s -f < "$CFG/$p.patch" >/dev/null 2>&1; then
    echo "patch $p: already applied"
  else
    patch -d "$SRC" -p1 -s -f < "$CFG/$p.patch"; echo "patch $p: applied"
  fi
done

# Chakra's protobuf schema (what build/astra_analytical/build.sh does first).
PB="$SRC/extern/graph_frontend/chakra/schema/protobuf"
[[ -f "$PB/et_def.pb.cc" ]] || protoc et_def.proto --proto_path="$PB" --cpp_out="$PB"

# Configure and build as build.sh does, but with yaml-cpp from SRC/yaml-cpp:
# the superproject's FetchContent would clone it from GitHub.
B="$SRC/build/astra_analytical/build"
mkdir -p "$B"
cmake -S "$SRC/build/astra_analytical" -B "$B" -DBUILDTARGET=all \
  "-DFETCHCONTENT_SOURCE_DIR_YAML-CPP=$SRC/yaml-cpp" -DFETCHCONTENT_FULLY_DISCONNECTED=ON
cmake --build "$B" -j "$JOBS"

OUT=${OUT:-$SRC/rocelab-comparison}
mkdir -p "$OUT/logs"
astra() { # backend coll n network system → max finish cycles over the NPUs
  local log="$OUT/logs/astra-$1-$2-$3-$(basename "$4" .yml).log"
  "$B/bin/AstraSim_Analytical_Congestion_$1" \
    --workload-configuration="$SRC/examples/workload/microbenchmarks/$2/${3}npus_1MB/$2" \
    --system-configuration="$5" \
    --remote-memory-configuration="$CFG/no_memory_expansion.json" \
    --network-configuration="$4" > "$log" 2>&1
  grep -o "finished, [0-9]* cycles" "$log" | awk '{print $2}' | sort -n | tail -1
}
SYS="$CFG/system-ring-direct.json"
{
  printf "collective\tnpus\tnetwork\tunaware_ns\taware_ns\n"
  for c in all_reduce all_gather reduce_scatter all_to_all; do
    for n in 4 8 16; do
      net="$CFG/switch-${n}npus.yml"
      printf "%s\t%s\t%s\t%s\t%s\n" $c $n switch "$(astra Unaware $c $n "$net" "$SYS")" "$(astra Aware $c $n "$net" "$SYS")"
    done
    net="$CFG/switch-8npus-ringmean.yml"
    printf "%s\t8\tswitch-ringmean\t%s\t%s\n" $c "$(astra Unaware $c 8 "$net" "$SYS")" "$(astra Aware $c 8 "$net" "$SYS")"
    if [[ $c != all_to_all ]]; then
      for n in 4 8 16; do
        net="$CFG/fc-${n}npus.yml"
        printf "%s\t%s\tfully-connected\t%s\t%s\n" $c $n "$(astra Unaware $c $n "$net" "$SYS")" "$(astra Aware $c $n "$net" "$SYS")"
      done
    fi
  done
} | tee "$OUT/astra-sim.tsv"

[[ -n "$ROCELAB" ]] || exit 0

# rocelab's simulator: the same traces replayed (run --chakra) and its own
# collective of the same size (a scenario of one collective workload).
( cd "$ROCELAB" && make build >/dev/null )
R="$ROCELAB/bin/rocelab"
place() { # n → topology and ranks
  case $1 in
    4) echo "laptop host[1-2]:gpu[0-1]" ;;
    8) echo "laptop host[1-4]:gpu[0-1]" ;;
    16) echo "ai-zone-64 host[1-2]:gpu[0-7]" ;;
  esac
}
scenario() { # op n size → collective_time
  read -r topo ranks <<<"$(place "$2")"
  local f="$OUT/rocelab-$1-$2-$3.yaml"
  cat > "$f" <<YAML
name: astra-cmp-$1-$2
description: rocelab's $1 of $3 on $2 ranks, for the ASTRA-sim comparison
topology: $topo
duration: 2ms
workloads:
  - {name: c, kind: collective, op: $1, ranks: "$ranks", sizes: $3, iters: 5, warmup: 1}
expect:
  - collective_time(job=c) > 0
  - drops(class=lossless) == 0
YAML
  "$R" run --sim -q "$f" > "$OUT/logs/rocelab-$1-$2-$3.log" 2>&1
  grep -o 'collective_time(job=c) = [^,]*' "$OUT/logs/rocelab-$1-$2-$3.log" | awk '{print $3}'
}
{
  printf "collective\tnpus\tchakra_replay_step\tcollective_1MiB\n"
  for c in all_reduce all_gather reduce_scatter all_to_all; do
    op=${c//_/}
    for n in 4 8 16; do
      read -r topo ranks <<<"$(place $n)"
      "$R" run --sim -q --chakra "$ROCELAB/examples/09-chakra/microbenchmarks/$c/${n}npus_1MB" \
        --topology "$topo" --ranks "$ranks" > "$OUT/logs/rocelab-chakra-$c-$n.log" 2>&1
      step=$(grep -o 'step 0: [^ ]*' "$OUT/logs/rocelab-chakra-$c-$n.log" | awk '{print $3}')
      printf "%s\t%s\t%s\t%s\n" $c $n "$step" "$(scenario $op $n 1MiB)"
    done
  done
  for n in 4 8 16; do
    printf "all_gather(output %sMiB)\t%s\t-\t%s\n" $n $n "$(scenario allgather $n ${n}MiB)"
  done
} | tee "$OUT/rocelab.tsv"
