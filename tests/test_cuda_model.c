/* The Qwen3 forward pass on the CUDA backend: the committed golden checkpoints (Hugging
 * Face transformers float32 logits) within the bf16 tolerances of the Qwen3 issue
 * (max|diff| <= 2e-2 x max|logit|, argmax equal on >= 95% of positions) through whole
 * prefill, chunked prefill + decode and a batch; synthetic models against the CPU backend
 * (batches with an empty slot, page-pool growth on the device); a capped device budget
 * refusing a prefill without change; a 48-row decode batch with the fused MLP against the three
 * kernels; `pagellm logits --device cuda`. PL_CUDA_TEST_BIG=1
 * adds a qwen3-0.6b-shape synthetic model against the CPU bf16 path. Exits 77 (skip)
 * without CUDA or a GPU. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PL_HAVE_CUDA
int main(void) {
    printf("SKIP: pagellm built without CUDA\n");
    return 77;
}
#else
#include <cuda_runtime.h>

#include "cuda/backend_cuda.h"
#include "cuda/mlp_cuda.h"
#include "golden_test_util.h"
#include "model/model_internal.h"

static char err[512];

static void synthetic_pair(const char *shape, int threads, int prefill, int decode_steps, double min_agree) {
    /* the CPU bf16 path runs beside them: the GPU must agree with f32 as well as it does */
    pl_model_options oc = {PL_F32, PL_DEVICE_CPU, threads, 0, 0}, og = {PL_BF16, PL_DEVICE_CUDA, threads, 0, 0};
    pl_model_options ob = {PL_BF16, PL_DEVICE_CPU, threads, 0, 0};
    pl_model *mc = NULL, *mg = NULL, *mb = NULL;
    CHECK_OK(pl_model_create_synthetic(shape, 3, &oc, &mc, err, sizeof err), err);
    CHECK_OK(pl_model_create_synthetic(shape, 3, &og, &mg, err, sizeof err), err);
    CHECK_OK(pl_model_create_synthetic(shape, 3, &ob, &mb, err, sizeof err), err);
    if (!mc || !mg || !mb) {
        pl_model_free(mc), pl_model_free(mg), pl_model_free(mb);
        return;
    }
    const int V = pl_model_get_config(mc)->vocab_size, B = 3;
    pl_kv_pools pc, pg, pb;
    CHECK_OK(pl_model_create_pools(mb, 16, PL_POOL_GROWABLE, 0, &pb, err, sizeof err), err);
    CHECK_OK(pl_model_create_pools(mc, 16, PL_POOL_GROWABLE, 0, &pc, err, sizeof err), err);
    CHECK_OK(pl_model_create_pools(mg, 16, PL_POOL_GROWABLE, 0, &pg, err, sizeof err), err);
    pl_kv_seq sc[3], sg[3], sb[3];
    pl_kv_seq *spc[3], *spg[3], *spb[3];
    for (int s = 0; s < B; s++) {
        CHECK_OK(pl_kv_seq_init(&sb[s], &pb, err, sizeof err), err);
        spb[s] = &sb[s];
        CHECK_OK(pl_kv_seq_init(&sc[s], &pc, err, sizeof err), err);
        CHECK_OK(pl_kv_seq_init(&sg[s], &pg, err, sizeof err), err);
        spc[s] = &sc[s], spg[s] = &sg[s];
    }
    int32_t *toks = malloc(sizeof(int32_t) * (size_t)prefill * B);
    float *lc = malloc(sizeof(float) * (size_t)V * B), *lg = malloc(sizeof(float) * (size_t)V * B);
    float *lb = malloc(sizeof(float) * (size_t)V * B);
    uint64_t x = 99;
    int agree = 0, total = 0, agree_cpu_bf16 = 0;
    for (int step = 0; step < 2 + decode_steps; step++) {
        int lens[3], pos[3], nt = 0;
        for (int s = 0; s < B; s++) {
            pos[s] = pl_kv_seq_offset(&sc[s]);
            lens[s] = s == 1 && step == 1 ? 0 : step == 0 ? prefill / 2 + s * 3 : step == 1 ? prefill / 2 - s : 1;
            for (int t = 0; t < lens[s]; t++) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                toks[nt++] = (int32_t)((x >> 33) % (uint64_t)V);
            }
        }
        for (size_t i = 0; i < (size_t)V * B; i++) lc[i] = lg[i] = NAN;
        pl_forward_batch bc = {B, toks, lens, pos, spc, NULL, 0}, bg = {B, toks, lens, pos, spg, NULL, 0};
        CHECK_OK(pl_model_forward(mc, &bc, lc, err, sizeof err), err);
        CHECK_OK(pl_model_forward(mg, &bg, lg, err, sizeof err), err);
        pl_forward_batch bbf = {B, toks, lens, pos, spb, NULL, 0};
        CHECK_OK(pl_model_forward(mb, &bbf, lb, err, sizeof err), err);
        for (int s = 0; s < B; s++) {
            if (lens[s]) agree_cpu_bf16 += pl_argmax(lb + (size_t)s * V, V) == pl_argmax(lc + (size_t)s * V, V);
            CHECK(pl_kv_seq_offset(&sg[s]) == pl_kv_seq_offset(&sc[s]));
            if (!lens[s]) {
                CHECK(isnan(lg[(size_t)s * V])); /* empty slot left untouched */
                continue;
            }
            char what[128];
            snprintf(what, sizeof what, "%s step %d seq %d (%d tokens)", shape, step, s, lens[s]);
            agree += gt_compare(what, lg + (size_t)s * V, lc + (size_t)s * V, 1, V, 2e-2, 0.0);
            total++;
        }
    }
    printf("  %s cpu f32 vs cuda bf16: argmax agrees on %d of %d rows (cpu bf16: %d)\n", shape, agree, total,
           agree_cpu_bf16);
    /* random synthetic weights have near-tied logits: bf16 rounding flips some argmaxes on any
     * device, so the bar is the fraction or the CPU bf16 path's own count less one */
    CHECK_MSG(agree >= min_agree * total || agree >= agree_cpu_bf16 - 1, "%s: argmax agrees on %d of %d (cpu bf16 %d)",
              shape, agree, total, agree_cpu_bf16);
    /* a bad token is refused and the caches stay as they were */
    int one[3] = {1, 0, 0}, pos[3] = {pl_kv_seq_offset(&sg[0]), 0, 0};
    int32_t bad = V;
    pl_forward_batch bb = {B, &bad, one, pos, spg, NULL, 0};
    CHECK_ERR(pl_model_forward(mg, &bb, lg, err, sizeof err), PL_ERR_INVALID, "tokens[0]", err);
    CHECK(pl_kv_seq_offset(&sg[0]) == pos[0]);
    for (int s = 0; s < B; s++) pl_kv_seq_destroy(&sc[s]), pl_kv_seq_destroy(&sg[s]), pl_kv_seq_destroy(&sb[s]);
    pl_kv_pools_destroy(&pb);
    pl_kv_pools_destroy(&pc);
    pl_kv_pools_destroy(&pg);
    /* a capped device budget too small for a prefill: PL_ERR_NO_PAGES, nothing changed */
    CHECK_OK(pl_model_create_pools(mg, 16, PL_POOL_CAPPED, 2, &pg, err, sizeof err), err);
    pl_kv_seq s1;
    CHECK_OK(pl_kv_seq_init(&s1, &pg, err, sizeof err), err);
    pl_kv_seq *sp1 = &s1;
    int len = 40, p0 = 0;
    pl_forward_batch b1 = {1, toks, &len, &p0, &sp1, NULL, 0};
    CHECK_ERR(pl_model_forward(mg, &b1, lg, err, sizeof err), PL_ERR_NO_PAGES, "", err);
    CHECK(pl_kv_seq_offset(&s1) == 0);
    len = 20;
    CHECK_OK(pl_model_forward(mg, &b1, lg, err, sizeof err), err);
    pl_kv_seq_destroy(&s1);
    pl_kv_pools_destroy(&pg);
    free(toks), free(lc), free(lg), free(lb);
    pl_model_free(mc);
    pl_model_free(mg);
    pl_model_free(mb);
}

/* Decode steps through pl_model_forward_sample with CUDA graphs against the same steps run
 * eagerly on twin caches: identical kernels, so identical tokens (greedy and a seeded
 * sampler), an empty slot, a slot that goes idle, page-size-4 pools that grow (new storage
 * pointers: the graph no longer matches and the step is redone eagerly), and a batch that
 * changes size. The graph counters must show captures and replays. segments: how many graphs a
 * step is captured in (a growth past the first cut leaves the step's first segments launched
 * before its eager redo). From step 20 the forced attention splits alternate between 2 and 3
 * each step, in both runs: other launch settings under the same graph key, which the graphed run
 * must replay as two captured variants, switching between them, not recapture every step.
 * uploads: the graphed run's step uploads (pl_cuda_backend_step_uploads) 0 (AUTO, one copy before
 * each segment), 1 (copy nodes in the graphs), or 2: from step 30 the two alternate as well, so
 * graphs of either kind replay after the other's. */
static void graphs_vs_eager(const char *shape, pl_dtype dt, int segments, int uploads) {
    pl_model_options og = {dt, PL_DEVICE_CUDA, 2, 0, 0};
    pl_model *m = NULL;
    CHECK_OK(pl_model_create_synthetic(shape, 7, &og, &m, err, sizeof err), err);
    if (!m) return;
    pl_cuda_backend *be = (pl_cuda_backend *)m->bctx;
    pl_cuda_backend_graph_segments(be, segments, 1);
    pl_cuda_backend_step_uploads(be, uploads == 1);
    const pl_model_config *c = pl_model_get_config(m);
    enum { S = 4, STEPS = 40 };
    pl_kv_pools pools[2];
    pl_kv_seq seqs[2][S];
    pl_kv_seq *sp[2][S];
    pl_sampler *smp[2][S];
    pl_sampler_params prm = {0.8f, 20, 0.9f, 99};
    for (int v = 0; v < 2; v++) {
        CHECK_OK(pl_model_create_pools(m, 4, PL_POOL_GROWABLE, 0, &pools[v], err, sizeof err), err);
        for (int s = 0; s < S; s++) {
            CHECK_OK(pl_kv_seq_init(&seqs[v][s], &pools[v], err, sizeof err), err);
            sp[v][s] = s == 1 ? NULL : &seqs[v][s];
            smp[v][s] = NULL;
            if (s == 3) CHECK_OK(pl_sampler_create(&prm, c->vocab_size, &smp[v][s], err, sizeof err), err);
        }
    }
    int plen[S] = {7, 0, 3, 12}, pos[S], lens[S];
    int32_t toks[64], got[2][S], next[2][S];
    long cap0, rep0, ret0, cap1, rep1, ret1;
    pl_cuda_backend_graph_stats(be, &cap0, &rep0, &ret0);
    for (int v = 0; v < 2; v++) {
        int n = 0;
        for (int s = 0; s < S; s++) {
            pos[s] = 0;
            for (int t = 0; t < plen[s]; t++) toks[n++] = (int32_t)((s * 211 + t * 7 + 5) % c->vocab_size);
        }
        pl_forward_batch fb = {S, toks, plen, pos, sp[v], NULL, 0};
        CHECK_OK(pl_model_forward_sample(m, &fb, smp[v], next[v], err, sizeof err), err);
    }
    int mism = 0;
    long capf = 0, repf = 0, retf = 0, swf = pl_cuda_backend_graph_switches(be);
    for (int step = 0; step < STEPS; step++) {
        if (step == 20) pl_cuda_backend_graph_stats(be, &capf, &repf, &retf), swf = pl_cuda_backend_graph_switches(be);
        if (step >= 20) pl_cuda_backend_attn_splits(be, 2 + (step & 1));
        if (step >= 30 && uploads == 2) pl_cuda_backend_step_uploads(be, (step >> 1) & 1);
        for (int v = 0; v < 2; v++) {
            pl_cuda_backend_use_graphs(be, v == 0);
            int n = 0;
            for (int s = 0; s < S; s++) {
                /* slot 2 stops after 15 steps: the batch shrinks from 3 rows to 2 */
                lens[s] = sp[v][s] && !(s == 2 && step >= 15) ? 1 : 0;
                pos[s] = lens[s] ? pl_kv_seq_offset(&seqs[v][s]) : 0;
                if (lens[s]) toks[n++] = next[v][s];
            }
            pl_kv_seq *use[S];
            for (int s = 0; s < S; s++) use[s] = lens[s] ? sp[v][s] : NULL;
            pl_forward_batch fb = {S, toks, lens, pos, use, NULL, 0};
            CHECK_OK(pl_model_forward_sample(m, &fb, smp[v], got[v], err, sizeof err), err);
            for (int s = 0; s < S; s++)
                if (lens[s]) next[v][s] = got[v][s];
        }
        for (int s = 0; s < S; s++)
            if (lens[s] && got[0][s] != got[1][s]) mism++;
    }
    pl_cuda_backend_use_graphs(be, 1);
    pl_cuda_backend_attn_splits(be, 0);
    pl_cuda_backend_step_uploads(be, 0);
    pl_cuda_backend_graph_stats(be, &cap1, &rep1, &ret1);
    const long sw = pl_cuda_backend_graph_switches(be) - swf;
    printf("graphs %s %s, %d segments, uploads %d: %ld captures, %ld replays, %ld redone; alternating splits: %ld captures, %ld "
           "replays (%ld switching variants), %ld redone; %d token mismatches\n", shape, dt == PL_F32 ? "f32" : "bf16",
           segments, uploads, cap1 - cap0, rep1 - rep0, ret1 - ret0, cap1 - capf, rep1 - repf, sw, ret1 - retf, mism);
    CHECK_MSG(mism == 0, "graphed decode differs from eager decode in %d tokens", mism);
    CHECK(cap1 - cap0 >= 2 && rep1 - rep0 >= 20 && ret1 - ret0 >= 1);
    /* 20 alternating steps: without variants a capture every other step at least */
    CHECK_MSG(sw >= 5 && cap1 - capf <= 8 && rep1 - repf >= 10, "alternating splits: %ld switches, %ld captures, %ld replays",
              sw, cap1 - capf, rep1 - repf);
    for (int s = 0; s < S; s++)
        CHECK_MSG(pl_kv_seq_offset(&seqs[0][s]) == pl_kv_seq_offset(&seqs[1][s]), "slot %d: offsets differ", s);
    for (int v = 0; v < 2; v++) {
        for (int s = 0; s < S; s++) {
            pl_kv_seq_destroy(&seqs[v][s]);
            pl_sampler_free(smp[v][s]);
        }
        pl_kv_pools_destroy(&pools[v]);
    }
    pl_model_free(m);
}

/* A decode batch of 60 rows, which the fused MLP takes (AUTO past 56 rows) where the shape has a
 * plan, against the same steps with the three kernels (pl_cuda_backend_fused_mlp 1) on twin
 * caches: logits within the bf16 tolerance, argmax nearly always equal (the down sums add in
 * another order), and the kernel must have run where it can. */
/* variant v (0 or 1) of fused_mlp_model's comparison: kind 0, the fused MLP (AUTO) against the
 * three kernels; kind 1, the wide o projection (AUTO) against the tile GEMM */
static void fused_variant(pl_cuda_backend *be, int kind, int v) {
    if (kind == 0)
        pl_cuda_backend_fused_mlp(be, v);
    else
        pl_cuda_backend_wide_proj(be, v);
}

static void fused_mlp_model(const char *shape, int kind) {
    pl_model_options og = {PL_BF16, PL_DEVICE_CUDA, 2, 0, 0};
    pl_model *m = NULL;
    CHECK_OK(pl_model_create_synthetic(shape, 11, &og, &m, err, sizeof err), err);
    if (!m) return;
    pl_cuda_backend *be = (pl_cuda_backend *)m->bctx;
    const pl_model_config *c = pl_model_get_config(m);
    enum { S = 60, STEPS = 4 };
    const int V = c->vocab_size;
    pl_kv_pools pools[2];
    pl_kv_seq seqs[2][S];
    pl_kv_seq *sp[2][S];
    for (int v = 0; v < 2; v++) {
        CHECK_OK(pl_model_create_pools(m, 16, PL_POOL_GROWABLE, 0, &pools[v], err, sizeof err), err);
        for (int s = 0; s < S; s++) {
            CHECK_OK(pl_kv_seq_init(&seqs[v][s], &pools[v], err, sizeof err), err);
            sp[v][s] = &seqs[v][s];
        }
    }
    float *lg[2] = {malloc(sizeof(float) * (size_t)V * S), malloc(sizeof(float) * (size_t)V * S)};
    int32_t toks[8 * S], next[S];
    int lens[S], pos[S], n = 0;
    for (int s = 0; s < S; s++) {
        lens[s] = 3 + s % 5, pos[s] = 0;
        for (int t = 0; t < lens[s]; t++) toks[n++] = (int32_t)((s * 131 + t * 17 + 3) % V);
    }
    const long runs0 = kind ? pl_cuda_backend_wide_runs(be) : pl_cuda_backend_mlp_runs(be);
    for (int v = 0; v < 2; v++) {
        pl_forward_batch fb = {S, toks, lens, pos, sp[v], NULL, 0};
        CHECK_OK(pl_model_forward(m, &fb, lg[v], err, sizeof err), err);
    }
    for (int s = 0; s < S; s++) next[s] = pl_argmax(lg[1] + (size_t)s * V, V);
    int agree = 0;
    for (int step = 0; step < STEPS; step++) {
        for (int v = 0; v < 2; v++) {
            fused_variant(be, kind, v);
            for (int s = 0; s < S; s++) lens[s] = 1, pos[s] = pl_kv_seq_offset(&seqs[v][s]), toks[s] = next[s];
            pl_forward_batch fb = {S, toks, lens, pos, sp[v], NULL, 0};
            CHECK_OK(pl_model_forward(m, &fb, lg[v], err, sizeof err), err);
        }
        char what[96];
        snprintf(what, sizeof what, "%s, %d rows, step %d: %s", shape, S, step, kind ? "wide o vs tile GEMM" : "fused MLP vs three kernels");
        agree += gt_compare(what, lg[0], lg[1], S, V, 2e-2, 0.0);
        for (int s = 0; s < S; s++) next[s] = pl_argmax(lg[1] + (size_t)s * V, V);
    }
    fused_variant(be, kind, 0);
    pl_cuda_mlp_plan plan;
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    const int can = pl_cuda_mlp_available() &&
                    (kind ? pl_cuda_wide_plan_for(c->hidden_size, c->num_heads * c->head_dim, sms, &plan)
                          : pl_cuda_mlp_plan_for(c->hidden_size, c->intermediate_size, sms, &plan));
    const long runs = (kind ? pl_cuda_backend_wide_runs(be) : pl_cuda_backend_mlp_runs(be)) - runs0;
    printf("  %s: %s launches %ld (plan here: %d), argmax agrees on %d of %d rows\n", shape, kind ? "wide" : "fused MLP", runs, can, agree,
           S * STEPS);
    CHECK_MSG(can ? runs > 0 : runs == 0, "%s: %ld %s launches, plan %d", shape, runs, kind ? "wide" : "fused MLP", can);
    CHECK_MSG(agree >= 0.95 * S * STEPS, "%s: argmax agrees on %d of %d rows", shape, agree, S * STEPS);
    for (int v = 0; v < 2; v++) {
        for (int s = 0; s < S; s++) pl_kv_seq_destroy(&seqs[v][s]);
        pl_kv_pools_destroy(&pools[v]);
        free(lg[v]);
    }
    pl_model_free(m);
}

/* A prefill chunk without the LM head reads nothing back, so it may return while it still runs:
 * pl_model_finish must leave the backend's stream idle (the engine stops its prefill clock after
 * it), and the chunk's K/V must be those a chunk with the head leaves. */
static void headless_chunk_finish(const char *shape) {
    pl_model_options og = {PL_BF16, PL_DEVICE_CUDA, 2, 0, 0};
    pl_model *m = NULL;
    CHECK_OK(pl_model_create_synthetic(shape, 11, &og, &m, err, sizeof err), err);
    if (!m) return;
    const pl_model_config *c = pl_model_get_config(m);
    enum { L = 96 };
    pl_kv_pools pools;
    CHECK_OK(pl_model_create_pools(m, 16, PL_POOL_GROWABLE, 0, &pools, err, sizeof err), err);
    pl_kv_seq seq[2];
    int32_t toks[L], tok[2] = {-7, -7};
    for (int t = 0; t < L; t++) toks[t] = (int32_t)((t * 37 + 11) % c->vocab_size);
    int lens = L, pos = 0, one = 1;
    for (int v = 0; v < 2; v++) {
        CHECK_OK(pl_kv_seq_init(&seq[v], &pools, err, sizeof err), err);
        pl_kv_seq *sp = &seq[v];
        pl_forward_batch fb = {1, toks, &lens, &pos, &sp, NULL, 0};
        CHECK_OK(pl_model_forward_sample(m, &fb, NULL, v == 0 ? NULL : &tok[1], err, sizeof err), err);
        if (v == 0) {
            CHECK_OK(pl_model_finish(m, err, sizeof err), err);
            const cudaError_t q = cudaStreamQuery((cudaStream_t)pl_cuda_backend_stream((pl_cuda_backend *)m->bctx));
            CHECK_MSG(q == cudaSuccess, "stream not idle after pl_model_finish: %s", cudaGetErrorString(q));
        }
    }
    /* one decode token on each: the same K/V behind them give the same next token */
    for (int v = 0; v < 2; v++) {
        int32_t in = 1234 % c->vocab_size;
        pos = L;
        pl_kv_seq *sp = &seq[v];
        pl_forward_batch fd = {1, &in, &one, &pos, &sp, NULL, 0};
        CHECK_OK(pl_model_forward_sample(m, &fd, NULL, &tok[v], err, sizeof err), err);
    }
    CHECK_MSG(tok[0] == tok[1] && tok[0] >= 0, "decode after a headless chunk: %d, after a chunk with the head: %d", tok[0], tok[1]);
    CHECK(pl_kv_seq_offset(&seq[0]) == L + 1 && pl_kv_seq_offset(&seq[1]) == L + 1);
    for (int v = 0; v < 2; v++) pl_kv_seq_destroy(&seq[v]);
    pl_kv_pools_destroy(&pools);
    pl_model_free(m);
}

int main(void) {
    if (pl_cuda_device_check(err, sizeof err) != PL_OK) {
        printf("SKIP: %s\n", err);
        return 77;
    }
    const char *root = getenv("PAGELLM_ROOT");
    if (!root) root = ".";
    gt_check_all(root, PL_DEVICE_CUDA, "--device cuda", 2e-2);
    synthetic_pair("tiny", 2, 24, 3, 0.8);
    synthetic_pair("tiny-untied", 2, 24, 3, 0.8);
    headless_chunk_finish("serve");
    graphs_vs_eager("tiny", PL_BF16, 1, 0);
    graphs_vs_eager("tiny-untied", PL_F32, 0, 1);
    graphs_vs_eager("serve", PL_BF16, 4, 2); /* 4 layers: segments of 1 and 3 */
    graphs_vs_eager("serve", PL_F32, 2, 0);
    fused_mlp_model("small", 0);      /* hidden 512, intermediate 1536: the fused MLP on 64 CTAs */
    fused_mlp_model("qwen3-0.6b", 0); /* hidden 1024, intermediate 3072: on 128 CTAs */
    fused_mlp_model("small", 1);      /* the wide o projection */
    fused_mlp_model("qwen3-0.6b", 1);
    const char *big = getenv("PL_CUDA_TEST_BIG");
    if (big && atoi(big) > 0) {
        synthetic_pair("qwen3-0.6b", 0, 48, 20, 0.95);
        graphs_vs_eager("qwen3-0.6b", PL_BF16, 4, 0); /* 28 layers: segments of 1, 4, 16 and 7 */
    }
    TEST_END();
}
#endif
