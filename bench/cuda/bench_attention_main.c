/* Stand-alone driver for the CUDA attention benchmark (pl_cmd_bench_attention_cuda), for GPU
 * runs where the CLI's bench-attention dispatch is not at hand; same flags and JSON. */
#include "cli.h"

int main(int argc, char **argv) { return pl_cmd_bench_attention_cuda(argc, argv); }
