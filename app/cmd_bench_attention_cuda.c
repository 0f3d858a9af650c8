/* pagellm bench-attention --device cuda: the CUDA paged-attention kernels on Qwen3-4B heads
 * (32 query / 8 KV heads, head_dim 128, bf16, page 128). Decode, causal prefill and chunked
 * prefill shapes; each is timed with CUDA events around replays of a CUDA graph holding one
 * operator call (median of many), rotating among input sets so that the K/V bytes of the
 * rotation exceed the L2 several times. Paged (page 128, shuffled page ids) is compared with
 * one contiguous page per sequence. A device-to-device copy in the same run is the ceiling. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#ifndef PL_HAVE_CUDA
int pl_cmd_bench_attention_cuda(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "pagellm: bench-attention --device cuda: this pagellm was built without CUDA\n");
    return 1;
}
#else
#include <cuda_runtime.h>
#include <math.h>

#include "base/bf16.h"
#include "base/json.h"
#include "base/timing.h"
#include "pagellm/attention.h"
#include "pagellm/cuda.h"

#define HQ 32
#define HKV 8
#define HD 128

typedef struct bench_opts {
    int iters, warmup, quick, check, sweep;
    int page_size;
    long long rotate_bytes;
    const char *json;
    const char *only; /* comma list of kinds, NULL = all */
    int ndec, dec[16][2]; /* --decode-shapes: batch x context pairs in place of the built-in ones */
} bench_opts;

typedef struct bench_row {
    const char *kind;
    int batch, query_len, context, causal;
    char variant[48];
    double median_us, gbps, gflops, ratio, max_abs_err;
} bench_row;

static int cuda_ok(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        fprintf(stderr, "pagellm: bench-attention --device cuda: %s: %s\n", what, cudaGetErrorString(e));
        return 0;
    }
    return 1;
}

static uint64_t bench_rng = 88172645463325252ull;
static uint32_t brnd(void) {
    bench_rng ^= bench_rng << 13;
    bench_rng ^= bench_rng >> 7;
    bench_rng ^= bench_rng << 17;
    return (uint32_t)(bench_rng >> 16);
}

/* Fills n bf16 values on the device with random data in [-1, 1) (a host pattern of 8 MiB
 * elements copied over and over: not zeros, which would time faster than real data). */
static int fill_random(uint16_t *dev, size_t n, const uint16_t *pattern, size_t pat_n) {
    const size_t chunk = pat_n / 2;
    for (size_t off = 0; off < n; off += chunk) {
        const size_t m = n - off < chunk ? n - off : chunk;
        const size_t shift = (off / chunk * 7919) % chunk;
        if (!cuda_ok(cudaMemcpy(dev + off, pattern + shift, m * 2, cudaMemcpyHostToDevice), "fill")) return 0;
    }
    return 1;
}

/* One shape: pool of pages for `sets` rotations, block tables per set. */
typedef struct shape_bufs {
    int B, L, S, ps, mp, sets, P;
    uint16_t *k, *v, *q, *out, *ref;
    int32_t *bt, *ctx; /* bt: sets * B * mp */
} shape_bufs;

static void free_bufs(shape_bufs *s) {
    cudaFree(s->k);
    cudaFree(s->v);
    cudaFree(s->q);
    cudaFree(s->out);
    cudaFree(s->ref);
    cudaFree(s->bt);
    cudaFree(s->ctx);
    memset(s, 0, sizeof *s);
}

static int alloc_bufs(shape_bufs *s, int B, int L, int S, int ps, const bench_opts *o, const uint16_t *pat, size_t pat_n) {
    memset(s, 0, sizeof *s);
    s->B = B;
    s->L = L;
    s->S = S;
    s->ps = ps;
    s->mp = (S + ps - 1) / ps;
    const double set_bytes = (double)B * S * HKV * HD * 2 * 2;
    int sets = (int)ceil((double)o->rotate_bytes / set_bytes);
    if (sets < 1) sets = 1;
    if (sets > 8) sets = 8;
    s->sets = sets;
    s->P = sets * B * s->mp;
    const size_t nk = (size_t)s->P * HKV * ps * HD, nq = (size_t)sets * B * L * HQ * HD;
    if (!cuda_ok(cudaMalloc((void **)&s->k, nk * 2), "K pages") || !cuda_ok(cudaMalloc((void **)&s->v, nk * 2), "V pages") ||
        !cuda_ok(cudaMalloc((void **)&s->q, nq * 2), "queries") ||
        !cuda_ok(cudaMalloc((void **)&s->out, (size_t)B * L * HQ * HD * 2), "out") ||
        !cuda_ok(cudaMalloc((void **)&s->ref, (size_t)B * L * HQ * HD * 2), "ref") ||
        !cuda_ok(cudaMalloc((void **)&s->bt, (size_t)sets * B * s->mp * 4), "block table") ||
        !cuda_ok(cudaMalloc((void **)&s->ctx, (size_t)B * 4), "context lens"))
        return 0;
    if (!fill_random(s->k, nk, pat, pat_n) || !fill_random(s->v, nk, pat + 12345, pat_n - 12345) || !fill_random(s->q, nq, pat + 777, pat_n - 777))
        return 0;
    /* page ids: each set owns B * mp pages of the pool, shuffled inside the set */
    const int per = B * s->mp;
    int32_t *bt = malloc((size_t)sets * per * 4), *perm = malloc((size_t)per * 4), *ctx = malloc((size_t)B * 4);
    for (int st = 0; st < sets; ++st) {
        for (int i = 0; i < per; ++i) perm[i] = i;
        if (s->mp > 1)
            for (int i = per - 1; i > 0; --i) {
                const int j = (int)(brnd() % (uint32_t)(i + 1)), t = perm[i];
                perm[i] = perm[j];
                perm[j] = t;
            }
        for (int i = 0; i < per; ++i) bt[(size_t)st * per + i] = st * per + perm[i];
    }
    for (int b = 0; b < B; ++b) ctx[b] = S;
    int ok = cuda_ok(cudaMemcpy(s->bt, bt, (size_t)sets * per * 4, cudaMemcpyHostToDevice), "block table") &&
             cuda_ok(cudaMemcpy(s->ctx, ctx, (size_t)B * 4, cudaMemcpyHostToDevice), "context lens");
    free(bt);
    free(perm);
    free(ctx);
    return ok;
}

static pl_paged_attention_args set_args(const shape_bufs *s, int set, int causal) {
    pl_paged_attention_args a;
    memset(&a, 0, sizeof a);
    a.dtype = PL_BF16;
    a.batch = s->B;
    a.num_heads = HQ;
    a.num_kv_heads = HKV;
    a.query_len = s->L;
    a.head_dim = HD;
    a.num_pages = s->P;
    a.page_size = s->ps;
    a.max_pages = s->mp;
    a.causal = causal;
    a.query = s->q + (size_t)set * s->B * s->L * HQ * HD;
    a.key_pages = s->k;
    a.value_pages = s->v;
    a.block_table = s->bt + (size_t)set * s->B * s->mp;
    a.context_lens = s->ctx;
    a.out = s->out;
    a.schedule = PL_ATTN_AUTO;
    return a;
}

static double max_abs_diff_dev(const uint16_t *a, const uint16_t *b, size_t n) {
    uint16_t *ha = malloc(n * 2), *hb = malloc(n * 2);
    double m = 0;
    if (cudaMemcpy(ha, a, n * 2, cudaMemcpyDeviceToHost) == cudaSuccess && cudaMemcpy(hb, b, n * 2, cudaMemcpyDeviceToHost) == cudaSuccess) {
        for (size_t i = 0; i < n; ++i) {
            const double d = fabs((double)pl_bf16_to_f32(ha[i]) - pl_bf16_to_f32(hb[i]));
            if (!(d <= m)) m = d;
        }
    } else {
        m = NAN;
    }
    free(ha);
    free(hb);
    return m;
}

/* Times one variant: graphs per set, events around each replay, median in microseconds. */
static int time_variant(const shape_bufs *s, int causal, const pl_cuda_attn_options *opt, const bench_opts *o, double *median_us,
                        double *err_out) {
    char err[256];
    cudaStream_t st;
    if (!cuda_ok(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "stream")) return 0;
    cudaGraphExec_t ge[8];
    int ok = 1, made = 0;
    for (int i = 0; i < s->sets && ok; ++i) {
        pl_paged_attention_args a = set_args(s, i, causal);
        cudaGraph_t g;
        if (!cuda_ok(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal), "capture")) {
            ok = 0;
            break;
        }
        const int rc = pl_paged_attention_cuda_ex(&a, opt, st, err, sizeof err);
        if (!cuda_ok(cudaStreamEndCapture(st, &g), "end capture")) {
            ok = 0;
            break;
        }
        if (rc != PL_OK) {
            fprintf(stderr, "pagellm: bench-attention --device cuda: %s\n", err);
            ok = 0;
        }
        if (ok && cuda_ok(cudaGraphInstantiate(&ge[i], g, 0), "graph instantiate")) made++;
        else ok = 0;
        cudaGraphDestroy(g);
    }
    if (ok && o->check && err_out) {
        /* output of set 0 against the generic kernel on the same inputs */
        pl_paged_attention_args a = set_args(s, 0, causal);
        pl_cuda_attn_options gen;
        memset(&gen, 0, sizeof gen);
        gen.kernel = PL_CUDA_ATTN_GENERIC;
        a.out = s->ref;
        ok = pl_paged_attention_cuda_ex(&a, &gen, st, err, sizeof err) == PL_OK;
        if (ok) ok = cuda_ok(cudaGraphLaunch(ge[0], st), "graph launch") && cuda_ok(cudaStreamSynchronize(st), "check");
        if (ok) *err_out = max_abs_diff_dev(s->out, s->ref, (size_t)s->B * s->L * HQ * HD);
        else fprintf(stderr, "pagellm: bench-attention --device cuda: check: %s\n", err);
    }
    const int total = o->warmup + o->iters;
    double *t = malloc((size_t)o->iters * sizeof(double));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    for (int i = 0; i < total && ok; ++i) {
        cudaEventRecord(e0, st);
        ok = cuda_ok(cudaGraphLaunch(ge[i % s->sets], st), "graph launch");
        cudaEventRecord(e1, st);
        if (!ok || !cuda_ok(cudaEventSynchronize(e1), "kernel")) {
            ok = 0;
            break;
        }
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        if (i >= o->warmup) t[i - o->warmup] = ms * 1e3;
    }
    if (ok) *median_us = pl_median(t, o->iters);
    free(t);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    for (int i = 0; i < made; ++i) cudaGraphExecDestroy(ge[i]);
    cudaStreamDestroy(st);
    return ok;
}

static int want(const bench_opts *o, const char *kind) {
    if (!o->only) return 1;
    const char *p = strstr(o->only, kind);
    return p != NULL;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: pagellm bench-attention --device cuda [flags]\n"
            "  --device cuda          run on the GPU (required to get here)\n"
            "  --json-output FILE     write the JSON report (default: none)\n"
            "  --iters N              timed graph replays per row (default 100)\n"
            "  --warmup N             untimed replays first (default 10)\n"
            "  --page-size N          paged variant page size (default 128)\n"
            "  --rotate-mib N         rotate input sets until their K/V reach N MiB (default 256; the H200's L2 is 60 MB)\n"
            "  --only LIST            kinds to run: decode,prefill,chunk (default all)\n"
            "  --quick                fewer shapes (one of each kind)\n"
            "  --decode-shapes LIST   decode shapes to run instead of the built-in six, BxS comma list\n"
            "                         (e.g. 4x576,64x576: batch x context, up to 16)\n"
            "  --no-check             skip the max_abs_err check against the generic kernel\n"
            "  --split-sweep          also time fixed split counts (and 4-warp CTAs at 2-8 splits) for small\n"
            "                         decode batches (default off)\n"
            "  --help                 this text\n"
            "decode variants: decode-mma (AUTO), decode-mma-cpasync / decode-mma-tma (K/V copies forced),\n"
            "decode-mma-ws (caller workspace), decode-mma-wN-ws (the CTA width AUTO did not pick),\n"
            "decode-mma-u1-ws (one work unit per CTA; AUTO gives a CTA several past one wave), vector;\n"
            "each paged (page 128, shuffled ids) and on one contiguous page per sequence\n");
}

/* "4x576,64x576" -> o->dec; 1 (with a message naming the bad item) on error */
static int parse_shapes(const char *v, bench_opts *o) {
    o->ndec = 0;
    for (const char *t = v; *t;) {
        int b = 0, sl = 0, n = 0;
        if (sscanf(t, "%d x %d%n", &b, &sl, &n) != 2 || b < 1 || b > 4096 || sl < 1 || sl > (1 << 20) || o->ndec >= 16 ||
            (t[n] != ',' && t[n] != 0)) {
            fprintf(stderr, "pagellm: bench-attention --device cuda: --decode-shapes: bad item at '%s' (want BxS, "
                            "1 <= B <= 4096, 1 <= S <= 1048576, up to 16 items)\n", t);
            return 1;
        }
        o->dec[o->ndec][0] = b, o->dec[o->ndec][1] = sl, o->ndec++;
        t += n + (t[n] == ',');
    }
    if (o->ndec == 0) {
        fprintf(stderr, "pagellm: bench-attention --device cuda: --decode-shapes: empty list\n");
        return 1;
    }
    return 0;
}

int pl_cmd_bench_attention_cuda(int argc, char **argv) {
    bench_opts o = {100, 10, 0, 1, 0, 128, 256LL << 20, NULL, NULL, 0, {{0}}};
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const char *v;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (pl_cli_is(a, "--device")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--device"))) return 2;
            if (strcmp(v, "cuda") != 0) {
                fprintf(stderr, "pagellm: --device: '%s': this path runs only --device cuda\n", v);
                return 2;
            }
        } else if (pl_cli_is(a, "--json-output")) {
            if (!(o.json = pl_cli_value(argc, argv, &i, "--json-output"))) return 2;
        } else if (pl_cli_is(a, "--iters")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--iters")) || pl_cli_int("--iters", v, 1, 100000, &o.iters)) return 2;
        } else if (pl_cli_is(a, "--warmup")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--warmup")) || pl_cli_int("--warmup", v, 0, 100000, &o.warmup)) return 2;
        } else if (pl_cli_is(a, "--page-size")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--page-size")) || pl_cli_int("--page-size", v, 1, 65536, &o.page_size)) return 2;
        } else if (pl_cli_is(a, "--rotate-mib")) {
            int mib;
            if (!(v = pl_cli_value(argc, argv, &i, "--rotate-mib")) || pl_cli_int("--rotate-mib", v, 0, 65536, &mib)) return 2;
            o.rotate_bytes = (long long)mib << 20;
        } else if (pl_cli_is(a, "--only")) {
            if (!(o.only = pl_cli_value(argc, argv, &i, "--only"))) return 2;
        } else if (pl_cli_is(a, "--decode-shapes")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--decode-shapes")) || parse_shapes(v, &o)) return 2;
        } else if (strcmp(a, "--quick") == 0) {
            o.quick = 1;
        } else if (strcmp(a, "--split-sweep") == 0) {
            o.sweep = 1;
        } else if (strcmp(a, "--no-check") == 0) {
            o.check = 0;
        } else {
            fprintf(stderr, "pagellm: bench-attention --device cuda: unknown flag '%s' (see --help)\n", a);
            return 2;
        }
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        fprintf(stderr, "pagellm: bench-attention --device cuda: no CUDA device\n");
        return 1;
    }
    struct cudaDeviceProp prop;
    if (!cuda_ok(cudaGetDeviceProperties(&prop, 0), "device properties")) return 1;
    fprintf(stderr, "bench-attention cuda: %s, %d SMs, L2 %d MB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
    char copy_err[256];
    double copy_gbps = pl_cuda_measure_copy_gbps(0, 0, NULL, 0, copy_err, sizeof copy_err);
    if (copy_gbps <= 0) {
        fprintf(stderr, "pagellm: bench-attention --device cuda: copy ceiling: %s\n", copy_err);
        copy_gbps = 0; /* ratios to it print as nan */
    }
    fprintf(stderr, "device-to-device copy: %.0f GB/s (read + write)\n", copy_gbps);

    const size_t pat_n = (size_t)8 << 20;
    uint16_t *pat = malloc(pat_n * 2);
    for (size_t i = 0; i < pat_n; ++i) pat[i] = pl_f32_to_bf16(((float)(brnd() % 65536) / 32768.0f - 1.0f));

    static const int dec[][2] = {{1, 8192}, {8, 4096}, {32, 4096}, {64, 8192}, {16, 32768}, {128, 1024}};
    static const int pre[] = {1024, 2048, 4096, 8192, 16384};
    static const int chunk_q[] = {128, 512};
    static const int chunk_ctx[] = {1024, 4096, 8192};
    bench_row rows[192];
    const size_t ws_bytes = (size_t)256 << 20;
    void *ws = NULL;
    if (!cuda_ok(cudaMalloc(&ws, ws_bytes), "workspace")) return 1;
    int nrows = 0;
    int failed = 0;

    typedef struct job {
        const char *kind;
        int B, L, S, causal;
    } job;
    job jobs[64];
    int nj = 0;
    if (want(&o, "decode") && o.ndec > 0)
        for (int i = 0; i < o.ndec; ++i) jobs[nj++] = (job){"decode", o.dec[i][0], 1, o.dec[i][1], 1};
    else if (want(&o, "decode"))
        for (int i = 0; i < (o.quick ? 2 : 6); ++i) jobs[nj++] = (job){"decode", dec[o.quick ? i * 3 : i][0], 1, dec[o.quick ? i * 3 : i][1], 1};
    if (want(&o, "prefill"))
        for (int i = 0; i < (o.quick ? 1 : 5); ++i) {
            const int S = o.quick ? 8192 : pre[i];
            jobs[nj++] = (job){"prefill-static", 16384 / S, S, S, 1};
        }
    if (want(&o, "chunk"))
        for (int qi = 0; qi < 2; ++qi)
            for (int ci = 0; ci < (o.quick ? 1 : 3); ++ci) {
                const int S = o.quick ? 8192 : chunk_ctx[ci];
                if (chunk_q[qi] > S) continue;
                jobs[nj++] = (job){"prefill-chunk", 4, chunk_q[qi], S, 1};
            }

    printf("%-15s %5s %6s %7s  %-22s %11s %9s %9s %7s %9s\n", "kind", "batch", "qlen", "context", "variant", "median_us", "GB/s", "GFLOP/s", "ratio", "max_err");
    for (int j = 0; j < nj && nrows < 140; ++j) {
        const job *jb = &jobs[j];
        /* visible (query, key) pairs for FLOPs */
        double pairs = 0;
        for (int l = 0; l < jb->L; ++l) pairs += jb->causal ? (double)(jb->S - jb->L + l + 1) : (double)jb->S;
        const double flops = 4.0 * jb->B * HQ * HD * pairs;
        const double kv_bytes = (double)jb->B * HKV * jb->S * HD * 2 * 2;
        for (int layout = 0; layout < 2; ++layout) {
            const int ps = layout == 0 ? o.page_size : jb->S;
            shape_bufs sb;
            if (!alloc_bufs(&sb, jb->B, jb->L, jb->S, ps, &o, pat, pat_n)) {
                free_bufs(&sb);
                failed = 1;
                continue;
            }
            pl_cuda_attn_options vars[24];
            char names[24][32];
            int nv = 0;
            memset(vars, 0, sizeof vars);
            const char *lay = layout == 0 ? "paged" : "contiguous";
            if (jb->L <= 8) {
                vars[nv].kernel = PL_CUDA_ATTN_DECODE_MMA;
                snprintf(names[nv++], 32, "decode-mma");
                for (int c = 1; c <= 2 && ps % 16 == 0; ++c) { /* K/V copies forced: cp.async, TMA boxes */
                    vars[nv].kernel = PL_CUDA_ATTN_DECODE_MMA;
                    vars[nv].decode_copy = c;
                    snprintf(names[nv++], 32, "decode-mma-%s", c == 1 ? "cpasync" : "tma");
                }
                if (layout == 0) {
                    vars[nv].kernel = PL_CUDA_ATTN_DECODE_MMA;
                    vars[nv].workspace = ws;
                    vars[nv].workspace_bytes = ws_bytes;
                    snprintf(names[nv++], 32, "decode-mma-ws");
                    vars[nv].kernel = PL_CUDA_ATTN_DECODE_MMA;
                    const int other_w = jb->B * HKV <= prop.multiProcessorCount ? 4 : 8; /* the CTA width AUTO did not pick */
                    vars[nv].mma_warps = other_w;
                    vars[nv].workspace = ws;
                    vars[nv].workspace_bytes = ws_bytes;
                    snprintf(names[nv++], 32, "decode-mma-w%d-ws", other_w);
                    vars[nv].kernel = PL_CUDA_ATTN_DECODE_MMA; /* one work unit per CTA (AUTO takes more past a wave) */
                    vars[nv].decode_units_per_cta = 1;
                    vars[nv].workspace = ws;
                    vars[nv].workspace_bytes = ws_bytes;
                    snprintf(names[nv++], 32, "decode-mma-u1-ws");
                    vars[nv].kernel = PL_CUDA_ATTN_VECTOR;
                    snprintf(names[nv++], 32, "vector");
                    if (o.sweep && jb->B * HKV < 132) {
                        static const int sw[] = {1, 2, 3, 4, 6, 8, 16, 32, 128};
                        for (int k = 0; k < (int)(sizeof sw / sizeof sw[0]); ++k) {
                            vars[nv].kernel = PL_CUDA_ATTN_DECODE_MMA;
                            vars[nv].workspace = ws;
                            vars[nv].workspace_bytes = ws_bytes;
                            vars[nv].num_splits = sw[k];
                            snprintf(names[nv++], 32, "decode-mma-ws-s%d", sw[k]);
                        }
                        for (int k = 0; k < 3; ++k) { /* 4-warp CTAs at 2, 4, 8 splits */
                            vars[nv].kernel = PL_CUDA_ATTN_DECODE_MMA;
                            vars[nv].workspace = ws;
                            vars[nv].workspace_bytes = ws_bytes;
                            vars[nv].num_splits = 2 << k;
                            vars[nv].mma_warps = 4;
                            snprintf(names[nv++], 32, "decode-mma-w4-ws-s%d", 2 << k);
                        }
                    }
                }
            } else {
                vars[nv].kernel = PL_CUDA_ATTN_MMA; /* the AUTO shape */
                snprintf(names[nv++], 32, "mma");
                if (layout == 0) {
                    vars[nv].kernel = PL_CUDA_ATTN_MMA;
                    vars[nv].mma_warps = 4;
                    snprintf(names[nv++], 32, "mma-64q");
                    vars[nv].kernel = PL_CUDA_ATTN_MMA;
                    vars[nv].mma_warps = 8;
                    snprintf(names[nv++], 32, "mma-128q");
                    vars[nv].kernel = PL_CUDA_ATTN_MMA;
                    vars[nv].mma_warps = 32;
                    snprintf(names[nv++], 32, "mma-128q-w32");
                    vars[nv].kernel = PL_CUDA_ATTN_MMA;
                    vars[nv].mma_warps = 132;
                    snprintf(names[nv++], 32, "mma-128q-w32-kv");
                }
            }
            for (int vi = 0; vi < nv; ++vi) {
                bench_row *r = &rows[nrows];
                memset(r, 0, sizeof *r);
                r->kind = jb->kind;
                r->batch = jb->B;
                r->query_len = jb->L;
                r->context = jb->S;
                r->causal = jb->causal;
                snprintf(r->variant, sizeof r->variant, "%.24s-%.10s%s", names[vi], lay, layout == 0 ? (ps == 128 ? "-p128" : "") : "");
                r->max_abs_err = NAN;
                double med = 0;
                if (!time_variant(&sb, jb->causal, &vars[vi], &o, &med, o.check ? &r->max_abs_err : NULL)) {
                    failed = 1;
                    continue;
                }
                r->median_us = med;
                r->gbps = kv_bytes / (med * 1e-6) / 1e9;
                r->gflops = flops / (med * 1e-6) / 1e9;
                r->ratio = jb->L <= 8 && copy_gbps > 0 ? r->gbps / copy_gbps : NAN;
                printf("%-15s %5d %6d %7d  %-22s %11.1f %9.0f %9.0f %7.3f %9.2g\n", r->kind, r->batch, r->query_len, r->context, r->variant,
                       r->median_us, r->gbps, r->gflops, r->ratio, r->max_abs_err);
                fflush(stdout);
                nrows++;
            }
            free_bufs(&sb);
        }
    }
    free(pat);
    cudaFree(ws);

    if (o.json) {
        FILE *f = fopen(o.json, "w");
        if (!f) {
            fprintf(stderr, "pagellm: --json-output: cannot write '%s'\n", o.json);
            return 1;
        }
        pl_json_writer w;
        pl_json_init(&w, f, 1);
        pl_json_begin_object(&w);
        pl_json_key(&w, "command");
        pl_json_string(&w, "bench-attention");
        pl_json_key(&w, "device");
        pl_json_string(&w, "cuda");
        pl_json_key(&w, "hardware");
        pl_json_begin_object(&w);
        pl_json_key(&w, "gpu");
        pl_json_string(&w, prop.name);
        pl_json_key(&w, "sms");
        pl_json_int(&w, prop.multiProcessorCount);
        pl_json_key(&w, "l2_bytes");
        pl_json_int(&w, prop.l2CacheSize);
        pl_json_key(&w, "memory_bytes");
        pl_json_int(&w, (int64_t)prop.totalGlobalMem);
        pl_json_end_object(&w);
        pl_json_key(&w, "ceilings");
        pl_json_begin_object(&w);
        pl_json_key(&w, "copy_gbps");
        pl_json_double(&w, copy_gbps);
        pl_json_end_object(&w);
        pl_json_key(&w, "config");
        pl_json_begin_object(&w);
        pl_json_key(&w, "num_heads");
        pl_json_int(&w, HQ);
        pl_json_key(&w, "num_kv_heads");
        pl_json_int(&w, HKV);
        pl_json_key(&w, "head_dim");
        pl_json_int(&w, HD);
        pl_json_key(&w, "dtype");
        pl_json_string(&w, "bf16");
        pl_json_key(&w, "page_size");
        pl_json_int(&w, o.page_size);
        pl_json_key(&w, "iters");
        pl_json_int(&w, o.iters);
        pl_json_key(&w, "warmup");
        pl_json_int(&w, o.warmup);
        pl_json_key(&w, "rotate_bytes");
        pl_json_int(&w, o.rotate_bytes);
        pl_json_key(&w, "timing");
        pl_json_string(&w, "CUDA events around each CUDA-graph replay of one operator call; median");
        pl_json_key(&w, "gbps");
        pl_json_string(&w, "K+V bytes of the context read once / time");
        pl_json_key(&w, "gflops");
        pl_json_string(&w, "4 * batch * heads * head_dim * visible (query, key) pairs / time");
        pl_json_key(&w, "max_abs_err");
        pl_json_string(&w, "against the generic CUDA kernel on the same inputs");
        pl_json_end_object(&w);
        pl_json_key(&w, "rows");
        pl_json_begin_array(&w);
        for (int i = 0; i < nrows; ++i) {
            const bench_row *r = &rows[i];
            pl_json_begin_object(&w);
            pl_json_key(&w, "kind");
            pl_json_string(&w, r->kind);
            pl_json_key(&w, "batch");
            pl_json_int(&w, r->batch);
            pl_json_key(&w, "query_len");
            pl_json_int(&w, r->query_len);
            pl_json_key(&w, "context");
            pl_json_int(&w, r->context);
            pl_json_key(&w, "causal");
            pl_json_bool(&w, r->causal);
            pl_json_key(&w, "variant");
            pl_json_string(&w, r->variant);
            pl_json_key(&w, "median_us");
            pl_json_double(&w, r->median_us);
            pl_json_key(&w, "gbps");
            pl_json_double(&w, r->gbps);
            pl_json_key(&w, "gflops");
            pl_json_double(&w, r->gflops);
            pl_json_key(&w, "ratio_to_ceiling");
            pl_json_double(&w, r->ratio);
            pl_json_key(&w, "max_abs_err");
            pl_json_double(&w, r->max_abs_err);
            pl_json_end_object(&w);
        }
        pl_json_end_array(&w);
        pl_json_end_object(&w);
        fputc('\n', f);
        fclose(f);
    }
    return failed ? 1 : 0;
}
#endif
