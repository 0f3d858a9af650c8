/* pagellm: the command-line front end. One file per subcommand (app/cmd_*.c). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command k_commands[] = {
    {"bench-serving", pl_cmd_bench_serving, "continuous-batching serving benchmark (dense / paged-gather / paged KV)"},
    {"bench-attention", pl_cmd_bench_attention, "paged_attention schedules against the machine's ceilings"},
    {"bench-model", pl_cmd_bench_model, "Qwen3 forward pass: decode and prefill against the machine's ceilings"},
    {"bench-tokenizer", pl_cmd_bench_tokenizer, "tokenizer encode speed"},
    {"make-model", pl_cmd_make_model, "write a synthetic Qwen3 checkpoint (Hugging Face layout)"},
    {"logits", pl_cmd_logits, "raw float32 logits for a token sequence"},
    {"generate", pl_cmd_generate, "generate text from a prompt, streaming"},
    {"tokenize", pl_cmd_tokenize, "encode text to token ids or decode ids to text"},
};

static void usage(FILE *f) {
    fprintf(f, "usage: pagellm <command> [flags]   (pagellm <command> --help for its flags)\n\ncommands:\n");
    for (size_t i = 0; i < sizeof k_commands / sizeof k_commands[0]; i++)
        fprintf(f, "  %-16s %s\n", k_commands[i].name, k_commands[i].summary);
}

int main(int argc, char **argv) {
    /* OpenMP threads that spin at barriers lose their time slices on a shared machine (a
     * 20x slowdown was measured, docs/PERF.md); libgomp reads the policy before main, so set
     * it and start again once. An explicit OMP_WAIT_POLICY is respected. */
    if (!getenv("OMP_WAIT_POLICY")) {
        setenv("OMP_WAIT_POLICY", "passive", 1);
        execv("/proc/self/exe", argv);
    }
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (size_t i = 0; i < sizeof k_commands / sizeof k_commands[0]; i++)
        if (!strcmp(argv[1], k_commands[i].name)) return k_commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "pagellm: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
