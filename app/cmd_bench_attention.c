/* pagellm bench-attention: the paged-attention operator on CPU at Qwen3-4B head shapes
 * (32 query heads, 8 KV heads, head_dim 128, bf16, page 128) against the machine's read
 * bandwidth and FMA rate measured in the same run. Rows: decode (batch 1 and 4), prefill
 * chunks of 128 tokens over long contexts, and a static causal prefill. Variants:
 * dense+gather (copy the pages to a dense cache, then attention on it: the seed's control),
 * SCALAR, DECODE, FLASH, AUTO. Every variant is checked against REFERENCE before timing.
 * --device cuda hands the same argv to the CUDA benchmark. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* madvise */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "attn/attn_internal.h"
#include "base/bf16.h"
#include "base/ceiling.h"
#include "base/json.h"
#include "base/rng.h"
#include "base/timing.h"
#include "cli.h"
#include "pagellm/attention.h"

#define HQ 32
#define HKV 8
#define HD 128

typedef struct bopts {
    int threads, page_size, warmup, iterations, prefill_len, chunk, scalar_max_gflop;
    int only;       /* 0 all, 1 decode rows only, 2 prefill rows only */
    int huge_pages; /* page storage on 2 MiB-aligned, MADV_HUGEPAGE memory */
    const char *variants; /* comma list filter, NULL: all */
    double max_seconds, ceiling_seconds;
    uint64_t seed;
    int32_t *contexts, *batches, *chunk_contexts;
    int ncontexts, nbatches, nchunk_contexts;
    const char *json;
} bopts;

static void usage(FILE *f) {
    fprintf(f,
            "usage: pagellm bench-attention [flags]\n"
            "  --device cpu|cuda         where to run (default cpu; cuda runs the CUDA benchmark)\n"
            "  --threads N               OpenMP threads (default 0: all cores)\n"
            "  --page-size N             tokens per page (default 128)\n"
            "  --contexts LIST           decode contexts (default 128,1024,8192)\n"
            "  --batches LIST            decode batch sizes (default 1,4)\n"
            "  --chunk N                 prefill chunk length (default 128)\n"
            "  --chunk-contexts LIST     contexts a prefill chunk ends at (default 1024,4096,8192)\n"
            "  --prefill-len N           static causal prefill length (default 2048; 8192 for the long run)\n"
            "  --warmup N                untimed calls per row (default 2)\n"
            "  --iterations N            timed calls per row, median reported (default 10)\n"
            "  --max-seconds S           time budget per row; fewer iterations past it (default 3)\n"
            "  --scalar-max-gflop N      skip SCALAR rows above N GFLOP of work (default 40)\n"
            "  --ceiling-seconds S       time per ceiling measurement, at the start and the end (default 2)\n"
            "  --seed N                  data seed (default 0)\n"
            "  --only all|decode|prefill which rows to run (default all)\n"
            "  --variants LIST           comma list of variants to run, e.g. decode,auto (default: all)\n"
            "  --huge-pages on|off       K/V pages on 2 MiB-aligned memory with MADV_HUGEPAGE (default on)\n"
            "  --json-output FILE        write the results as JSON (default: none)\n"
            "  --help                    this text\n");
}

/* One paged problem: bf16 pages with shuffled (non-consecutive) physical ids. */
typedef struct bprob {
    pl_paged_attention_args a;
    uint16_t *q, *k, *v, *out, *ref;
    int32_t *bt, *ctx;
    size_t qn;
    /* dense control: one page of `context` slots per row */
    uint16_t *dk, *dv;
    int32_t *dbt;
} bprob;

static void prob_free(bprob *p) {
    free(p->q), free(p->k), free(p->v), free(p->out), free(p->ref), free(p->bt), free(p->ctx);
    free(p->dk), free(p->dv), free(p->dbt);
    memset(p, 0, sizeof *p);
}

/* splitmix64: cheap and free of the lattice artifacts a power-of-two LCG shows at the
 * power-of-two strides of a K/V layout. */
static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* K/V page storage. huge: 2 MiB-aligned and MADV_HUGEPAGE (THP is often in madvise mode):
 * decode jumps to a random page every 32 KB run, and with 4 KiB pages each jump is also a
 * TLB miss. Freed with free(). */
static void *pages_alloc(size_t bytes, int huge) {
    if (!huge) return malloc(bytes ? bytes : 1);
    const size_t hp = (size_t)2 << 20;
    size_t rounded = (bytes + hp - 1) / hp * hp;
    void *m = aligned_alloc(hp, rounded ? rounded : hp);
#ifdef MADV_HUGEPAGE
    if (m) (void)madvise(m, rounded ? rounded : hp, MADV_HUGEPAGE); /* advisory: ignore failure */
#endif
    return m;
}

static int prob_build(bprob *p, int B, int L, int C, int ps, uint64_t seed, int huge) {
    memset(p, 0, sizeof *p);
    pl_mt19937 rng;
    pl_mt_seed(&rng, seed + (uint64_t)C);
    int live = (C + ps - 1) / ps, P = B * live;
    size_t page_elems = (size_t)P * HKV * ps * HD;
    p->qn = (size_t)B * L * HQ * HD;
    p->q = malloc(p->qn * 2), p->out = malloc(p->qn * 2), p->ref = malloc(p->qn * 2);
    p->k = pages_alloc(page_elems * 2, huge), p->v = pages_alloc(page_elems * 2, huge);
    p->bt = malloc(sizeof(int32_t) * (size_t)B * live), p->ctx = malloc(sizeof(int32_t) * (size_t)B);
    p->dk = malloc((size_t)B * HKV * C * HD * 2), p->dv = malloc((size_t)B * HKV * C * HD * 2);
    p->dbt = malloc(sizeof(int32_t) * (size_t)B);
    if (!p->q || !p->out || !p->ref || !p->k || !p->v || !p->bt || !p->ctx || !p->dk || !p->dv || !p->dbt) return 1;
    int32_t *perm = p->bt;
    for (int i = 0; i < P; i++) perm[i] = i;
    for (int i = P - 1; i > 0; i--) {
        int j = (int)pl_mt_randint(&rng, 0, i);
        int32_t t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    /* Fill from a table of normal bf16 values: Box-Muller per element would dominate setup. */
    uint16_t tab[4096];
    for (int i = 0; i < 4096; i++) tab[i] = pl_f32_to_bf16((float)pl_mt_normal(&rng));
    uint64_t x = seed + (uint64_t)C * 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < page_elems; i++) {
        uint64_t r = splitmix64(&x);
        p->k[i] = tab[r & 4095];
        p->v[i] = tab[(r >> 12) & 4095];
    }
    for (size_t i = 0; i < p->qn; i++) p->q[i] = tab[splitmix64(&x) & 4095];
    for (int b = 0; b < B; b++) p->ctx[b] = C, p->dbt[b] = b;
    pl_paged_attention_args *a = &p->a;
    a->dtype = PL_BF16;
    a->batch = B, a->num_heads = HQ, a->num_kv_heads = HKV, a->query_len = L, a->head_dim = HD;
    a->num_pages = P, a->page_size = ps, a->max_pages = live;
    a->scale = 0.0f, a->causal = 1;
    a->query = p->q, a->key_pages = p->k, a->value_pages = p->v;
    a->block_table = p->bt, a->context_lens = p->ctx, a->out = p->out;
    return 0;
}

/* The seed's control: gather every row's pages into a dense [B][HKV][C][D] cache, then run
 * attention on it as one page per row. */
static int dense_gather(bprob *p, char *err, size_t err_len) {
    const pl_paged_attention_args *a = &p->a;
    int C = p->ctx[0], ps = a->page_size;
    size_t row = (size_t)HD * 2;
#pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < a->batch; b++)
        for (int h = 0; h < HKV; h++)
            for (int lp = 0; lp * ps < C; lp++) {
                int n = C - lp * ps < ps ? C - lp * ps : ps, page = a->block_table[(size_t)b * a->max_pages + lp];
                size_t src = (((size_t)page * HKV + h) * ps) * HD, dst = (((size_t)b * HKV + h) * C + (size_t)lp * ps) * HD;
                memcpy(p->dk + dst, p->k + src, row * n);
                memcpy(p->dv + dst, p->v + src, row * n);
            }
    pl_paged_attention_args d = *a;
    d.key_pages = p->dk, d.value_pages = p->dv, d.block_table = p->dbt;
    d.num_pages = a->batch, d.page_size = C, d.max_pages = 1;
    d.schedule = PL_ATTN_AUTO;
    return pl_paged_attention(&d, err, err_len);
}

static int run_variant(bprob *p, const char *variant, char *err, size_t err_len) {
    if (!strcmp(variant, "dense+gather")) return dense_gather(p, err, err_len);
    pl_paged_attention_args a = p->a;
    a.schedule = !strcmp(variant, "scalar") ? PL_ATTN_SCALAR
                 : !strcmp(variant, "decode") ? PL_ATTN_DECODE
                 : !strcmp(variant, "flash") ? PL_ATTN_FLASH
                 : !strcmp(variant, "reference") ? PL_ATTN_REFERENCE
                                                 : PL_ATTN_AUTO;
    return pl_paged_attention(&a, err, err_len);
}

/* REFERENCE on the last `nrows` query tokens only (the heaviest rows: a chunk ending at the
 * same context has exactly their semantics), into p->ref at the matching offset. */
static int reference_tail(bprob *p, int nrows, char *err, size_t err_len) {
    pl_paged_attention_args a = p->a;
    int L = a.query_len, n = nrows < L ? nrows : L;
    size_t tok = (size_t)HQ * HD;
    uint16_t *q = malloc((size_t)a.batch * n * tok * 2), *o = malloc((size_t)a.batch * n * tok * 2);
    if (!q || !o) {
        free(q), free(o);
        return pl_fail(err, err_len, PL_ERR_NOMEM, "reference: out of memory");
    }
    for (int b = 0; b < a.batch; b++)
        memcpy(q + (size_t)b * n * tok, p->q + ((size_t)b * L + (L - n)) * tok, (size_t)n * tok * 2);
    a.query = q, a.out = o, a.query_len = n, a.schedule = PL_ATTN_REFERENCE;
    int rc = pl_paged_attention(&a, err, err_len);
    if (rc == PL_OK)
        for (int b = 0; b < a.batch; b++)
            memcpy(p->ref + ((size_t)b * L + (L - n)) * tok, o + (size_t)b * n * tok, (size_t)n * tok * 2);
    free(q), free(o);
    return rc;
}

/* max |out - ref| over the checked tail rows; *ok = allclose(rtol = atol = 2e-2). */
static double check_tail(const bprob *p, int nrows, int *ok) {
    int L = p->a.query_len, n = nrows < L ? nrows : L;
    size_t tok = (size_t)HQ * HD;
    double worst = 0;
    *ok = 1;
    for (int b = 0; b < p->a.batch; b++)
        for (size_t i = ((size_t)b * L + (L - n)) * tok; i < ((size_t)b * L + L) * tok; i++) {
            double g = pl_bf16_to_f32(p->out[i]), r = pl_bf16_to_f32(p->ref[i]), e = fabs(g - r);
            if (!(e <= 2e-2 + 2e-2 * fabs(r))) *ok = 0;
            if (!(e <= worst)) worst = isnan(e) ? INFINITY : e;
        }
    return worst;
}

typedef struct brow {
    const char *kind, *variant;
    int batch, query_len, context;
    double median_us, gbps, gflops, ratio, max_err;
} brow;

typedef struct bresults {
    brow *rows;
    int n, cap;
} bresults;

static int push_row(bresults *r, brow row) {
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 32;
        brow *nr = realloc(r->rows, sizeof(brow) * (size_t)cap);
        if (!nr) return 1;
        r->rows = nr, r->cap = cap;
    }
    r->rows[r->n++] = row;
    return 0;
}

/* Attention FLOPs (QK^T and PV, 2 * D each per visible (head, query, key) pair). */
static double attn_flops(int B, int L, int C) {
    double keys = (double)L * C - (double)L * (L - 1) / 2.0; /* causal, bottom-right aligned */
    return 4.0 * B * HQ * HD * keys;
}

/* Checks, times and records one variant of one shape. Returns nonzero on a hard failure. */
static int bench_one(bprob *p, const char *kind, const char *variant, const bopts *o, const pl_ceilings *ceil,
                     int check_rows, bresults *res) {
    char err[512];
    int B = p->a.batch, L = p->a.query_len, C = p->ctx[0];
    fprintf(stderr, "bench-attention: %s B=%d L=%d C=%d %s ...\n", kind, B, L, C, variant);
    memset(p->out, 0xff, p->qn * 2); /* NaN: every checked element must be written */
    double t0 = pl_now_seconds();
    int rc = run_variant(p, variant, err, sizeof err);
    double first = pl_now_seconds() - t0;
    if (rc != PL_OK) {
        fprintf(stderr, "pagellm: bench-attention: %s %s: %s\n", kind, variant, err);
        return 1;
    }
    int ok;
    double max_err = check_tail(p, check_rows, &ok);
    if (!ok) {
        fprintf(stderr, "pagellm: bench-attention: %s B=%d L=%d C=%d %s differs from REFERENCE (max abs err %g)\n", kind,
                B, L, C, variant, max_err);
        return 1;
    }
    int iters = o->iterations, warm = o->warmup;
    if (first * (warm + iters) > o->max_seconds) {
        warm = 0;
        iters = (int)(o->max_seconds / (first > 1e-9 ? first : 1e-9));
        if (iters < 1) iters = 1;
        if (iters > o->iterations) iters = o->iterations;
    }
    for (int i = 0; i < warm; i++) run_variant(p, variant, err, sizeof err);
    double *t = malloc(sizeof(double) * (size_t)iters);
    if (!t) return 1;
    for (int i = 0; i < iters; i++) {
        double s = pl_now_seconds();
        run_variant(p, variant, err, sizeof err);
        t[i] = pl_now_seconds() - s;
    }
    double med = iters == 1 && warm == 0 && o->warmup > 0 ? (t[0] < first ? t[0] : first) : pl_median(t, iters);
    free(t);
    double bytes = (double)B * HKV * C * HD * 2.0 * 2.0, flops = attn_flops(B, L, C);
    brow row = {kind, variant, B, L, C, med * 1e6, bytes / med * 1e-9, flops / med * 1e-9, 0, max_err};
    (void)ceil; /* ratios are set at the end, against the ceilings of the whole run */
    return push_row(res, row);
}

static void print_table(const bresults *r, const pl_ceilings *c) {
    printf("\n%-15s %5s %5s %6s  %-13s %11s %9s %10s %8s %9s\n", "kind", "batch", "L", "ctx", "variant", "median_us",
           "GB/s", "GFLOP/s", "ceiling", "max_err");
    for (int i = 0; i < r->n; i++) {
        const brow *w = &r->rows[i];
        printf("%-15s %5d %5d %6d  %-13s %11.1f %9.2f %10.2f %7.1f%% %9.5f\n", w->kind, w->batch, w->query_len, w->context,
               w->variant, w->median_us, w->gbps, w->gflops, 100.0 * w->ratio, w->max_err);
    }
    printf("ceiling (best of start and end of run): decode rows are K+V bytes over the read bandwidth (%.1f GB/s), "
           "prefill rows FLOPs over the f32 FMA rate (%.1f GFLOP/s; bf16 dot rate %.1f GFLOP/s), %d threads, kernels %s\n",
           c->read_gbps, c->fma_f32_gflops, c->bf16_dot_gflops, c->threads, pl_attn_simd_name(pl_attn_simd_detect()));
}

static void cpu_model(char *out, size_t len) {
    snprintf(out, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "model name", 10)) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ' || *c == '\t') c++;
                c[strcspn(c, "\n")] = 0;
                snprintf(out, len, "%s", c);
            }
            break;
        }
    }
    fclose(f);
}

static int write_json(const char *path, const bresults *r, const pl_ceilings *c, const bopts *o) {
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "pagellm: --json-output: cannot write '%s'\n", path);
        return 1;
    }
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    pl_json_writer w;
    pl_json_init(&w, f, 1);
    pl_json_begin_object(&w);
    pl_json_key(&w, "command"), pl_json_string(&w, "bench-attention");
    pl_json_key(&w, "device"), pl_json_string(&w, "cpu");
    pl_json_key(&w, "hardware");
    pl_json_begin_object(&w);
    pl_json_key(&w, "cpu"), pl_json_string(&w, cpu);
    pl_json_key(&w, "cores"), pl_json_int(&w, omp_get_num_procs());
    pl_json_key(&w, "gpu"), pl_json_null(&w);
    pl_json_end_object(&w);
    pl_json_key(&w, "ceilings");
    pl_json_begin_object(&w);
    pl_json_key(&w, "read_gbps"), pl_json_double(&w, c->read_gbps);
    pl_json_key(&w, "fma_f32_gflops"), pl_json_double(&w, c->fma_f32_gflops);
    pl_json_key(&w, "bf16_dot_gflops"), pl_json_double(&w, c->bf16_dot_gflops);
    pl_json_end_object(&w);
    pl_json_key(&w, "config");
    pl_json_begin_object(&w);
    pl_json_key(&w, "num_heads"), pl_json_int(&w, HQ);
    pl_json_key(&w, "num_kv_heads"), pl_json_int(&w, HKV);
    pl_json_key(&w, "head_dim"), pl_json_int(&w, HD);
    pl_json_key(&w, "dtype"), pl_json_string(&w, "bf16");
    pl_json_key(&w, "page_size"), pl_json_int(&w, o->page_size);
    pl_json_key(&w, "threads"), pl_json_int(&w, c->threads);
    pl_json_key(&w, "simd"), pl_json_string(&w, pl_attn_simd_name(pl_attn_simd_detect()));
    pl_json_key(&w, "warmup"), pl_json_int(&w, o->warmup);
    pl_json_key(&w, "iterations"), pl_json_int(&w, o->iterations);
    pl_json_key(&w, "max_seconds_per_row"), pl_json_double(&w, o->max_seconds);
    pl_json_key(&w, "chunk"), pl_json_int(&w, o->chunk);
    pl_json_key(&w, "prefill_len"), pl_json_int(&w, o->prefill_len);
    pl_json_key(&w, "causal"), pl_json_bool(&w, 1);
    pl_json_key(&w, "seed"), pl_json_int(&w, (int64_t)o->seed);
    pl_json_end_object(&w);
    pl_json_key(&w, "rows");
    pl_json_begin_array(&w);
    for (int i = 0; i < r->n; i++) {
        const brow *x = &r->rows[i];
        pl_json_begin_object(&w);
        pl_json_key(&w, "kind"), pl_json_string(&w, x->kind);
        pl_json_key(&w, "batch"), pl_json_int(&w, x->batch);
        pl_json_key(&w, "query_len"), pl_json_int(&w, x->query_len);
        pl_json_key(&w, "context"), pl_json_int(&w, x->context);
        pl_json_key(&w, "variant"), pl_json_string(&w, x->variant);
        pl_json_key(&w, "median_us"), pl_json_double(&w, x->median_us);
        pl_json_key(&w, "gbps"), pl_json_double(&w, x->gbps);
        pl_json_key(&w, "gflops"), pl_json_double(&w, x->gflops);
        pl_json_key(&w, "ratio_to_ceiling"), pl_json_double(&w, x->ratio);
        pl_json_key(&w, "max_abs_err"), pl_json_double(&w, x->max_err);
        pl_json_end_object(&w);
    }
    pl_json_end_array(&w);
    pl_json_end_object(&w);
    fputc('\n', f);
    if (fclose(f) != 0) {
        fprintf(stderr, "pagellm: --json-output: error writing '%s'\n", path);
        return 1;
    }
    return 0;
}

/* Runs the listed variants on one shape: REFERENCE first, then each variant. */
/* Whether comma list `list` names `name` exactly. */
static int list_has(const char *list, const char *name) {
    size_t n = strlen(name);
    for (const char *c = list; *c;) {
        const char *e = strchr(c, ',');
        size_t len = e ? (size_t)(e - c) : strlen(c);
        if (len == n && !strncmp(c, name, n)) return 1;
        if (!e) break;
        c = e + 1;
    }
    return 0;
}

static int bench_shape(const char *kind, int B, int L, int C, const char *const *variants, int nv, const bopts *o,
                       const pl_ceilings *ceil, bresults *res) {
    bprob p;
    if (prob_build(&p, B, L, C, o->page_size, o->seed, o->huge_pages)) {
        prob_free(&p);
        fprintf(stderr, "pagellm: bench-attention: out of memory for B=%d L=%d C=%d\n", B, L, C);
        return 1;
    }
    char err[512];
    int check_rows = L <= 8 ? L : 64;
    fprintf(stderr, "bench-attention: %s B=%d L=%d C=%d reference ...\n", kind, B, L, C);
    int rc = reference_tail(&p, check_rows, err, sizeof err);
    if (rc != PL_OK) fprintf(stderr, "pagellm: bench-attention: reference: %s\n", err);
    for (int i = 0; i < nv && rc == PL_OK; i++) {
        if (o->variants && !list_has(o->variants, variants[i])) continue;
        if (!strcmp(variants[i], "scalar") && attn_flops(B, L, C) * 1e-9 > o->scalar_max_gflop) continue;
        rc = bench_one(&p, kind, variants[i], o, ceil, check_rows, res);
    }
    prob_free(&p);
    return rc;
}

int pl_cmd_bench_attention(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (pl_cli_is(argv[i], "--device")) {
            const char *dev = argv[i][8] == '=' ? argv[i] + 9 : i + 1 < argc ? argv[i + 1] : "";
            if (!strcmp(dev, "cuda")) return pl_cmd_bench_attention_cuda(argc, argv);
            if (strcmp(dev, "cpu")) {
                fprintf(stderr, "pagellm: --device: expected cpu or cuda, got '%s'\n", dev);
                return 2;
            }
        }
    }
    bopts o = {0, 128, 2, 10, 2048, 128, 40, 0, 1, NULL, 3.0, 2.0, 0, NULL, NULL, NULL, 0, 0, 0, NULL};
    int32_t def_ctx[] = {128, 1024, 8192}, def_b[] = {1, 4}, def_cc[] = {1024, 4096, 8192};
    const char *v;
    int code = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            code = 0;
            goto done;
        } else if (pl_cli_is(argv[i], "--device")) {
            if (!pl_cli_value(argc, argv, &i, "--device")) goto done;
        } else if (pl_cli_is(argv[i], "--threads")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--threads")) || pl_cli_int("--threads", v, 0, 1024, &o.threads))
                goto done;
        } else if (pl_cli_is(argv[i], "--page-size")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--page-size")) ||
                pl_cli_int("--page-size", v, 1, 1 << 16, &o.page_size))
                goto done;
        } else if (pl_cli_is(argv[i], "--contexts")) {
            free(o.contexts);
            o.contexts = NULL;
            if (!(v = pl_cli_value(argc, argv, &i, "--contexts")) ||
                pl_cli_int_list("--contexts", v, &o.contexts, &o.ncontexts))
                goto done;
        } else if (pl_cli_is(argv[i], "--batches")) {
            free(o.batches);
            o.batches = NULL;
            if (!(v = pl_cli_value(argc, argv, &i, "--batches")) ||
                pl_cli_int_list("--batches", v, &o.batches, &o.nbatches))
                goto done;
        } else if (pl_cli_is(argv[i], "--chunk-contexts")) {
            free(o.chunk_contexts);
            o.chunk_contexts = NULL;
            if (!(v = pl_cli_value(argc, argv, &i, "--chunk-contexts")) ||
                pl_cli_int_list("--chunk-contexts", v, &o.chunk_contexts, &o.nchunk_contexts))
                goto done;
        } else if (pl_cli_is(argv[i], "--chunk")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--chunk")) || pl_cli_int("--chunk", v, 9, 1 << 16, &o.chunk))
                goto done;
        } else if (pl_cli_is(argv[i], "--prefill-len")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--prefill-len")) ||
                pl_cli_int("--prefill-len", v, 0, 1 << 17, &o.prefill_len))
                goto done;
        } else if (pl_cli_is(argv[i], "--warmup")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--warmup")) || pl_cli_int("--warmup", v, 0, 1000, &o.warmup))
                goto done;
        } else if (pl_cli_is(argv[i], "--iterations")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--iterations")) ||
                pl_cli_int("--iterations", v, 1, 100000, &o.iterations))
                goto done;
        } else if (pl_cli_is(argv[i], "--max-seconds")) {
            float s;
            if (!(v = pl_cli_value(argc, argv, &i, "--max-seconds")) || pl_cli_float("--max-seconds", v, 0.001, 3600, &s))
                goto done;
            o.max_seconds = s;
        } else if (pl_cli_is(argv[i], "--scalar-max-gflop")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--scalar-max-gflop")) ||
                pl_cli_int("--scalar-max-gflop", v, 0, 1 << 30, &o.scalar_max_gflop))
                goto done;
        } else if (pl_cli_is(argv[i], "--ceiling-seconds")) {
            float s;
            if (!(v = pl_cli_value(argc, argv, &i, "--ceiling-seconds")) ||
                pl_cli_float("--ceiling-seconds", v, 0.1, 600, &s))
                goto done;
            o.ceiling_seconds = s;
        } else if (pl_cli_is(argv[i], "--seed")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--seed")) || pl_cli_u64("--seed", v, &o.seed)) goto done;
        } else if (pl_cli_is(argv[i], "--only")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--only"))) goto done;
            if (!strcmp(v, "all")) o.only = 0;
            else if (!strcmp(v, "decode")) o.only = 1;
            else if (!strcmp(v, "prefill")) o.only = 2;
            else {
                fprintf(stderr, "pagellm: --only: expected all, decode or prefill, got '%s'\n", v);
                goto done;
            }
        } else if (pl_cli_is(argv[i], "--variants")) {
            if (!(o.variants = pl_cli_value(argc, argv, &i, "--variants"))) goto done;
            const char *known[] = {"dense+gather", "scalar", "decode", "flash", "auto"};
            for (const char *c = o.variants;;) {
                const char *e = strchr(c, ',');
                size_t len = e ? (size_t)(e - c) : strlen(c);
                int found = 0;
                for (int k = 0; k < 5; k++) found |= strlen(known[k]) == len && !strncmp(c, known[k], len);
                if (!found) {
                    fprintf(stderr, "pagellm: --variants: unknown variant '%.*s' in '%s' (known: dense+gather,scalar,decode,flash,auto)\n",
                            (int)len, c, o.variants);
                    goto done;
                }
                if (!e) break;
                c = e + 1;
            }
        } else if (pl_cli_is(argv[i], "--huge-pages")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--huge-pages"))) goto done;
            if (!strcmp(v, "on")) o.huge_pages = 1;
            else if (!strcmp(v, "off")) o.huge_pages = 0;
            else {
                fprintf(stderr, "pagellm: --huge-pages: expected on or off, got '%s'\n", v);
                goto done;
            }
        } else if (pl_cli_is(argv[i], "--json-output")) {
            if (!(o.json = pl_cli_value(argc, argv, &i, "--json-output"))) goto done;
        } else {
            fprintf(stderr, "pagellm: bench-attention: unknown flag '%s' (see --help)\n", argv[i]);
            goto done;
        }
    }
    for (int i = 0; i < o.ncontexts; i++)
        if (o.contexts[i] < 1) {
            fprintf(stderr, "pagellm: --contexts: %d must be positive\n", o.contexts[i]);
            goto done;
        }
    for (int i = 0; i < o.nbatches; i++)
        if (o.batches[i] < 1 || o.batches[i] > 64) {
            fprintf(stderr, "pagellm: --batches: %d is outside [1, 64]\n", o.batches[i]);
            goto done;
        }
    for (int i = 0; i < o.nchunk_contexts; i++)
        if (o.chunk_contexts[i] < o.chunk) {
            fprintf(stderr, "pagellm: --chunk-contexts: %d is shorter than the chunk %d\n", o.chunk_contexts[i], o.chunk);
            goto done;
        }
    const int32_t *ctxs = o.contexts ? o.contexts : def_ctx, *bs = o.batches ? o.batches : def_b;
    const int32_t *ccs = o.chunk_contexts ? o.chunk_contexts : def_cc;
    int nctx = o.contexts ? o.ncontexts : 3, nb = o.batches ? o.nbatches : 2, ncc = o.chunk_contexts ? o.nchunk_contexts : 3;
    if (o.threads > 0) omp_set_num_threads(o.threads);

    code = 1;
    pl_ceilings ceil;
    fprintf(stderr, "bench-attention: measuring ceilings ...\n");
    if (pl_measure_ceilings(o.threads, o.ceiling_seconds, &ceil) != PL_OK) {
        fprintf(stderr, "pagellm: bench-attention: cannot measure ceilings (out of memory)\n");
        goto done;
    }
    fprintf(stderr, "bench-attention: read %.1f GB/s, f32 FMA %.1f GFLOP/s, bf16 dot %.1f GFLOP/s, %d threads\n",
            ceil.read_gbps, ceil.fma_f32_gflops, ceil.bf16_dot_gflops, ceil.threads);
    bresults res = {0};
    const char *dec_vars[] = {"dense+gather", "scalar", "decode", "flash", "auto"};
    const char *pre_vars[] = {"dense+gather", "scalar", "flash", "auto"};
    int rc = 0;
    for (int bi = 0; bi < nb && !rc && o.only != 2; bi++)
        for (int ci = 0; ci < nctx && !rc; ci++)
            rc = bench_shape("decode", bs[bi], 1, ctxs[ci], dec_vars, 5, &o, &ceil, &res);
    for (int ci = 0; ci < ncc && !rc && o.only != 1; ci++)
        rc = bench_shape("prefill-chunk", 1, o.chunk, ccs[ci], pre_vars, 4, &o, &ceil, &res);
    if (!rc && o.prefill_len > 0 && o.only != 1)
        rc = bench_shape("prefill-static", 1, o.prefill_len, o.prefill_len, pre_vars, 4, &o, &ceil, &res);
    /* A shared machine's ceilings drift: measure again at the end and keep the higher
     * figure of each, so ratios are never flattered by a slow ceiling pass. */
    if (!rc) {
        pl_ceilings end;
        fprintf(stderr, "bench-attention: measuring ceilings again ...\n");
        if (pl_measure_ceilings(o.threads, o.ceiling_seconds, &end) == PL_OK) {
            fprintf(stderr, "bench-attention: end of run: read %.1f GB/s, f32 FMA %.1f GFLOP/s, bf16 dot %.1f GFLOP/s\n",
                    end.read_gbps, end.fma_f32_gflops, end.bf16_dot_gflops);
            if (end.read_gbps > ceil.read_gbps) ceil.read_gbps = end.read_gbps;
            if (end.fma_f32_gflops > ceil.fma_f32_gflops) ceil.fma_f32_gflops = end.fma_f32_gflops;
            if (end.bf16_dot_gflops > ceil.bf16_dot_gflops) ceil.bf16_dot_gflops = end.bf16_dot_gflops;
        }
    }
    for (int i = 0; i < res.n; i++) {
        brow *w = &res.rows[i];
        w->ratio = w->query_len <= 8 ? w->gbps / ceil.read_gbps : w->gflops / ceil.fma_f32_gflops;
    }
    print_table(&res, &ceil);
    if (!rc && o.json) rc = write_json(o.json, &res, &ceil, &o);
    free(res.rows);
    code = rc ? 1 : 0;
done:
    free(o.contexts), free(o.batches), free(o.chunk_contexts);
    return code;
}
