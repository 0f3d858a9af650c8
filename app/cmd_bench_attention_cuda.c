/* Placeholder until the CUDA attention benchmark lands; it says so and fails. */
#include <stdio.h>

#include "cli.h"

int pl_cmd_bench_attention_cuda(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "pagellm: bench-attention --device cuda is not implemented yet\n");
    return 2;
}
