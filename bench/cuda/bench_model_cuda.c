/* Stand-alone benchmark of the Qwen3 forward pass on the CUDA backend (a synthetic model of a
 * named shape), with the GPU's own ceilings measured in the same run: device-to-device copy
 * bandwidth and the cuBLAS bf16 GEMM rate. Decode steps at several batch sizes (median step
 * time, host included: every step returns float32 logits to the host) against the roofline
 * (weight bytes + K/V bytes read) / copy bandwidth; prefill chunks against the GEMM rate;
 * device sampling of a batch of rows.
 *
 * Build (after the CMake build in build-cudamodel):
 *   gcc -O2 -std=c11 -fopenmp -Iinclude -Isrc -I/usr/local/cuda/include bench/cuda/bench_model_cuda.c \
 *       build-cudamodel/libpagellm.a -L/usr/local/cuda/lib64 -lcudart_static -lcublas -lcublasLt \
 *       -lcjson -lpcre2-8 -lutf8proc -lstdc++ -lm -ldl -lpthread -lrt -o bench_model_cuda
 * usage: bench_model_cuda [--shape qwen3-4b] [--batches 1,4,64] [--context 512] [--steps 20]
 *                         [--chunk 1024] [--json FILE] [--only decode|prefill] [--tile-sweep]
 *                         [--attn-split-sweep] [--ablate] [--gemv-mode N] [--tile-copy-ab]
 *                         [--graph-segments-ab] [--attn-copy-ab] [--attn-early-ab] [--attn-warps-ab] [--attn-units-ab]
 *                         [--tile-ctas-ab] [--tile-max-ab N] [--attn-units-n N] [--rope-ab] [--parts-ab] [--kslice-ab] [--mlp-ab] [--mlp-plain-ab] [--wide-ab] [--fullk-ab]
 *                         [--attn-splits N] [--kslice N] [--attn-warps N] [--mlp N] [--wide N] [--mlp-pre N] [--fullk N] [--fullk-ring N] [--fullk-pre N] [--tile-alone N] [--hooks LIST] [--tile-ctas N] [--attn-splits-from contexts|shapes] [--attn-order N] [--context-spread LO] [--contexts LIST] [--schedule FILE [--schedule-ab NAME:N[+NAME:N...][,...]] [--schedule-out FILE]] [--diag-stamps FILE] (the latter in a -DPL_DIAG_STAMPS build)
 * --attn-splits N, --kslice N, --attn-warps N, --mlp N, --mlp-pre N: the decode attention's context splits (0: heuristic),
 * the k-sliced tile knob (pl_cuda_backend_kslice), the attention's CTA width, the fused MLP's mode
 * (pl_cuda_backend_fused_mlp) and its weight stages before the PDL wait (pl_cuda_backend_mlp_pre; 0 the
 * default) for the whole run, e.g. to compare settings in separate processes
 * --fullk N, --fullk-ring N, --fullk-pre N: the full-K projection's mode, ring and weight stages before
 * its PDL wait (pl_cuda_backend_fullk_proj: mode 0 never, the default; 1 from 57 rows, 2 from 1 row);
 * --fullk-ab alternates modes 1 and 0 in one process
 * --attn-early N: the decode attention reads old keys before its PDL wait (0, default) or after it (1)
 * --attn-order N: the decode attention's units over CTAs (pl_cuda_backend_attn_order: 0 AUTO, ranked by context and
 * paired long with short; 1 runs; 2 every grid-th in sequence order)
 * --schedule FILE, --schedule-ab NAME, --schedule-out FILE: a served trace's decode steps replayed in order (see
 * schedule_replay)
 * --contexts LIST: one batch whose rows start at these contexts ('a;b;c' or 'a,b,c', e.g. a serving step's shape from the
 * contexts column of bench-serving --steps-csv); replaces --batches, --context and --context-spread
 * --context-spread LO: row b of a batch of B starts at context LO + (context - LO) b / (B - 1) (a serving batch's unequal
 * contexts; the roofline counts each row's own)
 * --attn-splits-from contexts|shapes: the decode attention's split count from the step's contexts (the default) or
 * from the shapes alone (pl_cuda_backend_attn_split_rule)
 * --tile-ctas N: the tile GEMM's K split aims at N CTAs per SM for the whole run (pl_cuda_backend_tune_tile; 0 the
 * default: 2 up to 16 rows, 1 past)
 * --tile-alone N: past N rows a one-wave tile GEMM keeps one CTA per SM (pl_cuda_backend_tile_alone; 0 never)
 * --hooks NAME:N[+NAME:N...]: --schedule-ab's hooks set for the whole run (e.g. with --diag-stamps)
 * --gemv-mode: the skinny-GEMM mode of the serving step and its sweeps (pl_cuda_backend_use_gemv; 4: the
 * tile kernel only up to 32 rows, cuBLAS past), e.g. to profile it with ncu */
#define _POSIX_C_SOURCE 200809L
#include <cublas_v2.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/timing.h"
#include "bench_cuda.h"
#include "cuda/backend_cuda.h"
#include "model/model_internal.h"
#include "pagellm/cuda.h"
#include "pagellm/model.h"


/* bf16 GEMM [M, K] x [K, N] through cuBLAS, f32 accumulation, random data */
static double gemm_tflops(int M, int N, int K) {
    cublasHandle_t h;
    cublasCreate(&h);
    size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
    uint16_t *ha = malloc(2 * (na > nb ? na : nb));
    uint64_t x = 1;
    for (size_t i = 0; i < (na > nb ? na : nb); i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        ha[i] = (uint16_t)(0x3c00 + ((x >> 40) & 0x3ff)) ^ (uint16_t)((x >> 20) & 0x8000); /* |v| in [2^-7, 2^-6) */
    }
    void *a, *b, *c;
    CK(cudaMalloc(&a, 2 * na));
    CK(cudaMalloc(&b, 2 * nb));
    CK(cudaMalloc(&c, 2 * nc));
    CK(cudaMemcpy(a, ha, 2 * na, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, ha, 2 * nb, cudaMemcpyHostToDevice));
    float al = 1, be = 0;
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0), cudaEventCreate(&e1);
    double t[10];
    for (int i = -3; i < 10; i++) {
        cudaEventRecord(e0, 0);
        cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &al, b, CUDA_R_16BF, N, a, CUDA_R_16BF, K, &be, c, CUDA_R_16BF, N,
                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        cudaEventRecord(e1, 0);
        cudaEventSynchronize(e1);
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        if (i >= 0) t[i] = ms / 1e3;
    }
    cudaFree(a), cudaFree(b), cudaFree(c), free(ha);
    cublasDestroy(h);
    return 2.0 * M * N * (double)K / pl_median(t, 10) / 1e12;
}

/* Median host time of `steps` serving steps (greedy on the device, ids back) after 3 warm-up
 * ones; every sequence decodes one token per step. t: scratch of `steps` doubles. */
static double serving_steps(pl_model *m, int B, pl_kv_seq *seqs, pl_kv_seq **sp, int *lens, int *pos, const int32_t *toks,
                            int steps, int32_t *sampled, double *t, int *rc, char *err, size_t err_len) {
    for (int s = -3; s < steps && !*rc; s++) {
        for (int b = 0; b < B; b++) pos[b] = pl_kv_seq_offset(&seqs[b]);
        pl_forward_batch fb = {B, toks + (s + 3) % 64, lens, pos, sp, NULL, 0};
        double ts = pl_now_seconds();
        *rc = pl_model_forward_sample(m, &fb, NULL, sampled, err, err_len);
        if (s >= 0) t[s] = pl_now_seconds() - ts;
    }
    return *rc ? 0 : pl_median(t, steps);
}

/* One backend matmul timed with events on the backend's stream: median seconds of 10 after 2 */
static double time_matmul(pl_model *m, cudaStream_t st, cudaEvent_t e0, cudaEvent_t e1, const void *x, int M, const void *w,
                          void *y, int f32) {
    char err[256];
    double t[10];
    for (int i = -2; i < 10; i++) {
        cudaEventRecord(e0, st);
        m->ops->matmul(m->bctx, x, M, w, y, f32, err, sizeof err);
        cudaEventRecord(e1, st);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        if (i >= 0) t[i] = ms / 1e3;
    }
    return pl_median(t, 10);
}

/* pl_cuda_backend_attn_warps as a two-way switch: 0 AUTO, 1 four warps */
static void attn_warps_mode(pl_cuda_backend *b, int mode) { pl_cuda_backend_attn_warps(b, mode ? 4 : 0); }

/* The tile GEMM's K split as a two-way switch: the default (two CTAs per SM up to 16 rows, one
 * past), or two CTAs per SM at every row count (the split before the twelfth session) */
static void tile_ctas_mode(pl_cuda_backend *b, int mode) { pl_cuda_backend_tune_tile(b, mode ? 2 : 0, 0, 0); }

/* The tile GEMM's K split: the default (0), or at most n splits per tile */
static void tile_max_mode(pl_cuda_backend *b, int n) { pl_cuda_backend_tune_tile(b, 0, n, 0); }

/* A two-way A/B of the serving step through a backend hook (set(b, 0) is the default, set(b,
 * on) the other setting): three interleaved rounds, the order reversed in the middle one (contexts grow between
 * settings), each mode's median printed as "<what>: batch B, round r, <name>: step ms". */
/* --kslice-ab: k-sliced tiles at every size they take (2-8 rows), or never */
static void kslice_mode(pl_cuda_backend *b, int on) { pl_cuda_backend_kslice(b, on ? 1 : 2); }

/* --mlp-ab: the MLP as the fused kernel at every batch it takes (forced from 1 row), or the three kernels */
static void mlp_mode(pl_cuda_backend *b, int on) { pl_cuda_backend_fused_mlp(b, on ? 1 : 2); }
/* --mlp-plain-ab: the fused MLP (forced) in a cooperative launch, or a plain one (pl_cuda_backend_mlp_plain) */
static void mlp_plain_mode(pl_cuda_backend *b, int on) {
    pl_cuda_backend_fused_mlp(b, 2);
    pl_cuda_backend_mlp_plain(b, on);
}

/* --wide-ab: a projection before an add + RMSNorm (the o projection) as the wide kernel at every
 * batch it takes (forced from 1 row), or the tile GEMM (--wide N: pl_cuda_backend_wide_proj's mode
 * for the whole run) */
static void wide_mode(pl_cuda_backend *b, int on) { pl_cuda_backend_wide_proj(b, on ? 1 : 2); }
/* --fullk-ab: the qkv projection as the full-K kernel (from 57 rows) or the tile GEMM (the default) */
static void fullk_mode(pl_cuda_backend *b, int on) { pl_cuda_backend_fullk_proj(b, on ? 0 : 1, 0, 0); }

/* --rope-ab: q/k norm + RoPE and K/V append inside the decode attention (always), or their own kernel */
static void rope_kernel_mode(pl_cuda_backend *b, int on) { pl_cuda_backend_attn_rope(b, on ? 1 : 2); }

static void ab_rounds(pl_model *m, int B, pl_kv_seq *seqs, pl_kv_seq **sp, int *lens, int *pos, const int32_t *toks, int steps,
                      int32_t *sampled, double *t, int *rc, char *err, size_t err_len, void (*set)(pl_cuda_backend *, int),
                      int on, const char *what, const char *const names[2]) {
    for (int round = 0; round < 3 && !*rc; round++)
        for (int k = 0; k < 2 && !*rc; k++) {
            const int mode = round % 2 ? 1 - k : k;
            set(m->bctx, mode ? on : 0);
            const double med = serving_steps(m, B, seqs, sp, lens, pos, toks, steps, sampled, t, rc, err, err_len);
            if (!*rc) printf("%s: batch %d, round %d, %s: step %.3f ms\n", what, B, round, names[mode], med * 1e3);
        }
    set(m->bctx, 0);
}

/* Where a decode step's wall time goes: the replay's host walk until its first graph launch
 * (the device idle), that launch call, the graphs on the device (events from before the first
 * launch to after the last), the rest (sampling after the graph, the token copy back). */
static void step_breakdown(pl_model *m, int B, pl_kv_seq *seqs, pl_kv_seq **sp, int *lens, int *pos, const int32_t *toks,
                           int steps, int32_t *sampled, double *t, int *rc, char *err, size_t err_len, const char *label) {
    long gc, gr, gx, gr2;
    double l0s = 0, l1s = 0;
    pl_cuda_backend_graph_stats(m->bctx, &gc, &gr, &gx);
    const double w0 = pl_cuda_backend_replay_host_seconds(m->bctx, &l0s), g0 = pl_cuda_backend_graph_device_seconds(m->bctx);
    pl_cuda_backend_time_graphs(m->bctx, 1);
    const double med = serving_steps(m, B, seqs, sp, lens, pos, toks, steps, sampled, t, rc, err, err_len);
    pl_cuda_backend_time_graphs(m->bctx, 0);
    pl_cuda_backend_graph_stats(m->bctx, &gc, &gr2, &gx);
    const double w1 = pl_cuda_backend_replay_host_seconds(m->bctx, &l1s), g1 = pl_cuda_backend_graph_device_seconds(m->bctx);
    const double n = gr2 > gr ? (double)(gr2 - gr) : 1.0;
    if (!*rc)
        printf("batch %d%s: step %.3f ms (median) = host walk %.1f us + first graph launch call %.1f us + graphs on the device "
               "%.3f ms + the rest %.1f us (means over %ld replays)\n",
               B, label, med * 1e3, (w1 - w0) / n * 1e6, (l1s - l0s) / n * 1e6, (g1 - g0) / n * 1e3,
               (med - (w1 - w0) / n - (l1s - l0s) / n - (g1 - g0) / n) * 1e6, gr2 - gr);
    /* the same graphs back to back: what the step would take if the device never waited for the host */
    double lus = 0;
    const double burst = *rc ? -1 : pl_cuda_backend_replay_burst(m->bctx, 20, &lus);
    if (burst > 0)
        printf("batch %d%s: the last step's graphs relaunched back to back: %.3f ms a step (%.1f us under the step median; "
               "the first segment's launch call %.1f us with the device busy)\n",
               B, label, burst * 1e3, (med - burst) * 1e6, lus);
}

#ifdef PL_DIAG_STAMPS
/* the diagnostic build's per-CTA stamps (src/cuda/diag_stamps.cuh): one setter per unit */
int pl_diag_set_gemv(void *p);
int pl_diag_set_attn_mma(void *p);
int pl_diag_set_attn_split(void *p);
int pl_diag_set_backend(void *p);
int pl_diag_set_mlp(void *p);
static int diag_set(void *p) {
    return pl_diag_set_gemv(p) || pl_diag_set_attn_mma(p) || pl_diag_set_attn_split(p) || pl_diag_set_backend(p) || pl_diag_set_mlp(p);
}
/* --diag-stamps FILE: three serving steps with every instrumented CTA's stamps; the records of
 * each appended to FILE as text, one CTA per line */
static int diag_steps(pl_model *m, int B, pl_kv_seq *seqs, pl_kv_seq **sp, int *lens, int *pos, const int32_t *toks,
                      int32_t *sampled, const char *path, char *err, size_t err_len) {
    const unsigned long long cap = 1ull << 18;
    unsigned long long *d = NULL, *h = malloc((8 + cap * 8) * 8), hdr[2] = {0, cap};
    int rc = 0;
    if (!h || cudaMalloc((void **)&d, (8 + cap * 8) * 8) != cudaSuccess) return snprintf(err, err_len, "diag: alloc"), free(h), 1;
    FILE *f = fopen(path, "a");
    if (!f || diag_set(d)) rc = 1, snprintf(err, err_len, "diag: open %s / set", path);
    for (int s = 0; s < 3 && !rc; s++) {
        cudaMemcpy(d, hdr, sizeof hdr, cudaMemcpyHostToDevice);
        for (int b = 0; b < B; b++) pos[b] = pl_kv_seq_offset(&seqs[b]);
        pl_forward_batch fb = {B, toks + s % 64, lens, pos, sp, NULL, 0};
        rc = pl_model_forward_sample(m, &fb, NULL, sampled, err, err_len);
        if (rc || cudaDeviceSynchronize() != cudaSuccess) break;
        cudaMemcpy(h, d, 64, cudaMemcpyDeviceToHost);
        unsigned long long n = h[0] < cap ? h[0] : cap;
        cudaMemcpy(h + 8, d + 8, n * 64, cudaMemcpyDeviceToHost);
        fprintf(f, "# batch %d step %d records %llu (of %llu)\n", B, s, n, h[0]);
        for (unsigned long long i = 0; i < n; i++) {
            const unsigned long long *r = h + 8 + i * 8;
            fprintf(f, "%d %d %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu\n", B, s, r[0] >> 56, (r[0] >> 28) & 0xfffffff,
                    r[0] & 0xfffffff, r[7], r[1] & 0xffffffff, r[1] >> 32, r[2], r[3], r[4], r[5], r[6]);
        }
    }
    diag_set(NULL);
    if (f) fclose(f);
    cudaFree(d);
    free(h);
    return rc;
}
#endif

/* --schedule FILE: a served trace's decode steps (bench-serving --steps-csv, its rows and contexts
 * columns) replayed in order at the file's fullest row count B. Before each step every slot's
 * sequence is brought to the step's context less its new token, outside the timing (rewound, or
 * extended by a prefill of the missing tokens), so the steps see the trace's shapes in the trace's
 * order, with its changes of split count and graph variant, rather than one shape held steady.
 * One untimed pass captures the graphs, then a timed one. --schedule-ab NAME:N times every step
 * under a backend hook's default (0) and N (sched_hooks: e.g. rope:1 the rope kernel instead of the
 * fused rope, splits:6 six context splits instead of the contexts rule; a NAME alone means :1;
 * aa changes nothing, the pairing's own floor; NAME:N+NAME:N sets several at once; a comma list runs one such
 * replay after another on the same model),
 * the order alternating step by step and the sequences rewound between, for a paired
 * comparison on one card in one process. Prints medians of step / roofline overall and by the
 * block table's width (the longest context's power of two); --schedule-out writes each step. */
typedef struct {
    int step, n;
    int ctx[64];
} sched_step;

/* --schedule-ab aa: both "settings" the same, the pairing's own floor */
static void sched_same(pl_cuda_backend *b, int n) {
    (void)b;
    (void)n;
}

/* The tile GEMM's knobs one at a time (pl_cuda_backend_tune_tile: 0 keeps its default) */
static void sched_tile_ctas(pl_cuda_backend *b, int n) { pl_cuda_backend_tune_tile(b, n, 0, 0); }
static void sched_tile_splits(pl_cuda_backend *b, int n) { pl_cuda_backend_tune_tile(b, 0, n, 0); }
static void sched_tile_kt(pl_cuda_backend *b, int n) { pl_cuda_backend_tune_tile(b, 0, 0, n); }
/* cublas:1 every matmul on cuBLAS (pl_cuda_backend_use_gemv mode 0; 1 is the default) */
static void sched_cublas(pl_cuda_backend *b, int n) { pl_cuda_backend_use_gemv(b, n ? 0 : 1); }

/* The backend hooks --schedule-ab takes, each 0 by default (see backend_cuda.h) */
static const struct {
    const char *name;
    void (*set)(pl_cuda_backend *, int);
} sched_hooks[] = {{"rope", pl_cuda_backend_attn_rope},     {"early", pl_cuda_backend_attn_early},
                   {"splits", pl_cuda_backend_attn_splits}, {"warps", pl_cuda_backend_attn_warps},
                   {"copy", pl_cuda_backend_attn_copy},     {"units", pl_cuda_backend_attn_units},
                   {"order", pl_cuda_backend_attn_order},   {"kslice", pl_cuda_backend_kslice},
                   {"mlp", pl_cuda_backend_fused_mlp},      {"wide", pl_cuda_backend_wide_proj},
                   {"mlp-pre", pl_cuda_backend_mlp_pre},    {"tile-alone", pl_cuda_backend_tile_alone},
                   {"parts", pl_cuda_backend_parts_norm},   {"tile-copy", pl_cuda_backend_tile_copy},
                   {"tile-ctas", sched_tile_ctas},          {"tile-splits", sched_tile_splits},
                   {"tile-kt", sched_tile_kt},              {"cublas", sched_cublas},
                   {"swiglu-threads", pl_cuda_backend_swiglu_threads}, {"trigger", pl_cuda_backend_tile_trigger},
                   {"fixup", pl_cuda_backend_tile_fixup},      {"uploads", pl_cuda_backend_step_uploads},
                   {"attn-lean", pl_cuda_backend_attn_lean},      {"pre-all", pl_cuda_backend_tile_pre_all},
                   {"parts-ctas", pl_cuda_backend_parts_ctas},
                   {"aa", sched_same}};

/* The hook of "NAME" or "NAME:N" (N > 0; NAME alone is N = 1) and its N, or -1 */
static int sched_hook(const char *ab, int *n) {
    const char *colon = strchr(ab, ':');
    const size_t len = colon ? (size_t)(colon - ab) : strlen(ab);
    *n = colon ? atoi(colon + 1) : 1;
    for (int h = 0; h < (int)(sizeof sched_hooks / sizeof sched_hooks[0]); h++)
        if (strlen(sched_hooks[h].name) == len && !strncmp(ab, sched_hooks[h].name, len)) return *n > 0 ? h : -1;
    return -1;
}

/* NAME:N, or several joined by '+' (all set together; b NULL: only checked); 0 when a part names no hook */
static int sched_set(pl_cuda_backend *b, const char *ab, int on) {
    for (const char *t = ab; t; t = strchr(t, '+') ? strchr(t, '+') + 1 : NULL) {
        char one[64];
        const size_t len = strcspn(t, "+");
        int n = 0, h = -1;
        if (len < sizeof one) {
            snprintf(one, sizeof one, "%.*s", (int)len, t);
            h = sched_hook(one, &n);
        }
        if (h < 0) return 0;
        if (b) sched_hooks[h].set(b, on ? n : 0);
    }
    return 1;
}

static int sched_band(const sched_step *s) {
    int mx = 0, w = 1;
    for (int b = 0; b < s->n; b++) mx = s->ctx[b] > mx ? s->ctx[b] : mx;
    while (w < mx) w *= 2;
    return w;
}

static int schedule_replay(pl_model *m, const char *path, const char *ab, const char *out_path, double bw, double wbytes,
                           double kv_tok) {
    char err[512];
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "bench_model_cuda: --schedule '%s': cannot open\n", path);
        return 2;
    }
    char line[4096];
    int c_ctx = -1, ncols = 0;
    if (fgets(line, sizeof line, f)) /* the header: find the contexts column */
        for (char *t = strtok(line, ",\r\n"); t; t = strtok(NULL, ",\r\n"), ncols++)
            if (!strcmp(t, "contexts")) c_ctx = ncols;
    if (c_ctx < 0) {
        fprintf(stderr, "bench_model_cuda: --schedule '%s': no contexts column (bench-serving --steps-csv writes it)\n", path);
        fclose(f);
        return 2;
    }
    int cap = 1024, ns = 0, B = 0, maxc = 1;
    sched_step *st = malloc(sizeof *st * (size_t)cap);
    for (int i = 0; st && fgets(line, sizeof line, f); i++) {
        sched_step s = {i, 0, {0}};
        int col = 0;
        for (char *p = line, *q; p; p = q, col++) { /* fields split by hand: strtok is taken by the contexts */
            q = strchr(p, ',');
            if (q) *q++ = '\0';
            if (col != c_ctx) continue;
            for (char *t = strtok(p, ";\r\n"); t && s.n < 64; t = strtok(NULL, ";\r\n")) s.ctx[s.n++] = atoi(t);
        }
        int bad = s.n == 0;
        for (int b = 0; b < s.n; b++) bad |= s.ctx[b] < 1;
        if (bad) continue;
        if (ns == cap) {
            sched_step *g = realloc(st, sizeof *st * (size_t)cap * 2);
            if (!g) {
                free(st);
                st = NULL;
                break;
            }
            st = g, cap *= 2;
        }
        st[ns++] = s;
        B = s.n > B ? s.n : B;
    }
    fclose(f);
    if (!st) {
        fprintf(stderr, "bench_model_cuda: --schedule: out of memory\n");
        return 1;
    }
    int kept = 0; /* the steps at the fullest row count, in order */
    for (int i = 0; i < ns; i++)
        if (st[i].n == B) {
            st[kept++] = st[i];
            for (int b = 0; b < B; b++) maxc = st[i].ctx[b] > maxc ? st[i].ctx[b] : maxc;
        }
    if (!kept) {
        fprintf(stderr, "bench_model_cuda: --schedule '%s': no steps with contexts\n", path);
        free(st);
        return 2;
    }
    const pl_model_config *c = pl_model_get_config(m);
    pl_kv_pools pools;
    if (pl_model_create_pools(m, 128, PL_POOL_CAPPED, B * (maxc / 128 + 3), &pools, err, sizeof err)) {
        fprintf(stderr, "bench_model_cuda: %s\n", err);
        free(st);
        return 1;
    }
    pl_kv_seq *seqs = calloc((size_t)B, sizeof *seqs);
    pl_kv_seq **sp = malloc(sizeof *sp * (size_t)B);
    int *lens = malloc(sizeof(int) * (size_t)B), *pos = malloc(sizeof(int) * (size_t)B);
    int32_t *toks = malloc(sizeof(int32_t) * (size_t)(maxc + B)), *sampled = malloc(sizeof(int32_t) * (size_t)B);
    float *logits = malloc(sizeof(float) * (size_t)c->vocab_size);
    double *ms = calloc((size_t)kept * 2, sizeof(double));
    int rc = !seqs || !sp || !lens || !pos || !toks || !sampled || !logits || !ms;
    for (int i = 0; !rc && i < maxc + B; i++) toks[i] = (int32_t)((i * 7919 + 13) % c->vocab_size);
    for (int b = 0; b < B && !rc; b++) rc = pl_kv_seq_init(&seqs[b], &pools, err, sizeof err), sp[b] = &seqs[b];
    const int settings = ab ? 2 : 1;
    long cap0 = 0, rep0 = 0, ret0 = 0, cap1 = 0, rep1 = 0, ret1 = 0;
    for (int pass = 0; pass < 2 && !rc; pass++)
        for (int i = 0; i < kept && !rc; i++)
            for (int k = 0; k < settings && !rc; k++) {
                const int on = settings == 2 ? (k + i) % 2 : 0; /* alternate which setting goes first */
                for (int b = 0; b < B && !rc; b++) { /* slot b holds ctx - 1 tokens before the step */
                    const int want = st[i].ctx[b] - 1, have = pl_kv_seq_offset(&seqs[b]);
                    if (have > want) rc = pl_kv_seq_rewind(&seqs[b], have - want, err, sizeof err);
                    else if (have < want) {
                        int n = want - have, p = have;
                        pl_forward_batch fb = {1, toks, &n, &p, &sp[b], NULL, 0};
                        rc = pl_model_forward(m, &fb, logits, err, sizeof err);
                    }
                }
                if (settings == 2) sched_set(m->bctx, ab, on);
                for (int b = 0; b < B; b++) lens[b] = 1, pos[b] = pl_kv_seq_offset(&seqs[b]);
                if (pass == 1 && i == 0 && k == 0) pl_cuda_backend_graph_stats(m->bctx, &cap0, &rep0, &ret0);
                pl_forward_batch fb = {B, toks + i % 64, lens, pos, sp, NULL, 0};
                const double ts = pl_now_seconds();
                if (!rc) rc = pl_model_forward_sample(m, &fb, NULL, sampled, err, sizeof err);
                ms[(size_t)i * 2 + on] = 1e3 * (pl_now_seconds() - ts);
            }
    pl_cuda_backend_graph_stats(m->bctx, &cap1, &rep1, &ret1);
    if (settings == 2) sched_set(m->bctx, ab, 0);
    if (rc) fprintf(stderr, "bench_model_cuda: --schedule: %s\n", err);
    FILE *of = !rc && out_path ? fopen(out_path, "w") : NULL;
    if (of) fprintf(of, "step,contexts,roofline_ms,ms%s\n", ab ? ",ms_b" : "");
    /* ratios overall and by the table's width: [band][setting], and the paired B / A */
    double *r = malloc(sizeof(double) * (size_t)kept * 3);
    int bands[8] = {0}, nb = 0;
    for (int i = 0; !rc && r && i < kept; i++) {
        const int w = sched_band(&st[i]);
        int j = 0;
        while (j < nb && bands[j] != w) j++;
        if (j == nb && nb < 8) bands[nb++] = w;
    }
    for (int band = -1; !rc && r && band < nb; band++) {
        int n = 0;
        for (int i = 0; i < kept; i++) {
            if (band >= 0 && sched_band(&st[i]) != bands[band]) continue;
            double tok = 0;
            for (int b = 0; b < B; b++) tok += st[i].ctx[b];
            const double roof = 1e3 * (wbytes + tok * kv_tok) / (bw * 1e9);
            r[n] = ms[(size_t)i * 2] / roof;
            r[kept + n] = ms[(size_t)i * 2 + 1] / roof;
            r[2 * kept + n] = ms[(size_t)i * 2 + 1] / ms[(size_t)i * 2];
            n++;
            if (of && band < 0) {
                fprintf(of, "%d,", st[i].step);
                for (int b = 0; b < B; b++) fprintf(of, "%s%d", b ? ";" : "", st[i].ctx[b]);
                fprintf(of, ",%.4f,%.4f", roof, ms[(size_t)i * 2]);
                if (ab) fprintf(of, ",%.4f", ms[(size_t)i * 2 + 1]);
                fputc('\n', of);
            }
        }
        if (band < 0)
            printf("schedule %s%s%s: %d steps at %d rows replayed (roofline at the copy ceiling %.0f GB/s; timed pass: %ld graph "
                   "captures, %ld replays, %ld eager redos)\n",
                   path, ab ? ", paired A/B " : "", ab ? ab : "", kept, B, bw, cap1 - cap0, rep1 - rep0, ret1 - ret0);
        char what[64];
        if (band < 0) snprintf(what, sizeof what, "all steps");
        else snprintf(what, sizeof what, "tables of %d keys", bands[band]);
        if (ab)
            printf("  %-22s n %4d: step / roofline median %.4f (%s off) / %.4f (%s on); paired on / off median %.4f\n", what, n,
                   pl_median(r, n), ab, pl_median(r + kept, n), ab, pl_median(r + 2 * kept, n));
        else
            printf("  %-22s n %4d: step / roofline median %.4f\n", what, n, pl_median(r, n));
    }
    if (of && fclose(of) != 0) fprintf(stderr, "bench_model_cuda: --schedule-out '%s': write failed\n", out_path);
    for (int b = 0; b < B && seqs; b++) pl_kv_seq_destroy(&seqs[b]);
    pl_kv_pools_destroy(&pools);
    free(r), free(seqs), free(sp), free(lens), free(pos), free(toks), free(sampled), free(logits), free(ms), free(st);
    return rc ? 1 : 0;
}

int main(int argc, char **argv) {
    const char *shape = "qwen3-4b", *json = NULL;
    int batches[16] = {1, 4, 64}, nb = 3, context = 512, steps = 20, chunk = 1024;
    int ctx_list[64], nctx = 0; /* --contexts */
    const char *sched_path = NULL, *sched_ab = NULL, *sched_out = NULL; /* --schedule, --schedule-ab, --schedule-out */
    long long ctx_sum[16] = {0}; /* each batch's contexts at the start, summed */
    const char *only = "", *diag_path = NULL, *set_hooks = NULL; /* --hooks LIST: the whole run */
    int set_splits = -1, set_kslice = -1, set_warps = -1, set_mlp = -1; /* --attn-splits N, --kslice N, --attn-warps N, --mlp N: the whole run */
    int tile_sweep = 0, attn_sweep = 0, ablate = 0, gemv_mode = 1, copy_ab = 0, segments_ab = 0, attn_copy_ab = 0, early_ab = 0, units_ab = 0, units_n = 0, rope_ab = 0, parts_ab = 0, kslice_ab = 0, mlp_ab = 0, mlp_plain_ab = 0, wide_ab = 0, fullk_ab = 0, set_fullk = 0, set_fullk_ring = 0, set_fullk_pre = 0, set_tile_alone = 0, set_attn_early = 0, set_order = 0, set_tile_ctas = 0, set_split_rule = 0, spread = 0, set_wide = -1, set_pre = 0, warps_ab = 0, ctas_ab = 0, tile_max_n = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--shape") && i + 1 < argc) shape = argv[++i];
        else if (!strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
        else if (!strcmp(argv[i], "--tile-sweep")) tile_sweep = 1;
        else if (!strcmp(argv[i], "--attn-split-sweep")) attn_sweep = 1;
        else if (!strcmp(argv[i], "--ablate")) ablate = 1;
        else if (!strcmp(argv[i], "--tile-copy-ab")) copy_ab = 1;
        else if (!strcmp(argv[i], "--diag-stamps") && i + 1 < argc) diag_path = argv[++i];
        else if (!strcmp(argv[i], "--graph-segments-ab")) segments_ab = 1;
        else if (!strcmp(argv[i], "--attn-copy-ab")) attn_copy_ab = 1;
        else if (!strcmp(argv[i], "--attn-early-ab")) early_ab = 1;
        else if (!strcmp(argv[i], "--attn-units-ab")) units_ab = 1;
        else if (!strcmp(argv[i], "--attn-units-n") && i + 1 < argc) units_n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tile-ctas-ab")) ctas_ab = 1;
        else if (!strcmp(argv[i], "--rope-ab")) rope_ab = 1;
        else if (!strcmp(argv[i], "--parts-ab")) parts_ab = 1;
        else if (!strcmp(argv[i], "--kslice-ab")) kslice_ab = 1;
        else if (!strcmp(argv[i], "--mlp-ab")) mlp_ab = 1;
        else if (!strcmp(argv[i], "--mlp-plain-ab")) mlp_plain_ab = 1;
        else if (!strcmp(argv[i], "--wide-ab")) wide_ab = 1;
        else if (!strcmp(argv[i], "--wide") && i + 1 < argc) set_wide = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--fullk-ab")) fullk_ab = 1;
        else if (!strcmp(argv[i], "--fullk") && i + 1 < argc) set_fullk = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--fullk-pre") && i + 1 < argc) set_fullk_pre = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--fullk-ring") && i + 1 < argc) set_fullk_ring = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tile-alone") && i + 1 < argc) set_tile_alone = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--hooks") && i + 1 < argc) set_hooks = argv[++i];
        else if (!strcmp(argv[i], "--attn-early") && i + 1 < argc) set_attn_early = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--context-spread") && i + 1 < argc) spread = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--attn-order") && i + 1 < argc) set_order = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tile-ctas") && i + 1 < argc) set_tile_ctas = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--attn-splits-from") && i + 1 < argc) set_split_rule = !strcmp(argv[++i], "shapes");
        else if (!strcmp(argv[i], "--mlp-pre") && i + 1 < argc) set_pre = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--kslice") && i + 1 < argc) set_kslice = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--mlp") && i + 1 < argc) set_mlp = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--attn-splits") && i + 1 < argc) set_splits = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--attn-warps") && i + 1 < argc) set_warps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tile-max-ab") && i + 1 < argc) tile_max_n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--attn-warps-ab")) warps_ab = 1;
        else if (!strcmp(argv[i], "--gemv-mode") && i + 1 < argc) gemv_mode = atoi(argv[++i]); /* the serving step's skinny GEMMs */
        else if (!strcmp(argv[i], "--context") && i + 1 < argc) context = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--chunk") && i + 1 < argc) chunk = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i]; /* decode | prefill (for profilers) */
        else if (!strcmp(argv[i], "--schedule") && i + 1 < argc) sched_path = argv[++i];
        else if (!strcmp(argv[i], "--schedule-out") && i + 1 < argc) sched_out = argv[++i];
        else if (!strcmp(argv[i], "--schedule-ab") && i + 1 < argc) {
            sched_ab = argv[++i];
            for (const char *t = sched_ab; t; t = strchr(t, ',') ? strchr(t, ',') + 1 : NULL) {
                char one[256];
                const size_t len = strcspn(t, ",");
                snprintf(one, sizeof one, "%.*s", (int)(len < sizeof one ? len : sizeof one - 1), t);
                if (len >= sizeof one || !sched_set(NULL, one, 0)) {
                    fprintf(stderr, "bench_model_cuda: --schedule-ab: expected NAME or NAME:N (N > 0), or a comma list of them, NAME one of");
                    for (int h = 0; h < (int)(sizeof sched_hooks / sizeof sched_hooks[0]); h++) fprintf(stderr, " %s", sched_hooks[h].name);
                    fprintf(stderr, "; got '%s'\n", one);
                    return 2;
                }
            }
        } else if (!strcmp(argv[i], "--contexts") && i + 1 < argc) {
            nctx = 0;
            for (char *t = strtok(argv[++i], ",;"); t; t = strtok(NULL, ",;")) {
                char *end = NULL;
                const long v = strtol(t, &end, 10);
                if (nctx == 64 || *end || v < 1 || v > 1 << 20) {
                    fprintf(stderr, "bench_model_cuda: --contexts: '%s' is not a context in 1..%d, or past 64 rows\n", t, 1 << 20);
                    return 2;
                }
                ctx_list[nctx++] = (int)v;
            }
        } else if (!strcmp(argv[i], "--batches") && i + 1 < argc) {
            nb = 0;
            for (char *t = strtok(argv[++i], ","); t && nb < 16; t = strtok(NULL, ",")) batches[nb++] = atoi(t);
        } else {
            fprintf(stderr, "bench_model_cuda: unknown or incomplete flag '%s'\n", argv[i]);
            return 2;
        }
    }
    if (nctx > 0) { /* one batch of these rows; pages sized for the longest */
        batches[0] = nctx, nb = 1, spread = 0, context = 0;
        for (int b = 0; b < nctx; b++) context = ctx_list[b] > context ? ctx_list[b] : context;
    }
    if (context < 1 || steps < 1 || chunk < 1 || nb < 1) {
        fprintf(stderr, "bench_model_cuda: --context/--steps/--chunk/--batches must be positive\n");
        return 2;
    }
    char err[512];
    if (pl_cuda_device_check(err, sizeof err)) {
        fprintf(stderr, "bench_model_cuda: %s\n", err);
        return 1;
    }
    struct cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    double bw = pl_cuda_measure_copy_gbps(0, 0, NULL, 0, err, sizeof err);
    if (bw <= 0) {
        fprintf(stderr, "bench_model_cuda: copy ceiling: %s\n", err);
        return 1;
    }
    double tf = gemm_tflops(8192, 8192, 8192);
    printf("device: %s, %d SMs; copy %.0f GB/s (read + write); cuBLAS bf16 GEMM 8192^3 %.1f TFLOP/s\n", prop.name,
           prop.multiProcessorCount, bw, tf);
    pl_model_options o = {PL_BF16, PL_DEVICE_CUDA, 0, 0, 0};
    pl_model *m = NULL;
    double t0 = pl_now_seconds();
    if (pl_model_create_synthetic(shape, 0, &o, &m, err, sizeof err)) {
        fprintf(stderr, "bench_model_cuda: %s\n", err);
        return 1;
    }
    double load_s = pl_now_seconds() - t0;
    if (set_splits > 0) pl_cuda_backend_attn_splits(m->bctx, set_splits);
    if (set_kslice > 0) pl_cuda_backend_kslice(m->bctx, set_kslice);
    if (set_mlp >= 0) pl_cuda_backend_fused_mlp(m->bctx, set_mlp);
    if (set_wide >= 0) pl_cuda_backend_wide_proj(m->bctx, set_wide);
    pl_cuda_backend_mlp_pre(m->bctx, set_pre);
    pl_cuda_backend_fullk_proj(m->bctx, set_fullk, set_fullk_ring, set_fullk_pre);
    pl_cuda_backend_tile_alone(m->bctx, set_tile_alone);
    pl_cuda_backend_attn_early(m->bctx, set_attn_early);
    pl_cuda_backend_attn_order(m->bctx, set_order);
    pl_cuda_backend_tune_tile(m->bctx, set_tile_ctas, 0, 0);
    pl_cuda_backend_attn_split_rule(m->bctx, set_split_rule);
    if (set_warps > 0) pl_cuda_backend_attn_warps(m->bctx, set_warps);
    if (set_hooks && !sched_set(NULL, set_hooks, 0)) {
        fprintf(stderr, "bench_model_cuda: --hooks: expected NAME:N[+NAME:N...] with --schedule-ab's names; got '%s'\n", set_hooks);
        return 2;
    }
    if (set_hooks) sched_set(m->bctx, set_hooks, 1);
    const pl_model_config *c = pl_model_get_config(m);
    if (sched_path) { /* the served trace's steps instead of the batches and the prefill */
        const double kvt = (double)c->num_layers * 2 * c->num_kv_heads * c->head_dim * 2;
        int src = 0;
        if (!sched_ab) src = schedule_replay(m, sched_path, NULL, sched_out, bw, (double)pl_model_weight_bytes(m), kvt);
        /* a comma list: one paired replay after another on the same model (built once); each writes
         * --schedule-out FILE.NAME-N */
        for (const char *t = sched_ab; t && !src; t = strchr(t, ',') ? strchr(t, ',') + 1 : NULL) {
            char one[256], out[1024];
            snprintf(one, sizeof one, "%.*s", (int)strcspn(t, ","), t);
            if (sched_out) {
                snprintf(out, sizeof out, "%s.%s", sched_out, one);
                for (char *q = strchr(out, ':'); q; q = strchr(q, ':')) *q = '-';
            }
            src = schedule_replay(m, sched_path, one, sched_out ? (strchr(sched_ab, ',') ? out : sched_out) : NULL, bw,
                                  (double)pl_model_weight_bytes(m), kvt);
            fflush(stdout);
        }
        pl_model_free(m);
        return src;
    }
    size_t wbytes = pl_model_weight_bytes(m), V = (size_t)c->vocab_size;
    /* GEMM rate at the prefill chunk's own shape (the gate_up projection) */
    double tf_chunk = gemm_tflops(chunk, 2 * c->intermediate_size, c->hidden_size);
    printf("model: %s synthetic, %.2f GB of weights read per step, built in %.1f s; cuBLAS at [%d x %d] x [%d x %d]: %.1f TFLOP/s\n",
           shape, wbytes / 1e9, load_s, chunk, c->hidden_size, c->hidden_size, 2 * c->intermediate_size, tf_chunk);
    int maxb = 1;
    for (int k = 0; k < nb; k++) maxb = batches[k] > maxb ? batches[k] : maxb;
    float *logits = malloc(sizeof(float) * V * (size_t)maxb);
    int ntok = (context > chunk ? context : chunk) * maxb;
    int32_t *toks = malloc(sizeof(int32_t) * (size_t)ntok);
    for (int i = 0; i < ntok; i++) toks[i] = (int32_t)((i * 7919 + 13) % c->vocab_size);
    double *times = malloc(sizeof(double) * (size_t)steps), *times_logits = malloc(sizeof(double) * (size_t)steps);
    double *times_nopdl = malloc(sizeof(double) * (size_t)steps), *times_gemmpdl = malloc(sizeof(double) * (size_t)steps);
    double *times_t64 = malloc(sizeof(double) * (size_t)steps), *times_mma = malloc(sizeof(double) * (size_t)steps);
    double *times_sw = malloc(sizeof(double) * (size_t)steps);
    int32_t *sampled = malloc(sizeof(int32_t) * (size_t)maxb);
    FILE *jf = json ? fopen(json, "w") : NULL;
    if (jf)
        fprintf(jf, "{\"device\": \"%s\", \"copy_gbps\": %.1f, \"gemm_tflops\": %.2f, \"gemm_chunk_tflops\": %.2f, \"shape\": \"%s\", "
                    "\"weight_bytes\": %zu, \"decode\": [",
                prop.name, bw, tf, tf_chunk, shape, wbytes);
    printf("decode step = pl_model_forward_sample (greedy on the device, token ids back); logits-step: the same step\n"
           "returning f32 logits of every row to the host (pl_model_forward); then the step without programmatic\n"
           "dependent launch, with it for the skinny GEMMs only, with the tile kernel only up to 32 rows (cuBLAS\n"
           "past, the default before the tile kernel's TMA copies), and with the\n"
           "untiled tensor-core kernel at 2-8 rows\n");
    printf("%-8s %8s %12s %10s %12s %10s %10s %16s %14s %14s %12s %14s\n", "batch", "context", "step ms", "tok/s", "roofline ms",
           "x roofline", "GB/s", "logits-step ms", "no-PDL step ms", "PDL GEMMs ms", "tile<=32 ms", "untiled MMA ms");
    int rc = 0;
    size_t kv_tok = (size_t)c->num_layers * 2 * c->num_kv_heads * c->head_dim * 2;
    for (int k = 0; k < nb && !rc && strcmp(only, "prefill"); k++) {
        int B = batches[k];
        pl_kv_pools pools;
        /* capped pools sized up front, as a server holds them: no growth inside the timing */
        const int nsteps = (7 + (tile_sweep ? 9 : 0) + (attn_sweep ? 9 : 0) + (ablate ? 10 : 0) + (copy_ab ? 12 : 0) + (segments_ab ? 15 : 0) + (attn_copy_ab ? 6 : 0) + (early_ab ? 6 : 0) + (units_ab ? 6 : 0) + (units_n ? 6 : 0) + (warps_ab ? 6 : 0) + (ctas_ab ? 6 : 0) + (parts_ab ? 6 : 0) + (kslice_ab ? 6 : 0) + (mlp_ab ? 6 : 0) + (mlp_plain_ab ? 6 : 0) + (wide_ab ? 6 : 0) + (fullk_ab ? 6 : 0) + (tile_max_n ? 6 : 0) + (diag_path ? 1 : 0)) * (steps + 3) +
                           1; /* every mode's and config's steps */
        const int dpages = B * ((context + nsteps + 127) / 128 + 1);
        if ((rc = pl_model_create_pools(m, 128, PL_POOL_CAPPED, dpages, &pools, err, sizeof err))) break;
        pl_kv_seq *seqs = calloc((size_t)B, sizeof *seqs);
        pl_kv_seq **sp = malloc(sizeof *sp * (size_t)B);
        int *lens = malloc(sizeof(int) * (size_t)B), *pos = malloc(sizeof(int) * (size_t)B);
        for (int b = 0; b < B && !rc; b++) {
            rc = pl_kv_seq_init(&seqs[b], &pools, err, sizeof err);
            sp[b] = &seqs[b], pos[b] = 0;
            /* --context-spread LO: row b's context LO + (context - LO) b / (B - 1), as unequal
             * as a serving batch's (the roofline counts each row's own) */
            lens[b] = nctx > 0 ? ctx_list[b] : spread > 0 && B > 1 ? spread + (int)((long long)(context - spread) * b / (B - 1)) : context;
            ctx_sum[k] += lens[b];
        }
        if (!rc) {
            pl_forward_batch fb = {B, toks, lens, pos, sp, NULL, 0};
            rc = pl_model_forward(m, &fb, logits, err, sizeof err);
        }
        for (int b = 0; b < B; b++) lens[b] = 1;
        /* The serving step (greedy tokens sampled on the device, ids back), the same step
         * returning f32 logits of every row to the host, and the serving step without
         * programmatic dependent launch, with it for the skinny GEMMs only, with the tile
         * kernel only up to 32 rows, and with the untiled tensor-core kernel at 2-8 rows. */
        double st_logits = 0, st_nopdl = 0, st_gemmpdl = 0, st_t64 = 0, st_mma = 0;
        double *mt[6] = {times, times_logits, times_nopdl, times_gemmpdl, times_t64, times_mma};
        for (int mode = 0; mode < 6 && !rc; mode++) {
            /* 4: the tile kernel only up to 32 rows; 5: the untiled tensor-core kernel at 2-8 rows */
            pl_cuda_backend_use_gemv(m->bctx, mode == 4 ? 4 : mode == 5 ? 3 : gemv_mode);
            pl_cuda_backend_use_pdl(m->bctx, mode == 2 ? 0 : mode == 3 ? 2 : 1);
            for (int s = -3; s < steps && !rc; s++) {
                for (int b = 0; b < B; b++) pos[b] = pl_kv_seq_offset(&seqs[b]);
                pl_forward_batch fb = {B, toks + (s + 3) % 64, lens, pos, sp, NULL, 0};
                double ts = pl_now_seconds();
                if (mode == 0 && s == steps - 1) cudaProfilerStart(); /* `ncu --profile-from-start off`: one serving step */
                rc = mode != 1 ? pl_model_forward_sample(m, &fb, NULL, sampled, err, sizeof err)
                               : pl_model_forward(m, &fb, logits, err, sizeof err);
                if (mode == 0 && s == steps - 1) cudaProfilerStop();
                if (s >= 0) mt[mode][s] = pl_now_seconds() - ts;
            }
        }
        pl_cuda_backend_use_pdl(m->bctx, 1);
        pl_cuda_backend_use_gemv(m->bctx, gemv_mode);
#ifdef PL_DIAG_STAMPS
        if (diag_path && !rc) rc = diag_steps(m, B, seqs, sp, lens, pos, toks, sampled, diag_path, err, sizeof err);
#else
        if (diag_path && !rc) rc = 1, snprintf(err, sizeof err, "--diag-stamps needs a build with -DPL_DIAG_STAMPS");
#endif
        /* --tile-sweep: the tile GEMM's K split (CTAs per SM aimed at, most splits, fewest
         * 64-k tiles per split), the serving step's median for each */
        static const int sweep[][3] = {{2, 16, 4}, {1, 16, 4}, {2, 8, 4}, {2, 16, 8}, {1, 8, 8}, {2, 4, 4}, {2, 16, 2}, {1, 4, 4}, {1, 3, 4}};
        for (int cfg = 0; tile_sweep && cfg < (int)(sizeof sweep / sizeof sweep[0]) && !rc; cfg++) {
            pl_cuda_backend_tune_tile(m->bctx, sweep[cfg][0], sweep[cfg][1], sweep[cfg][2]);
            const double med = serving_steps(m, B, seqs, sp, lens, pos, toks, steps, sampled, times_sw, &rc, err, sizeof err);
            if (!rc)
                printf("tile split sweep: batch %d, %d CTAs/SM, <= %d splits, >= %d k tiles: step %.3f ms\n", B, sweep[cfg][0],
                       sweep[cfg][1], sweep[cfg][2], med * 1e3);
        }
        pl_cuda_backend_tune_tile(m->bctx, set_tile_ctas, 0, 0); /* back to the run's setting */
        /* --attn-split-sweep: context splits of the decode attention (0: the heuristic) */
        static const int asw[] = {0, 1, 2, 3, 4, 6, 8, 12, 16};
        for (int cfg = 0; attn_sweep && cfg < (int)(sizeof asw / sizeof asw[0]) && !rc; cfg++) {
            pl_cuda_backend_attn_splits(m->bctx, asw[cfg]);
            const double med = serving_steps(m, B, seqs, sp, lens, pos, toks, steps, sampled, times_sw, &rc, err, sizeof err);
            if (!rc)
                printf("attention split sweep: batch %d, splits %d%s: step %.3f ms\n", B, asw[cfg], asw[cfg] ? "" : " (heuristic)",
                       med * 1e3);
        }
        pl_cuda_backend_attn_splits(m->bctx, set_splits > 0 ? set_splits : 0);
        /* --tile-copy-ab: the tile GEMM's stages by cp.async or TMA boxes, in the default step
         * and with the tile kernel only up to 32 rows (cuBLAS past), three interleaved rounds */
        for (int round = 0; round < 3 && copy_ab && !rc; round++)
            for (int cfg = 0; cfg < 4 && !rc; cfg++) {
                pl_cuda_backend_use_gemv(m->bctx, cfg < 2 ? 1 : 4);
                pl_cuda_backend_tile_copy(m->bctx, cfg % 2 ? 2 : 1);
                const double med = serving_steps(m, B, seqs, sp, lens, pos, toks, steps, sampled, times_sw, &rc, err, sizeof err);
                if (!rc)
                    printf("tile copy: batch %d, round %d, %s, %s: step %.3f ms\n", B, round, cfg < 2 ? "default kernels" : "tile kernel to 32 rows",
                           cfg % 2 ? "TMA" : "cp.async", med * 1e3);
            }
        pl_cuda_backend_use_gemv(m->bctx, gemv_mode);
        pl_cuda_backend_tile_copy(m->bctx, 0);
        /* --ablate: the serving step with kinds of op launching nothing (wrong results): what
         * each costs inside the step, launch chain and overlap included. Contexts grow by the
         * steps of each setting, so later settings read a little more K/V. */
        enum { SMALL = PL_CUDA_SKIP_NORM | PL_CUDA_SKIP_ROPE | PL_CUDA_SKIP_APPEND | PL_CUDA_SKIP_SWIGLU };
        static const int abl[] = {0, PL_CUDA_SKIP_NORM, PL_CUDA_SKIP_ROPE, PL_CUDA_SKIP_APPEND, PL_CUDA_SKIP_SWIGLU,
                                  PL_CUDA_SKIP_ATTN, SMALL, SMALL | PL_CUDA_SKIP_ATTN, PL_CUDA_SKIP_GEMM,
                                  SMALL | PL_CUDA_SKIP_ATTN | PL_CUDA_SKIP_GEMM};
        static const char *abl_name[] = {"nothing", "add+RMSNorm", "q/k norm+RoPE", "K/V append", "SwiGLU", "attention",
                                         "the four small kinds", "small kinds + attention (GEMMs + LM head left)", "layer GEMMs",
                                         "all of the layers (embedding, LM head, sampling, host left)"};
        for (int cfg = 0; ablate && cfg < (int)(sizeof abl / sizeof abl[0]) && !rc; cfg++) {
            pl_cuda_backend_skip_ops(m->bctx, abl[cfg]);
            const double med = serving_steps(m, B, seqs, sp, lens, pos, toks, steps, sampled, times_sw, &rc, err, sizeof err);
            if (!rc) printf("ablation: batch %d, without %s: step %.3f ms\n", B, abl_name[cfg], med * 1e3);
        }
        pl_cuda_backend_skip_ops(m->bctx, 0);
        if (!rc) {
            long gc, gr, gx;
            pl_cuda_backend_graph_stats(m->bctx, &gc, &gr, &gx);
            fprintf(stderr, "batch %d: CUDA graphs so far: %ld captured, %ld replayed, %ld steps redone eagerly\n", B, gc, gr, gx);
            step_breakdown(m, B, seqs, sp, lens, pos, toks, steps, sampled, times_sw, &rc, err, sizeof err, "");
            /* --graph-segments-ab: the step's graph captured in segments (count, layers of the
             * first), three interleaved rounds */
            static const int segs[][2] = {{1, 1}, {2, 1}, {3, 1}, {4, 1}, {3, 2}};
            enum { NSEG = (int)(sizeof segs / sizeof segs[0]) };
            for (int round = 0; round < 3 && segments_ab && !rc; round++)
                for (int k = 0; k < NSEG && !rc; k++) {
                    const int cfg = round % 2 ? NSEG - 1 - k : k; /* odd rounds in reverse: contexts grow */
                    char label[80];
                    snprintf(label, sizeof label, ", round %d, %d graph segments, the first of %d layers", round, segs[cfg][0],
                             segs[cfg][1]);
                    pl_cuda_backend_graph_segments(m->bctx, segs[cfg][0], segs[cfg][1]);
                    step_breakdown(m, B, seqs, sp, lens, pos, toks, steps, sampled, times_sw, &rc, err, sizeof err, label);
                }
            pl_cuda_backend_graph_segments(m->bctx, 0, 0);
            /* --attn-copy-ab: the decode attention's K/V copies, AUTO or cp.async */
            static const char *const copy_names[2] = {"AUTO", "cp.async"};
            if (attn_copy_ab)
                ab_rounds(m, B, seqs, sp, lens, pos, toks, steps, sampled, times_sw, &rc, err, sizeof err,
                          pl_cuda_backend_attn_copy, 1, "attention copies", copy_names);
            /* --attn-early-ab: the decode attention reading old keys before its PDL wait (default) or after it */
            static const char *const early_names[2] = {"before the wait", "after the wait"};
            if (early_ab)
                ab_rounds(m, B, seqs, sp, lens, pos, toks, steps, sampled, times_sw, &rc, err, sizeof err,
                          pl_cuda_backend_attn_early, 1, "attention old keys", early_names);
            pl_cuda_backend_attn_early(m->bctx, set_attn_early); /* ab_rounds leaves 0 */
            /* --attn-units-ab: the decode attention's work units per CTA by AUTO or one */
            static const char *const units_names[2] = {"AUTO units/CTA", "1 unit/CTA"};
            if (units_ab)
                ab_rounds(m, B, seqs, sp, lens, pos, toks, steps, sampled, times_sw, &rc, err, sizeof err,
                          pl_cuda_backend_attn_units, 1, "attention units", units_names);
            /* --attn-units-n N: the decode attention's work units per CTA by AUTO or N */
            static const char *const units_n_names[2] = {"AUTO units/CTA", "N units/CTA"};
            if (units_n > 0)
                ab_rounds(m, B, seqs, sp, lens, pos, toks, steps, sampled, times_sw, &rc, err, sizeof err,
                          pl_cuda_backend_attn_units, units_n, "attention units", units_n_names);
            /* --rope-ab: the step's q/k norm + RoPE and K/V append in the decode attention or in their own kernel */
            static const char *const rope_names[2] = {"rope in the attention", "rope kernel"};
            if (rope_ab)
                ab_rounds(m, B, seqs, sp, lens, pos, toks, steps, sampled, times_sw, &rc, err, sizeof err, rope_kernel_mode, 1,
                          "q/k norm + RoPE + K/V append", rope_names);
            pl_cuda_backend_attn_rope(m->bctx, 0); /* back to AUTO */
            /* --parts-ab: a split tile GEMM's partials added by the add + RMSNorm after it, or by the GEMM */
            static const char *const parts_names[2] = {"partials in the norm", "partials in the GEMM"};
            if (parts_ab)
                ab_rounds(m, B, seqs, sp, lens, pos, toks, steps, sampled, times_sw, &rc, err, sizeof err,
                          pl_cuda_backend_parts_norm, 1, "split sums", parts_names);
            pl_cuda_backend_parts_norm(m->bctx, 0);
            /* --kslice-ab: 2-8-row split GEMMs as k-sliced 16-row tiles (always) or the tile kernel */
            static const char *const kslice_names[2] = {"k-sliced tiles", "tile kernel"};
            if (kslice_ab)
                ab_rounds(m, B, seqs, sp, lens, pos, toks, steps, sampled, times_sw, &rc, err, sizeof err, kslice_mode, 1, "kslice",
                          kslice_names);
            pl_cuda_backend_kslice(m->bctx, set_kslice > 0 ? set_kslice : 0);
            static const char *const mlp_names[2] = {"fused MLP", "three kernels"};
            if (mlp_ab)
                ab_rounds(m, B, seqs, sp, lens, pos, toks, steps, sampled, times_sw, &rc, err, sizeof err, mlp_mode, 1, "MLP", mlp_names);
            static const char *const plain_names[2] = {"fused, cooperative", "fused, plain launch"};
            if (mlp_plain_ab)
                ab_rounds(m, B, seqs, sp, lens, pos, toks, steps, sampled, times_sw, &rc, err, sizeof err, mlp_plain_mode, 1, "MLP launch",
                          plain_names);
            pl_cuda_backend_mlp_plain(m->bctx, 0);
            pl_cuda_backend_fused_mlp(m->bctx, set_mlp >= 0 ? set_mlp : 0);
            static const char *const wide_names[2] = {"wide o", "tile o"};
            if (wide_ab)
                ab_rounds(m, B, seqs, sp, lens, pos, toks, steps, sampled, times_sw, &rc, err, sizeof err, wide_mode, 1, "wide", wide_names);
            pl_cuda_backend_wide_proj(m->bctx, set_wide >= 0 ? set_wide : 0);
            /* --fullk-ab: the qkv projection as the full-K kernel (mode 1) or the tile GEMM */
            static const char *const fullk_names[2] = {"full-K qkv", "tile qkv"};
            if (fullk_ab)
                ab_rounds(m, B, seqs, sp, lens, pos, toks, steps, sampled, times_sw, &rc, err, sizeof err, fullk_mode, 1, "full-K", fullk_names);
            pl_cuda_backend_fullk_proj(m->bctx, set_fullk, set_fullk_ring, set_fullk_pre);
            /* --attn-warps-ab: the decode attention's CTA width by AUTO or 4 warps */
            static const char *const warps_names[2] = {"AUTO width", "4 warps"};
            if (warps_ab)
                ab_rounds(m, B, seqs, sp, lens, pos, toks, steps, sampled, times_sw, &rc, err, sizeof err,
                          attn_warps_mode, 1, "attention CTA width", warps_names);
            /* --tile-ctas-ab: the tile GEMM's K split by default or at two CTAs per SM */
            static const char *const ctas_names[2] = {"default split", "2 CTAs/SM"};
            if (ctas_ab)
                ab_rounds(m, B, seqs, sp, lens, pos, toks, steps, sampled, times_sw, &rc, err, sizeof err, tile_ctas_mode, 1,
                          "tile GEMM split", ctas_names);
            /* --tile-max-ab N: the tile GEMM's K split by default or with at most N splits */
            static const char *const max_names[2] = {"default split", "at most N splits"};
            if (tile_max_n > 0)
                ab_rounds(m, B, seqs, sp, lens, pos, toks, steps, sampled, times_sw, &rc, err, sizeof err, tile_max_mode, tile_max_n,
                          "tile GEMM split", max_names);
            double st = pl_median(times, steps);
            st_logits = pl_median(times_logits, steps);
            st_nopdl = pl_median(times_nopdl, steps);
            st_gemmpdl = pl_median(times_gemmpdl, steps);
            st_t64 = pl_median(times_t64, steps);
            st_mma = pl_median(times_mma, steps);
            double kvb = ((double)ctx_sum[k] + (double)B * steps) * kv_tok;
            double roof = (wbytes + kvb) / (bw * 1e9);
            printf("%-8d %8d %12.3f %10.1f %12.3f %10.2f %10.0f %16.3f %14.3f %14.3f %12.3f %14.3f\n", B, context, st * 1e3, B / st,
                   roof * 1e3, st / roof, (wbytes + kvb) / st / 1e9, st_logits * 1e3, st_nopdl * 1e3, st_gemmpdl * 1e3,
                   st_t64 * 1e3, st_mma * 1e3);
            if (jf)
                fprintf(jf, "%s{\"batch\": %d, \"context\": %d, \"step_ms\": %.4f, \"tok_s\": %.1f, \"roofline_ms\": %.4f, "
                            "\"step_logits_to_host_ms\": %.4f, \"step_no_pdl_ms\": %.4f, \"step_pdl_gemm_only_ms\": %.4f, "
                            "\"step_tile_to32_ms\": %.4f, \"step_untiled_mma_ms\": %.4f}",
                        k ? ", " : "", B, context, st * 1e3, B / st, roof * 1e3, st_logits * 1e3, st_nopdl * 1e3, st_gemmpdl * 1e3,
                        st_t64 * 1e3, st_mma * 1e3);
        }
        for (int b = 0; b < B; b++) pl_kv_seq_destroy(&seqs[b]);
        pl_kv_pools_destroy(&pools);
        free(seqs), free(sp), free(lens), free(pos);
    }
    if (jf) fprintf(jf, "], \"prefill\": [");
    /* prefill: one sequence, three chunks, the first is warm-up */
    if (!rc && strcmp(only, "decode")) {
        pl_kv_pools pools;
        pl_kv_seq seq;
        if (!(rc = pl_model_create_pools(m, 128, PL_POOL_CAPPED, 3 * chunk / 128 + 2, &pools, err, sizeof err))) {
            if (!(rc = pl_kv_seq_init(&seq, &pools, err, sizeof err))) {
                pl_kv_seq *sp = &seq;
                for (int i = 0; i < 3 && !rc; i++) {
                    int p = pl_kv_seq_offset(&seq), len = chunk;
                    pl_forward_batch fb = {1, toks, &len, &p, &sp, NULL, 0};
                    double ts = pl_now_seconds();
                    if (i == 2) cudaProfilerStart();
                    rc = pl_model_forward(m, &fb, logits, err, sizeof err);
                    if (i == 2) cudaProfilerStop();
                    double s = pl_now_seconds() - ts;
                    double H = c->hidden_size, qd = (double)c->num_heads * c->head_dim, kd = (double)c->num_kv_heads * c->head_dim;
                    double lin = 2.0 * c->num_layers * (H * (qd + 2 * kd) + qd * H + 3.0 * H * c->intermediate_size) * len;
                    double keys = (double)len * p + (double)len * (len + 1) / 2;
                    double attn = 4.0 * c->num_layers * c->num_heads * c->head_dim * keys;
                    double fl = lin + attn + 2.0 * H * (double)V;
                    if (!rc && i > 0) {
                        printf("prefill chunk %d tokens at %d: %.2f ms, %.1f TFLOP/s = %.2f of cuBLAS at the chunk shape (%.2f of 8192^3)\n",
                               len, p, s * 1e3, fl / s / 1e12, fl / s / 1e12 / tf_chunk, fl / s / 1e12 / tf);
                        if (jf) fprintf(jf, "%s{\"start\": %d, \"len\": %d, \"ms\": %.3f, \"tflops\": %.2f}", i > 1 ? ", " : "", p, len, s * 1e3, fl / s / 1e12);
                    }
                }
                pl_kv_seq_destroy(&seq);
            }
            pl_kv_pools_destroy(&pools);
        }
    }
    if (jf) fprintf(jf, "]");
    /* The four projections of one layer through the backend's matmul alone (cuBLAS), times
     * the layer count: the GEMM share of a decode step and of a prefill chunk. */
    if (!rc && !only[0]) {
        const pl_layer_weights *lw = &m->layers[0];
        const void *ws[4] = {lw->qkv, lw->o, lw->gate_up, lw->down};
        int ks[4] = {c->hidden_size, c->num_heads * c->head_dim, c->hidden_size, c->intermediate_size};
        int ns[4] = {c->num_heads * c->head_dim + 2 * c->num_kv_heads * c->head_dim, c->hidden_size, 2 * c->intermediate_size,
                     c->hidden_size};
        void *x = m->ops->alloc(m->bctx, (size_t)chunk * 2 * c->intermediate_size * 2);
        void *y = m->ops->alloc(m->bctx, (size_t)chunk * 2 * c->intermediate_size * 2);
        cudaStream_t st = (cudaStream_t)pl_cuda_backend_stream(m->bctx);
        if (x) cudaMemsetAsync(x, 0x3c, (size_t)chunk * 2 * c->intermediate_size * 2, st); /* not zeros: bf16 0.0115 */
        cudaEvent_t e0, e1;
        cudaEventCreate(&e0), cudaEventCreate(&e1);
        if (jf) fprintf(jf, ", \"gemm_layers_ms\": {");
        /* (rows, skinny-GEMM mode): the default kernels at 1/4/16/32/64/chunk rows, then cuBLAS,
         * the CUDA-core kernel and the untiled tensor-core kernel at decode sizes */
        static const int plan[][2] = {{1, 1}, {4, 1},  {16, 1}, {32, 1}, {64, 1}, {0, 1}, {1, 0}, {4, 0},
                                      {16, 0}, {32, 0}, {64, 0}, {1, 2}, {4, 2},  {4, 3}, {8, 3}, {8, 1}};
        static const char *mode_name[4] = {" (cuBLAS)", "", " (CUDA-core kernel)", " (untiled tensor-core kernel)"};
        for (int ri = 0; ri < (int)(sizeof plan / sizeof plan[0]) && x && y; ri++) {
            const int M = plan[ri][0] ? plan[ri][0] : chunk, gm = plan[ri][1], blas_only = gm != 1;
            pl_cuda_backend_use_gemv(m->bctx, gm);
            double tot = 0, flops = 0, per[4];
            for (int g = 0; g < 4; g++) {
                per[g] = time_matmul(m, st, e0, e1, x, M, ws[g], y, 0);
                tot += per[g];
                flops += 2.0 * M * (double)ns[g] * ks[g];
            }
            const double wb = 2.0 * ((double)ns[0] * ks[0] + (double)ns[1] * ks[1] + (double)ns[2] * ks[2] + (double)ns[3] * ks[3]);
            printf("GEMMs alone%s, %d rows: %.3f ms per step (%d layers; %.1f TFLOP/s; weights at %.0f GB/s; qkv/o/gate_up/down "
                   "%.1f/%.1f/%.1f/%.1f us)\n",
                   mode_name[gm], M, tot * c->num_layers * 1e3, c->num_layers, flops / tot / 1e12, wb / tot / 1e9, per[0] * 1e6,
                   per[1] * 1e6, per[2] * 1e6, per[3] * 1e6);
            if (jf)
                fprintf(jf, "%s\"%d%s\": %.4f", ri ? ", " : "", M, !blas_only ? "" : gm == 2 ? "_fma" : gm == 3 ? "_mma" : "_cublas",
                        tot * c->num_layers * 1e3);
        }
        pl_cuda_backend_use_gemv(m->bctx, 1);
        if (jf) fprintf(jf, "}");
        /* The LM head (f32 logits) alone, default kernels and cuBLAS, and the greedy device
         * sampling of its rows (host round trip included): the step's part outside the layers */
        const size_t V = (size_t)c->vocab_size;
        float *lg = m->ops->alloc(m->bctx, sizeof(float) * V * 64);
        pl_cuda_sample_params *gp = calloc(64, sizeof *gp);
        int32_t *gt = malloc(sizeof(int32_t) * 64);
        static const int head_rows[] = {1, 4, 16, 32, 64};
        for (int ri = 0; ri < 5 && lg && gp && gt && x; ri++) {
            const int M = head_rows[ri];
            double th[2] = {0, 0}, tsm[10];
            for (int gm = 0; gm < 2; gm++) {
                pl_cuda_backend_use_gemv(m->bctx, gm ? 0 : 1);
                th[gm] = time_matmul(m, st, e0, e1, x, M, m->lm_head, lg, 1);
            }
            pl_cuda_backend_use_gemv(m->bctx, 1);
            for (int r = 0; r < M; r++) gp[r].temperature = 0.f, gp[r].top_k = 0, gp[r].top_p = 1.f; /* greedy */
            for (int i = -2; i < 10 && !rc; i++) {
                const double t1 = pl_now_seconds();
                if ((rc = pl_cuda_sample((pl_cuda_backend *)m->bctx, lg, V, M, (int)V, gp, gt, err, sizeof err))) break;
                if (i >= 0) tsm[i] = pl_now_seconds() - t1;
            }
            if (rc) break;
            /* the greedy head: the same LM head folding each row into its argmax, host included */
            double tgh[10], gh = 0;
            for (int i = -2; i < 10 && M > 1 && !rc; i++) {
                const double t1 = pl_now_seconds();
                if ((rc = m->ops->head_greedy(m->bctx, x, M, m->lm_head, err, sizeof err)) ||
                    (rc = m->ops->head_greedy_tokens(m->bctx, M, gt, err, sizeof err)))
                    break;
                if (i >= 0) tgh[i] = pl_now_seconds() - t1;
            }
            if (rc) break;
            if (M > 1) gh = pl_median(tgh, 10);
            const double hb = 2.0 * (double)V * c->hidden_size;
            printf("LM head alone, %d rows: %.1f us (weights at %.0f GB/s), cuBLAS %.1f us; greedy sampling %.1f us (host "
                   "included); greedy head (LM head + argmax, host included) %.1f us\n",
                   M, th[0] * 1e6, hb / th[0] / 1e9, th[1] * 1e6, pl_median(tsm, 10) * 1e6, gh * 1e6);
        }
        if (lg) m->ops->free(m->bctx, lg);
        free(gp), free(gt);
        m->ops->free(m->bctx, x);
        m->ops->free(m->bctx, y);
    }
    /* device sampling of maxb rows of the vocab (top-k 50, top-p 0.9, temperature 0.8) */
    if (!rc && !only[0]) {
        pl_cuda_backend *b = NULL;
        if (!pl_cuda_backend_create(PL_BF16, 0, &b, err, sizeof err)) {
            float *d;
            size_t n = V * (size_t)maxb;
            float *h = malloc(sizeof(float) * n);
            for (size_t i = 0; i < n; i++) h[i] = (float)((i * 2654435761u) % 1000) / 100.0f;
            CK(cudaMalloc((void **)&d, sizeof(float) * n));
            CK(cudaMemcpy(d, h, sizeof(float) * n, cudaMemcpyHostToDevice));
            pl_cuda_sample_params *pp = malloc(sizeof *pp * (size_t)maxb);
            int32_t *tk = malloc(sizeof(int32_t) * (size_t)maxb);
            for (int r = 0; r < maxb; r++) pp[r].temperature = 0.8f, pp[r].top_k = 50, pp[r].top_p = 0.9f, pp[r].u = 0.37;
            double ts[10];
            for (int i = -2; i < 10; i++) {
                double t1 = pl_now_seconds();
                if (pl_cuda_sample(b, d, V, maxb, (int)V, pp, tk, err, sizeof err)) {
                    fprintf(stderr, "sample: %s\n", err);
                    break;
                }
                if (i >= 0) ts[i] = pl_now_seconds() - t1;
            }
            double sm = pl_median(ts, 10);
            printf("device sampling, %d rows x %zu vocab (T 0.8, top-k 50, top-p 0.9): %.3f ms per call (host included)\n", maxb, V, sm * 1e3);
            if (jf) fprintf(jf, ", \"sample_rows\": %d, \"sample_ms\": %.4f", maxb, sm * 1e3);
            cudaFree(d), free(h), free(pp), free(tk);
            pl_cuda_backend_destroy(b);
        }
    }
    if (jf) fprintf(jf, "}\n"), fclose(jf);
    if (rc) fprintf(stderr, "bench_model_cuda: %s\n", err);
    free(logits), free(toks), free(times), free(times_logits), free(times_nopdl), free(times_gemmpdl), free(times_t64), free(times_mma), free(times_sw), free(sampled);
    pl_model_free(m);
    return rc ? 1 : 0;
}
