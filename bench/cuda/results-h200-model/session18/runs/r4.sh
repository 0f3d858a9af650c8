#!/bin/bash
# session 18 run 4: the host cost of cudaGraphLaunch on the H200 machine (exp_graph_launch, built
# on the dev VM from /tmp/gl/exp_graph_launch.cu): kernel count, memcpy nodes, parameter size
cd "$(dirname "$0")/../../../../.."
.carry/s18d/exp_graph_launch | tee ${OUT:-/tmp}/r4.txt
