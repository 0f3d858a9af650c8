#!/bin/bash
# Session 46, run 8: the host's ranking by qsort (O(B log B) per call; the insertion sort was O(B^2) on the host walk of
# every layer). .carry/k46g = 97fa0e6 + that change. test_cuda_attention and test_cuda_backend; then the change's
# reach beyond Qwen3-4B: batch 64 at context 512 for qwen3-8b and qwen3-1.7b, AUTO (host-ranked) and order:5 (the
# kernel ranks, as before the session), separate processes, interleaved, and qwen3-4b once more.
cd "$(dirname "$0")/../../../../.."
mkdir -p /tmp/k46g && tar xJf .carry/k46g/bin.tar.xz -C /tmp/k46g; B=/tmp/k46g/bin
export LD_LIBRARY_PATH=$PWD/.carry/cm/lib:/usr/local/cuda/lib64 PAGELLM_ROOT=$PWD OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$(nproc)
O=/tmp/o46r8; rm -rf $O; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $O/gpu.txt 2>&1
for t in attention backend; do
  timeout 200 $B/test_cuda_$t > $O/test_cuda_$t.txt 2>&1; echo "test_cuda_$t rc $? $(tail -1 $O/test_cuda_$t.txt)"
done
for sh in qwen3-8b qwen3-1.7b qwen3-4b; do
  for h in aa order:5; do
    f=$O/b64_${sh}_$(echo $h | tr ':+' '-_').txt
    timeout 120 $B/bench_model_cuda --shape $sh --only decode --batches 64 --steps 20 --hooks $h > $f 2>&1 || echo "$sh $h rc $?"
    echo "$sh $h: $(grep -E '^ *64 ' $f | head -1)"
  done
done
tar czf ${OUT:-/tmp}/r8.tgz -C /tmp o46r8
