/* Autotuned cuBLASLt GEMM (see gemm_lt.h for the contract).
 *
 * Layout. cuBLAS is column-major; our row-major y[m, n] = x[m, k] w[n, k]^T is, read
 * column-major, y^T[n, m] = W^T[n, k] x^T[k, m], where the row-major w[n, k] buffer is the
 * column-major matrix [k, n] (ld k), taken transposed, and the row-major x[m, k] buffer is the
 * column-major matrix [k, m] (ld k), taken as is. So: TRANSA = T with A layout rows k, cols n,
 * ld k; TRANSB = N with B layout rows k, cols m, ld k; C = D layout rows n, cols m, ld n. That
 * is the backend's cublasGemmEx(OP_T, OP_N, n, m, k, w, k, x, k, y, n) call, argument for
 * argument, and the "TN" form Hopper's GEMM kernels prefer. Descriptors are initialized in
 * caller storage (the *Init functions), so no call allocates host memory either.
 *
 * Tuning times every candidate on the caller's buffers after flushing L2 (a read of twice the
 * L2 size), because in a decode step the weights come from HBM: timed back to back, a 31 MB
 * weight would sit in the H200's 60 MB L2 and reward the wrong algorithm. */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_lt.h"
#include "pagellm/status.h"

namespace {

constexpr int kWarmup = 2; /* untimed runs per candidate */
constexpr int kReps = 5;   /* timed runs per candidate: the median is kept */

struct lt_key {
    int m, n, k, y_f32;
    int aw, ax, ay; /* alignment of w, x, y in bytes (power of two, <= 256) */
};

struct lt_entry {
    lt_key key;
    unsigned long long last_use; /* 0: a free slot */
    int use_default;             /* run cublasGemmEx instead of algo */
    cublasLtMatmulAlgo_t algo;   /* the best Lt algorithm (valid when !use_default) */
    pl_cuda_lt_report rep;
};

/* Descriptors of one shape, in caller storage: initializing them allocates nothing. */
struct lt_layouts {
    cublasLtMatrixLayoutOpaque_t a, b, d;
};

bool key_eq(const lt_key &p, const lt_key &q) {
    return p.m == q.m && p.n == q.n && p.k == q.k && p.y_f32 == q.y_f32 && p.aw == q.aw && p.ax == q.ax && p.ay == q.ay;
}

/* Largest power of two <= 256 dividing the address (cuBLASLt's alignment preferences stop
 * at 256, its default assumption). */
int align_of(const void *p) {
    const uintptr_t u = (uintptr_t)p;
    int a = 256;
    while (a > 1 && (u & (uintptr_t)(a - 1))) a >>= 1;
    return a;
}

/* "[m x k] x [n x k]^T -> dtype" for messages. */
const char *shape_str(char *buf, size_t len, int m, int n, int k, int y_f32) {
    snprintf(buf, len, "[%d x %d] x [%d x %d]^T -> %s", m, k, n, k, y_f32 ? "f32" : "bf16");
    return buf;
}

int blas_fail(char *err, size_t err_len, int status, const lt_key &key, const char *what, cublasStatus_t st) {
    char s[96];
    return pl_fail(err, err_len, status, "pl_cuda_lt_gemm %s: %s: cuBLAS status %d (%s)",
                   shape_str(s, sizeof s, key.m, key.n, key.k, key.y_f32), what, (int)st, cublasGetStatusString(st));
}

int cuda_fail(char *err, size_t err_len, const lt_key &key, const char *what, cudaError_t e) {
    (void)cudaGetLastError(); /* clear a non-sticky error */
    char s[96];
    return pl_fail(err, err_len, PL_ERR_CUDA, "pl_cuda_lt_gemm %s: %s: %s", shape_str(s, sizeof s, key.m, key.n, key.k, key.y_f32),
                   what, cudaGetErrorString(e));
}

/* Reads every 16-byte word of p and never writes (the buffer is zero, the XOR never matches
 * the magic): afterwards L2 holds clean lines of p and none of the GEMM operands. */
__global__ void l2_flush_kernel(const uint4 *__restrict__ p, size_t n, unsigned *sink) {
    uint4 acc = make_uint4(0, 0, 0, 0);
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const uint4 v = p[i];
        acc.x ^= v.x, acc.y ^= v.y, acc.z ^= v.z, acc.w ^= v.w;
    }
    if (acc.x == 0x9e3779b9u && acc.y == 0x7f4a7c15u && acc.z == 0x85ebca6bu && acc.w == 0xc2b2ae35u) *sink = acc.x;
}

int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

} // namespace

struct pl_cuda_lt {
    int device;
    cublasLtHandle_t lt;
    cublasHandle_t blas;
    cudaStream_t blas_stream; /* the stream last given to blas (valid when blas_stream_set) */
    int blas_stream_set;
    void *ws; /* workspace of cublasLtMatmul and (through cublasSetWorkspace) of cublasGemmEx */
    size_t ws_bytes;
    cublasLtMatmulDescOpaque_t desc; /* compute 32F, scale 32F, TRANSA = T, TRANSB = N */
    cudaEvent_t e0, e1;
    size_t l2_bytes;
    unsigned long long clock; /* LRU stamps */
    lt_entry *cache;          /* [PL_CUDA_LT_MAX_KEYS] */
};

namespace {

cublasStatus_t init_layouts(lt_layouts *L, const lt_key &key) {
    /* see the file comment: A = w as column-major [k, n], B = x as [k, m], D = y^T as [n, m] */
    cublasStatus_t st = cublasLtMatrixLayoutInit(&L->a, CUDA_R_16BF, (uint64_t)key.k, (uint64_t)key.n, (int64_t)key.k);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatrixLayoutInit(&L->b, CUDA_R_16BF, (uint64_t)key.k, (uint64_t)key.m, (int64_t)key.k);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatrixLayoutInit(&L->d, key.y_f32 ? CUDA_R_32F : CUDA_R_16BF, (uint64_t)key.n, (uint64_t)key.m,
                                      (int64_t)key.n);
    return st;
}

/* Heuristic candidates for the key (workspace and alignments as preferences). A shape cuBLASLt
 * has no heuristic for (NOT_SUPPORTED) yields zero candidates, not an error. */
cublasStatus_t heuristic(pl_cuda_lt *lt, lt_layouts *L, const lt_key &key, int want, cublasLtMatmulHeuristicResult_t *res,
                         int *got) {
    *got = 0;
    cublasLtMatmulPreferenceOpaque_t pref;
    cublasStatus_t st = cublasLtMatmulPreferenceInit(&pref);
    const uint64_t wsb = lt->ws_bytes;
    const uint32_t aa = (uint32_t)key.aw, ab = (uint32_t)key.ax, ac = (uint32_t)key.ay;
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulPreferenceSetAttribute(&pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulPreferenceSetAttribute(&pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &aa, sizeof aa);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulPreferenceSetAttribute(&pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &ab, sizeof ab);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulPreferenceSetAttribute(&pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &ac, sizeof ac);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulPreferenceSetAttribute(&pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &ac, sizeof ac);
    if (st != CUBLAS_STATUS_SUCCESS) return st;
    st = cublasLtMatmulAlgoGetHeuristic(lt->lt, &lt->desc, &L->a, &L->b, &L->d, &L->d, &pref, want, res, got);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED) {
        *got = 0;
        return CUBLAS_STATUS_SUCCESS;
    }
    if (st != CUBLAS_STATUS_SUCCESS) *got = 0;
    return st;
}

cublasStatus_t run_lt(pl_cuda_lt *lt, lt_layouts *L, const cublasLtMatmulAlgo_t *algo, const void *w, const void *x, void *y,
                      cudaStream_t s) {
    const float alpha = 1.f, beta = 0.f;
    return cublasLtMatmul(lt->lt, &lt->desc, &alpha, w, &L->a, x, &L->b, &beta, y, &L->d, y, &L->d, algo, lt->ws, lt->ws_bytes, s);
}

/* The backend's call. cublasSetStream resets the handle's workspace to cuBLAS's own pool, so
 * ours is set again after it: then cublasGemmEx never allocates (capture-safe). */
cublasStatus_t run_default(pl_cuda_lt *lt, const lt_key &key, const void *w, const void *x, void *y, cudaStream_t s) {
    if (!lt->blas_stream_set || lt->blas_stream != s) {
        cublasStatus_t st = cublasSetStream(lt->blas, s);
        if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetWorkspace(lt->blas, lt->ws, lt->ws_bytes);
        if (st != CUBLAS_STATUS_SUCCESS) {
            lt->blas_stream_set = 0;
            return st;
        }
        lt->blas_stream = s;
        lt->blas_stream_set = 1;
    }
    const float alpha = 1.f, beta = 0.f;
    return cublasGemmEx(lt->blas, CUBLAS_OP_T, CUBLAS_OP_N, key.n, key.m, key.k, &alpha, w, CUDA_R_16BF, key.k, x, CUDA_R_16BF,
                        key.k, &beta, y, key.y_f32 ? CUDA_R_32F : CUDA_R_16BF, key.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

/* Median time of one algorithm (algo NULL: the cublasGemmEx default). Returns 0 with *us set;
 * 1 when the algorithm itself refused (status in *bst; the candidate is skipped); or a
 * PL_ERR_CUDA status (message in err) when CUDA failed, which ends the tuning. */
int time_algo(pl_cuda_lt *lt, lt_layouts *L, const lt_key &key, const cublasLtMatmulAlgo_t *algo, const void *w, const void *x,
              void *y, cudaStream_t s, const void *flush, size_t flush_bytes, double *us, cublasStatus_t *bst, char *err,
              size_t err_len) {
    double t[kReps];
    for (int i = 0; i < kWarmup + kReps; i++) {
        if (flush) {
            const size_t n16 = flush_bytes / 16;
            l2_flush_kernel<<<1024, 256, 0, s>>>((const uint4 *)flush, n16, (unsigned *)const_cast<void *>(flush));
            cudaError_t e = cudaGetLastError();
            if (e != cudaSuccess) return cuda_fail(err, err_len, key, "L2 flush launch", e);
        }
        cudaError_t e = cudaEventRecord(lt->e0, s);
        if (e != cudaSuccess) return cuda_fail(err, err_len, key, "cudaEventRecord", e);
        const cublasStatus_t st = algo ? run_lt(lt, L, algo, w, x, y, s) : run_default(lt, key, w, x, y, s);
        if (st != CUBLAS_STATUS_SUCCESS) {
            (void)cudaGetLastError();
            /* let the stream drain so the next candidate starts clean; an error here is CUDA's */
            if ((e = cudaStreamSynchronize(s)) != cudaSuccess) return cuda_fail(err, err_len, key, "cudaStreamSynchronize", e);
            *bst = st;
            return 1;
        }
        float ms = 0.f;
        if ((e = cudaEventRecord(lt->e1, s)) != cudaSuccess) return cuda_fail(err, err_len, key, "cudaEventRecord", e);
        if ((e = cudaEventSynchronize(lt->e1)) != cudaSuccess)
            return cuda_fail(err, err_len, key, algo ? "cublasLtMatmul (timed run)" : "cublasGemmEx (timed run)", e);
        if ((e = cudaEventElapsedTime(&ms, lt->e0, lt->e1)) != cudaSuccess)
            return cuda_fail(err, err_len, key, "cudaEventElapsedTime", e);
        if (i >= kWarmup) t[i - kWarmup] = (double)ms * 1e3;
    }
    qsort(t, kReps, sizeof t[0], cmp_double);
    *us = t[kReps / 2];
    return 0;
}

template <typename T>
int algo_attr(const cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
    T v = 0;
    size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(algo, attr, &v, sizeof v, &written) != CUBLAS_STATUS_SUCCESS) return -1;
    return (int)v;
}

void describe(pl_cuda_lt_report *r, const cublasLtMatmulAlgo_t *a) {
    r->algo_id = algo_attr<int32_t>(a, CUBLASLT_ALGO_CONFIG_ID);
    r->tile_id = algo_attr<uint32_t>(a, CUBLASLT_ALGO_CONFIG_TILE_ID);
    r->splitk_num = algo_attr<int32_t>(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM);
    r->reduction_scheme = algo_attr<uint32_t>(a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME);
    r->swizzle = algo_attr<uint32_t>(a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING);
    r->custom_option = algo_attr<uint32_t>(a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION);
    r->stages_id = algo_attr<uint32_t>(a, CUBLASLT_ALGO_CONFIG_STAGES_ID);
    r->cluster_shape_id = algo_attr<uint16_t>(a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID);
}

lt_entry *find(const pl_cuda_lt *lt, const lt_key &key) {
    for (int i = 0; i < PL_CUDA_LT_MAX_KEYS; i++)
        if (lt->cache[i].last_use && key_eq(lt->cache[i].key, key)) return &lt->cache[i];
    return nullptr;
}

/* The most recently used entry of a shape at any alignment (for the queries). */
const lt_entry *find_shape(const pl_cuda_lt *lt, int m, int n, int k, int y_f32) {
    const lt_entry *best = nullptr;
    for (int i = 0; i < PL_CUDA_LT_MAX_KEYS; i++) {
        const lt_entry *e = &lt->cache[i];
        if (e->last_use && e->key.m == m && e->key.n == n && e->key.k == k && e->key.y_f32 == (y_f32 != 0) &&
            (!best || e->last_use > best->last_use))
            best = e;
    }
    return best;
}

/* A free slot, else the least recently used one (its key is forgotten). */
lt_entry *slot_for_insert(pl_cuda_lt *lt) {
    lt_entry *victim = &lt->cache[0];
    for (int i = 0; i < PL_CUDA_LT_MAX_KEYS; i++) {
        if (!lt->cache[i].last_use) return &lt->cache[i];
        if (lt->cache[i].last_use < victim->last_use) victim = &lt->cache[i];
    }
    return victim;
}

int run_entry(pl_cuda_lt *lt, lt_layouts *L, const lt_entry *e, const void *w, const void *x, void *y, cudaStream_t s, char *err,
              size_t err_len) {
    const cublasStatus_t st = e->use_default ? run_default(lt, e->key, w, x, y, s) : run_lt(lt, L, &e->algo, w, x, y, s);
    if (st == CUBLAS_STATUS_SUCCESS) return PL_OK;
    char what[64];
    if (e->use_default) snprintf(what, sizeof what, "cublasGemmEx (cached: default)");
    else snprintf(what, sizeof what, "cublasLtMatmul (cached algo id %d, tile %d)", e->rep.algo_id, e->rep.tile_id);
    return blas_fail(err, err_len, PL_ERR_CUDA, e->key, what, st);
}

/* Times the heuristic's candidates and the default, caches the fastest, leaves its result in y. */
int tune(pl_cuda_lt *lt, lt_layouts *L, const lt_key &key, const void *w, const void *x, void *y, cudaStream_t s, char *err,
         size_t err_len) {
    int dev = -1;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) return cuda_fail(err, err_len, key, "cudaGetDevice", e);
    if (dev != lt->device) {
        char sh[96];
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_cuda_lt_gemm %s: current device %d, but the handle was made on device %d",
                       shape_str(sh, sizeof sh, key.m, key.n, key.k, key.y_f32), dev, lt->device);
    }
    cublasLtMatmulHeuristicResult_t res[PL_CUDA_LT_MAX_CANDIDATES];
    int nres = 0;
    cublasStatus_t st = heuristic(lt, L, key, PL_CUDA_LT_MAX_CANDIDATES, res, &nres);
    if (st != CUBLAS_STATUS_SUCCESS) return blas_fail(err, err_len, PL_ERR_CUDA, key, "cublasLtMatmulAlgoGetHeuristic", st);

    /* L2 flush buffer, only for the tuning; without memory for it the timings run warm */
    void *flush = nullptr;
    size_t flush_bytes = lt->l2_bytes ? (2 * lt->l2_bytes + 15) / 16 * 16 : 0;
    if (flush_bytes) {
        if (cudaMalloc(&flush, flush_bytes) != cudaSuccess) {
            (void)cudaGetLastError();
            flush = nullptr;
        } else if ((e = cudaMemsetAsync(flush, 0, flush_bytes, s)) != cudaSuccess) {
            cudaFree(flush);
            return cuda_fail(err, err_len, key, "cudaMemsetAsync (L2 flush buffer)", e);
        }
    }

    pl_cuda_lt_report rep;
    memset(&rep, 0, sizeof rep);
    rep.candidates = nres;
    rep.cold_l2 = flush != nullptr;
    rep.default_us = rep.best_lt_us = rep.heuristic_us = rep.chosen_us = -1.0;
    rep.algo_id = rep.tile_id = rep.splitk_num = rep.reduction_scheme = rep.stages_id = rep.swizzle = rep.custom_option =
        rep.cluster_shape_id = -1;
    rep.align_w = key.aw, rep.align_x = key.ax, rep.align_y = key.ay;
    int best = -1, rc = PL_OK;
    cublasStatus_t last_refusal = CUBLAS_STATUS_SUCCESS, default_refusal = CUBLAS_STATUS_SUCCESS;
    for (int i = 0; i < nres && rc == PL_OK; i++) {
        if (res[i].state != CUBLAS_STATUS_SUCCESS || res[i].workspaceSize > lt->ws_bytes) continue;
        double us = 0;
        cublasStatus_t bst = CUBLAS_STATUS_SUCCESS;
        const int r = time_algo(lt, L, key, &res[i].algo, w, x, y, s, flush, flush_bytes, &us, &bst, err, err_len);
        if (r == 1) {
            last_refusal = bst;
            continue;
        }
        if (r != 0) {
            rc = r;
            break;
        }
        rep.timed++;
        if (i == 0) rep.heuristic_us = us;
        if (best < 0 || us < rep.best_lt_us) best = i, rep.best_lt_us = us;
    }
    if (rc == PL_OK) {
        double us = 0;
        cublasStatus_t bst = CUBLAS_STATUS_SUCCESS;
        const int r = time_algo(lt, L, key, nullptr, w, x, y, s, flush, flush_bytes, &us, &bst, err, err_len);
        if (r == 0) rep.default_us = us;
        else if (r == 1) default_refusal = bst;
        else rc = r;
    }
    if (flush) {
        e = cudaFree(flush); /* synchronizes: the flush buffer is no longer read */
        if (e != cudaSuccess && rc == PL_OK) rc = cuda_fail(err, err_len, key, "cudaFree (L2 flush buffer)", e);
    }
    if (rc != PL_OK) return rc;
    if (best < 0 && rep.default_us < 0) {
        char sh[96];
        return pl_fail(err, err_len, PL_ERR_UNSUPPORTED,
                       "pl_cuda_lt_gemm %s: no algorithm ran: %d heuristic candidates (last refusal: %s), cublasGemmEx: %s",
                       shape_str(sh, sizeof sh, key.m, key.n, key.k, key.y_f32), nres,
                       last_refusal == CUBLAS_STATUS_SUCCESS ? "none" : cublasGetStatusString(last_refusal),
                       cublasGetStatusString(default_refusal));
    }
    lt_entry *ent = slot_for_insert(lt);
    memset(ent, 0, sizeof *ent);
    ent->key = key;
    if (best >= 0) {
        ent->algo = res[best].algo;
        rep.workspace_bytes = res[best].workspaceSize;
        describe(&rep, &res[best].algo);
    }
    ent->use_default = best < 0 || (rep.default_us >= 0 && rep.default_us < rep.best_lt_us);
    rep.use_default = ent->use_default;
    rep.chosen_us = ent->use_default ? rep.default_us : rep.best_lt_us;
    ent->rep = rep;
    ent->last_use = ++lt->clock;
    /* leave the winner's result in y: later calls then return the same bits as this one */
    return run_entry(lt, L, ent, w, x, y, s, err, err_len);
}

bool overlaps(const void *a, size_t na, const void *b, size_t nb) {
    const uintptr_t p = (uintptr_t)a, q = (uintptr_t)b;
    return p < q + nb && q < p + na;
}

} // namespace

extern "C" int pl_cuda_lt_create(pl_cuda_lt **out, size_t workspace_bytes, char *err, size_t err_len) {
    if (!out) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_cuda_lt_create: out is NULL");
    *out = nullptr;
    if (workspace_bytes == 0) workspace_bytes = PL_CUDA_LT_DEFAULT_WORKSPACE;
    pl_cuda_lt *lt = (pl_cuda_lt *)calloc(1, sizeof *lt);
    lt_entry *cache = (lt_entry *)calloc(PL_CUDA_LT_MAX_KEYS, sizeof *cache);
    if (!lt || !cache) {
        free(lt), free(cache);
        return pl_fail(err, err_len, PL_ERR_NOMEM, "pl_cuda_lt_create: %zu bytes of host memory",
                       sizeof *lt + PL_CUDA_LT_MAX_KEYS * sizeof *cache);
    }
    lt->cache = cache;
    int rc = PL_OK;
    cudaError_t e;
    cublasStatus_t st;
    int l2 = 0;
    if ((e = cudaGetDevice(&lt->device)) != cudaSuccess)
        rc = pl_fail(err, err_len, PL_ERR_CUDA, "pl_cuda_lt_create: cudaGetDevice: %s", cudaGetErrorString(e));
    else if ((st = cublasLtCreate(&lt->lt)) != CUBLAS_STATUS_SUCCESS)
        rc = pl_fail(err, err_len, PL_ERR_CUDA, "pl_cuda_lt_create: cublasLtCreate: status %d (%s)", (int)st, cublasGetStatusString(st));
    else if ((st = cublasCreate(&lt->blas)) != CUBLAS_STATUS_SUCCESS)
        rc = pl_fail(err, err_len, PL_ERR_CUDA, "pl_cuda_lt_create: cublasCreate: status %d (%s)", (int)st, cublasGetStatusString(st));
    else if ((e = cudaMalloc(&lt->ws, workspace_bytes)) != cudaSuccess)
        rc = pl_fail(err, err_len, e == cudaErrorMemoryAllocation ? PL_ERR_NOMEM : PL_ERR_CUDA,
                     "pl_cuda_lt_create: cudaMalloc of a %zu-byte workspace: %s", workspace_bytes, cudaGetErrorString(e));
    else if ((e = cudaEventCreate(&lt->e0)) != cudaSuccess || (e = cudaEventCreate(&lt->e1)) != cudaSuccess)
        rc = pl_fail(err, err_len, PL_ERR_CUDA, "pl_cuda_lt_create: cudaEventCreate: %s", cudaGetErrorString(e));
    else if ((e = cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, lt->device)) != cudaSuccess)
        rc = pl_fail(err, err_len, PL_ERR_CUDA, "pl_cuda_lt_create: L2 size: %s", cudaGetErrorString(e));
    if (rc == PL_OK) {
        lt->ws_bytes = workspace_bytes;
        lt->l2_bytes = l2 > 0 ? (size_t)l2 : 0;
        const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
        st = cublasLtMatmulDescInit(&lt->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
        if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatmulDescSetAttribute(&lt->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
        if (st == CUBLAS_STATUS_SUCCESS) st = cublasLtMatmulDescSetAttribute(&lt->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
        if (st != CUBLAS_STATUS_SUCCESS)
            rc = pl_fail(err, err_len, PL_ERR_CUDA, "pl_cuda_lt_create: matmul descriptor (compute 32F, scale 32F, T/N): status %d (%s)",
                         (int)st, cublasGetStatusString(st));
    }
    if (rc != PL_OK) {
        (void)cudaGetLastError();
        pl_cuda_lt_destroy(lt);
        return rc;
    }
    *out = lt;
    return PL_OK;
}

extern "C" void pl_cuda_lt_destroy(pl_cuda_lt *lt) {
    if (!lt) return;
    if (lt->e1) cudaEventDestroy(lt->e1);
    if (lt->e0) cudaEventDestroy(lt->e0);
    if (lt->blas) cublasDestroy(lt->blas);
    if (lt->lt) cublasLtDestroy(lt->lt);
    if (lt->ws) cudaFree(lt->ws); /* after the handles: they may still reference it */
    (void)cudaGetLastError();
    free(lt->cache);
    free(lt);
}

extern "C" int pl_cuda_lt_gemm(pl_cuda_lt *lt, const void *w, const void *x, int m, int n, int k, void *y, int y_f32,
                               int may_tune, void *stream, char *err, size_t err_len) {
    y_f32 = y_f32 != 0;
    if (!lt) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_cuda_lt_gemm: lt is NULL");
    if (m < 1 || n < 1 || k < 1)
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_cuda_lt_gemm: m %d, n %d, k %d must all be >= 1", m, n, k);
    char sh[96];
    shape_str(sh, sizeof sh, m, n, k, y_f32);
    if (!w || !x || !y)
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_cuda_lt_gemm %s: %s is NULL", sh, !w ? "w" : !x ? "x" : "y");
    const int aw = align_of(w), ax = align_of(x), ay = align_of(y);
    if (aw < 2 || ax < 2 || ay < (y_f32 ? 4 : 2))
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_cuda_lt_gemm %s: w %p, x %p, y %p not aligned to their element size", sh, w, x,
                       (void *)y);
    const size_t wb = (size_t)n * (size_t)k * 2, xb = (size_t)m * (size_t)k * 2, yb = (size_t)m * (size_t)n * (y_f32 ? 4 : 2);
    if (overlaps(y, yb, w, wb) || overlaps(y, yb, x, xb))
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_cuda_lt_gemm %s: y (%p, %zu bytes) overlaps %s", sh, (void *)y, yb,
                       overlaps(y, yb, w, wb) ? "w" : "x");
    const lt_key key = {m, n, k, y_f32, aw, ax, ay};
    const cudaStream_t s = (cudaStream_t)stream;
    lt_layouts L;
    const cublasStatus_t st = init_layouts(&L, key);
    if (st != CUBLAS_STATUS_SUCCESS) return blas_fail(err, err_len, PL_ERR_CUDA, key, "cublasLtMatrixLayoutInit", st);

    /* cached: no allocation, no synchronization (graph-capture safe) */
    if (lt_entry *e = find(lt, key)) {
        e->last_use = ++lt->clock;
        return run_entry(lt, &L, e, w, x, y, s, err, err_len);
    }
    if (may_tune) {
        /* a capturing stream cannot be synchronized: never tune there */
        cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
        if (cudaStreamIsCapturing(s, &cs) != cudaSuccess) {
            (void)cudaGetLastError();
            cs = cudaStreamCaptureStatusActive; /* unknown: assume the worst */
        }
        if (cs == cudaStreamCaptureStatusNone) return tune(lt, &L, key, w, x, y, s, err, err_len);
    }
    /* untuned: the heuristic's first choice (or the default), nothing cached */
    cublasLtMatmulHeuristicResult_t res;
    int nres = 0;
    cublasStatus_t hs = heuristic(lt, &L, key, 1, &res, &nres);
    if (hs != CUBLAS_STATUS_SUCCESS) return blas_fail(err, err_len, PL_ERR_CUDA, key, "cublasLtMatmulAlgoGetHeuristic", hs);
    cublasStatus_t rs = CUBLAS_STATUS_NOT_SUPPORTED;
    if (nres >= 1 && res.state == CUBLAS_STATUS_SUCCESS && res.workspaceSize <= lt->ws_bytes) {
        rs = run_lt(lt, &L, &res.algo, w, x, y, s);
        if (rs == CUBLAS_STATUS_SUCCESS) return PL_OK;
    }
    const cublasStatus_t ds = run_default(lt, key, w, x, y, s);
    if (ds == CUBLAS_STATUS_SUCCESS) return PL_OK;
    return pl_fail(err, err_len, PL_ERR_CUDA, "pl_cuda_lt_gemm %s: untuned: cublasLtMatmul: %s (%d candidates); cublasGemmEx: status %d (%s)",
                   sh, nres ? cublasGetStatusString(rs) : "no candidate", nres, (int)ds, cublasGetStatusString(ds));
}

extern "C" int pl_cuda_lt_cached(const pl_cuda_lt *lt, int m, int n, int k, int y_f32) {
    return lt && find_shape(lt, m, n, k, y_f32) != nullptr;
}

extern "C" int pl_cuda_lt_report_get(const pl_cuda_lt *lt, int m, int n, int k, int y_f32, pl_cuda_lt_report *out) {
    if (!out) return 0;
    memset(out, 0, sizeof *out);
    const lt_entry *e = lt ? find_shape(lt, m, n, k, y_f32) : nullptr;
    if (!e) return 0;
    *out = e->rep;
    return 1;
}
