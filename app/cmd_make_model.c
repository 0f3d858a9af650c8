/* pagellm make-model: writes a synthetic Qwen3 checkpoint (Hugging Face layout, bf16). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "pagellm/model.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: pagellm make-model --shape NAME --out DIR [--seed N]\n"
            "  --shape NAME  synthetic shape (required):");
    for (const char *const *n = pl_model_shape_names(); *n; n++) fprintf(f, " %s", *n);
    fprintf(f,
            "\n  --seed N      random seed of the weights (default 0)\n"
            "  --out DIR     output directory, created if absent (required)\n"
            "  --threads N   threads (default 0: all cores)\n"
            "  --help        this text\n");
}

int pl_cmd_make_model(int argc, char **argv) {
    const char *shape = NULL, *out = NULL, *v;
    uint64_t seed = 0;
    int threads = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (pl_cli_is(argv[i], "--shape")) {
            if (!(shape = pl_cli_value(argc, argv, &i, "--shape"))) return 2;
        } else if (pl_cli_is(argv[i], "--out")) {
            if (!(out = pl_cli_value(argc, argv, &i, "--out"))) return 2;
        } else if (pl_cli_is(argv[i], "--seed")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--seed")) || pl_cli_u64("--seed", v, &seed)) return 2;
        } else if (pl_cli_is(argv[i], "--threads")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--threads")) || pl_cli_int("--threads", v, 0, 1024, &threads))
                return 2;
        } else {
            fprintf(stderr, "pagellm: make-model: unknown flag '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (!shape || !out) {
        fprintf(stderr, "pagellm: make-model: --shape and --out are required\n");
        usage(stderr);
        return 2;
    }
    char err[512];
    pl_model_config cfg;
    if (pl_model_shape_config(shape, &cfg, err, sizeof err)) {
        fprintf(stderr, "pagellm: --shape: %s\n", err);
        return 2;
    }
    pl_model_options o = {PL_BF16, PL_DEVICE_CPU, threads, 0, 0};
    pl_model *m = NULL;
    if (pl_model_create_synthetic(shape, seed, &o, &m, err, sizeof err) || pl_model_save(m, out, err, sizeof err)) {
        fprintf(stderr, "pagellm: make-model: %s\n", err);
        pl_model_free(m);
        return 1;
    }
    fprintf(stderr, "wrote %s (%s, seed %llu, %.1f MB of weights)\n", out, shape, (unsigned long long)seed,
            (double)pl_model_weight_bytes(m) / 1e6);
    pl_model_free(m);
    return 0;
}
