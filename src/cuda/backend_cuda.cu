/* The CUDA backend: the forward pass's op table on one GPU, device page-pool storage, the
 * KV budget helper and device sampling. See backend_cuda.h for the contract.
 *
 * Layouts match the CPU backend's logical layouts: activations row-major in the act dtype,
 * matrices [rows = outputs, cols] row-major in the act dtype (y = x W^T is one cuBLAS GEMM
 * with W transposed in column-major terms), vectors f32. Host arrays an op receives (token
 * ids, positions) go through pinned staging slots, so uploads stay asynchronous. */
#include <cooperative_groups.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <new>

extern "C" {
#include "base/timing.h"
#include "model/model_internal.h"
}
#include "cuda/backend_cuda.h"
#include "cuda/elem.cuh"
#include "cuda/gemv_cuda.h"
#include "cuda/mlp_cuda.h"
#include "cuda/ptx.cuh"
#include "cuda/diag_stamps.cuh"
#include "pagellm/cuda.h"

namespace {

enum { SLOT_TOKENS = 0, SLOT_ROPE, SLOT_SAMPLE, SLOT_META, SLOT_ATTN, NUM_SLOTS };

struct stage_slot {
    void *host = nullptr; /* pinned arena */
    void *dev = nullptr;  /* its device twin */
    size_t cap = 0, head = 0;
    size_t last = 0;                             /* the last upload's bytes (0: none) */
    void *last_host = nullptr, *last_dev = nullptr; /* and where they are (this arena or the step arena) */
};

struct alloc_rec {
    void *p;
    size_t bytes;
};

/* the record among n whose bytes hold address a, or NULL */
const alloc_rec *rec_holding(const alloc_rec *recs, int n, const void *a) {
    const char *c = static_cast<const char *>(a);
    for (int i = 0; i < n; i++)
        if (c >= static_cast<const char *>(recs[i].p) && c < static_cast<const char *>(recs[i].p) + recs[i].bytes) return &recs[i];
    return nullptr;
}

/* K/V appends not yet launched: consecutive chunks (rows of one activation buffer, one pool)
 * go out as one pl_kv_append_cuda launch (or with a pending rope, rope_pending) before the
 * next op that may read them. */
struct kv_pending {
    int n = 0, cap = 0;
    int32_t *meta = nullptr; /* [2 * cap]: page ids at [0, n), slots at [cap, cap + n) */
    int32_t *comb = nullptr; /* [2 * cap]: ids then slots, contiguous, for the upload */
    pl_dtype dt = PL_BF16;
    int heads = 0, hd = 0, ps = 0, cap_pages = 0;
    const char *k = nullptr, *v = nullptr;
    size_t stride = 0, es = 2;
    void *kp = nullptr, *vp = nullptr;
};

/* A tile GEMM of 2-16 rows whose K splits the kernel would add in each tile's last CTA,
 * held until the next op: when that op is the residual add + RMSNorm of its output, the GEMM
 * leaves its partials and the norm kernel adds them (op_add_rmsnorm), which takes the split
 * tail (a fence, a count and the partials' loads, 2-3 us on every o and down projection at
 * batch 4) off the critical path; any other op launches it as it was (flush_pending). Past 56
 * rows (wide) the norm's partials come from the wide kernel (pl_cuda_wide_bf16: one CTA per SM,
 * where the tile GEMM's CTAs land two per SM on half of them), as the o projection's at batch 64. */
struct mm_pending {
    const void *w, *x;
    void *y;
    int rows, N, K, on;
    int wide;                /* past 56 rows: the partials come from pl_cuda_wide_bf16 (plan) instead */
    pl_cuda_mlp_plan plan;
};

/* A decode batch's MLP held for the fused kernel (src/cuda/mlp.cu): stage 1, the gate/up GEMM
 * (op_matmul); stage 2, and the SwiGLU after it (op_swiglu). The down GEMM of h then launches
 * the one kernel instead; anything else launches what is held as it was (flush_pending). */
struct mlp_pending {
    int stage;
    const void *w, *x; /* the gate/up weight's device data, its x */
    void *gu, *h;      /* the GEMM's output, the SwiGLU's */
    int rows, N, K;    /* gate/up: [N = 2 inter, K = hidden] */
    pl_cuda_mlp_plan plan;
};
/* The fused MLP's down partials (pl_cuda_mlp_bf16), for the add + RMSNorm after it to add
 * (else flush_pending adds them into y). */
struct mlp_parts {
    int on;
    void *y; /* where the down GEMM's bf16 output belongs */
    int rows, N, splits;
};

/* A q/k norm + RoPE with q_out (the paged path) not yet launched: the K/V appends that follow
 * it usually copy exactly its k and v columns, and then one kernel does both (flush_pending). */
struct rope_pending {
    int on = 0;
    void *qkv = nullptr, *q_out = nullptr;
    int rows = 0, nq = 0, nkv = 0, hd = 0;
    size_t stride = 0;
    const float *wq = nullptr, *wk = nullptr, *cs = nullptr;
    float eps = 0.f;
};

/* One captured decode step: found by the forward pass's key, valid while every op of a
 * step hashes to the same signature (pointers, sizes, upload offsets). It is captured in
 * segments cut at some of the forward pass's graph_cut calls (layer ends), each launched as
 * soon as its ops have been walked, so the device starts after the first segment's host
 * walk instead of the whole step's; seg_sig[i]: the signature at the end of segment i. */
#define PL_MAX_GRAPHS 64
#define PL_MAX_SEGS 8
#define PL_GRAPH_VARIANTS 8 /* captured variants kept per key */
#define PL_CUDA_MAX_KV_RECS 256 /* page-pool allocations tracked (a pool per layer and K/V; more are not read early) */
struct graph_entry {
    uint64_t key = 0, sig = 0;
    cudaGraphExec_t exec[PL_MAX_SEGS] = {};
    uint64_t seg_sig[PL_MAX_SEGS] = {};
    int cut_at[PL_MAX_SEGS] = {}; /* graph_cut call index ending segment i (i < nseg - 1) */
    int nseg = 0, ncuts = 0;      /* segments captured; graph_cut calls of a step (seen eagerly) */
    int seen = 0;
    uint64_t want_sig = 0; /* a variant not yet captured: the first-segment signature it waits for */
    unsigned long long last_use = 0;
};
enum { G_NONE = 0, G_WARMUP, G_CAPTURE, G_REPLAY };

struct cuda_weight {
    int rows, cols, is_matrix;
    pl_dtype dtype;
    void *d;
    size_t bytes;
};

} // namespace

struct pl_cuda_backend {
    pl_dtype act;
    int device;
    cudaStream_t stream;
    cublasHandle_t blas;
    char last_err[512];
    size_t live_bytes;
    int fail_after;
    alloc_rec *recs;
    int num_recs, cap_recs;
    stage_slot slots[NUM_SLOTS];
    /* A graphed step's uploads (step_uploads 0, AUTO): every slot's, one after another in one
     * arena, sent by one copy on the stream before each segment's launch (stage_send) rather
     * than as copy nodes inside the graph; step_sent: bytes of it sent this step; step_cur,
     * step_need: bytes this bracketed step's uploads took, the most any took (the arena's size) */
    stage_slot step_arena;
    size_t step_sent, step_cur, step_need;
    int step_uploads; /* 0 AUTO: the step arena; 1 each slot's arena, copy nodes in the graphs */
    void *scratch; /* matmul into host memory, sampling probabilities */
    size_t scratch_bytes;
    void *attn_ws; /* split partials of the attention kernels */
    size_t attn_ws_bytes;
    /* greedy sampling without copies: argmax keys kept on the device (zero between calls: the
     * finish kernel clears what it read) and token ids written straight into mapped pinned
     * host memory */
    unsigned long long *argmax_keys;
    int32_t *argmax_tokens, *argmax_tokens_dev; /* mapped pinned host memory, and its device address */
    int argmax_rows, argmax_dirty;
    alloc_rec kv_recs[PL_CUDA_MAX_KV_RECS]; /* page-pool storage (kv_alloc), for attn_early */
    int num_kv_recs;
    pl_kv_storage_ops kv_ops;
    kv_pending pend;
    rope_pending rope;
    mm_pending mm;
    mlp_pending mlp;
    mlp_parts mlpp;
    int mlp_mode; /* the fused MLP: 0 AUTO (PL_CUDA_MLP_MIN_ROWS..64 rows), 1 never, 2 from 1 row */
    int mlp_plain; /* a benchmark knob: its launch without the cooperative guarantee (pl_cuda_backend_mlp_plain) */
    int mlp_ok;   /* its wgmma build runs on this device (probed at create) */
    float *mlp_part; /* its down partials (64 rows of its largest plan) and counters */
    size_t mlp_part_bytes;
    int *mlp_cnt;
    long mlp_runs; /* fused MLP launches (pl_cuda_backend_mlp_runs) */
    int wide_mode; /* a projection before an add + RMSNorm as pl_cuda_wide_bf16: 0 AUTO, 1 never, 2 from 1 row */
    long wide_runs; /* its launches (pl_cuda_backend_wide_runs) */
    int mlp_pre;    /* the fused MLP's weight stages before its PDL wait (pl_cuda_backend_mlp_pre; 0: its default) */
    int fullk_mode; /* a projection no norm takes as pl_cuda_fullk_bf16: 0 never (the default), 1 from 57 rows, 2 from 1 row */
    int fullk_ring; /* its ring (pl_cuda_fullk_plan_for) */
    int fullk_pre;  /* its weight stages before its PDL wait (0: its default) */
    long fullk_runs; /* its launches (pl_cuda_backend_fullk_runs) */
    int parts_norm;          /* a pending split GEMM's partials added by the add + RMSNorm after it: 0 AUTO (on), 1 never */
    int parts_attr;          /* add_rmsnorm_parts_kernel may take clusters past 8 CTAs */
    int parts_c;             /* its CTAs per row, 0: parts_ctas (pl_cuda_backend_parts_ctas) */
    long parts_fused;        /* held GEMMs whose partials a norm took (pl_cuda_backend_parts_fused) */
    long kslice_launches;    /* k-sliced GEMM launches, counted by gemv.cu (gemv_ws.kslice_runs) */
    int gemv_mode; /* skinny GEMMs: pl_cuda_backend_use_gemv */
    pl_cuda_gemv_ws gemv_ws; /* K-split scratch of the tensor-core kernel, PDL switch of the GEMMs */
    int pdl_small;           /* PDL switch of every other kernel of a step */
    int attn_splits;         /* context splits of the decode attention (0: its heuristic) */
    int attn_warps;          /* its CTA width (pl_cuda_attn_options.mma_warps; 0: AUTO) */
    int attn_copy;           /* its K/V copies (pl_cuda_attn_options.decode_copy; 0: AUTO) */
    int attn_early;          /* 0: old keys of page pools read before the PDL wait (decode_early_kv), 1: after */
    int attn_units;          /* its work units per CTA (pl_cuda_attn_options.decode_units_per_cta; 0: AUTO) */
    int attn_order;          /* their order over CTAs (pl_cuda_attn_options.decode_units_order; 0: AUTO) */
    int attn_lean;           /* pl_cuda_attn_options.decode_lean (pl_cuda_backend_attn_lean; 0: AUTO) */
    int swiglu_threads;      /* benchmark hook pl_cuda_backend_swiglu_threads: the SwiGLU kernel's CTA width (0: AUTO) */
    int attn_split_shapes;   /* its split count: 0 from the step's contexts (pl_cuda_attn_options.host_context_lens), 1 from the shapes */
    int attn_rope;           /* pending rope and appends into the decode attention: 0 AUTO (rope_into_attention), 1 never, 2 always */
    int skip;                /* benchmark only: PL_CUDA_SKIP_* kinds of op that launch nothing */
    /* CUDA graphs of decode steps (see op_graph_begin) */
    graph_entry graphs[PL_MAX_GRAPHS];
    int num_graphs, cur_graph, gmode, graphs_off;
    int graph_segments, graph_first; /* segments per captured step, layers of the first (pl_cuda_backend_graph_segments) */
    int cut_calls, seg_next, seg_failed; /* this step: graph_cut calls, segments launched, a cut that failed */
    int first_differs;                   /* this replay's first segment matched no captured variant: 1 new, 2 one waiting */
    int capture_next;                    /* entry the redo of an undone step captures (PL_GRAPH_RECAPTURE), or -1 */
    uint64_t first_sig;                  /* this replay's signature at its first segment's end */
    uint64_t sig; /* running hash of every op's launch arguments in the current step */
    long graph_replays, graph_captures, graph_retries, graph_switches;
    double walk_t0, walk_seconds, launch_seconds; /* host time of replayed steps: graph_begin to launch, the launch call */
    cudaEvent_t gev[2];  /* benchmark hook: device time of replayed graphs (pl_cuda_backend_time_graphs) */
    double graph_seconds;
    int time_graphs, gev_pending;
    unsigned long long graph_clock;
};

namespace {

int set_err(pl_cuda_backend *b, int st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int set_err(pl_cuda_backend *b, int st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->last_err, sizeof b->last_err, fmt, ap);
    va_end(ap);
    return st;
}

/* Copies the backend's message into a caller buffer. */
int fwd(pl_cuda_backend *b, int st, char *err, size_t err_len) {
    if (st != PL_OK) pl_fail(err, err_len, st, "%s", b->last_err);
    return st;
}

int cuda_status(cudaError_t e) { return e == cudaErrorMemoryAllocation ? PL_ERR_NOMEM : PL_ERR_CUDA; }

void sig_mix(pl_cuda_backend *b, const void *p, size_t n) {
    const unsigned char *c = static_cast<const unsigned char *>(p);
    for (size_t i = 0; i < n; i++) b->sig = (b->sig ^ c[i]) * 0x100000001b3ULL;
}
/* Mixes an op's launch arguments into the step signature (pointers and sizes as integers). */
#define SIG(b, ...)                                                   \
    do {                                                              \
        const unsigned long long sig_args_[] = {__VA_ARGS__};        \
        sig_mix((b), sig_args_, sizeof sig_args_);                    \
    } while (0)
#define U64(x) ((unsigned long long)(uintptr_t)(x))
/* In a replayed step an op does its host work (metadata, staged uploads) and launches
 * nothing: the graph launches it all at the end. */
#define REPLAYING(b) ((b)->gmode == G_REPLAY)

int check_launch(pl_cuda_backend *b, const char *what) {
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return set_err(b, cuda_status(e), "%s: CUDA error: %s", what, cudaGetErrorString(e));
    return PL_OK;
}

/* Device allocation tracked for live_bytes; zeroed on the stream when zero != 0. */
void *dev_alloc(pl_cuda_backend *b, size_t bytes, int zero) {
    if (bytes == 0) bytes = 16;
    if (b->fail_after > 0 && --b->fail_after == 0) {
        set_err(b, PL_ERR_NOMEM, "out of device memory allocating %zu bytes (injected)", bytes);
        return nullptr;
    }
    if (b->num_recs == b->cap_recs) {
        int cap = b->cap_recs ? 2 * b->cap_recs : 64;
        alloc_rec *r = static_cast<alloc_rec *>(realloc(b->recs, sizeof(alloc_rec) * (size_t)cap));
        if (!r) {
            set_err(b, PL_ERR_NOMEM, "out of host memory tracking device allocations");
            return nullptr;
        }
        b->recs = r;
        b->cap_recs = cap;
    }
    void *p = nullptr;
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess) {
        cudaGetLastError(); /* not sticky: clear it */
        set_err(b, cuda_status(e), "out of device memory allocating %zu bytes: %s", bytes, cudaGetErrorString(e));
        return nullptr;
    }
    if (zero && (e = cudaMemsetAsync(p, 0, bytes, b->stream)) != cudaSuccess) {
        cudaFree(p);
        set_err(b, PL_ERR_CUDA, "cudaMemsetAsync of %zu bytes: %s", bytes, cudaGetErrorString(e));
        return nullptr;
    }
    b->recs[b->num_recs++] = {p, bytes};
    b->live_bytes += bytes;
    return p;
}

int flush_pending(pl_cuda_backend *b);

void dev_free(pl_cuda_backend *b, void *p) {
    if (!p) return;
    /* Work still queued may read p: launch and finish it first. */
    flush_pending(b);
    cudaStreamSynchronize(b->stream);
    cudaFree(p);
    for (int i = b->num_recs - 1; i >= 0; --i)
        if (b->recs[i].p == p) {
            b->live_bytes -= b->recs[i].bytes;
            b->recs[i] = b->recs[--b->num_recs];
            break;
        }
}

/* A staging arena of cap bytes (pinned host memory and its device twin) in place of a's, empty;
 * on failure a is unchanged and the error cleared */
cudaError_t arena_alloc(stage_slot *a, size_t cap) {
    void *h = nullptr, *d = nullptr;
    cudaError_t e = cudaMallocHost(&h, cap);
    if (e == cudaSuccess) e = cudaMalloc(&d, cap);
    if (e != cudaSuccess) {
        cudaGetLastError();
        if (h) cudaFreeHost(h);
        return e;
    }
    if (a->host) cudaFreeHost(a->host);
    if (a->dev) cudaFree(a->dev);
    a->host = h, a->dev = d, a->cap = cap, a->head = 0;
    return cudaSuccess;
}

/* Copies bytes of a host array into the slot's pinned arena and enqueues the upload; returns
 * the device copy. Uploads go one after another through the arena, so no upload waits on
 * the device; when the arena is full the stream is drained once and it starts over. In a
 * captured or replayed step they go into the step arena instead, and stage_send sends them
 * in one copy before the segment's launch: copy nodes inside the graph cost the launch call
 * ~5 us more and break the first layer's launch chain (PERF.md, forty-second session: the
 * seed trace's batch-4 schedule 0.3-0.5% faster, batch 8 0.8%). */
int stage_upload(pl_cuda_backend *b, int slot, const void *src, size_t bytes, void **dev_out) {
    stage_slot *s = &b->slots[slot];
    const size_t need = (bytes + 255) / 256 * 256;
    if (b->gmode != G_NONE) b->step_cur += need;
    stage_slot *a = &b->step_arena;
    if (!b->step_uploads && (b->gmode == G_CAPTURE || b->gmode == G_REPLAY) && a->head + need <= a->cap) {
        /* sent by stage_send before the segment's launch; past the arena's end (sized by the
         * step before: op_graph_begin), the slot's own arena below, as a copy node */
        char *h = static_cast<char *>(a->host) + a->head, *d = static_cast<char *>(a->dev) + a->head;
        memcpy(h, src, bytes);
        SIG(b, (unsigned long long)slot, bytes, U64(d), U64(h));
        s->last = bytes, s->last_host = h, s->last_dev = d;
        a->head += need;
        *dev_out = d;
        return PL_OK;
    }
    if (need > s->cap) {
        cudaStreamSynchronize(b->stream);
        size_t cap = 2 * need < ((size_t)256 << 10) ? ((size_t)256 << 10) : 2 * need;
        if (cap < 2 * s->cap) cap = 2 * s->cap;
        const cudaError_t e = arena_alloc(s, cap);
        if (e != cudaSuccess) return set_err(b, cuda_status(e), "staging buffer of %zu bytes: %s", cap, cudaGetErrorString(e));
    } else if (s->head + need > s->cap) {
        cudaError_t e = cudaStreamSynchronize(b->stream); /* every earlier upload consumed */
        if (e != cudaSuccess) return set_err(b, PL_ERR_CUDA, "CUDA stream: %s", cudaGetErrorString(e));
        s->head = 0;
    }
    char *h = static_cast<char *>(s->host) + s->head, *d = static_cast<char *>(s->dev) + s->head;
    memcpy(h, src, bytes);
    s->last = 0;
    SIG(b, (unsigned long long)slot, bytes, U64(d), U64(h));
    /* In a graph (uploads:1, or past the step arena) the copy node reads the pinned bytes when
     * the graph runs. */
    cudaError_t e = REPLAYING(b) ? cudaSuccess : cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, b->stream);
    if (e != cudaSuccess) return set_err(b, PL_ERR_CUDA, "upload of %zu bytes: %s", bytes, cudaGetErrorString(e));
    s->last = bytes, s->last_host = h, s->last_dev = d;
    s->head += need;
    *dev_out = d;
    return PL_OK;
}

/* stage_upload, but reuses the device copy when the bytes equal the slot's last upload
 * (still intact in the arena: only a later upload to the slot overwrites it). */
int stage_upload_cached(pl_cuda_backend *b, int slot, const void *src, size_t bytes, void **dev_out) {
    stage_slot *s = &b->slots[slot];
    if (s->last && s->last == bytes && memcmp(s->last_host, src, bytes) == 0) {
        *dev_out = s->last_dev;
        SIG(b, 1000ULL + slot, bytes, U64(*dev_out));
        return PL_OK;
    }
    return stage_upload(b, slot, src, bytes, dev_out);
}

/* The step arena's uploads not yet sent, as one copy on the stream (outside any capture: the
 * segment about to launch reads them) */
cudaError_t stage_send(pl_cuda_backend *b) {
    stage_slot *a = &b->step_arena;
    if (a->head <= b->step_sent) return cudaSuccess;
    const cudaError_t e = cudaMemcpyAsync(static_cast<char *>(a->dev) + b->step_sent, static_cast<char *>(a->host) + b->step_sent,
                                          a->head - b->step_sent, cudaMemcpyHostToDevice, b->stream);
    if (e == cudaSuccess) b->step_sent = a->head;
    return e;
}

/* At a graphed step's start (the stream idle, nothing capturing): the step arena emptied, and
 * grown to twice the most a bracketed step's uploads took (a failed allocation leaves the
 * slots' arenas to take them) */
void stage_step_begin(pl_cuda_backend *b) {
    stage_slot *a = &b->step_arena;
    b->step_need = b->step_cur > b->step_need ? b->step_cur : b->step_need;
    b->step_cur = 0;
    a->head = 0;
    b->step_sent = 0;
    if (b->step_uploads || b->step_need <= a->cap) return;
    arena_alloc(a, 2 * b->step_need < ((size_t)64 << 10) ? ((size_t)64 << 10) : 2 * b->step_need);
}

/* Uploads the page ids and slots of the first n pending rows (cached: every layer of a step
 * appends to the same slots); *d: ids at [0, n), slots at [n, 2n). */
int stage_append_meta(pl_cuda_backend *b, int n, void **d) {
    kv_pending &p = b->pend;
    memcpy(p.comb, p.meta, sizeof(int32_t) * (size_t)n);
    memcpy(p.comb + n, p.meta + p.cap, sizeof(int32_t) * (size_t)n);
    return stage_upload_cached(b, SLOT_META, p.comb, sizeof(int32_t) * 2 * (size_t)n, d);
}

/* Launches the pending K/V appends alone (flush_pending launches a pending rope first). */
int flush_appends(pl_cuda_backend *b) {
    kv_pending &p = b->pend;
    if (!p.n) return PL_OK;
    const int n = p.n;
    p.n = 0;
    if (b->skip & PL_CUDA_SKIP_APPEND) return PL_OK;
    void *d = nullptr;
    int rc = stage_append_meta(b, n, &d);
    if (rc) return rc;
    SIG(b, 2ULL, (unsigned long long)n, (unsigned long long)p.dt, (unsigned long long)p.heads, (unsigned long long)p.hd,
        (unsigned long long)p.ps, (unsigned long long)p.cap_pages, U64(p.k), U64(p.v), p.stride, U64(p.kp), U64(p.vp));
    if (REPLAYING(b)) return PL_OK;
    return pl_kv_append_cuda(p.dt, n, p.heads, p.hd, p.ps, p.cap_pages, p.k, p.v, p.stride, static_cast<const int32_t *>(d),
                             static_cast<const int32_t *>(d) + n, p.kp, p.vp, b->stream, b->last_err, sizeof b->last_err);
}

/* Greedy sampling's argmax keys and mapped token ids for rows rows, grown outside captures
 * only (the previous call synchronized, so nothing uses the old ones; a graph that holds
 * their addresses no longer matches the step's signature). */
int ensure_argmax(pl_cuda_backend *b, int rows, char *err, size_t err_len) {
    if (rows <= b->argmax_rows) return PL_OK;
    if (rows < PL_CUDA_GEMV_TILE_MAX_M) rows = PL_CUDA_GEMV_TILE_MAX_M; /* every batch of the greedy head at once */
    if (b->argmax_keys) cudaFree(b->argmax_keys);
    if (b->argmax_tokens) cudaFreeHost(b->argmax_tokens);
    b->argmax_keys = nullptr;
    b->argmax_tokens = b->argmax_tokens_dev = nullptr;
    b->argmax_rows = 0;
    /* backend scratch like the sampling probabilities: not counted in live_bytes */
    const size_t kb = sizeof(unsigned long long) * (size_t)rows;
    void *k = nullptr, *t = nullptr, *td = nullptr;
    cudaError_t e = cudaMalloc(&k, kb);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return pl_fail(err, err_len, cuda_status(e), "greedy sampling: %zu bytes of argmax keys: %s", kb, cudaGetErrorString(e));
    }
    if ((e = cudaHostAlloc(&t, sizeof(int32_t) * (size_t)rows, cudaHostAllocMapped)) != cudaSuccess) {
        cudaGetLastError();
        cudaFree(k);
        return pl_fail(err, err_len, PL_ERR_NOMEM, "greedy sampling: %zu bytes of mapped host memory for token ids: %s",
                       sizeof(int32_t) * (size_t)rows, cudaGetErrorString(e));
    }
    if ((e = cudaHostGetDevicePointer(&td, t, 0)) != cudaSuccess) {
        cudaGetLastError();
        cudaFreeHost(t);
        cudaFree(k);
        return pl_fail(err, err_len, PL_ERR_CUDA, "greedy sampling: device address of mapped host memory: %s", cudaGetErrorString(e));
    }
    b->argmax_keys = static_cast<unsigned long long *>(k);
    b->argmax_tokens = static_cast<int32_t *>(t);
    b->argmax_tokens_dev = static_cast<int32_t *>(td);
    b->argmax_rows = rows;
    b->argmax_dirty = 1; /* fresh memory: the caller clears the keys before use */
    return PL_OK;
}

/* Before a greedy launch: keys for rows rows, cleared if fresh or left behind by a call that
 * failed before its wait (in a replayed step this memset lands before the last segment). */
int argmax_begin(pl_cuda_backend *b, int rows, char *err, size_t err_len) {
    if (int rc = ensure_argmax(b, rows, err, err_len)) return rc;
    if (b->argmax_dirty) {
        const cudaError_t e = cudaMemsetAsync(b->argmax_keys, 0, sizeof(unsigned long long) * (size_t)b->argmax_rows, b->stream);
        if (e != cudaSuccess) return pl_fail(err, err_len, PL_ERR_CUDA, "greedy sampling: clearing argmax keys: %s", cudaGetErrorString(e));
    }
    b->argmax_dirty = 1;
    return PL_OK;
}

/* After the finish kernel: wait for the stream, then the ids from mapped host memory. */
int argmax_end(pl_cuda_backend *b, int rows, int32_t *tokens, char *err, size_t err_len) {
    const cudaError_t e = cudaStreamSynchronize(b->stream);
    if (e != cudaSuccess) return pl_fail(err, err_len, PL_ERR_CUDA, "greedy sampling: %s", cudaGetErrorString(e));
    b->argmax_dirty = 0;
    memcpy(tokens, b->argmax_tokens, sizeof(int32_t) * (size_t)rows);
    return PL_OK;
}

int ensure_scratch(pl_cuda_backend *b, size_t bytes) {
    if (bytes <= b->scratch_bytes) return PL_OK;
    cudaStreamSynchronize(b->stream);
    if (b->scratch) cudaFree(b->scratch);
    b->scratch = nullptr;
    b->scratch_bytes = 0;
    cudaError_t e = cudaMalloc(&b->scratch, bytes);
    if (e != cudaSuccess) {
        cudaGetLastError();
        b->scratch = nullptr;
        return set_err(b, cuda_status(e), "out of device memory for %zu bytes of scratch: %s", bytes, cudaGetErrorString(e));
    }
    b->scratch_bytes = bytes;
    return PL_OK;
}

size_t esize(pl_dtype t) { return t == PL_F32 ? 4 : 2; }

/* ---- kernels ---- */

/* tof, fromf, round_act and warp_sum: elem.cuh */

/* Every kernel of a step starts with pdl_trigger + pdl_wait (ptx.cuh) and is launched with
 * launch_pdl: its launch overlaps the kernel before it, and the next kernel (a skinny GEMM
 * loading weights, say) may start early and wait for our results. Before the wait a kernel
 * reads only what no kernel of the step writes (weights; the decode attention's old keys). */

/* Sum over the block; every thread gets it. red: 32 slots of shared memory. */
template <typename R> __device__ R block_sum(R v, R *red) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    v = warp_sum(v);
    __syncthreads(); /* red may still be read from a previous call */
    if (lane == 0) red[warp] = v;
    __syncthreads();
    R t = lane < nw ? red[lane] : R(0);
    return warp_sum(t);
}

template <typename T>
__global__ void embed_kernel(const T *w, const int32_t *tok, int cols, T *out) {
    pdl_trigger();
    PL_DIAG_SCOPE(7, 0, 0, 0);
    pdl_wait();
    PL_DIAG_MARK(4);
    const T *src = w + (size_t)tok[blockIdx.x] * cols;
    T *dst = out + (size_t)blockIdx.x * cols;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) dst[i] = src[i];
}

template <typename T>
__global__ void rmsnorm_kernel(const T *x, const float *w, int dim, float eps, T *out) {
    pdl_trigger();
    PL_DIAG_SCOPE(9, 0, 0, 0);
    pdl_wait();
    PL_DIAG_MARK(4);
    __shared__ float red[32];
    const T *xr = x + (size_t)blockIdx.x * dim;
    T *o = out + (size_t)blockIdx.x * dim;
    float ss = 0.f;
    for (int i = threadIdx.x; i < dim; i += blockDim.x) {
        const float v = tof(xr[i]);
        ss += v * v;
    }
    ss = block_sum(ss, red);
    const float inv = 1.0f / sqrtf(ss / (float)dim + eps);
    for (int i = threadIdx.x; i < dim; i += blockDim.x) o[i] = fromf<T>(tof(xr[i]) * inv * w[i]);
}

/* h += x (rounded to the act dtype, as the add op), then out = rmsnorm(h) * w: one launch
 * and one pass less than add + rmsnorm. */
template <typename T>
__global__ void add_rmsnorm_kernel(T *h, const T *x, const float *w, int dim, float eps, T *out) {
    pdl_trigger();
    PL_DIAG_SCOPE(10, 0, 0, 0);
    pdl_wait();
    PL_DIAG_MARK(4);
    __shared__ float red[32];
    T *hr = h + (size_t)blockIdx.x * dim;
    const T *xr = x + (size_t)blockIdx.x * dim;
    T *o = out + (size_t)blockIdx.x * dim;
    float ss = 0.f;
    for (int i = threadIdx.x; i < dim; i += blockDim.x) {
        const T v = fromf<T>(tof(hr[i]) + tof(xr[i]));
        hr[i] = v;
        ss += tof(v) * tof(v);
    }
    ss = block_sum(ss, red);
    const float inv = 1.0f / sqrtf(ss / (float)dim + eps);
    for (int i = threadIdx.x; i < dim; i += blockDim.x) o[i] = fromf<T>(tof(hr[i]) * inv * w[i]);
}

/* The bf16x8 norm kernels' pieces: h + x over a thread's 8 columns (rounded as the add op)
 * into v, their squares added to ss in column order; and v * inv * w. */
__device__ __forceinline__ void add8_sumsq(const uint4 &hv, const uint4 &xv, __nv_bfloat162 v[4], float &ss) {
    const __nv_bfloat162 *hp = reinterpret_cast<const __nv_bfloat162 *>(&hv), *xp = reinterpret_cast<const __nv_bfloat162 *>(&xv);
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const float2 a = __bfloat1622float2(hp[i]), b = __bfloat1622float2(xp[i]);
        v[i] = __floats2bfloat162_rn(a.x + b.x, a.y + b.y);
        const float2 r = __bfloat1622float2(v[i]);
        ss += r.x * r.x + r.y * r.y;
    }
}
__device__ __forceinline__ uint4 norm8(const __nv_bfloat162 v[4], float inv, const float4 &w0, const float4 &w1) {
    const float ww[8] = {w0.x, w0.y, w0.z, w0.w, w1.x, w1.y, w1.z, w1.w};
    __nv_bfloat162 o[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const float2 r = __bfloat1622float2(v[i]);
        o[i] = __floats2bfloat162_rn(r.x * inv * ww[2 * i], r.y * inv * ww[2 * i + 1]);
    }
    return *reinterpret_cast<const uint4 *>(o);
}

/* bf16 add_rmsnorm with one 16-byte chunk per thread (dim % 8 == 0, dim <= 8 x blockDim):
 * h and x are read once and stay in registers, instead of a second pass over h. */
__global__ void add_rmsnorm_bf16x8_kernel(__nv_bfloat16 *h, const __nv_bfloat16 *x, const float *w, int dim, float eps,
                                          __nv_bfloat16 *out) {
    pdl_trigger();
    PL_DIAG_SCOPE(4, dim, 0, 0);
    __shared__ float red[32];
    const int c = threadIdx.x, nc = dim / 8;
    /* the norm weights are model constants: read them before the wait, off the path from the
     * reduction to the store */
    float4 w0 = make_float4(0.f, 0.f, 0.f, 0.f), w1 = w0;
    if (c < nc) w0 = reinterpret_cast<const float4 *>(w)[2 * c], w1 = reinterpret_cast<const float4 *>(w)[2 * c + 1];
    pdl_wait();
    PL_DIAG_MARK(4);
    uint4 *hr = reinterpret_cast<uint4 *>(h + (size_t)blockIdx.x * dim);
    const uint4 *xr = reinterpret_cast<const uint4 *>(x + (size_t)blockIdx.x * dim);
    __nv_bfloat162 v[4];
    float ss = 0.f;
    if (c < nc) {
        add8_sumsq(hr[c], xr[c], v, ss);
        hr[c] = *reinterpret_cast<const uint4 *>(v);
    }
    ss = block_sum(ss, red);
    const float inv = 1.0f / sqrtf(ss / (float)dim + eps);
    if (c < nc) reinterpret_cast<uint4 *>(out + (size_t)blockIdx.x * dim)[c] = norm8(v, inv, w0, w1);
}

/* add_rmsnorm_bf16x8_kernel with x given as the split partials of the tile GEMM that made
 * it (pl_cuda_gemv_parts_bf16: ks f32 [M][dim] planes): each thread adds its 8 columns'
 * partials in split order as the GEMM's last CTA would (the same f32 sums, so the same bf16
 * x, which it also stores), then h += x and the norm. A row takes a cluster of gridDim.y CTAs
 * of whole warps (parts_ctas: two at most Qwen3 widths, each loading its columns of every
 * partial at once); the warps' sums of squares meet through distributed shared memory and add
 * as block_sum adds them over one CTA, so the bits are those of the unfused pair. */
__global__ void add_rmsnorm_parts_kernel(__nv_bfloat16 *h, __nv_bfloat16 *x, const float *parts, int ks,
                                         const float *w, int dim, float eps, __nv_bfloat16 *out) {
    pdl_trigger();
    PL_DIAG_SCOPE(11, dim, ks, 0);
    namespace cg = cooperative_groups;
    __shared__ float wsum[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, wpc = blockDim.x >> 5;
    const int row = blockIdx.x, M = gridDim.x, c = blockIdx.y * blockDim.x + threadIdx.x, nc = dim / 8;
    float4 w0 = make_float4(0.f, 0.f, 0.f, 0.f), w1 = w0; /* model constants: before the wait */
    if (c < nc) w0 = reinterpret_cast<const float4 *>(w)[2 * c], w1 = reinterpret_cast<const float4 *>(w)[2 * c + 1];
    pdl_wait();
    PL_DIAG_MARK(4);
    __nv_bfloat162 v[4];
    uint4 xv;
    float ss = 0.f;
    if (c < nc) {
        /* every load goes out at once (h and up to 16 partials: one round trip), then the
         * partials add in split order as the GEMM's fixup adds them (which pads with zeros to
         * a multiple of 8: one +0 more when ks is not, for the sign of a zero sum) */
        const uint4 hv = reinterpret_cast<const uint4 *>(h + (size_t)row * dim)[c];
        const float *p = parts + (size_t)row * dim + 8 * c;
        const size_t plane = (size_t)M * dim;
        float a[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
        auto add = [&](const float4 &q0, const float4 &q1) {
            a[0] += q0.x, a[1] += q0.y, a[2] += q0.z, a[3] += q0.w;
            a[4] += q1.x, a[5] += q1.y, a[6] += q1.z, a[7] += q1.w;
        };
        constexpr int FQ = 16;
        float4 q[FQ][2];
#pragma unroll
        for (int j = 0; j < FQ; ++j)
            if (j < ks) {
                q[j][0] = __ldcg(reinterpret_cast<const float4 *>(p + j * plane));
                q[j][1] = __ldcg(reinterpret_cast<const float4 *>(p + j * plane + 4));
            }
#pragma unroll
        for (int j = 0; j < FQ; ++j)
            if (j < ks) add(q[j][0], q[j][1]);
        for (int r = FQ; r < ks; ++r) /* more than 16 splits: a tuned grid only */
            add(__ldcg(reinterpret_cast<const float4 *>(p + r * plane)), __ldcg(reinterpret_cast<const float4 *>(p + r * plane + 4)));
        if (ks % 8) add(make_float4(0.f, 0.f, 0.f, 0.f), make_float4(0.f, 0.f, 0.f, 0.f));
        __nv_bfloat162 xb[4];
#pragma unroll
        for (int i = 0; i < 4; i++) xb[i] = __floats2bfloat162_rn(a[2 * i], a[2 * i + 1]);
        xv = *reinterpret_cast<const uint4 *>(xb);
        add8_sumsq(hv, xv, v, ss);
    }
    PL_DIAG_MARK(5);
    ss = warp_sum(ss);
    if (lane == 0) wsum[warp] = ss;
    cg::cluster_group cl = cg::this_cluster();
    cl.sync(); /* every warp's sum is in its CTA's shared memory (no global store before it: the
                * barrier's release would wait for them) */
    const int nw = wpc * (int)gridDim.y; /* the row's warps, as block_sum's nw */
    const float t = lane < nw ? *cl.map_shared_rank(&wsum[lane % wpc], lane / wpc) : 0.f;
    const float inv = 1.0f / sqrtf(warp_sum(t) / (float)dim + eps);
    cl.barrier_arrive(); /* done reading the others' sums; nobody leaves before all are (the wait below) */
    if (c < nc) {
        reinterpret_cast<uint4 *>(x + (size_t)row * dim)[c] = xv;
        reinterpret_cast<uint4 *>(h + (size_t)row * dim)[c] = *reinterpret_cast<const uint4 *>(v);
        reinterpret_cast<uint4 *>(out + (size_t)row * dim)[c] = norm8(v, inv, w0, w1);
    }
    cl.barrier_wait();
}

__global__ void rope_table_kernel(const int32_t *pos, const float *invf, int rows, int hd, float *cs) {
    pdl_trigger();
    pdl_wait();
    const int half = hd / 2;
    const size_t n = (size_t)rows * half;
    for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < n; t += (size_t)gridDim.x * blockDim.x) {
        const int r = (int)(t / half), i = (int)(t % half);
        const float ang = (float)pos[r] * invf[i];
        float s, c;
        sincosf(ang, &s, &c);
        cs[(size_t)r * hd + i] = c;
        cs[(size_t)r * hd + half + i] = s;
    }
}

/* A lane's first 8 norm weights of a head (elements lane + 32 j), read before the PDL wait:
 * the weights are model constants, so their load leaves the path from the sum to the store. */
constexpr int NR_WREG = 8;
__device__ __forceinline__ void head_weights(const float *w, int hd, int lane, float (&wv)[NR_WREG]) {
#pragma unroll
    for (int j = 0; j < NR_WREG; ++j) wv[j] = w && lane + 32 * j < hd ? w[lane + 32 * j] : 0.f;
}

/* Element i and i + half of a head rotated by the row's table c (cos, then sin at c + half),
 * into dst and dst2 when set. */
template <typename T>
__device__ __forceinline__ void rope_pair(float x0, float x1, const float *c, int i, int half, T *dst, T *dst2) {
    float r0, r1;
    rope_rot<T>(x0, x1, c[i], c[half + i], r0, r1); /* elem.cuh */
    const T y0 = fromf<T>(r0), y1 = fromf<T>(r1);
    dst[i] = y0;
    dst[i + half] = y1;
    if (dst2) {
        dst2[i] = y0;
        dst2[i + half] = y1;
    }
}

/* One warp, one head of hd values: RMSNorm with weight w (rounded to the act dtype, as the
 * CPU path; wv: its first elements, from head_weights), then the half-split rotation by the
 * row's table c, into dst (src itself for in place: every lane reads before the warp_sum,
 * writes after it) and into dst2 when set. v: the warp's hd floats of shared memory. */
template <typename T>
__device__ __forceinline__ void norm_rope_head(const T *src, const float *w, const float (&wv)[NR_WREG], int hd, float eps,
                                               const float *c, float *v, int lane, T *dst, T *dst2) {
    float ss = 0.f;
    for (int i = lane; i < hd; i += 32) {
        const float x = tof(src[i]);
        v[i] = x;
        ss += x * x;
    }
    ss = warp_sum(ss);
    const float inv = 1.0f / sqrtf(ss / (float)hd + eps);
#pragma unroll
    for (int j = 0; j < NR_WREG; ++j)
        if (lane + 32 * j < hd) v[lane + 32 * j] = round_act<T>(v[lane + 32 * j] * inv * wv[j]);
    for (int i = lane + 32 * NR_WREG; i < hd; i += 32) v[i] = round_act<T>(v[i] * inv * w[i]);
    __syncwarp();
    const int half = hd / 2;
    for (int i = lane; i < half; i += 32) rope_pair(v[i], v[i + half], c, i, half, dst, dst2);
}

/* norm_rope_head for hd = 32 * E, E even (Qwen3: 128): lane l holds elements l + 32 j, and the
 * rotation pairs (i, i + hd / 2) are its own j and j + E / 2, so the head stays in registers
 * (no shared memory, no second pass); the same arithmetic in the same order, so the same bits. */
template <typename T, int E>
__device__ __forceinline__ void norm_rope_head_reg(const T *src, const float (&wv)[NR_WREG], float eps, const float *c, int lane,
                                                   T *dst, T *dst2) {
    static_assert(E % 2 == 0 && E <= NR_WREG, "E even, its weights in wv");
    constexpr int half = 16 * E;
    float x[E], cs[E / 2], sn[E / 2];
#pragma unroll
    for (int j = 0; j < E; ++j) x[j] = tof(src[lane + 32 * j]);
#pragma unroll
    for (int j = 0; j < E / 2; ++j) cs[j] = c[lane + 32 * j], sn[j] = c[half + lane + 32 * j];
    norm_rope_lane<T, E>(x, wv, eps, cs, sn); /* elem.cuh */
#pragma unroll
    for (int j = 0; j < E; ++j) {
        dst[lane + 32 * j] = fromf<T>(x[j]);
        if (dst2) dst2[lane + 32 * j] = fromf<T>(x[j]);
    }
}

/* norm_rope_head, in registers where hd allows (64, 128, 256). */
template <typename T>
__device__ __forceinline__ void norm_rope_any(const T *src, const float *w, const float (&wv)[NR_WREG], int hd, float eps,
                                              const float *c, float *v, int lane, T *dst, T *dst2) {
    if (hd == 128) norm_rope_head_reg<T, 4>(src, wv, eps, c, lane, dst, dst2);
    else if (hd == 64) norm_rope_head_reg<T, 2>(src, wv, eps, c, lane, dst, dst2);
    else if (hd == 256) norm_rope_head_reg<T, 8>(src, wv, eps, c, lane, dst, dst2);
    else norm_rope_head<T>(src, w, wv, hd, eps, c, v, lane, dst, dst2);
}

/* One warp per (row, head): norm + RoPE of the q and k heads, in place (q heads to q_out
 * when set). */
template <typename T>
__global__ void qk_norm_rope_kernel(T *qkv, size_t stride, int nq, int nkv, int hd, const float *wq, const float *wk,
                                    float eps, const float *cst, T *q_out) {
    pdl_trigger();
    extern __shared__ float sm[];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int h = blockIdx.y * (blockDim.x >> 5) + warp, r = blockIdx.x;
    float wv[NR_WREG];
    head_weights(h < nq + nkv ? (h < nq ? wq : wk) : nullptr, hd, lane, wv);
    pdl_wait();
    if (h >= nq + nkv) return; /* no block-wide barrier below */
    T *p = qkv + (size_t)r * stride + (size_t)h * hd;
    T *d = q_out && h < nq ? q_out + ((size_t)r * nq + h) * hd : p;
    norm_rope_any<T>(p, h < nq ? wq : wk, wv, hd, eps, cst + (size_t)r * hd, sm + (size_t)warp * hd, lane, d, nullptr);
}

/* qk_norm_rope_kernel with q_out and the K/V append of the same rows in one launch: one warp
 * per (row, head) over nq + 2 * nkv heads. q heads go to q_out; k heads in place and to
 * their page slot (the same rounded values); v heads are copied to theirs. Rows whose page
 * id or slot is out of range write no page, as kv_append_kernel. */
template <typename T>
__global__ void qk_norm_rope_append_kernel(T *qkv, size_t stride, int nq, int nkv, int hd, const float *wq, const float *wk,
                                           float eps, const float *cst, T *q_out, const int32_t *page_ids,
                                           const int32_t *slots, int page_size, int num_pages, T *kp, T *vp) {
    pdl_trigger();
    extern __shared__ float sm[];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int h = blockIdx.y * (blockDim.x >> 5) + warp, r = blockIdx.x;
    float wv[NR_WREG];
    head_weights(h < nq ? wq : h < nq + nkv ? wk : nullptr, hd, lane, wv); /* v heads: no norm */
    pdl_wait();
    if (h >= nq + 2 * nkv) return; /* no block-wide barrier below */
    T *p = qkv + (size_t)r * stride + (size_t)h * hd;
    T *pg = nullptr; /* the k or v head's page slot */
    if (h >= nq) {
        const bool is_k = h < nq + nkv;
        const int kvh = h - nq - (is_k ? 0 : nkv);
        const int32_t page = page_ids[r], slot = slots[r];
        if (page >= 0 && page < num_pages && slot >= 0 && slot < page_size)
            pg = (is_k ? kp : vp) + (((size_t)page * nkv + kvh) * page_size + slot) * hd;
    }
    if (h < nq + nkv) { /* one call site for q and k: the code exists once */
        T *d = h < nq ? q_out + ((size_t)r * nq + h) * hd : p;
        norm_rope_any<T>(p, h < nq ? wq : wk, wv, hd, eps, cst + (size_t)r * hd, sm + (size_t)warp * hd, lane, d, pg);
    } else if (pg) {
        for (int i = lane; i < hd; i += 32) pg[i] = p[i];
    }
}

/* Row blockIdx.y; no per-element division (it cost as much as the memory traffic). */
template <typename T>
__global__ void swiglu_kernel(const T *gu, int inter, T *out) {
    pdl_trigger();
    PL_DIAG_SCOPE(5, inter, 0, 0);
    pdl_wait();
    PL_DIAG_MARK(4);
    const T *g_row = gu + (size_t)blockIdx.y * 2 * inter, *u_row = g_row + inter;
    T *o = out + (size_t)blockIdx.y * inter;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < inter; i += gridDim.x * blockDim.x) {
        o[i] = swiglu_act<T>(tof(g_row[i]), tof(u_row[i]));
    }
}

template <typename T>
__global__ void add_kernel(T *h, const T *x, size_t n) {
    pdl_trigger();
    pdl_wait();
    for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < n; t += (size_t)gridDim.x * blockDim.x)
        h[t] = fromf<T>(tof(h[t]) + tof(x[t]));
}

/* rows x width elements between strided rows, 16 bytes per thread when everything is
 * 16-byte aligned (W = uint4), else one element (a kernel, not cudaMemcpy2DAsync, so the
 * launch chain of a step stays programmatic). */
template <typename W>
__global__ void copy_rows_kernel(char *dst, size_t dst_stride, const char *src, size_t src_stride, int words) {
    pdl_trigger();
    pdl_wait();
    const W *s = reinterpret_cast<const W *>(src + blockIdx.y * src_stride);
    W *d = reinterpret_cast<W *>(dst + blockIdx.y * dst_stride);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += gridDim.x * blockDim.x) d[i] = s[i];
}

unsigned grid_for(size_t n, int threads) {
    size_t g = (n + threads - 1) / threads;
    if (g > 132 * 32) g = 132 * 32; /* grid-stride beyond a few waves */
    return g ? (unsigned)g : 1u;
}

/* ---- sampling ----
 * Order of candidates: probability descending, then id ascending (the CPU sampler's total
 * order). Probabilities are non-negative floats, so their bit patterns order like the
 * values. Every kept set is a prefix of that order; a prefix ends at a boundary element
 * found by radix descent over the value bits (4 passes of 8 bits, histograms of counts and
 * masses) and, among equal values, over the ids. */

constexpr int SAMP_THREADS = 1024;

struct samp_smem {
    unsigned cnt[256];
    double mass[256];
    double redd[32];
    float redf[32];
    int redi[32];
    unsigned prefix;
    int sel;
    long long acc_c;
    double acc_m;
    unsigned tie_cnt;
};

struct find_res {
    int found;
    unsigned bits;
    int id;
    double mass_incl; /* mass of the prefix up to and including the boundary */
};

__device__ bool before_or_eq(const find_res &a, const find_res &b) {
    return a.bits > b.bits || (a.bits == b.bits && a.id <= b.id);
}

/* The first element (in the order) where the running weight reaches target: mode 0 counts
 * (>= target), 1 sums mass (>= target), 2 sums mass (> target). Only p > 0 take part. */
__device__ find_res find_boundary(const float *P, int V, int mode, double target, samp_smem &s) {
    find_res res = {0, 0u, 0, 0.0};
    const int tid = threadIdx.x;
    if (tid == 0) {
        s.prefix = 0u;
        s.acc_c = 0;
        s.acc_m = 0.0;
    }
    for (int pass = 0; pass < 4; ++pass) {
        const int shift = 24 - 8 * pass;
        for (int i = tid; i < 256; i += blockDim.x) {
            s.cnt[i] = 0u;
            s.mass[i] = 0.0;
        }
        __syncthreads();
        const unsigned hi = pass == 0 ? 0u : (0xffffffffu << (shift + 8)), prefix = s.prefix;
        int cur = -1;
        unsigned c = 0;
        double m = 0.0;
        for (int i = tid; i < V; i += blockDim.x) {
            const float p = P[i];
            if (!(p > 0.f)) continue;
            const unsigned bits = __float_as_uint(p);
            if ((bits & hi) != (prefix & hi)) continue;
            const int d = (int)((bits >> shift) & 255u);
            if (d != cur) { /* run-length: flat distributions hit one bin, so atomics stay few */
                if (cur >= 0) {
                    atomicAdd(&s.cnt[cur], c);
                    atomicAdd(&s.mass[cur], m);
                }
                cur = d;
                c = 0;
                m = 0.0;
            }
            ++c;
            m += p;
        }
        if (cur >= 0) {
            atomicAdd(&s.cnt[cur], c);
            atomicAdd(&s.mass[cur], m);
        }
        __syncthreads();
        if (tid == 0) {
            long long ac = s.acc_c;
            double am = s.acc_m;
            int sel = -1;
            for (int d = 255; d >= 0; --d) {
                if (!s.cnt[d]) continue;
                const double w = mode == 0 ? (double)(ac + s.cnt[d]) : am + s.mass[d];
                const bool reach = mode == 2 ? w > target : w >= target;
                if (reach) {
                    sel = d;
                    break;
                }
                ac += s.cnt[d];
                am += s.mass[d];
            }
            s.sel = sel;
            s.acc_c = ac;
            s.acc_m = am;
            if (sel >= 0) {
                s.prefix = prefix | ((unsigned)sel << shift);
                s.tie_cnt = s.cnt[sel];
            }
        }
        __syncthreads();
        if (s.sel < 0) return res; /* uniform: every thread reads the same value */
    }
    const unsigned bits = s.prefix;
    const float pv = __uint_as_float(bits);
    const long long ties = s.tie_cnt;
    long long j;
    if (mode == 0) {
        j = (long long)target - s.acc_c;
    } else {
        const double q = (target - s.acc_m) / (double)pv;
        j = mode == 1 ? (long long)ceil(q) : (long long)floor(q) + 1;
    }
    if (j < 1) j = 1;
    if (j > ties) j = ties;
    /* the j-th smallest id among the ties: 3 passes over id digits (ids < 2^24) */
    __syncthreads();
    if (tid == 0) {
        s.prefix = 0u;
        s.acc_c = 0;
    }
    for (int pass = 0; pass < 3; ++pass) {
        const int shift = 16 - 8 * pass;
        for (int i = tid; i < 256; i += blockDim.x) s.cnt[i] = 0u;
        __syncthreads();
        const unsigned idp = s.prefix;
        for (int i = tid; i < V; i += blockDim.x)
            if (__float_as_uint(P[i]) == bits && ((unsigned)i >> (shift + 8)) == (idp >> (shift + 8)))
                atomicAdd(&s.cnt[((unsigned)i >> shift) & 255u], 1u);
        __syncthreads();
        if (tid == 0) {
            long long ac = s.acc_c;
            for (int d = 0; d < 256; ++d) {
                if (ac + s.cnt[d] >= j) {
                    s.prefix = idp | ((unsigned)d << shift);
                    break;
                }
                ac += s.cnt[d];
            }
            s.acc_c = ac;
        }
        __syncthreads();
    }
    res.found = 1;
    res.bits = bits;
    res.id = (int)s.prefix;
    __syncthreads();
    res.mass_incl = 0.0;
    return res;
}

__global__ void __launch_bounds__(SAMP_THREADS) sample_kernel(const float *logits, size_t ld, int V,
                                                              const pl_cuda_sample_params *prm, float *pbuf,
                                                              int32_t *out) {
    __shared__ samp_smem s;
    const int row = blockIdx.x, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const float *L = logits + (size_t)row * ld;
    float *P = pbuf + (size_t)row * V;
    const pl_cuda_sample_params q = prm[row];

    /* argmax as pl_argmax: non-NaN beats NaN, then larger, then lower id */
    float bv = 0.f;
    int bi = 0x7fffffff, bvalid = 0;
    for (int i = tid; i < V; i += blockDim.x) {
        const float x = L[i];
        const int valid = !isnan(x);
        if (bi == 0x7fffffff || (valid && (!bvalid || x > bv))) {
            bv = x;
            bi = i;
            bvalid = valid;
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        const float ov = __shfl_xor_sync(0xffffffffu, bv, o);
        const int oi = __shfl_xor_sync(0xffffffffu, bi, o), ovalid = __shfl_xor_sync(0xffffffffu, bvalid, o);
        const bool better = ovalid != bvalid ? ovalid : (ovalid && ov != bv ? ov > bv : oi < bi);
        if (better) {
            bv = ov;
            bi = oi;
            bvalid = ovalid;
        }
    }
    if (lane == 0) {
        s.redf[warp] = bv;
        s.redi[warp] = bvalid ? bi : -1 - bi;
    }
    __syncthreads();
    if (tid == 0) {
        float v = 0.f;
        int id = 0x7fffffff, valid = 0;
        for (int w = 0; w < (int)(blockDim.x >> 5); ++w) {
            const int wi = s.redi[w] >= 0 ? s.redi[w] : -1 - s.redi[w], wvalid = s.redi[w] >= 0;
            if (wi == 0x7fffffff) continue;
            const bool better = id == 0x7fffffff || (wvalid != valid ? wvalid : (wvalid && s.redf[w] != v ? s.redf[w] > v : wi < id));
            if (better) {
                v = s.redf[w];
                id = wi;
                valid = wvalid;
            }
        }
        s.redi[0] = id;
        s.redf[0] = valid ? v : -INFINITY;
    }
    __syncthreads();
    const int argmax = s.redi[0];
    const float mx = s.redf[0];
    if (q.temperature <= 0.f || !isfinite(mx)) {
        if (tid == 0) out[row] = argmax;
        return;
    }

    const float inv_t = 1.0f / q.temperature;
    double sum = 0.0;
    for (int i = tid; i < V; i += blockDim.x) {
        float e = expf((L[i] - mx) * inv_t);
        if (isnan(e)) e = 0.f;
        P[i] = e;
        sum += e;
    }
    sum = block_sum(sum, s.redd);
    const float inv = (float)(1.0 / sum);
    double all = 0.0;
    for (int i = tid; i < V; i += blockDim.x) {
        const float p = P[i] * inv;
        P[i] = p;
        all += p;
    }
    all = block_sum(all, s.redd); /* also a barrier: P is complete */

    /* mass of a found boundary: sum of p over the prefix */
    auto prefix_mass = [&](const find_res &b) {
        double m = 0.0;
        for (int i = tid; i < V; i += blockDim.x) {
            const float p = P[i];
            const unsigned bits = __float_as_uint(p);
            if (p > 0.f && (bits > b.bits || (bits == b.bits && i <= b.id))) m += p;
        }
        return block_sum(m, s.redd);
    };

    const bool use_k = q.top_k > 0 && q.top_k < V;
    find_res kept = {0, 0u, 0, all};
    double mass = 1.0; /* without top-k the dropped tail counts (as the CPU sampler) */
    if (use_k) {
        find_res b = find_boundary(P, V, 0, (double)q.top_k, s);
        if (b.found) {
            b.mass_incl = prefix_mass(b);
            kept = b;
        }
        mass = kept.mass_incl;
    }
    if (q.top_p < 1.f) {
        find_res b = find_boundary(P, V, 1, (double)q.top_p * mass, s);
        if (b.found && (!kept.found || before_or_eq(b, kept))) {
            b.mass_incl = prefix_mass(b);
            kept = b;
        }
    }
    const double total = kept.mass_incl;
    find_res d = find_boundary(P, V, 2, q.u * total, s);
    int tok;
    if (d.found && (!kept.found || before_or_eq(d, kept))) {
        tok = d.id;
    } else if (kept.found) {
        tok = kept.id;
    } else { /* rounding put the draw past the end: the last positive element */
        long long n = 0;
        for (int i = tid; i < V; i += blockDim.x) n += P[i] > 0.f;
        n = block_sum(n, reinterpret_cast<long long *>(s.redd));
        find_res e = find_boundary(P, V, 0, (double)n, s);
        tok = e.found ? e.id : argmax;
    }
    if (tid == 0) out[row] = tok;
}

/* Greedy rows only: pl_argmax (first maximum, NaN skipped) spread over many blocks per row,
 * each folding (value, lower id first) into one 64-bit key (argmax_key), reduced over the
 * block and then with one atomicMax per block (one per warp queued 8x the atomics on each
 * row's key); one block per row took 65 us for 4 rows of 151936. Blocks of 256 threads. */
__global__ void __launch_bounds__(256) argmax_kernel(const float *logits, size_t ld, int V, unsigned long long *best) {
    __shared__ unsigned long long red[8];
    const float *L = logits + (size_t)blockIdx.y * ld;
    unsigned long long k = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < V; i += gridDim.x * blockDim.x) {
        const unsigned long long c = argmax_key(L[i], i);
        k = c > k ? c : k;
    }
    for (int o = 16; o > 0; o >>= 1) {
        const unsigned long long c = __shfl_xor_sync(0xffffffffu, k, o);
        k = c > k ? c : k;
    }
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = k;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < 8; w++) k = red[w] > k ? red[w] : k;
        if (k) atomicMax(&best[blockIdx.y], k);
    }
}

__global__ void argmax_finish_kernel(unsigned long long *best, int rows, int32_t *out) {
    PL_DIAG_SCOPE(8, rows, 0, 0);
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const unsigned long long k = best[r];
        out[r] = k ? (int32_t)(0xffffffffu - (uint32_t)k) : 0; /* all NaN: id 0, as pl_argmax */
        best[r] = 0;                                           /* ready for the next call */
    }
}

PL_DIAG_SETTER(pl_diag_set_backend)

/* ---- ops table ---- */

int op_weight_create(void *ctx, const pl_weight_src *const *parts, int num_parts, int is_matrix, void **out, char *err,
                     size_t err_len) {
    pl_cuda_backend *b = static_cast<pl_cuda_backend *>(ctx);
    if (!parts || num_parts <= 0 || !out)
        return pl_fail(err, err_len, PL_ERR_INVALID, "weight_create: parts/out is NULL or num_parts %d", num_parts);
    int rows = 0;
    const int cols = parts[0]->cols;
    for (int i = 0; i < num_parts; i++) {
        if (parts[i]->cols != cols)
            return pl_fail(err, err_len, PL_ERR_INTERNAL, "weight_create: part %d has %d cols, want %d", i, parts[i]->cols, cols);
        rows += parts[i]->rows;
    }
    if (rows <= 0 || cols <= 0)
        return pl_fail(err, err_len, PL_ERR_INVALID, "weight_create: shape [%d, %d] must be positive", rows, cols);
    cuda_weight *w = static_cast<cuda_weight *>(calloc(1, sizeof *w));
    if (!w) return pl_fail(err, err_len, PL_ERR_NOMEM, "weight_create: out of memory");
    w->rows = rows;
    w->cols = cols;
    w->is_matrix = is_matrix;
    w->dtype = is_matrix ? b->act : PL_F32;
    const size_t es = esize(w->dtype), row_bytes = (size_t)cols * es;
    w->bytes = (size_t)rows * row_bytes;
    w->d = dev_alloc(b, w->bytes, 0);
    if (!w->d) {
        free(w);
        return pl_fail(err, err_len, PL_ERR_NOMEM, "weight_create [%d, %d]: %s", rows, cols, b->last_err);
    }
    /* Convert and upload in chunks of <= 64 MiB through one pinned buffer. */
    int chunk = (int)((size_t)64 << 20) / (int)(row_bytes > 0 ? row_bytes : 1);
    if (chunk < 1) chunk = 1;
    if (chunk > rows) chunk = rows;
    void *host = nullptr;
    cudaError_t e = cudaMallocHost(&host, (size_t)chunk * row_bytes);
    int rc = PL_OK;
    if (e != cudaSuccess) {
        cudaGetLastError();
        rc = pl_fail(err, err_len, PL_ERR_NOMEM, "weight_create: %zu bytes of pinned staging: %s", (size_t)chunk * row_bytes,
                     cudaGetErrorString(e));
    }
    for (int r0 = 0; r0 < rows && rc == PL_OK; r0 += chunk) {
        const int n = rows - r0 < chunk ? rows - r0 : chunk;
        if ((e = cudaStreamSynchronize(b->stream)) != cudaSuccess) { /* the previous chunk left host */
            rc = pl_fail(err, err_len, PL_ERR_CUDA, "weight_create: %s", cudaGetErrorString(e));
            break;
        }
        if (pl_cuda_pack_rows(parts, num_parts, r0, n, cols, w->dtype == PL_BF16, host) != PL_OK) {
            rc = pl_fail(err, err_len, PL_ERR_NOMEM, "weight_create: out of host memory converting rows");
            break;
        }
        e = cudaMemcpyAsync(static_cast<char *>(w->d) + (size_t)r0 * row_bytes, host, (size_t)n * row_bytes,
                            cudaMemcpyHostToDevice, b->stream);
        if (e != cudaSuccess) rc = pl_fail(err, err_len, PL_ERR_CUDA, "weight_create: upload: %s", cudaGetErrorString(e));
    }
    if (rc == PL_OK && (e = cudaStreamSynchronize(b->stream)) != cudaSuccess)
        rc = pl_fail(err, err_len, PL_ERR_CUDA, "weight_create: %s", cudaGetErrorString(e));
    if (host) cudaFreeHost(host);
    if (rc != PL_OK) {
        dev_free(b, w->d);
        free(w);
        return rc;
    }
    *out = w;
    return PL_OK;
}

void op_weight_free(void *ctx, void *p) {
    cuda_weight *w = static_cast<cuda_weight *>(p);
    if (!w) return;
    dev_free(static_cast<pl_cuda_backend *>(ctx), w->d);
    free(w);
}

int op_weight_row(void *ctx, const void *p, int r, float *out, char *err, size_t err_len) {
    pl_cuda_backend *b = static_cast<pl_cuda_backend *>(ctx);
    const cuda_weight *w = static_cast<const cuda_weight *>(p);
    if (r < 0 || r >= w->rows) return pl_fail(err, err_len, PL_ERR_INVALID, "weight_row: row %d outside [0, %d)", r, w->rows);
    const size_t es = esize(w->dtype);
    void *tmp = malloc((size_t)w->cols * es);
    if (!tmp) return pl_fail(err, err_len, PL_ERR_NOMEM, "weight_row: out of memory");
    cudaError_t e = cudaMemcpyAsync(tmp, static_cast<const char *>(w->d) + (size_t)r * w->cols * es, (size_t)w->cols * es,
                                    cudaMemcpyDeviceToHost, b->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(b->stream);
    if (e != cudaSuccess) {
        free(tmp);
        return pl_fail(err, err_len, PL_ERR_CUDA, "weight_row: %s", cudaGetErrorString(e));
    }
    if (w->dtype == PL_BF16)
        for (int k = 0; k < w->cols; k++) {
            uint32_t u = (uint32_t)static_cast<const uint16_t *>(tmp)[k] << 16;
            memcpy(&out[k], &u, 4);
        }
    else
        memcpy(out, tmp, (size_t)w->cols * 4);
    free(tmp);
    return PL_OK;
}

size_t op_weight_bytes(void *, const void *p) { return static_cast<const cuda_weight *>(p)->bytes; }

void *op_alloc(void *ctx, size_t bytes) { return dev_alloc(static_cast<pl_cuda_backend *>(ctx), bytes, 1); }
void op_free(void *ctx, void *p) { dev_free(static_cast<pl_cuda_backend *>(ctx), p); }

int op_embed(void *ctx, const void *p, const int32_t *tokens, int n, void *out, char *err, size_t err_len) {
    pl_cuda_backend *b = static_cast<pl_cuda_backend *>(ctx);
    const cuda_weight *w = static_cast<const cuda_weight *>(p);
    int frc = flush_pending(b);
    if (frc) return fwd(b, frc, err, err_len);
    if (n <= 0) return PL_OK;
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= w->rows)
            return pl_fail(err, err_len, PL_ERR_INVALID, "tokens[%d]: id %d outside [0, %d)", i, tokens[i], w->rows);
    void *dt = nullptr;
    int rc = stage_upload(b, SLOT_TOKENS, tokens, sizeof(int32_t) * (size_t)n, &dt);
    if (rc) return fwd(b, rc, err, err_len);
    SIG(b, 3ULL, U64(w->d), (unsigned long long)n, U64(out));
    if (REPLAYING(b)) return PL_OK;
    const int threads = w->cols >= 256 ? 256 : 128;
    const int pdl = b->pdl_small;
    if (w->dtype == PL_BF16)
        launch_pdl(embed_kernel<__nv_bfloat16>, dim3(n), dim3(threads), 0, b->stream, pdl, static_cast<const __nv_bfloat16 *>(w->d),
                   static_cast<const int32_t *>(dt), w->cols, static_cast<__nv_bfloat16 *>(out));
    else
        launch_pdl(embed_kernel<float>, dim3(n), dim3(threads), 0, b->stream, pdl, static_cast<const float *>(w->d),
                   static_cast<const int32_t *>(dt), w->cols, static_cast<float *>(out));
    return fwd(b, check_launch(b, "embed kernel"), err, err_len);
}

int op_rmsnorm(void *ctx, const void *x, const void *wp, int rows, int dim, float eps, void *out) {
    pl_cuda_backend *b = static_cast<pl_cuda_backend *>(ctx);
    if (int frc = flush_pending(b)) return frc;
    const cuda_weight *w = static_cast<const cuda_weight *>(wp);
    if (rows <= 0) return PL_OK;
    if (b->skip & PL_CUDA_SKIP_NORM) return PL_OK;
    if (w->rows * w->cols < dim) return set_err(b, PL_ERR_INVALID, "rmsnorm: weight of %d values for dim %d", w->rows * w->cols, dim);
    SIG(b, 4ULL, U64(x), U64(w->d), (unsigned long long)rows, (unsigned long long)dim, U64(out));
    if (REPLAYING(b)) return PL_OK;
    const int threads = dim >= 1024 ? 512 : dim >= 256 ? 256 : 128;
    const int pdl = b->pdl_small;
    if (b->act == PL_BF16)
        launch_pdl(rmsnorm_kernel<__nv_bfloat16>, dim3(rows), dim3(threads), 0, b->stream, pdl, static_cast<const __nv_bfloat16 *>(x),
                   static_cast<const float *>(w->d), dim, eps, static_cast<__nv_bfloat16 *>(out));
    else
        launch_pdl(rmsnorm_kernel<float>, dim3(rows), dim3(threads), 0, b->stream, pdl, static_cast<const float *>(x),
                   static_cast<const float *>(w->d), dim, eps, static_cast<float *>(out));
    return check_launch(b, "rmsnorm kernel");
}

/* CTAs per row of add_rmsnorm_parts_kernel at width dim (a multiple of 8): whole warps each
 * (so the sums of squares add as block_sum's), the fewest from 2 with at most 8 warps each (one
 * CTA when no such count divides the row's warps and they are at most 8), and at most 32 warps
 * a row (block_sum's); 0 when none fits. Measured on the H200 at batch 64, paired per step
 * against the CTAs of one warp this took before (PERF.md, forty-seventh session): 2 CTAs per
 * row 1.3% faster at Qwen3-4B (dim 2560: 5 warps each), 2.9% at Qwen3-8B (4096: 8 warps), where
 * 4 CTAs gave 1.4% and 8 1.1%; on an H100 Qwen3-4B 0.5%, Qwen3-1.7B 0.4%, one CTA of 10 warps
 * 0.3% slower. The seed trace's batch-4 steps were level with every count there. A row's cluster
 * meets at two barriers, each waiting for its slowest CTA's loads; fewer CTAs wait less. */
int parts_ctas(int dim) {
    const int nwt = (dim / 8 + 31) / 32;
    if (nwt > 32) return 0;
    for (int C = 2; C <= 16; C++)
        if (nwt % C == 0 && nwt / C <= 8) return C;
    return nwt <= 8 ? 1 : 0;
}

/* h += x, out = RMSNorm(h) * w with x given as ks f32 partial planes [rows][dim] (a held tile
 * GEMM's or the fused MLP's): the partials' kernel, parts_ctas(dim) CTAs per row */
int launch_parts_norm(pl_cuda_backend *b, void *h, const void *x, const void *w, int rows, int dim, float eps, void *out, const float *parts,
                      int ks) {
    const int nwt = (dim / 8 + 31) / 32;
    const int C = b->parts_c > 0 && b->parts_c <= 16 && nwt % b->parts_c == 0 && nwt / b->parts_c <= 8 ? b->parts_c : parts_ctas(dim),
              warps = nwt / C;
    if (!b->parts_attr) { /* clusters past 8 CTAs (the portable size) */
        cudaFuncSetAttribute(add_rmsnorm_parts_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
        b->parts_attr = 1;
    }
    launch_pdl_cluster(add_rmsnorm_parts_kernel, dim3(rows, C), dim3(32 * warps), 0, b->stream, b->pdl_small, (unsigned)C,
                       static_cast<__nv_bfloat16 *>(h), static_cast<__nv_bfloat16 *>(const_cast<void *>(x)), parts, ks,
                       static_cast<const float *>(w), dim, eps, static_cast<__nv_bfloat16 *>(out));
    b->parts_fused++;
    return check_launch(b, "add_rmsnorm kernel (GEMM partials)");
}

int readable_rows(const pl_cuda_backend *b, const void *x, size_t row_bytes);
bool wide_holds(pl_cuda_backend *b, int rows, int N, int K, const void *wd, const void *x, const void *y, pl_cuda_mlp_plan *plan);
int op_add_rmsnorm(void *ctx, void *h, const void *x, const void *wp, int rows, int dim, float eps, void *out) {
    pl_cuda_backend *b = static_cast<pl_cuda_backend *>(ctx);
    const cuda_weight *w = static_cast<const cuda_weight *>(wp);
    /* a held GEMM of x: its partials come here when the partials' kernel takes the shape (bf16,
     * parts_ctas, 16-byte aligned, the norm not skipped), else it launches as it was */
    const uintptr_t al = (uintptr_t)h | (uintptr_t)x | (uintptr_t)out | (uintptr_t)w->d;
    const int C = parts_ctas(dim); /* CTAs per row of the partials' kernel */
    const bool parts_ok = b->act == PL_BF16 && dim % 8 == 0 && C > 0 && (al & 15) == 0 && !(b->skip & PL_CUDA_SKIP_NORM) && w->rows * w->cols >= dim;
    mm_pending parts = b->mm;
    parts.on = parts.on && parts.y == x && parts.rows == rows && parts.N == dim && parts_ok;
    if (parts.on) b->mm.on = 0;
    /* or a GEMM held for the fused MLP (its shape takes a plan) whose output is this x: the wide kernel */
    if (!parts.on && b->mlp.stage == 1 && b->mlp.gu == x && b->mlp.rows == rows && b->mlp.N == dim && parts_ok) {
        pl_cuda_mlp_plan wp;
        if (wide_holds(b, rows, b->mlp.N, b->mlp.K, b->mlp.w, b->mlp.x, x, &wp)) {
            parts = mm_pending{b->mlp.w, b->mlp.x, b->mlp.gu, rows, b->mlp.N, b->mlp.K, 1, 1, wp};
            b->mlp.stage = 0;
        }
    }
    /* or the fused MLP's down partials */
    const mlp_parts mparts = b->mlpp;
    const bool mlp_on = mparts.on && mparts.y == x && mparts.rows == rows && mparts.N == dim && parts_ok;
    if (mlp_on) b->mlpp.on = 0;
    if (int frc = flush_pending(b)) return frc;
    if (rows <= 0) return PL_OK;
    if (b->skip & PL_CUDA_SKIP_NORM) return PL_OK;
    if (w->rows * w->cols < dim) return set_err(b, PL_ERR_INVALID, "add_rmsnorm: weight of %d values for dim %d", w->rows * w->cols, dim);
    SIG(b, 5ULL, U64(h), U64(x), U64(w->d), (unsigned long long)rows, (unsigned long long)dim, U64(out), (unsigned long long)b->parts_c);
    if (REPLAYING(b)) return PL_OK;
    if (parts.on || mlp_on) {
        /* the GEMM's K-split partials (or the fused MLP's), added here: the warps' sums of
         * squares in the order of add_rmsnorm_bf16x8_kernel, so h, x and out get the bits of the
         * unfused pair */
        if (parts.on && parts.wide) {
            const int xr = readable_rows(b, parts.x, (size_t)parts.K * 2);
            const int ge = pl_cuda_wide_bf16(&parts.plan, parts.x, rows, xr > rows ? xr : rows, parts.w, b->mlp_part, b->gemv_ws.pdl, b->stream);
            if (ge != 0)
                return set_err(b, PL_ERR_CUDA, "matmul [%d x %d] x [%d x %d]^T: wide kernel launch: %s", rows, parts.K, dim, parts.K,
                               cudaGetErrorString(static_cast<cudaError_t>(ge)));
            b->wide_runs++;
            return launch_parts_norm(b, h, x, w->d, rows, dim, eps, out, b->mlp_part, parts.plan.splits);
        }
        if (parts.on) {
            const int ge = pl_cuda_gemv_parts_bf16(parts.w, parts.x, rows, dim, parts.K, &b->gemv_ws, b->stream);
            if (ge != 0)
                return set_err(b, PL_ERR_CUDA, "matmul [%d x %d] x [%d x %d]^T: gemv launch: %s", rows, parts.K, dim, parts.K,
                               cudaGetErrorString(static_cast<cudaError_t>(ge)));
        }
        return launch_parts_norm(b, h, x, w->d, rows, dim, eps, out, parts.on ? pl_cuda_gemv_parts(&b->gemv_ws) : b->mlp_part,
                                 parts.on ? pl_cuda_gemv_tile_splits(dim, parts.K, rows, &b->gemv_ws) : mparts.splits);
    }
    if (b->act == PL_BF16 && dim % 8 == 0 && dim <= 8 * 1024 && (al & 15) == 0) {
        const int t8 = (dim / 8 + 31) / 32 * 32;
        launch_pdl(add_rmsnorm_bf16x8_kernel, dim3(rows), dim3(t8), 0, b->stream, b->pdl_small, static_cast<__nv_bfloat16 *>(h),
                   static_cast<const __nv_bfloat16 *>(x), static_cast<const float *>(w->d), dim, eps,
                   static_cast<__nv_bfloat16 *>(out));
        return check_launch(b, "add_rmsnorm kernel");
    }
    const int threads = dim >= 1024 ? 512 : dim >= 256 ? 256 : 128;
    const int pdl = b->pdl_small;
    if (b->act == PL_BF16)
        launch_pdl(add_rmsnorm_kernel<__nv_bfloat16>, dim3(rows), dim3(threads), 0, b->stream, pdl, static_cast<__nv_bfloat16 *>(h),
                   static_cast<const __nv_bfloat16 *>(x), static_cast<const float *>(w->d), dim, eps,
                   static_cast<__nv_bfloat16 *>(out));
    else
        launch_pdl(add_rmsnorm_kernel<float>, dim3(rows), dim3(threads), 0, b->stream, pdl, static_cast<float *>(h),
                   static_cast<const float *>(x), static_cast<const float *>(w->d), dim, eps, static_cast<float *>(out));
    return check_launch(b, "add_rmsnorm kernel");
}

/* The skinny-GEMM kernel for rows x W^T into y (0: cuBLAS). Measured on the H200 (PERF.md):
 * the CUDA-core kernel wins at one row, the staged tensor-core tile kernel from 2 to 64 rows
 * (past 32 since its TMA copies: 1-4% ahead of cuBLAS at 48 and 64 rows), cuBLAS beyond. */
int gemv_variant(const pl_cuda_backend *b, int rows, const cuda_weight *w, const void *x, const void *y) {
    int variant = 0;
    if (b->gemv_mode == 2) variant = rows <= PL_CUDA_GEMV_MAX_M ? PL_CUDA_GEMV_FMA : 0;
    else if (b->gemv_mode == 3) variant = rows <= PL_CUDA_GEMV_MAX_M ? PL_CUDA_GEMV_MMA : 0;
    else if (b->gemv_mode == 4) variant = rows == 1 ? PL_CUDA_GEMV_FMA : rows <= 32 ? PL_CUDA_GEMV_TILE : 0;
    else if (b->gemv_mode == 1) variant = rows == 1 ? PL_CUDA_GEMV_FMA : rows <= PL_CUDA_GEMV_TILE_MAX_M ? PL_CUDA_GEMV_TILE : 0;
    const bool ok = b->act == PL_BF16 && w->dtype == PL_BF16 && pl_cuda_gemv_supported(rows, w->rows, w->cols, w->d, x, y);
    return ok ? variant : 0;
}

/* The K-split scratch of a skinny-GEMM shape: sized by the first (eager) step of a shape,
 * never inside a graph. */
int ensure_gemv_ws(pl_cuda_backend *b, int variant, int N, int K, char *err, size_t err_len) {
    const size_t wsb = pl_cuda_gemv_ws_bytes(variant, N, K, &b->gemv_ws);
    if (wsb <= b->gemv_ws.bytes) return PL_OK;
    if (b->gmode == G_CAPTURE) return set_err(b, PL_ERR_INTERNAL, "matmul: skinny-GEMM scratch grows inside a capture");
    cudaStreamSynchronize(b->stream); /* the old scratch may be in use */
    if (b->gemv_ws.ptr) cudaFree(b->gemv_ws.ptr);
    b->gemv_ws.ptr = nullptr;
    b->gemv_ws.bytes = 0;
    cudaError_t e = cudaMalloc(&b->gemv_ws.ptr, wsb);
    if (e == cudaSuccess) e = cudaMemsetAsync(b->gemv_ws.ptr, 0, wsb, b->stream);
    if (e != cudaSuccess) {
        cudaGetLastError();
        if (b->gemv_ws.ptr) cudaFree(b->gemv_ws.ptr);
        b->gemv_ws.ptr = nullptr;
        return pl_fail(err, err_len, cuda_status(e), "matmul: %zu bytes of skinny-GEMM scratch: %s", wsb, cudaGetErrorString(e));
    }
    b->gemv_ws.bytes = wsb;
    return PL_OK;
}

/* Rows of a [*, row_bytes] array at x that lie inside x's allocation (0 when it is not ours):
 * how far a GEMM's x boxes may read past its rows without leaving the allocation. */
int readable_rows(const pl_cuda_backend *b, const void *x, size_t row_bytes) {
    const alloc_rec *r = rec_holding(b->recs, b->num_recs, x);
    if (!r) return 0;
    const size_t rows = (size_t)(static_cast<const char *>(r->p) + r->bytes - static_cast<const char *>(x)) / row_bytes;
    return rows > INT_MAX ? INT_MAX : (int)rows;
}

/* The GEMM knobs for one call of `rows` rows whose x allocation holds x_rows rows: the k-sliced
 * tiles read bf16 x in 8-row boxes, so below 8 rows they may read up to x_rows of it (the
 * forward pass's buffers hold 16 or more) and keep every box row in range. A copy per call, so
 * no call's x leaves its rows in the backend's knobs. */
pl_cuda_gemv_ws gemv_ws_for(const pl_cuda_backend *b, int rows, int x_rows) {
    pl_cuda_gemv_ws ws = b->gemv_ws;
    ws.x_rows = b->act == PL_BF16 && rows < 8 ? x_rows : 0;
    return ws;
}

/* Rows from which AUTO runs a decode batch's MLP as the fused kernel (src/cuda/mlp.cu):
 * measured on the H200 against gate/up + SwiGLU + down in the Qwen3-4B step (PERF.md,
 * twenty-ninth session): 0.3-1% faster at 60-64 rows, level at 56, 0.5-1.5% slower at 40-48. */
#define PL_CUDA_MLP_MIN_ROWS 57

/* Whether a gate/up GEMM of `rows` rows (w [2 inter, hidden] bf16, x, into y) may be held for
 * the fused MLP, with its plan. Any GEMM of such a shape is held: only a SwiGLU of its output and
 * then a down GEMM of that make the fused kernel, anything else launches it as it was. Its
 * scratch (down partials for 64 rows, counters) is sized in an eager step, never inside a
 * capture; a shape the kernel does not take, or no scratch, runs the three kernels. */
bool ensure_mlp_part(pl_cuda_backend *b, size_t need);
/* What every kernel of src/cuda/mlp.cu (fused MLP, wide, full-K) asks of a GEMM: the kernels built
 * for this device, a bf16 step with no ops skipped, min_rows..PL_CUDA_MLP_ROWS rows, and x, y and
 * the weight 16-byte aligned. */
bool mlp_kernel_takes(const pl_cuda_backend *b, int rows, int min_rows, const void *x, const void *y, const void *wd) {
    return b->mlp_ok && !b->skip && b->act == PL_BF16 && rows >= min_rows && rows <= PL_CUDA_MLP_ROWS &&
           !(((uintptr_t)x | (uintptr_t)y | (uintptr_t)wd) & 15);
}

bool mlp_holds(pl_cuda_backend *b, int rows, const cuda_weight *w, const void *x, const void *y, pl_cuda_mlp_plan *plan) {
    if (b->mlp_mode == 1 || w->dtype != PL_BF16 || w->rows % 2 ||
        !mlp_kernel_takes(b, rows, b->mlp_mode == 2 ? 1 : PL_CUDA_MLP_MIN_ROWS, x, y, w->d))
        return false;
    if (!pl_cuda_mlp_plan_for(w->cols, w->rows / 2, b->gemv_ws.sms, plan)) return false;
    if (b->mlp_plain) plan->coop = 0;
    return ensure_mlp_part(b, (size_t)plan->splits * PL_CUDA_MLP_ROWS * plan->hidden * 4);
}

/* Rows from which AUTO runs a projection whose add + RMSNorm follows as pl_cuda_wide_bf16. */
#define PL_CUDA_WIDE_MIN_ROWS 57

/* Whether a GEMM of `rows` rows (w [N, K] bf16, x, into y) may be held for the wide kernel, with
 * its plan: held like the 2-16-row tile GEMMs, it runs so only when the add + RMSNorm of its
 * output comes next (op_add_rmsnorm), else as it was. */
bool wide_holds(pl_cuda_backend *b, int rows, int N, int K, const void *wd, const void *x, const void *y, pl_cuda_mlp_plan *plan) {
    if (b->wide_mode == 1 || b->parts_norm || !mlp_kernel_takes(b, rows, b->wide_mode == 2 ? 1 : PL_CUDA_WIDE_MIN_ROWS, x, y, wd))
        return false;
    if (!pl_cuda_wide_plan_for(N, K, b->gemv_ws.sms, plan)) return false;
    return ensure_mlp_part(b, (size_t)plan->splits * PL_CUDA_MLP_ROWS * plan->hidden * 4);
}

/* Rows from which mode 1 runs a projection that no add + RMSNorm takes (the qkv projection) as
 * pl_cuda_fullk_bf16. Not the default: at batch 64 it took 1.3-1.6% off Qwen3-4B's step and added
 * 1.2-1.8% to Qwen3-8B's and 3% to Qwen3-1.7B's (PERF.md, thirty-second session). */
#define PL_CUDA_FULLK_MIN_ROWS 57

/* Whether a GEMM of `rows` rows (w [N, K] bf16, x, into y) runs as the full-K kernel, with its plan. */
bool fullk_takes(pl_cuda_backend *b, int rows, int N, int K, const void *wd, const void *x, const void *y, pl_cuda_mlp_plan *plan) {
    if (b->fullk_mode == 0 || !mlp_kernel_takes(b, rows, b->fullk_mode >= 2 ? 1 : PL_CUDA_FULLK_MIN_ROWS, x, y, wd)) return false;
    if (!pl_cuda_fullk_plan_for(N, K, b->gemv_ws.sms, b->fullk_ring, plan)) return false;
    plan->pre = b->fullk_pre;
    return true;
}

int launch_fullk(pl_cuda_backend *b, const pl_cuda_mlp_plan &plan, const void *w, const void *x, void *y, int rows) {
    const int xr = readable_rows(b, x, (size_t)plan.hidden * 2);
    const int ge = pl_cuda_fullk_bf16(&plan, x, rows, xr > rows ? xr : rows, w, y, b->gemv_ws.pdl, b->stream);
    if (ge != 0)
        return set_err(b, PL_ERR_CUDA, "matmul [%d x %d] x [%d x %d]^T: full-K kernel launch: %s", rows, plan.hidden, plan.inter, plan.hidden,
                       cudaGetErrorString(static_cast<cudaError_t>(ge)));
    b->fullk_runs++;
    return PL_OK;
}

/* A held GEMM that no fused kernel took, launched as op_matmul would have: the full-K kernel where
 * it takes the shape, else the tile GEMM. */
int launch_held_gemm(pl_cuda_backend *b, const void *w, const void *x, void *y, int rows, int N, int K) {
    pl_cuda_mlp_plan fp;
    if (fullk_takes(b, rows, N, K, w, x, y, &fp)) return launch_fullk(b, fp, w, x, y, rows);
    pl_cuda_gemv_ws ws = gemv_ws_for(b, rows, readable_rows(b, x, (size_t)K * 2));
    /* A held split GEMM that no norm took (the qkv projection, the decode attention next) lets
     * the attention launch halfway through its main loop (AUTO), not at entry: the attention's
     * CTAs then enter as this GEMM's leave instead of taking SM slots and DRAM while it streams.
     * Measured on the H200 over the seed trace's batch-4 schedule, paired per step (PERF.md,
     * fortieth session): 0.4-0.8% faster; after the PDL wait 0.3-0.4%, at the end 1.5% slower. */
    if (!ws.tile_trigger) ws.tile_trigger = 3 | 7 << 4;
    const int ge = pl_cuda_gemv_bf16(w, x, rows, N, K, y, 0, PL_CUDA_GEMV_TILE, &ws, b->stream);
    if (ge != 0)
        return set_err(b, PL_ERR_CUDA, "matmul [%d x %d] x [%d x %d]^T: gemv launch: %s", rows, K, N, K,
                       cudaGetErrorString(static_cast<cudaError_t>(ge)));
    return PL_OK;
}

/* The fused MLP's (and the wide projections') partials scratch of at least `need` bytes, and the
 * MLP's counters: allocated in an eager step, never inside a capture (then false: the caller
 * runs its kernels as they were). */
bool ensure_mlp_part(pl_cuda_backend *b, size_t need) {
    if (need <= b->mlp_part_bytes && b->mlp_cnt) return true;
    if (b->gmode == G_CAPTURE) return false;
    /* scratch as the GEMMs' (not counted in live_bytes) */
    cudaStreamSynchronize(b->stream); /* the old partials may be in use */
    if (b->mlp_part) cudaFree(b->mlp_part);
    b->mlp_part = nullptr;
    b->mlp_part_bytes = 0;
    float *part = nullptr;
    if (cudaMalloc(&part, need) == cudaSuccess) b->mlp_part = part, b->mlp_part_bytes = need;
    if (b->mlp_part && !b->mlp_cnt) { /* zero, and zero again after every launch */
        int *cnt = nullptr;
        if (cudaMalloc(&cnt, 64 * sizeof(int)) == cudaSuccess && cudaMemsetAsync(cnt, 0, 64 * sizeof(int), b->stream) == cudaSuccess)
            b->mlp_cnt = cnt;
        else if (cnt)
            cudaFree(cnt);
    }
    cudaGetLastError(); /* a failed allocation is not sticky: the three kernels run instead */
    return b->mlp_part && b->mlp_cnt;
}

/* A held MLP's ops launched as they were: the gate/up GEMM, and its SwiGLU when held too. */
int launch_swiglu(pl_cuda_backend *b, const void *gu, int rows, int inter, void *out);
int launch_held_mlp(pl_cuda_backend *b) {
    const mlp_pending m = b->mlp;
    b->mlp.stage = 0;
    /* a GEMM of the gate/up shape that no SwiGLU and down GEMM took (Qwen3-4B's qkv projection is one) */
    if (int rc = launch_held_gemm(b, m.w, m.x, m.gu, m.rows, m.N, m.K)) return rc;
    return m.stage == 2 ? launch_swiglu(b, m.gu, m.rows, m.N / 2, m.h) : PL_OK;
}

/* The held MLP with the down weight wd as the fused kernel; its down partials wait for the add
 * + RMSNorm after it (op_add_rmsnorm) and belong in y (else flush_pending adds them there).
 * MLP_UNFUSED: it could not launch and the held ops are held again, for the down GEMM to run as
 * it would have. */
constexpr int MLP_UNFUSED = -1;
int launch_mlp(pl_cuda_backend *b, const void *wd, void *y, char *err, size_t err_len) {
    const mlp_pending m = b->mlp;
    b->mlp.stage = 0;
    const int xr = readable_rows(b, m.x, (size_t)m.K * 2);
    pl_cuda_mlp_plan mp = m.plan;
    mp.pre = b->mlp_pre;
    const int ge = pl_cuda_mlp_bf16(&mp, m.x, m.rows, xr > m.rows ? xr : m.rows, m.w, wd, m.h, b->mlp_part, b->mlp_cnt, b->gemv_ws.pdl,
                                    b->stream);
    if (ge == cudaErrorCooperativeLaunchTooLarge) {
        /* the device cannot hold every CTA at once (SMs shared with another context): the held
         * ops and this down GEMM run as three kernels, from now on (mlp_ok is in the step's
         * signature, so graphs captured with the kernel are captured again). First met in an
         * eager step, which comes before a shape's capture. */
        cudaGetLastError();
        b->mlp_ok = 0;
        b->mlp = m;
        return MLP_UNFUSED;
    }
    if (ge != 0)
        return pl_fail(err, err_len, PL_ERR_CUDA, "mlp of %d rows (hidden %d, intermediate %d): fused kernel launch: %s", m.rows, m.K,
                       m.N / 2, cudaGetErrorString(static_cast<cudaError_t>(ge)));
    b->mlpp = mlp_parts{1, y, m.rows, m.K, m.plan.splits};
    b->mlp_runs++;
    return PL_OK;
}

int op_matmul(void *ctx, const void *x, int rows, const void *wp, void *out, int out_f32, char *err, size_t err_len) {
    pl_cuda_backend *b = static_cast<pl_cuda_backend *>(ctx);
    const cuda_weight *w = static_cast<const cuda_weight *>(wp);
    /* the down GEMM of a held MLP (its SwiGLU's output, [hidden, inter]): the fused kernel; the
     * held ops are its, so nothing is flushed */
    const bool mlp_down = b->mlp.stage == 2 && x == b->mlp.h && rows == b->mlp.rows && !out_f32 && w->is_matrix && w->dtype == PL_BF16 &&
                          w->rows == b->mlp.K && 2 * w->cols == b->mlp.N && ((uintptr_t)out & 15) == 0 && ((uintptr_t)w->d & 15) == 0;
    int frc = mlp_down ? PL_OK : flush_pending(b);
    if (frc) return fwd(b, frc, err, err_len);
    if (!w->is_matrix) return pl_fail(err, err_len, PL_ERR_INTERNAL, "matmul: weight is not a matrix");
    if (rows <= 0) return PL_OK;
    if ((b->skip & PL_CUDA_SKIP_GEMM) && !out_f32) return PL_OK; /* the LM head (f32 out) stays */
    const int N = w->rows, K = w->cols;
    const bool f32_out = out_f32 || b->act == PL_F32;
    /* Logits may land in host memory (the forward pass's logit buffers): compute into device
     * scratch and copy back. */
    cudaPointerAttributes at;
    bool host_out = false;
    if (out_f32 && cudaPointerGetAttributes(&at, out) != cudaSuccess) {
        cudaGetLastError();
        host_out = true;
    } else if (out_f32) {
        host_out = at.type == cudaMemoryTypeHost || at.type == cudaMemoryTypeUnregistered;
    }
    const size_t out_bytes = (size_t)rows * N * (f32_out ? 4 : 2);
    void *dst = out;
    if (b->gmode != G_NONE && host_out) return set_err(b, PL_ERR_INTERNAL, "matmul into host memory inside a graphed step");
    SIG(b, 6ULL, U64(x), (unsigned long long)rows, U64(w->d), U64(out), (unsigned long long)out_f32, (unsigned long long)b->gemv_mode,
        (unsigned long long)b->gemv_ws.pdl, (unsigned long long)b->pdl_small, (unsigned long long)b->gemv_ws.tile_ctas_per_sm,
        (unsigned long long)b->gemv_ws.tile_max_splits, (unsigned long long)b->gemv_ws.tile_min_ktiles,
        (unsigned long long)b->gemv_ws.tile_copy, (unsigned long long)b->parts_norm, (unsigned long long)b->gemv_ws.kslice,
        (unsigned long long)b->mlp_mode, (unsigned long long)b->mlp_plain, (unsigned long long)b->mlp_ok, U64(b->mlp_part), U64(b->mlp_cnt),
        (unsigned long long)b->wide_mode, (unsigned long long)b->mlp_pre, (unsigned long long)b->fullk_mode,
        (unsigned long long)b->fullk_ring, (unsigned long long)b->fullk_pre, (unsigned long long)b->gemv_ws.tile_alone,
        (unsigned long long)b->gemv_ws.tile_trigger, (unsigned long long)b->gemv_ws.tile_fixup,
        (unsigned long long)b->gemv_ws.tile_pre_all);
    if (REPLAYING(b)) return PL_OK;
    if (mlp_down) {
        const int rc = launch_mlp(b, w->d, out, err, err_len);
        if (rc != MLP_UNFUSED) return rc;
        if ((frc = flush_pending(b))) return fwd(b, frc, err, err_len);
    }
    if (host_out) {
        int rc = ensure_scratch(b, out_bytes);
        if (rc) return fwd(b, rc, err, err_len);
        dst = b->scratch;
    }
    const int variant = gemv_variant(b, rows, w, x, dst);
    if (variant) {
        if (int rc = ensure_gemv_ws(b, variant, N, K, err, err_len)) return rc;
        const pl_cuda_gemv_ws ws = gemv_ws_for(b, rows, variant == PL_CUDA_GEMV_TILE ? readable_rows(b, x, (size_t)K * 2) : 0);
        pl_cuda_mlp_plan plan;
        /* a tile GEMM into device bf16 may be held for a kernel the next ops make, or run another one */
        if (variant == PL_CUDA_GEMV_TILE && !f32_out && !host_out) {
            if (mlp_holds(b, rows, w, x, dst, &plan)) {
                b->mlp = mlp_pending{1, w->d, x, dst, nullptr, rows, N, K, plan}; /* op_swiglu and the down GEMM may follow */
                return PL_OK;
            }
            if (b->parts_norm == 0 && rows >= 2 && rows <= 16 && pl_cuda_gemv_tile_splits(N, K, rows, &ws) > 1 &&
                !pl_cuda_gemv_kslice(rows, N, K, &ws)) {
                b->mm = mm_pending{w->d, x, dst, rows, N, K, 1, 0, {}}; /* op_add_rmsnorm may take its partials */
                return PL_OK;
            }
            if (w->dtype == PL_BF16 && wide_holds(b, rows, N, K, w->d, x, dst, &plan)) {
                b->mm = mm_pending{w->d, x, dst, rows, N, K, 1, 1, plan}; /* op_add_rmsnorm may take it as the wide kernel */
                return PL_OK;
            }
            if (w->dtype == PL_BF16 && fullk_takes(b, rows, N, K, w->d, x, dst, &plan))
                return fwd(b, launch_fullk(b, plan, w->d, x, dst, rows), err, err_len);
        }
        const int ge = pl_cuda_gemv_bf16(w->d, x, rows, N, K, dst, f32_out, variant, &ws, b->stream);
        if (ge != 0)
            return pl_fail(err, err_len, PL_ERR_CUDA, "matmul [%d x %d] x [%d x %d]^T: gemv launch: %s", rows, K, N, K,
                           cudaGetErrorString(static_cast<cudaError_t>(ge)));
    } else {
        const float alpha = 1.f, beta = 0.f;
        const cudaDataType_t in_t = b->act == PL_BF16 ? CUDA_R_16BF : CUDA_R_32F;
        const cudaDataType_t out_t = f32_out ? CUDA_R_32F : CUDA_R_16BF;
        /* Column-major view: out^T [N, rows] = W [N, K] (row-major [N, K] read transposed) x^T [K, rows]. */
        cublasStatus_t st = cublasGemmEx(b->blas, CUBLAS_OP_T, CUBLAS_OP_N, N, rows, K, &alpha, w->d, in_t, K, x, in_t, K, &beta,
                                         dst, out_t, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        if (st != CUBLAS_STATUS_SUCCESS)
            return pl_fail(err, err_len, PL_ERR_CUDA, "matmul [%d x %d] x [%d x %d]^T: cuBLAS status %d (%s)", rows, K, N, K, (int)st,
                           cublasGetStatusString(st));
    }
    if (host_out) {
        cudaError_t e = cudaMemcpyAsync(out, dst, out_bytes, cudaMemcpyDeviceToHost, b->stream);
        if (e == cudaSuccess) e = cudaStreamSynchronize(b->stream);
        if (e != cudaSuccess) return pl_fail(err, err_len, PL_ERR_CUDA, "matmul: copying %zu bytes to the host: %s", out_bytes, cudaGetErrorString(e));
    }
    return PL_OK;
}

int op_rope_table(void *ctx, const int32_t *pos, int rows, int hd, double theta, float *cs) {
    pl_cuda_backend *b = static_cast<pl_cuda_backend *>(ctx);
    if (int frc = flush_pending(b)) return frc;
    if (rows <= 0) return PL_OK;
    if (hd <= 0 || hd % 2 || hd > 1024) return set_err(b, PL_ERR_INVALID, "rope_table: head_dim %d must be even and <= 1024", hd);
    const int half = hd / 2;
    /* positions then inverse frequencies, computed as the CPU path does (f32 powf) */
    size_t bytes = sizeof(int32_t) * (size_t)rows + sizeof(float) * (size_t)half;
    char *tmp = static_cast<char *>(malloc(bytes));
    if (!tmp) return set_err(b, PL_ERR_NOMEM, "rope_table: out of host memory");
    memcpy(tmp, pos, sizeof(int32_t) * (size_t)rows);
    float *invf = reinterpret_cast<float *>(tmp + sizeof(int32_t) * (size_t)rows);
    for (int i = 0; i < half; i++) invf[i] = 1.0f / powf((float)theta, (float)(2 * i) / (float)hd);
    void *d = nullptr;
    int rc = stage_upload(b, SLOT_ROPE, tmp, bytes, &d);
    free(tmp);
    if (rc) return rc;
    SIG(b, 7ULL, (unsigned long long)rows, (unsigned long long)hd, U64(cs));
    if (REPLAYING(b)) return PL_OK;
    const int32_t *dpos = static_cast<const int32_t *>(d);
    const float *dinv = reinterpret_cast<const float *>(static_cast<char *>(d) + sizeof(int32_t) * (size_t)rows);
    launch_pdl(rope_table_kernel, dim3(grid_for((size_t)rows * half, 256)), dim3(256), 0, b->stream, b->pdl_small, dpos, dinv,
               rows, hd, cs);
    return check_launch(b, "rope_table kernel");
}

/* The q/k norm + RoPE kernel alone: q heads to q_out when set, the rest in place. */
int launch_qk_norm_rope(pl_cuda_backend *b, const rope_pending &r) {
    const int heads = r.nq + r.nkv, wpb = 4;
    const dim3 grid((unsigned)r.rows, (unsigned)((heads + wpb - 1) / wpb));
    const size_t smem = sizeof(float) * (size_t)wpb * r.hd;
    const int pdl = b->pdl_small;
    if (b->act == PL_BF16)
        launch_pdl(qk_norm_rope_kernel<__nv_bfloat16>, grid, dim3(32 * wpb), smem, b->stream, pdl,
                   static_cast<__nv_bfloat16 *>(r.qkv), r.stride, r.nq, r.nkv, r.hd, r.wq, r.wk, r.eps, r.cs,
                   static_cast<__nv_bfloat16 *>(r.q_out));
    else
        launch_pdl(qk_norm_rope_kernel<float>, grid, dim3(32 * wpb), smem, b->stream, pdl, static_cast<float *>(r.qkv), r.stride,
                   r.nq, r.nkv, r.hd, r.wq, r.wk, r.eps, r.cs, static_cast<float *>(r.q_out));
    return check_launch(b, "qk_norm_rope kernel");
}

/* Whether the pending appends copy exactly the k and v columns of every row of the pending
 * rope (as the paged forward pass appends them), so one kernel can do both. */
bool rope_fuses(const pl_cuda_backend *b, const rope_pending &r) {
    const kv_pending &p = b->pend;
    const size_t es = esize(b->act);
    const char *q = static_cast<const char *>(r.qkv);
    return !(b->skip & (PL_CUDA_SKIP_ROPE | PL_CUDA_SKIP_APPEND)) && r.q_out && p.n == r.rows && p.dt == b->act &&
           p.heads == r.nkv && p.hd == r.hd && p.stride == r.stride && p.ps > 0 && p.cap_pages > 0 &&
           p.k == q + (size_t)r.nq * r.hd * es && p.v == q + (size_t)(r.nq + r.nkv) * r.hd * es;
}

/* The pending rope and appends as one qk_norm_rope_append_kernel launch (rope_fuses holds). */
int launch_rope_append(pl_cuda_backend *b, const rope_pending &r) {
    kv_pending &p = b->pend;
    const int n = p.n;
    p.n = 0;
    void *d = nullptr;
    int rc = stage_append_meta(b, n, &d);
    if (rc) return rc;
    SIG(b, 13ULL, U64(r.qkv), (unsigned long long)r.rows, r.stride, (unsigned long long)r.nq, (unsigned long long)r.nkv,
        (unsigned long long)r.hd, U64(r.wq), U64(r.wk), U64(r.cs), U64(r.q_out), (unsigned long long)p.ps,
        (unsigned long long)p.cap_pages, U64(p.kp), U64(p.vp), U64(d));
    if (REPLAYING(b)) return PL_OK;
    const int heads = r.nq + 2 * r.nkv, wpb = 4;
    const dim3 grid((unsigned)r.rows, (unsigned)((heads + wpb - 1) / wpb));
    const size_t smem = sizeof(float) * (size_t)wpb * r.hd;
    const int32_t *ids = static_cast<const int32_t *>(d), *slots = ids + n;
    const int pdl = b->pdl_small;
    if (b->act == PL_BF16)
        launch_pdl(qk_norm_rope_append_kernel<__nv_bfloat16>, grid, dim3(32 * wpb), smem, b->stream, pdl,
                   static_cast<__nv_bfloat16 *>(r.qkv), r.stride, r.nq, r.nkv, r.hd, r.wq, r.wk, r.eps, r.cs,
                   static_cast<__nv_bfloat16 *>(r.q_out), ids, slots, p.ps, p.cap_pages, static_cast<__nv_bfloat16 *>(p.kp),
                   static_cast<__nv_bfloat16 *>(p.vp));
    else
        launch_pdl(qk_norm_rope_append_kernel<float>, grid, dim3(32 * wpb), smem, b->stream, pdl, static_cast<float *>(r.qkv),
                   r.stride, r.nq, r.nkv, r.hd, r.wq, r.wk, r.eps, r.cs, static_cast<float *>(r.q_out), ids, slots, p.ps,
                   p.cap_pages, static_cast<float *>(p.kp), static_cast<float *>(p.vp));
    return check_launch(b, "qk_norm_rope + kv_append kernel");
}

/* Launches the deferred work: a held GEMM (as it was; op_add_rmsnorm takes it first when it
 * is its norm), a pending rope (fused with the pending appends when they copy its k/v rows,
 * else alone and first: the appends copy the K it writes), then the appends. Every op and
 * every host-facing call starts here. Signatures were taken when the work was deferred; a
 * replay launches nothing. */
int flush_pending(pl_cuda_backend *b) {
    if (b->mlp.stage)
        if (int rc = launch_held_mlp(b)) return rc;
    if (b->mlpp.on) { /* the fused MLP's down partials, no norm after it: added into its output */
        const mlp_parts q = b->mlpp;
        b->mlpp.on = 0;
        const int ge = pl_cuda_mlp_sum_bf16(b->mlp_part, q.splits, q.rows, q.N, q.y, b->pdl_small, b->stream);
        if (ge != 0) return set_err(b, PL_ERR_CUDA, "mlp partials sum launch: %s", cudaGetErrorString(static_cast<cudaError_t>(ge)));
    }
    if (b->mm.on) { /* held only while nothing else is pending (op_matmul flushed first) */
        const mm_pending m = b->mm;
        b->mm.on = 0;
        if (int rc = launch_held_gemm(b, m.w, m.x, m.y, m.rows, m.N, m.K)) return rc;
    }
    if (!b->rope.on) return flush_appends(b);
    const rope_pending r = b->rope;
    b->rope.on = 0;
    if (rope_fuses(b, r)) return launch_rope_append(b, r);
    if (!REPLAYING(b)) {
        int rc = launch_qk_norm_rope(b, r);
        if (rc) {
            b->pend.n = 0; /* their K was not written: as a failed append, nothing of them goes out */
            return rc;
        }
    }
    return flush_appends(b);
}

int op_qk_norm_rope(void *ctx, void *qkv, int rows, size_t row_stride, int nq, int nkv, int hd, const void *qn, const void *kn,
                    float eps, const float *cs, void *q_out) {
    pl_cuda_backend *b = static_cast<pl_cuda_backend *>(ctx);
    if (int frc = flush_pending(b)) return frc;
    if (rows <= 0) return PL_OK;
    if (b->skip & PL_CUDA_SKIP_ROPE) return PL_OK;
    if (hd <= 0 || hd % 2 || hd > 1024) return set_err(b, PL_ERR_INVALID, "qk_norm_rope: head_dim %d must be even and <= 1024", hd);
    SIG(b, 8ULL, U64(qkv), (unsigned long long)rows, row_stride, (unsigned long long)nq, (unsigned long long)nkv,
        (unsigned long long)hd, U64(qn), U64(kn), U64(cs), U64(q_out));
    rope_pending r;
    r.qkv = qkv, r.q_out = q_out, r.rows = rows, r.nq = nq, r.nkv = nkv, r.hd = hd, r.stride = row_stride;
    r.wq = static_cast<const float *>(static_cast<const cuda_weight *>(qn)->d);
    r.wk = static_cast<const float *>(static_cast<const cuda_weight *>(kn)->d);
    r.cs = cs, r.eps = eps;
    /* Paged path (q_out set): the K/V appends of these rows follow; launched with them at the
     * next flush. Without q_out the caller's attention reads qkv on the host right after. */
    if (q_out && !(b->skip & PL_CUDA_SKIP_APPEND)) {
        r.on = 1;
        b->rope = r;
        return PL_OK;
    }
    if (REPLAYING(b)) return PL_OK;
    return launch_qk_norm_rope(b, r);
}

int launch_swiglu(pl_cuda_backend *b, const void *gu, int rows, int inter, void *out) {
    const size_t es = esize(b->act);
    for (int r0 = 0; r0 < rows; r0 += 65535) { /* grid.y limit */
        const int nr = rows - r0 < 65535 ? rows - r0 : 65535;
        /* AUTO: 1024-thread CTAs at 3-8 rows, 256 elsewhere. A 1024-thread CTA enters only where
         * the gate/up GEMM's CTAs have left room, so the down GEMM's CTAs, launched once all of
         * these have entered, come later. Measured on the H200, paired per step over replayed
         * schedules (PERF.md, fortieth session): batch 4 (the seed trace) 0.2-0.6% faster, batch 8
         * level, batches 1, 2, 16 and 32 0.2-1.3% slower; fewer or smaller CTAs, or 8 elements a
         * thread, were slower at batch 4 */
        const int t = b->swiglu_threads ? b->swiglu_threads : rows >= 3 && rows <= 8 ? 1024 : 256;
        const dim3 grid((unsigned)((inter + t - 1) / t < 64 ? (inter + t - 1) / t : 64), (unsigned)nr);
        const char *g = static_cast<const char *>(gu) + (size_t)r0 * 2 * inter * es;
        char *o = static_cast<char *>(out) + (size_t)r0 * inter * es;
        if (b->act == PL_BF16)
            launch_pdl(swiglu_kernel<__nv_bfloat16>, grid, dim3((unsigned)t), 0, b->stream, b->pdl_small,
                       reinterpret_cast<const __nv_bfloat16 *>(g), inter, reinterpret_cast<__nv_bfloat16 *>(o));
        else
            launch_pdl(swiglu_kernel<float>, grid, dim3((unsigned)t), 0, b->stream, b->pdl_small, reinterpret_cast<const float *>(g), inter,
                       reinterpret_cast<float *>(o));
    }
    return check_launch(b, "swiglu kernel");
}

int op_swiglu(void *ctx, const void *gu, int rows, int inter, void *out) {
    pl_cuda_backend *b = static_cast<pl_cuda_backend *>(ctx);
    /* the SwiGLU of a held gate/up GEMM: held too, for the fused MLP (op_matmul) */
    const bool held = b->mlp.stage == 1 && gu == b->mlp.gu && rows == b->mlp.rows && 2 * inter == b->mlp.N &&
                      !(b->skip & PL_CUDA_SKIP_SWIGLU) && ((uintptr_t)out & 15) == 0;
    if (!held)
        if (int frc = flush_pending(b)) return frc;
    const size_t n = (size_t)rows * inter;
    if (!n) return PL_OK;
    if (b->skip & PL_CUDA_SKIP_SWIGLU) return PL_OK;
    SIG(b, 9ULL, U64(gu), (unsigned long long)rows, (unsigned long long)inter, U64(out), (unsigned long long)b->swiglu_threads);
    if (REPLAYING(b)) return PL_OK;
    if (held) {
        b->mlp.stage = 2;
        b->mlp.h = out;
        return PL_OK;
    }
    return launch_swiglu(b, gu, rows, inter, out);
}

int op_add(void *ctx, void *h, const void *x, size_t n) {
    pl_cuda_backend *b = static_cast<pl_cuda_backend *>(ctx);
    if (int frc = flush_pending(b)) return frc;
    if (!n) return PL_OK;
    SIG(b, 10ULL, U64(h), U64(x), n);
    if (REPLAYING(b)) return PL_OK;
    const int pdl = b->pdl_small;
    if (b->act == PL_BF16)
        launch_pdl(add_kernel<__nv_bfloat16>, dim3(grid_for(n, 256)), dim3(256), 0, b->stream, pdl, static_cast<__nv_bfloat16 *>(h),
                   static_cast<const __nv_bfloat16 *>(x), n);
    else
        launch_pdl(add_kernel<float>, dim3(grid_for(n, 256)), dim3(256), 0, b->stream, pdl, static_cast<float *>(h),
                   static_cast<const float *>(x), n);
    return check_launch(b, "add kernel");
}

int op_copy_rows(void *ctx, void *dst, size_t dst_stride, const void *src, size_t src_stride, int rows, int width) {
    pl_cuda_backend *b = static_cast<pl_cuda_backend *>(ctx);
    if (int frc = flush_pending(b)) return frc;
    if (rows <= 0 || width <= 0) return PL_OK;
    SIG(b, 11ULL, U64(dst), dst_stride, U64(src), src_stride, (unsigned long long)rows, (unsigned long long)width);
    if (REPLAYING(b)) return PL_OK;
    const size_t e = esize(b->act), ds = dst_stride * e, ss = src_stride * e, wb = (size_t)width * e;
    if (rows > 65535) { /* grid.y limit */
        cudaError_t err = cudaMemcpy2DAsync(dst, ds, src, ss, wb, (size_t)rows, cudaMemcpyDeviceToDevice, b->stream);
        if (err != cudaSuccess) return set_err(b, PL_ERR_CUDA, "copy_rows: %s", cudaGetErrorString(err));
        return PL_OK;
    }
    char *d = static_cast<char *>(dst);
    const char *sp = static_cast<const char *>(src);
    const bool wide = ((uintptr_t)d | (uintptr_t)sp | ds | ss | wb) % 16 == 0;
    const int words = (int)(wide ? wb / 16 : wb / e);
    const dim3 grid((unsigned)((words + 255) / 256 < 32 ? (words + 255) / 256 : 32), (unsigned)rows);
    if (wide) launch_pdl(copy_rows_kernel<uint4>, grid, dim3(256), 0, b->stream, b->pdl_small, d, ds, sp, ss, words);
    else if (e == 2) launch_pdl(copy_rows_kernel<uint16_t>, grid, dim3(256), 0, b->stream, b->pdl_small, d, ds, sp, ss, words);
    else launch_pdl(copy_rows_kernel<float>, grid, dim3(256), 0, b->stream, b->pdl_small, d, ds, sp, ss, words);
    return check_launch(b, "copy_rows kernel");
}

/* Appends a chunk already in device memory: reserve pages and commit (host metadata) now;
 * the device copy joins the pending batch when it continues it (next rows of the same
 * buffer, same pool storage), else the batch is launched first. */
int op_kv_append(void *ctx, pl_seq_cache *cache, const pl_kv_chunk *ch, char *err, size_t err_len) {
    pl_cuda_backend *b = static_cast<pl_cuda_backend *>(ctx);
    if (!cache || !ch) return pl_fail(err, err_len, PL_ERR_INVALID, "kv_append: cache/chunk is NULL");
    const int n = ch->num_tokens;
    if (n <= 0) return pl_fail(err, err_len, PL_ERR_INVALID, "kv chunk: num_tokens %d must be > 0", n);
    const pl_page_pool_config *pc = pl_page_pool_get_config(cache->pool);
    if (ch->dtype != pc->dtype || ch->num_kv_heads != pc->num_kv_heads || ch->head_dim != pc->head_dim)
        return pl_fail(err, err_len, PL_ERR_INVALID, "kv chunk: (dtype %d, heads %d, head_dim %d) must match the pool (%d, %d, %d)",
                       (int)ch->dtype, ch->num_kv_heads, ch->head_dim, (int)pc->dtype, pc->num_kv_heads, pc->head_dim);
    if (!ch->k || !ch->v) return pl_fail(err, err_len, PL_ERR_INVALID, "kv chunk: k/v is NULL");
    const size_t es = esize(ch->dtype), stride = ch->token_stride ? ch->token_stride : (size_t)pc->num_kv_heads * pc->head_dim;
    if (stride < (size_t)pc->num_kv_heads * pc->head_dim)
        return pl_fail(err, err_len, PL_ERR_INVALID, "kv chunk: token_stride %zu is below num_kv_heads * head_dim", stride);
    int rc = pl_seq_cache_reserve(cache, n, err, err_len); /* may grow storage: pending rows are copied along */
    if (rc) return rc;
    pl_page_pool_stats st;
    pl_page_pool_get_stats(cache->pool, &st);
    void *kp = pl_page_pool_keys(cache->pool), *vp = pl_page_pool_values(cache->pool);
    kv_pending &p = b->pend;
    const char *k = static_cast<const char *>(ch->k), *v = static_cast<const char *>(ch->v);
    const bool joins = p.n > 0 && p.kp == kp && p.vp == vp && p.cap_pages == st.capacity_pages && p.dt == ch->dtype &&
                       p.heads == pc->num_kv_heads && p.hd == pc->head_dim && p.ps == pc->page_size && p.stride == stride &&
                       p.k + (size_t)p.n * stride * es == k && p.v + (size_t)p.n * stride * es == v;
    if (p.n > 0 && !joins && (rc = flush_pending(b))) return fwd(b, rc, err, err_len);
    if (p.n + n > p.cap) {
        int cap = p.cap ? p.cap : 256;
        while (cap < p.n + n) cap *= 2;
        int32_t *meta = static_cast<int32_t *>(malloc(sizeof(int32_t) * 2 * (size_t)cap));
        int32_t *comb = static_cast<int32_t *>(malloc(sizeof(int32_t) * 2 * (size_t)cap));
        if (!meta || !comb) {
            free(meta), free(comb);
            return pl_fail(err, err_len, PL_ERR_NOMEM, "kv_append: out of memory");
        }
        if (p.n) {
            memcpy(meta, p.meta, sizeof(int32_t) * (size_t)p.n);
            memcpy(meta + cap, p.meta + p.cap, sizeof(int32_t) * (size_t)p.n);
        }
        free(p.meta), free(p.comb);
        p.meta = meta, p.comb = comb, p.cap = cap;
    }
    if (p.n == 0) {
        p.dt = ch->dtype, p.heads = pc->num_kv_heads, p.hd = pc->head_dim, p.ps = pc->page_size;
        p.cap_pages = st.capacity_pages, p.k = k, p.v = v, p.stride = stride, p.es = es, p.kp = kp, p.vp = vp;
    }
    const int ps = pc->page_size;
    for (int t = 0; t < n; t++) {
        const int pos = cache->offset + t;
        p.meta[p.n + t] = cache->page_ids[pos / ps];
        p.meta[p.cap + p.n + t] = pos % ps;
    }
    p.n += n;
    return pl_seq_cache_commit(cache, n, err, err_len);
}

/* Nonzero when p points into page-pool storage of this backend. Such pages change only by
 * the K/V appends of a step (its newest tokens) and by copies (stream-ordered memcpys, never
 * overlapped by a kernel), so the decode attention may read their older keys before waiting
 * for the kernel before it; staged dense buffers of the other KV modes are not pools. */
bool in_kv_storage(const pl_cuda_backend *b, const void *p) { return rec_holding(b->kv_recs, b->num_kv_recs, p) != nullptr; }

/* Whether a decode attention over every row of the pending rope (query_len 1), on the pools
 * its pending appends write, takes them over (pl_cuda_attn_rope): one kernel fewer per layer.
 * AUTO where it measured faster or level on the H200 (Qwen3-4B decode steps, session 19,
 * same process: 1-8 rows 0.4-2.8%, 32-48 0-2.4%, 24 and 64 level), not at 9-16 rows (12 rows
 * 1-1.5% slower, 16 from 0.9% faster to 3% slower) nor past 64 (not measured). The attention kernel's own check (pl_cuda_attn_check) has the
 * last word. */
bool rope_into_attention(const pl_cuda_backend *b, const pl_paged_attention_args *a) {
    const rope_pending &r = b->rope;
    const kv_pending &p = b->pend;
    const bool rows_ok = b->attn_rope == 2 || (b->attn_rope == 0 && (r.rows <= 8 || (r.rows > 16 && r.rows <= 64)));
    return r.on && rows_ok && !(b->skip & PL_CUDA_SKIP_ATTN) && rope_fuses(b, r) && a->query == r.q_out &&
           a->query_len == 1 && a->batch == r.rows && a->dtype == b->act && a->head_dim == r.hd && a->num_heads == r.nq &&
           a->num_kv_heads == r.nkv && a->key_pages == p.kp && a->value_pages == p.vp && a->page_size == p.ps &&
           a->num_pages == p.cap_pages;
}

/* Paged attention with the host block table and context lengths uploaded (skipped when
 * they equal the previous upload, as for every layer after the first). */
int op_paged_attention(void *ctx, const pl_paged_attention_args *args, char *err, size_t err_len) {
    pl_cuda_backend *b = static_cast<pl_cuda_backend *>(ctx);
    if (!args) return pl_fail(err, err_len, PL_ERR_INVALID, "args: NULL");
    bool fuse = rope_into_attention(b, args);
    if (!fuse)
        if (int frc = flush_pending(b)) return fwd(b, frc, err, err_len);
    if (b->skip & PL_CUDA_SKIP_ATTN) return PL_OK;
    if (args->batch <= 0 || args->max_pages <= 0 || !args->block_table || !args->context_lens)
        return pl_fail(err, err_len, PL_ERR_INVALID, "paged_attention: batch %d, max_pages %d, block_table/context_lens %s",
                       args->batch, args->max_pages, args->block_table && args->context_lens ? "set" : "NULL");
    const size_t nbt = (size_t)args->batch * args->max_pages;
    pl_cuda_attn_options opt;
    memset(&opt, 0, sizeof opt);
    opt.num_splits = b->attn_splits; /* before the sizing: forced splits may need more than the heuristic's */
    opt.mma_warps = b->attn_warps;
    opt.decode_copy = b->attn_copy;
    opt.decode_units_per_cta = b->attn_units;
    opt.decode_units_order = b->attn_order;
    opt.decode_lean = b->attn_lean;
    opt.decode_early_kv = b->attn_early == 0 && in_kv_storage(b, args->key_pages) && in_kv_storage(b, args->value_pages);
    if (!b->attn_split_shapes) opt.host_context_lens = args->context_lens; /* host memory here */
    /* several units per CTA in AUTO order: the sequences ranked here and sent with the table,
     * so the kernel's CTAs need not rank them before their first loads */
    pl_cuda_attn_kernel kern = PL_CUDA_ATTN_AUTO;
    int upc = 1;
    char perr[8];
    bool ranked = b->attn_order == 0 && pl_cuda_attn_plan_info(args, &opt, &kern, NULL, NULL, &upc, perr, sizeof perr) == PL_OK &&
                  kern == PL_CUDA_ATTN_DECODE_MMA && upc > 1;
    const size_t nmeta = nbt + (size_t)args->batch;
    size_t bytes = sizeof(int32_t) * (nmeta + (ranked ? nmeta + args->batch : 0));
    int32_t *meta = static_cast<int32_t *>(malloc(bytes));
    if (!meta) return pl_fail(err, err_len, PL_ERR_NOMEM, "paged_attention: out of memory");
    memcpy(meta, args->block_table, sizeof(int32_t) * nbt);
    memcpy(meta + nbt, args->context_lens, sizeof(int32_t) * (size_t)args->batch);
    if (ranked && !pl_cuda_attn_rank(args->batch, args->max_pages, args->block_table, args->context_lens, meta + nmeta)) {
        ranked = false; /* out of memory: the kernel ranks them */
        bytes = sizeof(int32_t) * nmeta;
    }
    void *d = nullptr;
    int rc = stage_upload_cached(b, SLOT_ATTN, meta, bytes, &d);
    free(meta);
    if (rc) return fwd(b, rc, err, err_len);
    pl_paged_attention_args a = *args;
    a.block_table = static_cast<const int32_t *>(d);
    a.context_lens = static_cast<const int32_t *>(d) + nbt;
    if (ranked) opt.decode_ranked = static_cast<const int32_t *>(d) + nmeta;
    pl_cuda_attn_rope rp;
    memset(&rp, 0, sizeof rp);
    if (fuse) {
        /* the appends' page ids and slots (a fallback's launch_rope_append finds them cached) */
        const int n = b->pend.n;
        void *d = nullptr;
        if (int rc = stage_append_meta(b, n, &d)) return fwd(b, rc, err, err_len);
        const rope_pending &r = b->rope;
        rp.qkv = r.qkv, rp.row_stride = r.stride, rp.q_norm = r.wq, rp.k_norm = r.wk, rp.eps = r.eps, rp.cos_sin = r.cs;
        rp.page_ids = static_cast<const int32_t *>(d);
        rp.slots = rp.page_ids + n;
        opt.rope = &rp;
        char cerr[8];
        if (pl_cuda_attn_check(&a, &opt, cerr, sizeof cerr) != PL_OK) { /* e.g. not the DECODE_MMA kernel */
            opt.rope = nullptr;
            fuse = false;
            if (int frc = flush_pending(b)) return fwd(b, frc, err, err_len);
        } else { /* the rope and appends are this launch's now (their signature was taken when deferred) */
            b->pend.n = 0;
            b->rope.on = 0;
            SIG(b, 15ULL, U64(d), (unsigned long long)n, (unsigned long long)b->pend.cap_pages);
        }
    }
    const size_t ws = pl_cuda_attn_workspace_bytes(&a, &opt);
    sig_mix(b, &a, sizeof a);
    SIG(b, 12ULL, U64(b->attn_ws), b->attn_ws_bytes, (unsigned long long)b->attn_splits, (unsigned long long)b->attn_warps,
        (unsigned long long)b->attn_copy, (unsigned long long)b->attn_units, (unsigned long long)b->attn_order,
        (unsigned long long)opt.decode_early_kv, (unsigned long long)fuse, (unsigned long long)ws, (unsigned long long)b->attn_lean, (unsigned long long)ranked);
    if (REPLAYING(b)) {
        if (ws > b->attn_ws_bytes) SIG(b, 0xbadULL); /* cannot grow inside a graph: the signature will differ */
        return PL_OK;
    }
    if (ws > b->attn_ws_bytes) {
        cudaStreamSynchronize(b->stream);
        if (b->attn_ws) cudaFree(b->attn_ws);
        b->attn_ws = nullptr;
        b->attn_ws_bytes = 0;
        cudaError_t e = cudaMalloc(&b->attn_ws, ws * 2);
        if (e != cudaSuccess) {
            cudaGetLastError();
            b->attn_ws = nullptr;
            return pl_fail(err, err_len, cuda_status(e), "paged_attention: %zu bytes of split workspace: %s", ws * 2,
                           cudaGetErrorString(e));
        }
        b->attn_ws_bytes = ws * 2;
    }
    opt.workspace = b->attn_ws;
    opt.workspace_bytes = b->attn_ws_bytes;
    opt.no_pdl = !b->pdl_small;
    return pl_paged_attention_cuda_ex(&a, &opt, b->stream, err, err_len);
}

/* The greedy head: the LM head's tile kernel folds each row's logits into its argmax key
 * (the [rows, vocab] logits are never stored), then the finish kernel writes the ids into
 * mapped host memory and clears the keys; both may be captured. Tile-kernel shapes only
 * (2-64 rows, bf16): elsewhere PL_ERR_UNSUPPORTED, nothing launched. */
int op_head_greedy(void *ctx, const void *x, int rows, const void *wp, char *err, size_t err_len) {
    pl_cuda_backend *b = static_cast<pl_cuda_backend *>(ctx);
    const cuda_weight *w = static_cast<const cuda_weight *>(wp);
    if (!w->is_matrix) return pl_fail(err, err_len, PL_ERR_INTERNAL, "head_greedy: weight is not a matrix");
    if (rows < 1 || gemv_variant(b, rows, w, x, x) != PL_CUDA_GEMV_TILE) return PL_ERR_UNSUPPORTED;
    if (int frc = flush_pending(b)) return fwd(b, frc, err, err_len);
    if (rows > b->argmax_rows && b->gmode == G_CAPTURE)
        return set_err(b, PL_ERR_INTERNAL, "head_greedy: argmax keys grow inside a capture");
    if (int rc = ensure_gemv_ws(b, PL_CUDA_GEMV_TILE, w->rows, w->cols, err, err_len)) return rc;
    if (int rc = argmax_begin(b, rows, err, err_len)) return rc;
    SIG(b, 14ULL, U64(x), (unsigned long long)rows, U64(w->d), U64(b->argmax_keys), U64(b->argmax_tokens_dev),
        (unsigned long long)b->gemv_mode, (unsigned long long)b->gemv_ws.pdl, (unsigned long long)b->gemv_ws.tile_ctas_per_sm,
        (unsigned long long)b->gemv_ws.tile_max_splits, (unsigned long long)b->gemv_ws.tile_min_ktiles,
        (unsigned long long)b->gemv_ws.tile_copy, (unsigned long long)b->gemv_ws.tile_trigger, (unsigned long long)b->gemv_ws.tile_fixup,
        (unsigned long long)b->gemv_ws.tile_pre_all);
    if (REPLAYING(b)) return PL_OK;
    const int ge = pl_cuda_gemv_argmax_bf16(w->d, x, rows, w->rows, w->cols, b->argmax_keys, &b->gemv_ws, b->stream);
    if (ge != 0)
        return pl_fail(err, err_len, PL_ERR_CUDA, "head_greedy [%d x %d] x [%d x %d]^T: launch: %s", rows, w->cols, w->rows,
                       w->cols, cudaGetErrorString(static_cast<cudaError_t>(ge)));
    argmax_finish_kernel<<<1, 64, 0, b->stream>>>(b->argmax_keys, rows, b->argmax_tokens_dev);
    if (int rc = check_launch(b, "greedy head finish kernel")) return fwd(b, rc, err, err_len);
    return PL_OK;
}

int op_head_greedy_tokens(void *ctx, int rows, int32_t *tokens, char *err, size_t err_len) {
    pl_cuda_backend *b = static_cast<pl_cuda_backend *>(ctx);
    if (rows < 1 || rows > b->argmax_rows || !b->argmax_dirty)
        return pl_fail(err, err_len, PL_ERR_INTERNAL, "head_greedy_tokens: %d rows without a greedy head before", rows);
    return argmax_end(b, rows, tokens, err, err_len);
}

int op_sample(void *ctx, const float *logits, int rows, int vocab, const pl_sample_req *reqs, int32_t *tokens, char *err,
              size_t err_len) {
    pl_cuda_sample_params *p = static_cast<pl_cuda_sample_params *>(malloc(sizeof *p * (size_t)(rows > 0 ? rows : 1)));
    if (!p) return pl_fail(err, err_len, PL_ERR_NOMEM, "sample: out of memory");
    for (int r = 0; r < rows; r++) p[r] = {reqs[r].temperature, reqs[r].top_k, reqs[r].top_p, reqs[r].u};
    const int rc = pl_cuda_sample(static_cast<pl_cuda_backend *>(ctx), logits, (size_t)vocab, rows, vocab, p, tokens, err, err_len);
    free(p);
    return rc;
}

/* ---- CUDA graphs of decode steps ----
 * The forward pass brackets a decode step with graph_begin(key) / graph_end. The first step
 * of a key runs eagerly (it sizes every buffer and staging arena), the second is captured
 * (ops run as usual on the capturing stream; nothing executes until the graph launches),
 * later ones replay: every op does only its host work (cache metadata, the staged bytes of
 * uploads at the same pinned addresses, sent by stage_send before each segment's launch) and
 * adds its launch arguments to a signature. A signature that differs from the captured one (a pool
 * grew, a buffer moved) drops the graph and asks the forward pass to redo the step eagerly:
 * nothing of the step reached the device. Staging arenas start from offset 0 at each
 * graphed step (the previous step has been waited for), so upload addresses repeat. */

/* A bracketed step that is answered PL_GRAPH_RETRY never reached the device: the uploads it
 * staged were recorded into a capture that is thrown away, or skipped in a replay that is not
 * launched. Their host bytes are in the arenas, so stage_upload_cached would hand the eager
 * redo the device offsets of the same bytes, which hold whatever an earlier upload (an earlier
 * step, another engine's block table with page ids outside this pool) left there: forget them. */
void stage_forget(pl_cuda_backend *b) {
    for (int i = 0; i < NUM_SLOTS; i++) b->slots[i].last = 0;
}

void graph_drop(pl_cuda_backend *b, graph_entry *g) {
    (void)b;
    for (int i = 0; i < g->nseg; i++)
        if (g->exec[i]) cudaGraphExecDestroy(g->exec[i]);
    for (int i = 0; i < PL_MAX_SEGS; i++) g->exec[i] = nullptr;
    g->nseg = 0;
    g->seen = 0;
    g->sig = 0;
    g->want_sig = 0;
}

/* Launches segment exec (a replay or a fresh capture); the step's first launch (no segment
 * launched yet) ends the host time the device waits through, and opens the timing events'
 * interval. */
cudaError_t seg_launch(pl_cuda_backend *b, cudaGraphExec_t exec, bool last, bool replay) {
    const bool first = b->seg_next == 0;
    const double t1 = pl_now_seconds();
    if (first && b->time_graphs && replay) {
        float ms = 0; /* the previous replay's interval (the stream has been synchronized since) */
        if (b->gev_pending && cudaEventElapsedTime(&ms, b->gev[0], b->gev[1]) == cudaSuccess) b->graph_seconds += ms * 1e-3;
        b->gev_pending = 0;
        cudaEventRecord(b->gev[0], b->stream);
    }
    cudaError_t e = stage_send(b);
    if (e == cudaSuccess) e = cudaGraphLaunch(exec, b->stream);
    if (e != cudaSuccess) return e;
    const double t2 = pl_now_seconds();
    if (first && replay) b->walk_seconds += t1 - b->walk_t0, b->launch_seconds += t2 - t1;
    if (last && b->time_graphs && replay) cudaEventRecord(b->gev[1], b->stream), b->gev_pending = 1;
    return cudaSuccess;
}

/* The graph_cut call indices that end segments. The device waits only for the first
 * segment's walk (its `first` layers); each later segment must be walked and launched while
 * the ones before it run, so segments grow 4x (1, 4, 16, ... layers), the last taking the
 * rest with the LM head. */
void plan_cuts(graph_entry *g, int segments, int first) {
    int nc = 0, end = 0, len = first < 1 ? 1 : first;
    if (segments > PL_MAX_SEGS) segments = PL_MAX_SEGS;
    for (int i = 0; i < segments - 1 && end + len < g->ncuts; i++, len *= 4) {
        end += len;
        g->cut_at[nc++] = end - 1;
    }
    for (int i = nc; i < PL_MAX_SEGS; i++) g->cut_at[i] = -1;
}

/* Variants: a key (rows, table width) keeps up to PL_GRAPH_VARIANTS captured graphs of the same
 * shapes with other launch settings (e.g. the decode attention's splits from the step's
 * contexts), told apart by their first segment's signature, so steps that alternate between
 * settings replay without recapturing. A replay whose first segment matches no captured variant
 * has launched nothing: the first time, its step is redone eagerly (which sizes every buffer)
 * and a waiting variant remembers the signature; the next time, the step is redone as that
 * variant's capture (PL_GRAPH_RECAPTURE). */

/* The captured variant of key other than the current one whose first segment (whole: the
 * whole step, of a graph in one segment) has signature sig, or -1. */
int graph_variant(const pl_cuda_backend *b, uint64_t key, int whole, uint64_t sig) {
    for (int i = 0; i < b->num_graphs; i++) {
        const graph_entry *v = &b->graphs[i];
        if (i == b->cur_graph || v->key != key || v->nseg < 1) continue;
        if (whole ? v->nseg == 1 && v->sig == sig : v->nseg > 1 && v->seg_sig[0] == sig) return i;
    }
    return -1;
}

/* The waiting (not yet captured) variant of key for first-segment signature sig, or -1. */
int graph_waiting(const pl_cuda_backend *b, uint64_t key, uint64_t sig) {
    for (int i = 0; i < b->num_graphs; i++)
        if (b->graphs[i].key == key && b->graphs[i].nseg == 0 && b->graphs[i].seen && b->graphs[i].want_sig == sig) return i;
    return -1;
}

/* A waiting variant of key for signature sig: a free entry, else the key's least recently used
 * variant once it has PL_GRAPH_VARIANTS, else the least recently used entry (never the current). */
void graph_new_variant(pl_cuda_backend *b, uint64_t key, uint64_t sig) {
    int n = 0, lru_key = -1, lru = -1;
    for (int i = 0; i < b->num_graphs; i++) {
        if (i == b->cur_graph) continue;
        if (b->graphs[i].key == key && (n++, lru_key < 0 || b->graphs[i].last_use < b->graphs[lru_key].last_use)) lru_key = i;
        if (lru < 0 || b->graphs[i].last_use < b->graphs[lru].last_use) lru = i;
    }
    const int gi = n + 1 >= PL_GRAPH_VARIANTS ? lru_key : b->num_graphs < PL_MAX_GRAPHS ? b->num_graphs++ : lru;
    if (gi < 0) return;
    graph_entry *g = &b->graphs[gi];
    graph_drop(b, g);
    g->key = key;
    g->seen = 1;
    g->ncuts = b->graphs[b->cur_graph].ncuts; /* the same step: the same graph_cut calls */
    g->want_sig = sig;
    g->last_use = ++b->graph_clock;
}

/* A replay's first segment (whole: the whole step, of one segment) does not match g, with
 * nothing launched: the captured variant that matches b->sig, made current; else g, with
 * first_differs and first_sig set for graph_end (2 when a waiting variant wants this signature,
 * which the redo then captures). */
graph_entry *graph_switch(pl_cuda_backend *b, graph_entry *g, int whole) {
    const int alt = graph_variant(b, g->key, whole, b->sig);
    if (alt >= 0) {
        b->cur_graph = alt;
        b->graph_switches++;
        b->graphs[alt].last_use = ++b->graph_clock;
        return &b->graphs[alt];
    }
    const int w = graph_waiting(b, g->key, b->sig);
    b->first_sig = b->sig;
    b->first_differs = w >= 0 ? 2 : 1;
    if (w >= 0) b->capture_next = w;
    return g;
}

int op_graph_begin(void *ctx, uint64_t key) {
    pl_cuda_backend *b = static_cast<pl_cuda_backend *>(ctx);
    if (b->graphs_off || b->gmode != G_NONE) return PL_ERR_UNSUPPORTED;
    if (flush_pending(b) != PL_OK || cudaStreamSynchronize(b->stream) != cudaSuccess) return PL_ERR_CUDA;
    int gi = -1, lru = 0;
    const int want = b->capture_next; /* the redo of an undone step: a waiting variant's capture */
    b->capture_next = -1;
    if (want >= 0 && want < b->num_graphs && b->graphs[want].key == key && b->graphs[want].nseg == 0) gi = want;
    for (int i = 0; i < b->num_graphs; i++) {
        const graph_entry *v = &b->graphs[i];
        if (v->last_use < b->graphs[lru].last_use) lru = i;
        if (want >= 0 && gi == want) continue;
        /* else of the key's variants the captured one used last; a waiting one only if none is */
        if (v->key != key) continue;
        const graph_entry *cur = gi >= 0 ? &b->graphs[gi] : nullptr;
        if (!cur || (v->nseg > 0 && cur->nseg == 0) || ((v->nseg > 0) == (cur->nseg > 0) && v->last_use > cur->last_use)) gi = i;
    }
    if (gi < 0) {
        if (b->num_graphs < PL_MAX_GRAPHS) gi = b->num_graphs++;
        else graph_drop(b, &b->graphs[gi = lru]);
        b->graphs[gi].key = key;
    }
    graph_entry *g = &b->graphs[gi];
    g->last_use = ++b->graph_clock;
    for (int i = 0; i < NUM_SLOTS; i++) b->slots[i].head = 0, b->slots[i].last = 0;
    stage_step_begin(b);
    b->sig = 0xcbf29ce484222325ULL;
    b->cur_graph = gi;
    b->cut_calls = b->seg_next = b->seg_failed = b->first_differs = 0;
    b->walk_t0 = pl_now_seconds();
    if (g->nseg > 0) {
        b->gmode = G_REPLAY;
    } else if (g->seen) {
        if (cudaStreamBeginCapture(b->stream, cudaStreamCaptureModeRelaxed) != cudaSuccess) {
            cudaGetLastError();
            return PL_ERR_CUDA;
        }
        plan_cuts(g, b->graph_segments, b->graph_first);
        b->gmode = G_CAPTURE;
    } else {
        g->seen = 1;
        g->ncuts = 0;
        b->gmode = G_WARMUP;
    }
    return PL_OK;
}

/* A segment boundary when this call is the next planned cut: a capture ends the segment's
 * capture, launches it and starts the next; a replay launches the segment if the step's
 * signature so far matches the captured one. A failure leaves the rest of the step to host
 * work only, and graph_end asks for an eager redo: the segments that did run recompute
 * nothing the redo does not compute again identically (the same K/V into the same slots,
 * activations from the embedding on). */
int op_graph_cut(void *ctx) {
    pl_cuda_backend *b = static_cast<pl_cuda_backend *>(ctx);
    if (b->gmode == G_NONE) return PL_OK;
    graph_entry *g = &b->graphs[b->cur_graph];
    const int call = b->cut_calls++;
    if (b->gmode == G_WARMUP) {
        g->ncuts = call + 1;
        return PL_OK;
    }
    if (b->seg_failed || b->seg_next >= PL_MAX_SEGS - 1 || g->cut_at[b->seg_next] != call) return PL_OK;
    const int frc = flush_pending(b); /* deferred work belongs to this segment */
    if (frc) return frc;
    if (b->gmode == G_REPLAY) {
        if (b->seg_next == 0 && g->seg_sig[0] != b->sig) g = graph_switch(b, g, 0); /* nothing launched yet */
        if (b->seg_next >= g->nseg - 1 || g->seg_sig[b->seg_next] != b->sig) {
            b->seg_failed = 1;
            return PL_OK;
        }
        const cudaError_t e = seg_launch(b, g->exec[b->seg_next], false, true);
        if (e != cudaSuccess) return set_err(b, PL_ERR_CUDA, "graph launch: %s", cudaGetErrorString(e));
        b->seg_next++;
        return PL_OK;
    }
    /* G_CAPTURE */
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    cudaError_t e = cudaStreamEndCapture(b->stream, &graph);
    if (e == cudaSuccess) e = cudaGraphInstantiate(&exec, graph, 0);
    if (graph) cudaGraphDestroy(graph);
    if (e == cudaSuccess) e = seg_launch(b, exec, false, false);
    if (e == cudaSuccess) {
        g->exec[g->nseg] = exec;
        g->seg_sig[g->nseg++] = b->sig;
        b->seg_next++;
        e = cudaStreamBeginCapture(b->stream, cudaStreamCaptureModeRelaxed);
    } else if (exec) {
        cudaGraphExecDestroy(exec);
    }
    if (e != cudaSuccess) { /* the rest of the step: host work only, then an eager redo */
        cudaGetLastError();
        b->seg_failed = 1;
        b->gmode = G_REPLAY;
        b->graphs_off = 1; /* capture itself failed: stop trying */
    }
    return PL_OK;
}

int op_graph_end(void *ctx, int body_rc) {
    pl_cuda_backend *b = static_cast<pl_cuda_backend *>(ctx);
    /* work still deferred belongs to the step: into the capture, or the replay's signature */
    const int frc = flush_pending(b);
    if (body_rc == PL_OK) body_rc = frc;
    graph_entry *g = &b->graphs[b->cur_graph];
    const int mode = b->gmode;
    if (mode == G_WARMUP) {
        b->gmode = G_NONE;
        g->sig = b->sig;
        return body_rc;
    }
    if (mode == G_CAPTURE) {
        cudaGraph_t graph = nullptr;
        cudaGraphExec_t exec = nullptr;
        cudaError_t e = cudaStreamEndCapture(b->stream, &graph);
        if (e == cudaSuccess && body_rc == PL_OK) e = cudaGraphInstantiate(&exec, graph, 0);
        if (graph) cudaGraphDestroy(graph);
        if (e == cudaSuccess && body_rc == PL_OK) e = seg_launch(b, exec, true, false);
        b->gmode = G_NONE;
        if (e != cudaSuccess || body_rc != PL_OK) { /* the last segment did not run: redo eagerly */
            cudaGetLastError();
            if (exec) cudaGraphExecDestroy(exec);
            graph_drop(b, g);
            g->seen = 1;
            b->graphs_off = e != cudaSuccess; /* capture itself failed: stop trying */
            b->graph_retries++;
            stage_forget(b);
            return PL_GRAPH_RETRY;
        }
        g->exec[g->nseg] = exec;
        g->seg_sig[g->nseg++] = b->sig;
        g->sig = b->sig;
        b->graph_captures++;
        return PL_OK;
    }
    if (mode == G_REPLAY) {
        b->gmode = G_NONE;
        if (body_rc == PL_OK && b->seg_next == 0 && g->nseg == 1 && b->sig != g->sig) g = graph_switch(b, g, 1);
        if (body_rc != PL_OK || b->seg_failed || b->seg_next != g->nseg - 1 || b->sig != g->sig) {
            b->graph_retries++;
            stage_forget(b);
            if (body_rc == PL_OK && b->first_differs == 2) return PL_GRAPH_RECAPTURE; /* capture_next is set */
            if (body_rc == PL_OK && b->first_differs == 1) {
                graph_new_variant(b, g->key, b->first_sig);
                return PL_GRAPH_RETRY;
            }
            graph_drop(b, g); /* a later segment differs (a pool grew): capture the key again */
            g->seen = 1;
            return PL_GRAPH_RETRY;
        }
        const cudaError_t e = seg_launch(b, g->exec[g->nseg - 1], true, true);
        if (e != cudaSuccess) return set_err(b, PL_ERR_CUDA, "graph launch: %s", cudaGetErrorString(e));
        b->graph_replays++;
        return PL_OK;
    }
    b->gmode = G_NONE;
    return body_rc;
}

const char *op_last_error(void *ctx) { return static_cast<pl_cuda_backend *>(ctx)->last_err; }

int op_finish(void *ctx, char *err, size_t err_len) { return pl_cuda_backend_sync(static_cast<pl_cuda_backend *>(ctx), err, err_len); }

pl_backend_ops make_ops() {
    pl_backend_ops o;
    memset(&o, 0, sizeof o);
    o.name = "cuda";
    o.weight_create = op_weight_create;
    o.weight_free = op_weight_free;
    o.weight_row = op_weight_row;
    o.weight_bytes = op_weight_bytes;
    o.alloc = op_alloc;
    o.free = op_free;
    o.embed = op_embed;
    o.rmsnorm = op_rmsnorm;
    o.matmul = op_matmul;
    o.rope_table = op_rope_table;
    o.qk_norm_rope = op_qk_norm_rope;
    o.swiglu = op_swiglu;
    o.add = op_add;
    o.add_rmsnorm = op_add_rmsnorm;
    o.kv_append = op_kv_append;
    o.paged_attention = op_paged_attention;
    o.copy_rows = op_copy_rows;
    o.sample = op_sample;
    o.head_greedy = op_head_greedy;
    o.head_greedy_tokens = op_head_greedy_tokens;
    o.graph_begin = op_graph_begin;
    o.graph_cut = op_graph_cut;
    o.graph_end = op_graph_end;
    o.finish = op_finish;
    o.last_error = op_last_error;
    return o;
}

const pl_backend_ops k_cuda_ops = make_ops();

/* ---- page-pool storage ---- */

void *kv_alloc(void *ctx, size_t bytes) {
    pl_cuda_backend *b = static_cast<pl_cuda_backend *>(ctx);
    void *p = dev_alloc(b, bytes, 1);
    if (p && cudaStreamSynchronize(b->stream) != cudaSuccess) { /* zeroed before the pool hands it out */
        dev_free(b, p);
        return nullptr;
    }
    if (p && b->num_kv_recs < PL_CUDA_MAX_KV_RECS) b->kv_recs[b->num_kv_recs++] = {p, bytes}; /* past the cap: not early */
    return p;
}
void kv_free(void *ctx, void *p) {
    pl_cuda_backend *b = static_cast<pl_cuda_backend *>(ctx);
    for (int i = 0; i < b->num_kv_recs; i++)
        if (b->kv_recs[i].p == p) {
            b->kv_recs[i] = b->kv_recs[--b->num_kv_recs];
            break;
        }
    dev_free(b, p);
}
int kv_copy(void *ctx, void *dst, const void *src, size_t bytes) {
    pl_cuda_backend *b = static_cast<pl_cuda_backend *>(ctx);
    if (int frc = flush_pending(b)) return frc; /* pending rows go to the old storage first */
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, b->stream);
    if (e != cudaSuccess) return set_err(b, PL_ERR_CUDA, "page copy of %zu bytes: %s", bytes, cudaGetErrorString(e));
    return PL_OK;
}

} // namespace

extern "C" {

int pl_cuda_device_check(char *err, size_t err_len) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "no usable CUDA device: %s", cudaGetErrorString(e));
    }
    if (n <= 0) return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "no CUDA device found");
    return PL_OK;
}

int pl_cuda_backend_create(int act, int device, pl_cuda_backend **out, char *err, size_t err_len) {
    if (!out) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_cuda_backend_create: out is NULL");
    *out = nullptr;
    if (act != PL_BF16 && act != PL_F32) return pl_fail(err, err_len, PL_ERR_INVALID, "act: %d is neither PL_BF16 nor PL_F32", act);
    int rc = pl_cuda_device_check(err, err_len);
    if (rc) return rc;
    int n = 0;
    cudaGetDeviceCount(&n);
    if (device < 0 || device >= n) return pl_fail(err, err_len, PL_ERR_INVALID, "device: %d outside [0, %d)", device, n);
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess) return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "cudaSetDevice(%d): %s", device, cudaGetErrorString(e));
    pl_cuda_backend *b = new (std::nothrow) pl_cuda_backend();
    if (!b) return pl_fail(err, err_len, PL_ERR_NOMEM, "pl_cuda_backend_create: out of memory");
    b->gemv_mode = 1;
    b->gemv_ws.pdl = 1;
    b->gemv_ws.kslice_runs = &b->kslice_launches;
    b->pdl_small = 1;
    b->capture_next = -1;
    b->graph_segments = PL_CUDA_GRAPH_SEGMENTS;
    b->graph_first = PL_CUDA_GRAPH_FIRST;
    if (cudaDeviceGetAttribute(&b->gemv_ws.sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
        cudaGetLastError();
        b->gemv_ws.sms = 132;
    }
    b->act = (pl_dtype)act;
    b->device = device;
    if ((e = cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking)) != cudaSuccess) {
        delete b;
        return pl_fail(err, err_len, PL_ERR_CUDA, "cudaStreamCreate: %s", cudaGetErrorString(e));
    }
    cublasStatus_t st = cublasCreate(&b->blas);
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetStream(b->blas, b->stream);
    if (st != CUBLAS_STATUS_SUCCESS) {
        pl_cuda_backend_destroy(b);
        return pl_fail(err, err_len, PL_ERR_CUDA, "cuBLAS handle: status %d (%s)", (int)st, cublasGetStatusString(st));
    }
    b->mlp_ok = pl_cuda_mlp_available();
    b->kv_ops.alloc = kv_alloc;
    b->kv_ops.free = kv_free;
    b->kv_ops.copy = kv_copy;
    b->kv_ops.ctx = b;
    *out = b;
    return PL_OK;
}

void pl_cuda_backend_destroy(pl_cuda_backend *b) {
    if (!b) return;
    flush_pending(b);
    if (b->stream) cudaStreamSynchronize(b->stream);
    pl_cuda_backend_time_graphs(b, 0);
    for (int i = 0; i < b->num_graphs; i++) graph_drop(b, &b->graphs[i]);
    if (b->blas) cublasDestroy(b->blas);
    free(b->pend.meta);
    free(b->pend.comb);
    for (int i = 0; i < NUM_SLOTS; i++) {
        if (b->slots[i].host) cudaFreeHost(b->slots[i].host);
        if (b->slots[i].dev) cudaFree(b->slots[i].dev);
    }
    if (b->step_arena.host) cudaFreeHost(b->step_arena.host);
    if (b->step_arena.dev) cudaFree(b->step_arena.dev);
    if (b->scratch) cudaFree(b->scratch);
    if (b->attn_ws) cudaFree(b->attn_ws);
    if (b->argmax_keys) cudaFree(b->argmax_keys);
    if (b->argmax_tokens) cudaFreeHost(b->argmax_tokens);
    if (b->gemv_ws.ptr) cudaFree(b->gemv_ws.ptr);
    if (b->mlp_part) cudaFree(b->mlp_part);
    if (b->mlp_cnt) cudaFree(b->mlp_cnt);
    /* whatever the caller did not free goes too */
    for (int i = 0; i < b->num_recs; i++) cudaFree(b->recs[i].p);
    free(b->recs);
    if (b->stream) cudaStreamDestroy(b->stream);
    delete b;
}

const pl_backend_ops *pl_cuda_backend_ops(void) { return &k_cuda_ops; }
const char *pl_cuda_backend_last_error(const pl_cuda_backend *b) { return b ? b->last_err : "backend is NULL"; }
void *pl_cuda_backend_stream(pl_cuda_backend *b) { return b ? b->stream : nullptr; }
size_t pl_cuda_backend_live_bytes(const pl_cuda_backend *b) { return b ? b->live_bytes : 0; }
void pl_cuda_backend_use_gemv(pl_cuda_backend *b, int mode) {
    if (b) b->gemv_mode = mode >= 0 && mode <= 4 ? mode : 1;
}
void pl_cuda_backend_skip_ops(pl_cuda_backend *b, int mask) {
    if (b) b->skip = mask;
}
void pl_cuda_backend_attn_splits(pl_cuda_backend *b, int splits) {
    if (b) b->attn_splits = splits > 0 ? splits : 0;
}
void pl_cuda_backend_attn_warps(pl_cuda_backend *b, int warps) {
    if (b) b->attn_warps = warps == 4 || warps == 8 ? warps : 0;
}
void pl_cuda_backend_attn_copy(pl_cuda_backend *b, int mode) {
    if (b) b->attn_copy = mode == 1 || mode == 2 ? mode : 0;
}
void pl_cuda_backend_attn_early(pl_cuda_backend *b, int mode) {
    if (b) b->attn_early = mode == 1 ? 1 : 0;
}
void pl_cuda_backend_attn_rope(pl_cuda_backend *b, int mode) {
    if (b) b->attn_rope = mode == 1 || mode == 2 ? mode : 0;
}
void pl_cuda_backend_kslice(pl_cuda_backend *b, int mode) {
    if (b) b->gemv_ws.kslice = mode == 1 || mode == 2 ? mode : 0;
}
long pl_cuda_backend_kslice_launches(const pl_cuda_backend *b) { return b ? b->kslice_launches : 0; }
int pl_cuda_backend_kslice_takes(const pl_cuda_backend *b, int rows, int n, int k, int x_rows) {
    if (!b || b->act != PL_BF16 || rows > PL_CUDA_GEMV_TILE_MAX_M) return 0;
    const pl_cuda_gemv_ws ws = gemv_ws_for(b, rows, x_rows); /* as op_matmul */
    return pl_cuda_gemv_kslice(rows, n, k, &ws);
}
void pl_cuda_backend_parts_norm(pl_cuda_backend *b, int mode) {
    if (b) b->parts_norm = mode == 1 ? 1 : 0;
}
void pl_cuda_backend_parts_ctas(pl_cuda_backend *b, int ctas) {
    if (b) b->parts_c = ctas > 0 ? ctas : 0;
}
long pl_cuda_backend_parts_fused(const pl_cuda_backend *b) { return b ? b->parts_fused : 0; }
void pl_cuda_backend_fused_mlp(pl_cuda_backend *b, int mode) {
    if (b) b->mlp_mode = mode == 1 || mode == 2 ? mode : 0;
}
long pl_cuda_backend_mlp_runs(const pl_cuda_backend *b) { return b ? b->mlp_runs : 0; }
void pl_cuda_backend_wide_proj(pl_cuda_backend *b, int mode) {
    if (b) b->wide_mode = mode == 1 || mode == 2 ? mode : 0;
}
long pl_cuda_backend_wide_runs(const pl_cuda_backend *b) { return b ? b->wide_runs : 0; }
void pl_cuda_backend_fullk_proj(pl_cuda_backend *b, int mode, int ring, int pre) {
    if (!b) return;
    b->fullk_mode = mode == 1 || mode == 2 ? mode : 0;
    b->fullk_ring = ring > 0 ? ring : 0;
    b->fullk_pre = pre > 0 ? pre : 0;
}
long pl_cuda_backend_fullk_runs(const pl_cuda_backend *b) { return b ? b->fullk_runs : 0; }
void pl_cuda_backend_mlp_pre(pl_cuda_backend *b, int n) {
    if (b) b->mlp_pre = n > 0 ? n : 0;
}
void pl_cuda_backend_mlp_plain(pl_cuda_backend *b, int on) {
    if (b) b->mlp_plain = on ? 1 : 0;
}
void pl_cuda_backend_attn_units(pl_cuda_backend *b, int units) {
    if (b) b->attn_units = units > 0 ? units : 0;
}
void pl_cuda_backend_attn_lean(pl_cuda_backend *b, int mode) {
    if (b) b->attn_lean = mode == 1 ? 1 : 0;
}
void pl_cuda_backend_attn_order(pl_cuda_backend *b, int order) {
    if (b) b->attn_order = order >= 1 && order <= 5 ? order : 0;
}
void pl_cuda_backend_attn_split_rule(pl_cuda_backend *b, int rule) {
    if (b) b->attn_split_shapes = rule == 1;
}

void pl_cuda_backend_tune_tile(pl_cuda_backend *b, int ctas_per_sm, int max_splits, int min_ktiles) {
    if (!b) return;
    b->gemv_ws.tile_ctas_per_sm = ctas_per_sm > 0 ? ctas_per_sm : 0;
    b->gemv_ws.tile_max_splits = max_splits > 0 ? max_splits : 0;
    b->gemv_ws.tile_min_ktiles = min_ktiles > 0 ? min_ktiles : 0;
}

void pl_cuda_backend_swiglu_threads(pl_cuda_backend *b, int threads) {
    if (b) b->swiglu_threads = threads >= 32 && threads <= 1024 && threads % 32 == 0 ? threads : 0;
}
void pl_cuda_backend_tile_fixup(pl_cuda_backend *b, int mode) {
    if (b) b->gemv_ws.tile_fixup = mode == 1 || mode == 2 ? mode : 0;
}
void pl_cuda_backend_tile_trigger(pl_cuda_backend *b, int trigger) {
    if (b) b->gemv_ws.tile_trigger = trigger > 0 ? trigger : 0;
}

void pl_cuda_backend_tile_pre_all(pl_cuda_backend *b, int kinds) {
    if (b) b->gemv_ws.tile_pre_all = kinds > 0 && kinds <= 16 ? kinds : 0;
}

void pl_cuda_backend_tile_alone(pl_cuda_backend *b, int rows) {
    if (b) b->gemv_ws.tile_alone = rows > 0 ? rows : 0;
}

void pl_cuda_backend_tile_copy(pl_cuda_backend *b, int mode) {
    if (b) b->gemv_ws.tile_copy = mode >= 0 && mode <= 2 ? mode : 0;
}

void pl_cuda_backend_use_pdl(pl_cuda_backend *b, int on) {
    if (!b) return;
    b->gemv_ws.pdl = on != 0;
    b->pdl_small = on == 1;
}
void pl_cuda_backend_use_graphs(pl_cuda_backend *b, int on) {
    if (b) b->graphs_off = !on;
}
void pl_cuda_backend_time_graphs(pl_cuda_backend *b, int on) {
    if (!b || (on != 0) == (b->time_graphs != 0)) return;
    if (on && (cudaEventCreate(&b->gev[0]) != cudaSuccess || cudaEventCreate(&b->gev[1]) != cudaSuccess)) {
        cudaGetLastError();
        return;
    }
    if (!on) {
        float ms = 0;
        if (b->gev_pending && cudaEventSynchronize(b->gev[1]) == cudaSuccess &&
            cudaEventElapsedTime(&ms, b->gev[0], b->gev[1]) == cudaSuccess)
            b->graph_seconds += ms * 1e-3;
        cudaEventDestroy(b->gev[0]);
        cudaEventDestroy(b->gev[1]);
    }
    b->gev_pending = 0;
    b->time_graphs = on != 0;
}

double pl_cuda_backend_graph_device_seconds(const pl_cuda_backend *b) { return b ? b->graph_seconds : 0; }

void pl_cuda_backend_step_uploads(pl_cuda_backend *b, int mode) {
    if (b) b->step_uploads = mode == 1 ? 1 : 0;
}

double pl_cuda_backend_replay_burst(pl_cuda_backend *b, int n, double *launch_us) {
    if (launch_us) *launch_us = 0;
    if (!b || n < 1 || n > 256 || b->gmode != G_NONE || b->cur_graph < 0 || b->cur_graph >= b->num_graphs) return -1;
    const graph_entry *g = &b->graphs[b->cur_graph];
    if (g->nseg < 1 || cudaStreamSynchronize(b->stream) != cudaSuccess) return -1;
    double lt[256];
    const double t0 = pl_now_seconds();
    for (int i = 0; i < n; i++)
        for (int s = 0; s < g->nseg; s++) {
            const double a = pl_now_seconds();
            if (cudaGraphLaunch(g->exec[s], b->stream) != cudaSuccess) {
                cudaGetLastError();
                cudaStreamSynchronize(b->stream);
                return -1;
            }
            if (s == 0) lt[i] = 1e6 * (pl_now_seconds() - a);
        }
    const cudaError_t e = cudaStreamSynchronize(b->stream);
    const double t1 = pl_now_seconds();
    if (e != cudaSuccess) return -1;
    if (launch_us) *launch_us = pl_median(lt, n);
    return (t1 - t0) / n;
}

void pl_cuda_backend_graph_segments(pl_cuda_backend *b, int segments, int first_layers) {
    if (!b || b->gmode != G_NONE) return;
    const int n = segments <= 0 ? PL_CUDA_GRAPH_SEGMENTS : segments > PL_MAX_SEGS ? PL_MAX_SEGS : segments;
    const int f = first_layers <= 0 ? PL_CUDA_GRAPH_FIRST : first_layers;
    if (n == b->graph_segments && f == b->graph_first) return;
    cudaStreamSynchronize(b->stream);
    for (int i = 0; i < b->num_graphs; i++) graph_drop(b, &b->graphs[i]); /* recaptured with the new cuts */
    b->graph_segments = n;
    b->graph_first = f;
}

double pl_cuda_backend_replay_host_seconds(const pl_cuda_backend *b, double *launch_seconds) {
    if (launch_seconds) *launch_seconds = b ? b->launch_seconds : 0;
    return b ? b->walk_seconds : 0;
}

void pl_cuda_backend_graph_stats(const pl_cuda_backend *b, long *captures, long *replays, long *retries) {
    *captures = b ? b->graph_captures : 0;
    *replays = b ? b->graph_replays : 0;
    *retries = b ? b->graph_retries : 0;
}
long pl_cuda_backend_graph_switches(const pl_cuda_backend *b) { return b ? b->graph_switches : 0; }
void pl_cuda_backend_inject_alloc_failure(pl_cuda_backend *b, int nth) {
    if (b) b->fail_after = nth > 0 ? nth : 0;
}
const pl_kv_storage_ops *pl_cuda_backend_kv_storage(pl_cuda_backend *b) { return b ? &b->kv_ops : nullptr; }

int pl_cuda_backend_sync(pl_cuda_backend *b, char *err, size_t err_len) {
    if (!b) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_cuda_backend_sync: backend is NULL");
    if (int frc = flush_pending(b)) return fwd(b, frc, err, err_len);
    cudaError_t e = cudaStreamSynchronize(b->stream);
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) return pl_fail(err, err_len, cuda_status(e), "CUDA stream: %s", cudaGetErrorString(e));
    return PL_OK;
}

int pl_cuda_kv_budget_pages(size_t page_bytes, size_t budget_mib, double fraction, size_t reserve_mib, int *pages, char *err,
                            size_t err_len) {
    if (!pages) return pl_fail(err, err_len, PL_ERR_INVALID, "pl_cuda_kv_budget_pages: pages is NULL");
    *pages = 0;
    if (page_bytes == 0) return pl_fail(err, err_len, PL_ERR_INVALID, "page_bytes: 0 must be positive");
    size_t bytes;
    if (budget_mib > 0) {
        bytes = budget_mib << 20;
    } else {
        if (!(fraction > 0 && fraction <= 1))
            return pl_fail(err, err_len, PL_ERR_INVALID, "fraction: %g must be in (0, 1]", fraction);
        int rc = pl_cuda_device_check(err, err_len);
        if (rc) return rc;
        size_t fr = 0, total = 0;
        cudaError_t e = cudaMemGetInfo(&fr, &total);
        if (e != cudaSuccess) return pl_fail(err, err_len, PL_ERR_CUDA, "cudaMemGetInfo: %s", cudaGetErrorString(e));
        const size_t reserve = reserve_mib << 20;
        double avail = fr > reserve ? (double)(fr - reserve) : 0.0;
        bytes = (size_t)(avail * fraction);
    }
    size_t n = bytes / page_bytes;
    if (n > 0x7fffffff) n = 0x7fffffff;
    if (n < 1)
        return pl_fail(err, err_len, PL_ERR_NOMEM, "KV budget of %zu bytes holds no page of %zu bytes", bytes, page_bytes);
    *pages = (int)n;
    return PL_OK;
}

} // extern "C"

namespace {
/* Greedy rows: no upload and no copy back, so after the LM head only the two kernels and a
 * synchronization remain (an upload of zero keys and a device-to-host copy of the ids each
 * waited for the stream and cost a copy-engine hand-off). */
int sample_greedy(pl_cuda_backend *b, const float *logits, size_t ld, int rows, int vocab, int32_t *tokens, char *err,
                  size_t err_len) {
    if (int rc = argmax_begin(b, rows, err, err_len)) return rc;
    const int per_row = (vocab + 2047) / 2048; /* 256 threads x 8 values */
    argmax_kernel<<<dim3((unsigned)per_row, (unsigned)rows), 256, 0, b->stream>>>(logits, ld, vocab, b->argmax_keys);
    argmax_finish_kernel<<<(unsigned)((rows + 255) / 256), 256, 0, b->stream>>>(b->argmax_keys, rows, b->argmax_tokens_dev);
    if (int rc = check_launch(b, "greedy sampling kernels")) return fwd(b, rc, err, err_len);
    return argmax_end(b, rows, tokens, err, err_len);
}
} // namespace

extern "C" {

int pl_cuda_sample(pl_cuda_backend *b, const float *logits, size_t ld, int rows, int vocab, const pl_cuda_sample_params *params,
                   int32_t *tokens, char *err, size_t err_len) {
    if (!b || !logits || !params || !tokens)
        return pl_fail(err, err_len, PL_ERR_INVALID, "pl_cuda_sample: backend/logits/params/tokens is NULL");
    if (rows <= 0) return pl_fail(err, err_len, PL_ERR_INVALID, "rows: %d must be > 0", rows);
    if (vocab <= 0 || vocab > (1 << 24)) return pl_fail(err, err_len, PL_ERR_INVALID, "vocab: %d must be in [1, 2^24]", vocab);
    if (ld < (size_t)vocab) return pl_fail(err, err_len, PL_ERR_INVALID, "ld: %zu is below vocab %d", ld, vocab);
    for (int r = 0; r < rows; r++) {
        const pl_cuda_sample_params *p = &params[r];
        if (!isfinite(p->temperature)) return pl_fail(err, err_len, PL_ERR_INVALID, "params[%d].temperature: %g must be finite", r, p->temperature);
        if (p->top_k < 0) return pl_fail(err, err_len, PL_ERR_INVALID, "params[%d].top_k: %d must be >= 0", r, p->top_k);
        if (!(p->top_p > 0 && p->top_p <= 1)) return pl_fail(err, err_len, PL_ERR_INVALID, "params[%d].top_p: %g must be in (0, 1]", r, p->top_p);
        if (!(p->u >= 0 && p->u < 1)) return pl_fail(err, err_len, PL_ERR_INVALID, "params[%d].u: %g must be in [0, 1)", r, p->u);
    }
    if (int frc = flush_pending(b)) return fwd(b, frc, err, err_len);
    int greedy = 1;
    for (int r = 0; r < rows; r++) greedy &= params[r].temperature <= 0;
    if (greedy) return sample_greedy(b, logits, ld, rows, vocab, tokens, err, err_len);
    /* params, then room for the tokens, in one slot */
    const size_t pbytes = sizeof(pl_cuda_sample_params) * (size_t)rows, tbytes = sizeof(int32_t) * (size_t)rows;
    void *d = nullptr;
    int rc = ensure_scratch(b, sizeof(float) * (size_t)rows * vocab);
    if (rc == PL_OK) {
        char *tmp = static_cast<char *>(malloc(pbytes + tbytes));
        if (!tmp) return pl_fail(err, err_len, PL_ERR_NOMEM, "pl_cuda_sample: out of memory");
        memcpy(tmp, params, pbytes);
        memset(tmp + pbytes, 0xff, tbytes);
        rc = stage_upload(b, SLOT_SAMPLE, tmp, pbytes + tbytes, &d);
        free(tmp);
    }
    if (rc) return fwd(b, rc, err, err_len);
    int32_t *dtok = reinterpret_cast<int32_t *>(static_cast<char *>(d) + pbytes);
    sample_kernel<<<rows, SAMP_THREADS, 0, b->stream>>>(logits, ld, vocab, static_cast<const pl_cuda_sample_params *>(d),
                                                        static_cast<float *>(b->scratch), dtok);
    if ((rc = check_launch(b, "sample kernel"))) return fwd(b, rc, err, err_len);
    cudaError_t e = cudaMemcpyAsync(tokens, dtok, tbytes, cudaMemcpyDeviceToHost, b->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(b->stream);
    if (e != cudaSuccess) return pl_fail(err, err_len, PL_ERR_CUDA, "pl_cuda_sample: %s", cudaGetErrorString(e));
    return PL_OK;
}

} // extern "C"
