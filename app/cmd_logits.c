/* pagellm logits: raw little-endian float32 logits of a token sequence, for scoring and
 * external comparison. Prefill runs in chunks through the paged cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pagellm/model.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: pagellm logits --model DIR --ids 1,2,3 --out FILE [flags]\n"
            "  --model DIR       Hugging Face Qwen3 directory (required)\n"
            "  --ids LIST        comma-separated token ids (required)\n"
            "  --out FILE        output: float32 little-endian, [rows, vocab] (required)\n"
            "  --all-positions   logits of every position (default: the last one only)\n"
            "  --f32             float32 activations and K/V (default: bf16)\n"
            "  --chunk N         prefill chunk length (default 0: the whole sequence at once)\n"
            "  --page-size N     KV page size (default 16)\n"
            "  --threads N       threads (default 0: all cores)\n"
            "  --device D        cpu or cuda (default cpu; cuda: weights, activations and KV pages on the GPU)\n"
            "  --help            this text\n");
}

int pl_cmd_logits(int argc, char **argv) {
    const char *dir = NULL, *out = NULL, *v;
    int32_t *ids = NULL;
    int n = 0, all = 0, f32 = 0, chunk = 0, page = 16, threads = 0;
    pl_device device = PL_DEVICE_CPU;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            free(ids);
            return 0;
        } else if (pl_cli_is(argv[i], "--model")) {
            if (!(dir = pl_cli_value(argc, argv, &i, "--model"))) goto bad;
        } else if (pl_cli_is(argv[i], "--out")) {
            if (!(out = pl_cli_value(argc, argv, &i, "--out"))) goto bad;
        } else if (pl_cli_is(argv[i], "--ids")) {
            free(ids);
            ids = NULL;
            if (!(v = pl_cli_value(argc, argv, &i, "--ids")) || pl_cli_int_list("--ids", v, &ids, &n)) goto bad;
        } else if (!strcmp(argv[i], "--all-positions")) {
            all = 1;
        } else if (!strcmp(argv[i], "--f32")) {
            f32 = 1;
        } else if (pl_cli_is(argv[i], "--chunk")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--chunk")) || pl_cli_int("--chunk", v, 0, 1 << 24, &chunk)) goto bad;
        } else if (pl_cli_is(argv[i], "--page-size")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--page-size")) || pl_cli_int("--page-size", v, 1, 1 << 16, &page))
                goto bad;
        } else if (pl_cli_is(argv[i], "--device")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--device"))) goto bad;
            if (!strcmp(v, "cpu")) {
                device = PL_DEVICE_CPU;
            } else if (!strcmp(v, "cuda")) {
                device = PL_DEVICE_CUDA;
            } else {
                fprintf(stderr, "pagellm: logits: --device: expected cpu or cuda, got '%s'\n", v);
                goto bad;
            }
        } else if (pl_cli_is(argv[i], "--threads")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--threads")) || pl_cli_int("--threads", v, 0, 1024, &threads))
                goto bad;
        } else {
            fprintf(stderr, "pagellm: logits: unknown flag '%s'\n", argv[i]);
            usage(stderr);
            goto bad;
        }
    }
    if (!dir || !out || !ids || n == 0) {
        fprintf(stderr, "pagellm: logits: --model, --ids (non-empty) and --out are required\n");
        usage(stderr);
        goto bad;
    }
    char err[512];
    pl_model_options o = {f32 ? PL_F32 : PL_BF16, device, threads, 1, 0};
    pl_model *m = NULL;
    if (pl_model_load(dir, &o, &m, err, sizeof err)) {
        fprintf(stderr, "pagellm: logits: %s\n", err);
        free(ids);
        return 1;
    }
    size_t V = (size_t)pl_model_get_config(m)->vocab_size;
    float *lg = malloc(sizeof(float) * V * (all ? (size_t)n : 1));
    pl_kv_pools pools;
    pl_kv_seq seq;
    int rc = lg ? pl_model_create_pools(m, page, PL_POOL_GROWABLE, 0, &pools, err, sizeof err) : 1;
    if (!lg) snprintf(err, sizeof err, "out of memory");
    if (!rc && (rc = pl_kv_seq_init(&seq, &pools, err, sizeof err))) pl_kv_pools_destroy(&pools);
    if (!rc) {
        int step = chunk > 0 ? chunk : n;
        pl_kv_seq *sp = &seq;
        for (int pos = 0; pos < n && !rc; pos += step) {
            int len = n - pos < step ? n - pos : step;
            pl_forward_batch b = {1, ids + pos, &len, &pos, &sp, NULL, all};
            rc = pl_model_forward(m, &b, all ? lg + (size_t)pos * V : lg, err, sizeof err);
        }
        pl_kv_seq_destroy(&seq);
        pl_kv_pools_destroy(&pools);
    }
    if (!rc) {
        FILE *f = fopen(out, "wb");
        size_t cnt = V * (all ? (size_t)n : 1);
        if (!f || fwrite(lg, sizeof(float), cnt, f) != cnt) {
            snprintf(err, sizeof err, "%s: cannot write", out);
            rc = 1;
        }
        if (f && fclose(f) != 0 && !rc) {
            snprintf(err, sizeof err, "%s: cannot write", out);
            rc = 1;
        }
    }
    if (rc) fprintf(stderr, "pagellm: logits: %s\n", err);
    free(lg);
    free(ids);
    pl_model_free(m);
    return rc ? 1 : 0;
bad:
    free(ids);
    return 2;
}
