#!/bin/bash
# Run 2 (and 3, rebuilt with deeper x rings): exp_fullk_mc with the consumers' remote slot releases at CTA scope (`s34b`): run 1's ncu
# put 55% of the CS2 kernel's warp cycles on "waiting on a memory barrier", the cluster-scope
# release of every remote mbarrier arrive. Same table as the thirty-third session's runs 7-9.
cd "$(dirname "$0")/../../../../.."
O=/tmp/o2; mkdir -p $O
timeout 200 .carry/s34b/exp_fullk_mc > $O/exp_fullk_mc.txt 2>&1; echo "rc $?"
cat $O/exp_fullk_mc.txt
tar czf ${OUT:-/tmp}/r${RUN:-2}.tgz -C $O .
