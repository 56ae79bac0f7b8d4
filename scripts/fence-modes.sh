#!/usr/bin/env bash
# The steal path's cases on one build under the deque's three fence settings, for a many-core
# machine: `adaptive` (the default: each deque switches between asymmetric and symmetric
# fences by its steal rate), `asym` (STEALBENCH_FENCE_SWITCHING=0: always asymmetric, a
# membarrier per steal attempt that finds work) and `fences` (STEALBENCH_NO_MEMBARRIER=1:
# SeqCst fences on both sides), with rayon beside them.
# Usage: scripts/fence-modes.sh [P...]   (default: 8 16; the binary: $STEALBENCH, else
# target/release/stealbench; the lines also go to $OUT/fence-modes.txt, else /tmp)
# One line per (setting, runtime, case, P): the median of 3 repetitions and the counters summed
# over them (steals, heavy_fences, fence_switches, symmetric_pops).
set -u
cd "$(dirname "$0")/.."
B=${STEALBENCH:-$PWD/target/release/stealbench}
PS=("$@"); [ ${#PS[@]} -eq 0 ] && PS=(8 16)
F=${OUT:-/tmp}/fence-modes.txt
one() { # setting runtime workload variant size P extra...
  local mode=$1 rt=$2 wl=$3 var=$4 size=$5 P=$6; shift 6
  local e=()
  case $mode in asym) e=(STEALBENCH_FENCE_SWITCHING=0);; fences) e=(STEALBENCH_NO_MEMBARRIER=1);; esac
  local out; out=$(env "${e[@]}" timeout 120 "$B" run --runtime "$rt" --workload "$wl" --variant "$var" --workers "$P" --size "$size" --reps 3 "$@" 2>&1)
  local med; med=$(grep -o '^median [0-9.e-]* s' <<<"$out" | awk '{print $2}')
  local st; st=$(grep '^rep' <<<"$out" | grep -oE '(steals|heavy_fences|fence_switches|symmetric_pops)=[0-9]+' | awk -F= '{s[$1]+=$2} END {for (k in s) printf "%s=%d ", k, s[k]}')
  printf '%-8s %-24s %-28s P=%-3s %10s s  %s\n' "$mode" "$rt" "$wl-$var-$size $*" "$P" "${med:-FAILED}" "$st"
}
{
  echo "# $(nproc) cpus;$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); $(date -u)"
  for P in "${PS[@]}"; do
    for rt in abp fibril prows libfork; do for m in adaptive asym fences; do one $m $rt uts fj quick "$P" --param tree=T3; done; done
    one adaptive rayon uts fj quick "$P" --param tree=T3
  done
  for wl in lcs sw; do for P in "${PS[@]}"; do
    for m in adaptive asym fences; do one $m prows $wl sf quick "$P"; done
    one adaptive prows/placement=artifact $wl sf quick "$P"
    one adaptive rayon $wl sf quick "$P"
  done; done
  for P in 1 "${PS[@]}"; do
    for rt in abp fibril prows; do for m in adaptive asym fences; do one $m $rt fib fj small "$P"; done; done
    one adaptive libfork fib fj small "$P"
    one adaptive rayon fib fj small "$P"
  done
} 2>&1 | tee "$F"
