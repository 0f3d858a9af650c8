/* pagellm bench-model: the Qwen3 forward pass on a synthetic model against the machine's
 * ceilings measured in the same run: decode steps at batch 1 and 4 (weight bytes per step
 * over the read bandwidth) and prefill in 512-token chunks (model FLOPs over the f32 FMA
 * rate). Writes a table to stdout and JSON to --json. On a shared machine run it with
 * OMP_WAIT_POLICY=passive: spinning OpenMP workers otherwise lose their time slices to
 * other processes and every parallel region waits for them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ceiling.h"
#include "base/json.h"
#include "base/timing.h"
#include "cli.h"
#include "pagellm/model.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: pagellm bench-model [flags]\n"
            "  --shape NAME      synthetic shape (default qwen3-0.6b)\n"
            "  --model DIR       benchmark a checkpoint directory instead of a synthetic shape\n"
            "  --seed N          weight seed (default 0)\n"
            "  --threads N       threads (default 0: all cores)\n"
            "  --batches LIST    decode batch sizes (default 1,4)\n"
            "  --context N       tokens in each sequence's cache before decoding (default 128)\n"
            "  --steps N         timed decode steps per batch size (default 10)\n"
            "  --chunk N         prefill chunk length (default 512)\n"
            "  --chunks N        prefill chunks timed, one after another (default 2)\n"
            "  --f32             float32 activations and weights (default bf16)\n"
            "  --json-output FILE  write results as JSON (default: none; --json is an alias)\n"
            "  --help            this text\n");
}

typedef struct decode_result {
    int batch;
    double step_s, tok_s, gbps, roofline;
} decode_result;

typedef struct prefill_result {
    int start, len;
    double s, gflops, ratio;
} prefill_result;

/* Model FLOPs of a chunk of L tokens after ctx cached ones (matmuls + attention). */
static double chunk_flops(const pl_model_config *c, int ctx, int L, int logits_rows) {
    double H = c->hidden_size, qd = (double)c->num_heads * c->head_dim, kd = (double)c->num_kv_heads * c->head_dim;
    double per_tok = 2.0 * c->num_layers * (H * (qd + 2 * kd) + qd * H + 3.0 * H * c->intermediate_size);
    /* causal: query l sees ctx + l + 1 keys; QK^T and PV each 2 * D flops per (head, key) */
    double keys = (double)L * ctx + (double)L * (L + 1) / 2;
    double attn = 4.0 * c->num_layers * c->num_heads * c->head_dim * keys;
    return per_tok * L + attn + 2.0 * H * c->vocab_size * logits_rows;
}

int pl_cmd_bench_model(int argc, char **argv) {
    const char *shape = "qwen3-0.6b", *dir = NULL, *json = NULL, *v;
    uint64_t seed = 0;
    int threads = 0, context = 128, steps = 10, chunk = 512, chunks = 2, f32 = 0, nb = 2;
    int32_t *batches = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            free(batches);
            return 0;
        } else if (pl_cli_is(argv[i], "--shape")) {
            if (!(shape = pl_cli_value(argc, argv, &i, "--shape"))) goto bad;
        } else if (pl_cli_is(argv[i], "--model")) {
            if (!(dir = pl_cli_value(argc, argv, &i, "--model"))) goto bad;
        } else if (pl_cli_is(argv[i], "--json-output") || pl_cli_is(argv[i], "--json")) {
            if (!(json = pl_cli_value(argc, argv, &i, pl_cli_is(argv[i], "--json") ? "--json" : "--json-output"))) goto bad;
        } else if (pl_cli_is(argv[i], "--seed")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--seed")) || pl_cli_u64("--seed", v, &seed)) goto bad;
        } else if (pl_cli_is(argv[i], "--threads")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--threads")) || pl_cli_int("--threads", v, 0, 1024, &threads)) goto bad;
        } else if (pl_cli_is(argv[i], "--context")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--context")) || pl_cli_int("--context", v, 1, 1 << 20, &context))
                goto bad;
        } else if (pl_cli_is(argv[i], "--steps")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--steps")) || pl_cli_int("--steps", v, 1, 100000, &steps)) goto bad;
        } else if (pl_cli_is(argv[i], "--chunk")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--chunk")) || pl_cli_int("--chunk", v, 1, 1 << 16, &chunk)) goto bad;
        } else if (pl_cli_is(argv[i], "--chunks")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--chunks")) || pl_cli_int("--chunks", v, 0, 64, &chunks)) goto bad;
        } else if (pl_cli_is(argv[i], "--batches")) {
            free(batches);
            batches = NULL;
            if (!(v = pl_cli_value(argc, argv, &i, "--batches")) || pl_cli_int_list("--batches", v, &batches, &nb))
                goto bad;
            for (int k = 0; k < nb; k++)
                if (batches[k] < 1 || batches[k] > 256) {
                    fprintf(stderr, "pagellm: --batches: %d is outside [1, 256]\n", batches[k]);
                    goto bad;
                }
        } else if (!strcmp(argv[i], "--f32")) {
            f32 = 1;
        } else {
            fprintf(stderr, "pagellm: bench-model: unknown flag '%s'\n", argv[i]);
            usage(stderr);
            goto bad;
        }
    }
    if (!batches) {
        batches = malloc(sizeof(int32_t) * 2);
        batches[0] = 1, batches[1] = 4, nb = 2;
    }
    char err[512];
    pl_model_config probe;
    if (!dir && pl_model_shape_config(shape, &probe, err, sizeof err)) {
        fprintf(stderr, "pagellm: --shape: %s\n", err);
        goto bad;
    }
    pl_model_options o = {f32 ? PL_F32 : PL_BF16, PL_DEVICE_CPU, threads, 1, 0};
    pl_model *m = NULL;
    double t0 = pl_now_seconds();
    int rc = dir ? pl_model_load(dir, &o, &m, err, sizeof err)
                 : pl_model_create_synthetic(shape, seed, &o, &m, err, sizeof err);
    if (rc) {
        fprintf(stderr, "pagellm: bench-model: %s\n", err);
        free(batches);
        return 1;
    }
    double load_s = pl_now_seconds() - t0;
    const pl_model_config *c = pl_model_get_config(m);
    int nthreads = pl_model_get_options(m)->num_threads;
    /* Ceilings measured before and after the model phases; the higher of each is used, so
     * a ratio is never flattered by a momentarily busy machine during the ceiling run. */
    pl_ceilings ceil;
    if (pl_measure_ceilings(nthreads, 0, &ceil) != PL_OK) memset(&ceil, 0, sizeof ceil);
    size_t wbytes = pl_model_weight_bytes(m), V = (size_t)c->vocab_size;
    int maxb = 1;
    for (int k = 0; k < nb; k++) maxb = batches[k] > maxb ? batches[k] : maxb;
    float *logits = malloc(sizeof(float) * V * (size_t)maxb);
    int32_t *toks = malloc(sizeof(int32_t) * (size_t)(context > chunk ? context : chunk) * (size_t)maxb);
    decode_result *dr = calloc((size_t)nb, sizeof *dr);
    prefill_result *pr = calloc((size_t)(chunks > 0 ? chunks : 1), sizeof *pr);
    double *times = malloc(sizeof(double) * (size_t)steps);
    for (int i = 0; i < (context > chunk ? context : chunk) * maxb; i++) toks[i] = (int32_t)((i * 7919 + 13) % c->vocab_size);

    /* Decode: B sequences with `context` cached tokens, then timed single-token steps. */
    for (int k = 0; k < nb && !rc; k++) {
        int B = batches[k];
        pl_kv_pools pools;
        if ((rc = pl_model_create_pools(m, 128, PL_POOL_GROWABLE, 0, &pools, err, sizeof err))) break;
        pl_kv_seq *seqs = calloc((size_t)B, sizeof *seqs);
        pl_kv_seq **sp = malloc(sizeof *sp * (size_t)B);
        int *lens = malloc(sizeof(int) * (size_t)B), *pos = malloc(sizeof(int) * (size_t)B);
        for (int b = 0; b < B && !rc; b++) {
            rc = pl_kv_seq_init(&seqs[b], &pools, err, sizeof err);
            sp[b] = &seqs[b];
            lens[b] = context;
            pos[b] = 0;
        }
        if (!rc) {
            pl_forward_batch fb = {B, toks, lens, pos, sp, NULL, 0};
            rc = pl_model_forward(m, &fb, logits, err, sizeof err);
        }
        for (int b = 0; b < B; b++) lens[b] = 1;
        for (int s = -2; s < steps && !rc; s++) { /* two warm-up steps */
            for (int b = 0; b < B; b++) pos[b] = pl_kv_seq_offset(&seqs[b]);
            pl_forward_batch fb = {B, toks + (s + 2) % 64, lens, pos, sp, NULL, 0};
            double ts = pl_now_seconds();
            rc = pl_model_forward(m, &fb, logits, err, sizeof err);
            if (s >= 0) times[s] = pl_now_seconds() - ts;
        }
        if (!rc) {
            decode_result *d = &dr[k];
            d->batch = B;
            d->step_s = pl_median(times, steps);
            d->tok_s = B / d->step_s;
            d->gbps = (double)wbytes / d->step_s / 1e9;
            d->roofline = ceil.read_gbps > 0 ? d->gbps / ceil.read_gbps : 0;
        }
        for (int b = 0; b < B; b++) pl_kv_seq_destroy(&seqs[b]);
        pl_kv_pools_destroy(&pools);
        free(seqs), free(sp), free(lens), free(pos);
    }
    /* Prefill: one sequence, `chunks` chunks of `chunk` tokens, each timed. */
    if (!rc && chunks > 0) {
        pl_kv_pools pools;
        pl_kv_seq seq;
        if (!(rc = pl_model_create_pools(m, 128, PL_POOL_GROWABLE, 0, &pools, err, sizeof err))) {
            if (!(rc = pl_kv_seq_init(&seq, &pools, err, sizeof err))) {
                pl_kv_seq *sp = &seq;
                for (int i = 0; i < chunks && !rc; i++) {
                    int p = pl_kv_seq_offset(&seq), len = chunk;
                    pl_forward_batch fb = {1, toks, &len, &p, &sp, NULL, 0};
                    double ts = pl_now_seconds();
                    rc = pl_model_forward(m, &fb, logits, err, sizeof err);
                    pr[i].s = pl_now_seconds() - ts;
                    pr[i].start = p;
                    pr[i].len = len;
                    pr[i].gflops = chunk_flops(c, p, len, 1) / pr[i].s / 1e9;
                    pr[i].ratio = ceil.fma_f32_gflops > 0 ? pr[i].gflops / ceil.fma_f32_gflops : 0;
                }
                pl_kv_seq_destroy(&seq);
            }
            pl_kv_pools_destroy(&pools);
        }
    }
    pl_ceilings after;
    if (!rc && pl_measure_ceilings(nthreads, 0, &after) == PL_OK) {
        if (after.read_gbps > ceil.read_gbps) ceil.read_gbps = after.read_gbps;
        if (after.fma_f32_gflops > ceil.fma_f32_gflops) ceil.fma_f32_gflops = after.fma_f32_gflops;
        if (after.bf16_dot_gflops > ceil.bf16_dot_gflops) ceil.bf16_dot_gflops = after.bf16_dot_gflops;
        for (int k = 0; k < nb; k++) dr[k].roofline = ceil.read_gbps > 0 ? dr[k].gbps / ceil.read_gbps : 0;
        for (int i = 0; i < chunks; i++) pr[i].ratio = ceil.fma_f32_gflops > 0 ? pr[i].gflops / ceil.fma_f32_gflops : 0;
    }
    if (rc) {
        fprintf(stderr, "pagellm: bench-model: %s\n", err);
    } else {
        const char *name = dir ? dir : shape;
        printf("bench-model: %s, %s activations, %d threads, weights %.1f MB/step, load %.2f s\n", name,
               f32 ? "f32" : "bf16", nthreads, (double)wbytes / 1e6, load_s);
        printf("ceilings (same run, best of before/after, %d threads): read %.1f GB/s, f32 FMA %.1f GFLOP/s, "
               "bf16 dot %.1f GFLOP/s\n",
               ceil.threads, ceil.read_gbps, ceil.fma_f32_gflops, ceil.bf16_dot_gflops);
        printf("%-22s %10s %10s %10s %12s\n", "phase", "ms", "tok/s", "GB/s|GF/s", "of ceiling");
        for (int k = 0; k < nb; k++)
            printf("decode batch %-9d %10.2f %10.1f %10.2f %11.1f%%\n", dr[k].batch, dr[k].step_s * 1e3, dr[k].tok_s,
                   dr[k].gbps, 100 * dr[k].roofline);
        for (int i = 0; i < chunks; i++)
            printf("prefill %4d @ ctx %-5d %10.1f %10.1f %10.1f %11.1f%%\n", pr[i].len, pr[i].start, pr[i].s * 1e3,
                   pr[i].len / pr[i].s, pr[i].gflops, 100 * pr[i].ratio);
        if (json) {
            FILE *f = fopen(json, "w");
            if (!f) {
                fprintf(stderr, "pagellm: --json: cannot open %s\n", json);
                rc = 1;
            } else {
                pl_json_writer w;
                pl_json_init(&w, f, 1);
                pl_json_begin_object(&w);
                pl_json_key(&w, "command"), pl_json_string(&w, "bench-model");
                pl_json_key(&w, "model"), pl_json_string(&w, name);
                pl_json_key(&w, "act_dtype"), pl_json_string(&w, f32 ? "f32" : "bf16");
                pl_json_key(&w, "threads"), pl_json_int(&w, nthreads);
                pl_json_key(&w, "matmul_kernel"), pl_json_string(&w, pl_cpu_simd_name());
                pl_json_key(&w, "weight_bytes_per_step"), pl_json_int(&w, (int64_t)wbytes);
                pl_json_key(&w, "ceilings");
                pl_json_begin_object(&w);
                pl_json_key(&w, "read_gbps"), pl_json_double(&w, ceil.read_gbps);
                pl_json_key(&w, "fma_f32_gflops"), pl_json_double(&w, ceil.fma_f32_gflops);
                pl_json_key(&w, "bf16_dot_gflops"), pl_json_double(&w, ceil.bf16_dot_gflops);
                pl_json_key(&w, "threads"), pl_json_int(&w, ceil.threads);
                pl_json_end_object(&w);
                pl_json_key(&w, "decode");
                pl_json_begin_array(&w);
                for (int k = 0; k < nb; k++) {
                    pl_json_begin_object(&w);
                    pl_json_key(&w, "batch"), pl_json_int(&w, dr[k].batch);
                    pl_json_key(&w, "context"), pl_json_int(&w, context);
                    pl_json_key(&w, "step_ms"), pl_json_double(&w, dr[k].step_s * 1e3);
                    pl_json_key(&w, "tokens_per_s"), pl_json_double(&w, dr[k].tok_s);
                    pl_json_key(&w, "weight_gbps"), pl_json_double(&w, dr[k].gbps);
                    pl_json_key(&w, "roofline_fraction"), pl_json_double(&w, dr[k].roofline);
                    pl_json_end_object(&w);
                }
                pl_json_end_array(&w);
                pl_json_key(&w, "prefill");
                pl_json_begin_array(&w);
                for (int i = 0; i < chunks; i++) {
                    pl_json_begin_object(&w);
                    pl_json_key(&w, "chunk"), pl_json_int(&w, pr[i].len);
                    pl_json_key(&w, "context_before"), pl_json_int(&w, pr[i].start);
                    pl_json_key(&w, "ms"), pl_json_double(&w, pr[i].s * 1e3);
                    pl_json_key(&w, "tokens_per_s"), pl_json_double(&w, pr[i].len / pr[i].s);
                    pl_json_key(&w, "gflops"), pl_json_double(&w, pr[i].gflops);
                    pl_json_key(&w, "fma_fraction"), pl_json_double(&w, pr[i].ratio);
                    pl_json_end_object(&w);
                }
                pl_json_end_array(&w);
                pl_json_end_object(&w);
                fputc('\n', f);
                fclose(f);
            }
        }
    }
    free(logits), free(toks), free(dr), free(pr), free(times), free(batches);
    pl_model_free(m);
    return rc ? 1 : 0;
bad:
    free(batches);
    return 2;
}
