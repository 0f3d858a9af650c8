/* The CUDA backend of the forward pass: the pl_backend_ops table on one GPU (weights
 * uploaded once as the activation dtype, bf16 by default; cuBLAS GEMMs with f32
 * accumulation; fused kernels for embedding, RMSNorm, q/k norm + RoPE, SwiGLU, add, row
 * copies), K/V page-pool storage in device memory, a KV page budget sized from free device
 * memory, and last-row sampling (greedy / temperature / top-k / top-p) on the device.
 *
 * All work is enqueued on the backend's own stream. Ops of the table that have no err
 * argument keep their message in the backend (pl_cuda_backend_last_error). Asynchronous
 * kernel faults surface at the next synchronizing call (pl_cuda_backend_sync, a matmul
 * into host memory, sampling). The kv_append op commits the cache metadata at once but
 * defers the device copy, merging consecutive chunks into one launch; qk_norm_rope with
 * q_out defers too, and goes out in one kernel with the appends that copy its k/v rows
 * (else alone, before them); every other op, a pool growth copy, a free, the end of a
 * graphed step and pl_cuda_backend_sync launch the pending work first. A
 * matmul whose f32 output is host memory (the forward pass's logits) computes into device
 * scratch and copies back. Built without CUDA, every entry point returns
 * PL_ERR_UNSUPPORTED (a MiB KV budget excepted: it needs no device). */
#ifndef PL_CUDA_BACKEND_CUDA_H
#define PL_CUDA_BACKEND_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "pagellm/kv.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pl_backend_ops;
struct pl_weight_src;
typedef struct pl_cuda_backend pl_cuda_backend;

/* PL_OK when a CUDA device is usable; PL_ERR_UNSUPPORTED with the reason otherwise. */
int pl_cuda_device_check(char *err, size_t err_len);

/* A backend on device `device` (0 = first) for activations of dtype act (PL_BF16 or PL_F32;
 * weights are stored in the same dtype, vectors as f32). */
int pl_cuda_backend_create(int act, int device, pl_cuda_backend **out, char *err, size_t err_len);
/* Frees everything the backend still owns (staging buffers, stream, cuBLAS handle, and any
 * device allocation not yet freed: destroy page pools on its storage first). */
void pl_cuda_backend_destroy(pl_cuda_backend *b);
/* The ops table; its ctx argument is a pl_cuda_backend. */
const struct pl_backend_ops *pl_cuda_backend_ops(void);
/* Message of the last failure of an op without an err argument ("" when none). */
const char *pl_cuda_backend_last_error(const pl_cuda_backend *b);
/* The backend's cudaStream_t. */
void *pl_cuda_backend_stream(pl_cuda_backend *b);
/* Launches pending work (K/V appends, a deferred q/k norm + RoPE), waits for the stream;
 * reports any asynchronous fault. */
int pl_cuda_backend_sync(pl_cuda_backend *b, char *err, size_t err_len);
/* Device bytes allocated through the backend and not yet freed (weights, buffers, pools). */
size_t pl_cuda_backend_live_bytes(const pl_cuda_backend *b);
/* Test and benchmark hook for bf16 matmuls of few rows (src/cuda/gemv.cu): mode 1 (default)
 * the CUDA-core kernel for one row and the staged tensor-core tile kernel for 2-64, 2 the
 * CUDA-core kernel up to 8 rows, 3 the untiled tensor-core kernel up to 8 rows, 4 the
 * default with the tile kernel only up to 32 rows (the default before its TMA copies), 0
 * cuBLAS for every matmul (the modes use cuBLAS past their kernels' rows). */
void pl_cuda_backend_use_gemv(pl_cuda_backend *b, int mode);
/* Benchmark hook, never for serving: ops of the kinds in mask return without launching, so
 * results are wrong but a step timed without them shows what they cost inside the step. The
 * GEMM kind spares f32-output matmuls (the LM head). */
enum { PL_CUDA_SKIP_NORM = 1, PL_CUDA_SKIP_ROPE = 2, PL_CUDA_SKIP_APPEND = 4, PL_CUDA_SKIP_ATTN = 8, PL_CUDA_SKIP_SWIGLU = 16,
       PL_CUDA_SKIP_GEMM = 32 };
void pl_cuda_backend_skip_ops(pl_cuda_backend *b, int mask);
/* Benchmark hook: context splits of the split-context attention kernels (0: their heuristic). */
void pl_cuda_backend_attn_splits(pl_cuda_backend *b, int splits);
/* Benchmark hook: the decode attention's CTA width, 4 or 8 warps (0: AUTO). */
void pl_cuda_backend_attn_warps(pl_cuda_backend *b, int warps);
/* Benchmark hook: the decode attention's K/V copies (pl_cuda_attn_options.decode_copy: 0 AUTO,
 * 1 cp.async, 2 TMA boxes). */
void pl_cuda_backend_attn_copy(pl_cuda_backend *b, int mode);
/* Test and benchmark hook: the decode attention over the backend's page pools reads old keys
 * before its PDL wait (0, default) or after it (1). */
void pl_cuda_backend_attn_early(pl_cuda_backend *b, int mode);
/* Test and benchmark hook: whether a decode step's q/k norm + RoPE and K/V append go into the
 * decode attention kernel (pl_cuda_attn_options.rope) instead of their own kernel before it:
 * 0 AUTO (default: at batches where that measured faster), 1 never, 2 always (where the
 * attention kernel takes them). */
void pl_cuda_backend_attn_rope(pl_cuda_backend *b, int mode);
/* Test and benchmark hook: whether a tile GEMM of 2-16 rows with K splits leaves its
 * partials to the residual add + RMSNorm after it (0 AUTO, the default: when that op follows),
 * or adds them itself (1). The results are the same bits. */
void pl_cuda_backend_parts_norm(pl_cuda_backend *b, int mode);
/* Benchmark hook: CTAs per row of that add + RMSNorm of partials (0: AUTO, parts_ctas in
 * backend_cuda.cu; a count that does not divide the row's warps into at most 8 per CTA: AUTO) */
void pl_cuda_backend_parts_ctas(pl_cuda_backend *b, int ctas);
/* Test and benchmark hook: GEMMs of 2-8 rows that the tile kernel would split over K take
 * 16-row k-sliced tiles over all of K instead, no partials: 0 AUTO (the default) from 2 rows
 * where x's allocation holds 8 rows (the forward pass's buffers), else from 6; 2 from 2 rows
 * always; 1 never (the tile kernel). */
void pl_cuda_backend_kslice(pl_cuda_backend *b, int mode);
/* Test hook: k-sliced GEMM kernels launched so far, counted where the kernel is launched
 * (eager and captured; a replay launches nothing). */
long pl_cuda_backend_kslice_launches(const pl_cuda_backend *b);
/* Test hook: whether a bf16 [rows x k] x [n x k]^T GEMM on the tile kernel takes k-sliced tiles
 * with the backend's current knobs, x's allocation holding x_rows rows (it depends on the
 * device's SM count). */
int pl_cuda_backend_kslice_takes(const pl_cuda_backend *b, int rows, int n, int k, int x_rows);
/* Test hook: how many held GEMMs' partials the add + RMSNorm after them took (launches, eager
 * and captured; a replay launches nothing). */
long pl_cuda_backend_parts_fused(const pl_cuda_backend *b);
/* Test and benchmark hook: a decode batch's MLP (gate/up GEMM, SwiGLU, down GEMM, whose
 * partials the add + RMSNorm after it adds) as one kernel on sm_90a (src/cuda/mlp.cu): 0 AUTO
 * (the default: from 57 to 64 rows, where the shape has a plan), 1 never, 2 from 1 row. */
void pl_cuda_backend_fused_mlp(pl_cuda_backend *b, int mode);
/* Test hook: fused MLP launches so far (eager and captured; a replay launches nothing). */
long pl_cuda_backend_mlp_runs(const pl_cuda_backend *b);
/* Benchmark hook: the fused MLP launched without the cooperative guarantee (on != 0): its CTAs
 * may then enter while the kernels before leave SMs, as PDL lets the other kernels' (measured on
 * the H200 ~1% off a batch-64 step, PERF.md, twenty-ninth session); a CTA that waits 2 s for the
 * others traps rather than hangs. 0: cooperative (the default). */
void pl_cuda_backend_mlp_plain(pl_cuda_backend *b, int on);
/* A projection of 57-64 rows whose residual add + RMSNorm comes next (the o projection) as the
 * fused MLP's phase 2 alone (pl_cuda_wide_bf16: one CTA per SM, K-split partials that the norm
 * adds): 0 AUTO, 1 never, 2 from 1 row. pl_cuda_backend_wide_runs counts its launches. */
void pl_cuda_backend_wide_proj(pl_cuda_backend *b, int mode);
long pl_cuda_backend_wide_runs(const pl_cuda_backend *b);
/* Benchmark hook: a projection that no add + RMSNorm takes (the qkv projection) as the fused MLP's
 * phase 1 alone (pl_cuda_fullk_bf16: one CTA per SM over all of K, no sums): mode 0 never (the
 * default: at batch 64 it helps Qwen3-4B's step by 1.3-1.6% and costs Qwen3-8B's 1.2-1.8%, PERF.md,
 * thirty-second session), 1 from 57 rows, 2 from 1 row; ring: pl_cuda_fullk_plan_for's (0 the
 * default, 1 deep); pre: its weight stages before its PDL wait (0: a third of its ring).
 * pl_cuda_backend_fullk_runs counts its launches. */
void pl_cuda_backend_fullk_proj(pl_cuda_backend *b, int mode, int ring, int pre);
long pl_cuda_backend_fullk_runs(const pl_cuda_backend *b);
/* Benchmark hook: the fused MLP's weight stages issued before its PDL wait (pl_cuda_mlp_plan.pre:
 * 0 the default, a third of the ring; 6 the whole ring of Qwen3-4B's form, as before). */
void pl_cuda_backend_mlp_pre(pl_cuda_backend *b, int n);
/* Benchmark hook: the decode attention's work units per CTA (pl_cuda_attn_options.
 * decode_units_per_cta; 0 AUTO, 1 one unit per CTA). */
void pl_cuda_backend_attn_units(pl_cuda_backend *b, int units);
/* Benchmark hook: the order of those units over CTAs (pl_cuda_attn_options.decode_units_order;
 * 0 AUTO, ranked by context on the host and paired long with short; 1 runs of consecutive units,
 * as before the thirty-fifth session; 2 every grid-th unit in sequence order; 3 ranked by the
 * kernel, passes forward; 4 reversed passes unranked; 5 as 0 ranked by the kernel, as before the
 * forty-sixth session). */
void pl_cuda_backend_attn_order(pl_cuda_backend *b, int order);
/* How the decode attention picks its context splits (pl_model_options.cuda_attn_splits): 0
 * (default) from the step's contexts, pl_cuda_attn_options.host_context_lens (a changed count
 * changes the step's graph signature: the step replays another captured variant of its graph
 * key, or captures one); 1 from the shapes alone. */
void pl_cuda_backend_attn_split_rule(pl_cuda_backend *b, int rule);
/* Benchmark hook: the tile GEMM's K split (src/cuda/gemv.cu pl_cuda_gemv_tile_splits); 0
 * keeps a default (2 CTAs per SM up to 16 rows and 1 past, at most 16 splits, at least 4 k
 * tiles of 64 per split). */
void pl_cuda_backend_tune_tile(pl_cuda_backend *b, int ctas_per_sm, int max_splits, int min_ktiles);
/* Benchmark hook: past `rows` rows (0: never, the default), a tile GEMM launch of one wave keeps
 * its CTAs one per SM (pl_cuda_gemv_ws.tile_alone): 56 for the qkv projection of 57-64 rows alone.
 * Measured (PERF.md, thirty-third session): Qwen3-4B's batch-64 step 1.5-2.4% faster, Qwen3-8B's
 * level to 1.5% slower, Qwen3-1.7B's 5% slower, so not the default. */
void pl_cuda_backend_tile_alone(pl_cuda_backend *b, int rows);
/* Benchmark hook: where the tile and k-sliced GEMM kernels let the next kernel launch
 * (pl_cuda_gemv_ws.tile_trigger: mode & 15, kinds >> 4; 0: AUTO, at entry but halfway through
 * the main loop for a held split GEMM that no norm takes, the decode step's qkv projection;
 * 16: at entry everywhere, as before the fortieth session). */
void pl_cuda_backend_tile_trigger(pl_cuda_backend *b, int trigger);
/* Test and benchmark hook: whose CTAs send all of their ring's weight stages before the PDL
 * wait instead of all but one (pl_cuda_gemv_ws.tile_pre_all: 1 the k-sliced o projection, 2
 * k-sliced down, 4 the tile qkv, 8 the tile gate/up, or a sum, at every row count; 0 AUTO, all
 * of them up to 16 rows: PERF.md, forty-fifth session; 16 none, as before it). */
void pl_cuda_backend_tile_pre_all(pl_cuda_backend *b, int kinds);
/* Benchmark hook: how the tile GEMM's K-split CTAs count in before the last one adds their
 * partials (pl_cuda_gemv_ws.tile_fixup: 0 AUTO, one acq_rel atomic from 3 rows; 1 a fence by
 * every thread, the atomic and a fence, as before the forty-first session; 2 the atomic at
 * every row count). */
void pl_cuda_backend_tile_fixup(pl_cuda_backend *b, int mode);
/* Benchmark hook: the SwiGLU kernel's threads per CTA, 32-1024 in warps (0: AUTO, 1024 at 3-8
 * rows, else 256, as everywhere before the fortieth session; its grid is a row's elements over
 * them, at most 64 CTAs a row). */
void pl_cuda_backend_swiglu_threads(pl_cuda_backend *b, int threads);
/* Test and benchmark hook: the tile GEMM's stage copies, 0 default (TMA boxes),
 * 1 cp.async, 2 TMA boxes (cp.async where the driver has no tensor-map encoder). */
void pl_cuda_backend_tile_copy(pl_cuda_backend *b, int mode);
/* Programmatic dependent launch (a kernel may launch while the one before it finishes; skinny
 * GEMMs start loading weights): on = 1 (default) every kernel of a step, 2 the skinny GEMMs
 * only, 0 none but the K/V append (pl_kv_append_cuda always is). A benchmark hook. */
void pl_cuda_backend_use_pdl(pl_cuda_backend *b, int on);
/* on = 0: decode steps run eagerly instead of through CUDA graphs (default 1); graphs
 * already captured are kept for when they are turned on again. */
void pl_cuda_backend_use_graphs(pl_cuda_backend *b, int on);
/* Graphs captured, replayed, and steps redone eagerly because a graph no longer matched. */
void pl_cuda_backend_graph_stats(const pl_cuda_backend *b, long *captures, long *replays, long *retries);
/* Replays that ran another captured variant of the step's key than the one used last (a key
 * keeps up to 8 variants: the same shapes with other launch settings, such as the decode
 * attention's splits from the step's contexts; a step that matches none is redone eagerly and
 * its key's next step captured as a new variant). */
long pl_cuda_backend_graph_switches(const pl_cuda_backend *b);
/* Host seconds of the replayed steps so far, from graph_begin to the first segment's launch:
 * the ops' host work (metadata, signature) while the device waits; *launch_seconds (if not
 * NULL): in those first cudaGraphLaunch calls. */
double pl_cuda_backend_replay_host_seconds(const pl_cuda_backend *b, double *launch_seconds);
/* Benchmark hook: on = 1 brackets each replayed graph with two events; turning it off adds
 * the last interval. pl_cuda_backend_graph_device_seconds: their device seconds so far. */
void pl_cuda_backend_time_graphs(pl_cuda_backend *b, int on);
/* Segments a decode step's graph is captured in (1-8; 0: the default), the first of
 * first_layers layers (0: the default), each next one 4x longer, the last taking the rest;
 * each is launched once the forward pass has walked its layers, so the device starts after
 * the first segment's host work instead of the whole step's. Graphs captured before are
 * dropped. */
#define PL_CUDA_GRAPH_SEGMENTS 3
#define PL_CUDA_GRAPH_FIRST 1
void pl_cuda_backend_graph_segments(pl_cuda_backend *b, int segments, int first_layers);
double pl_cuda_backend_graph_device_seconds(const pl_cuda_backend *b);
/* Benchmark hook: where a graphed decode step's uploads (token ids, rope positions, K/V append
 * and attention metadata) go: 0 AUTO, one arena sent by one copy on the stream before each
 * segment's launch; 1 each kind's own arena, as copy nodes inside the graph (before the
 * forty-second session). The two capture different graphs (variants of a key). */
void pl_cuda_backend_step_uploads(pl_cuda_backend *b, int mode);
/* Benchmark hook: the decode attention's pl_cuda_attn_options.decode_lean (0 AUTO: the query rows
 * past a unit's zeroed once per CTA, no divisions at query_len 1; 1 each unit as before the
 * forty-second session) */
void pl_cuda_backend_attn_lean(pl_cuda_backend *b, int mode);
/* Benchmark hook: the current graph's segments (the last replayed step) launched n times back to
 * back, so the device never waits for the host; the wall seconds per step, and in *launch_us
 * (if not NULL) the median host time of a first segment's cudaGraphLaunch call made while the
 * device is busy. Recomputes that step n times (the same K/V into the same slots). -1 when
 * there is no captured graph or a launch fails. */
double pl_cuda_backend_replay_burst(pl_cuda_backend *b, int n, double *launch_us);
/* Test hook: the n-th device allocation from now (1 = the next) fails as out of memory;
 * 0 disarms. */
void pl_cuda_backend_inject_alloc_failure(pl_cuda_backend *b, int nth);

/* Page-pool storage in device memory (zeroed on allocation, device-to-device growth copy). */
const pl_kv_storage_ops *pl_cuda_backend_kv_storage(pl_cuda_backend *b);

/* A capped page budget: budget_mib > 0 takes that many MiB, else fraction (0, 1] of the free
 * device memory (cudaMemGetInfo) minus reserve_mib. page_bytes = K + V bytes of one page
 * across all layers. *pages >= 1, or PL_ERR_NOMEM when not even one page fits. */
int pl_cuda_kv_budget_pages(size_t page_bytes, size_t budget_mib, double fraction, size_t reserve_mib, int *pages,
                            char *err, size_t err_len);

/* Per-row sampling parameters with the row's uniform draw u in [0, 1) (the host keeps the
 * seeded generator, so the CPU sampler and the device agree draw for draw). */
typedef struct pl_cuda_sample_params {
    float temperature; /* <= 0: greedy */
    int top_k;         /* 0 = off */
    float top_p;       /* 1 = off */
    double u;
} pl_cuda_sample_params;

/* tokens[r] = sample of row r of the device f32 logits (rows ld floats apart, vocab
 * columns), with src/model/sampler.c's semantics: greedy argmax (first max, NaN skipped);
 * else softmax(logits / temperature), keep the top_k best (ties: lower id first), then the
 * smallest prefix holding top_p of the kept mass, then the token where u * mass falls.
 * params and tokens are host arrays. */
int pl_cuda_sample(pl_cuda_backend *b, const float *logits, size_t ld, int rows, int vocab,
                   const pl_cuda_sample_params *params, int32_t *tokens, char *err, size_t err_len);

/* Host helper (backend_cuda_host.c): rows [row0, row0 + n) of the parts stacked, as bf16
 * (bf16 != 0) or f32 into out, converted on OpenMP threads. PL_OK or PL_ERR_NOMEM. */
int pl_cuda_pack_rows(const struct pl_weight_src *const *parts, int num_parts, int row0, int n, int cols, int bf16, void *out);

#ifdef __cplusplus
}
#endif
#endif
