#!/bin/bash
# session 11 final attention check (the decode kernel's Q load moved after its first stages; old keys early only on request)
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=${OUT:-/tmp/out}; mkdir -p $O
A=/tmp/s11a/attention; mkdir -p $A
OUT=$A timeout 400 bash scripts/gpu_check.sh --bin .carry/s11/bin > $A/console.txt 2>&1; echo "attention check rc $?"
tail -30 $A/console.txt
tar czf $O/s11a.tgz -C /tmp s11a
