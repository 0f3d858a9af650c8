/* Split-context decode on tensor cores for bf16, head_dim 128: the GQA group's query rows
 * (rows r = l * group + g of one KV head, up to 16) are packed into the 16 rows of one
 * m16n8k16 tile, so each K/V byte is read once per KV head and the dot products cost ~6
 * instructions per key instead of ~80 on CUDA cores.
 *
 * A work unit is one KV head, one 16-row chunk and one context split of a sequence. A CTA of
 * 4 warps (8 when there are no more units than SMs) takes one unit, or several when there are
 * more units than two CTAs per SM hold (then each warp's stream runs on into the next unit:
 * measured on the H200 1-4% off batch-48 to 128 decode alone at contexts 512-1024, 64x2048
 * 0.8% slower, the batch-48 and 64 steps level). Those are every grid-th unit, not a run:
 * a run held consecutive KV heads of one sequence, so the CTAs of a serving batch's longest
 * contexts set the kernel's end (batch-64 steps at contexts 128-2560 8% faster, at 512 0.6-1%).
 * With the sequences ranked by context and every odd pass taken from the far end, a CTA's long
 * unit comes with a short one (at contexts 128-2560 another 6%). Ranked by the kernel, that cost
 * each CTA a round trip and a sync before its first K/V loads (batch 64 at context 512 1-5%
 * slower than unranked, by card): the caller may send the ranking with the table (pl_cuda_attn_rank). Each warp walks its own 16-key tiles (tiles w, w + NW, ...) of a unit
 * through a private 3-stage ring (8 KiB per stage: K and V rows, 16-byte chunks
 * XOR-swizzled for ldmatrix), so warps never wait on each other until the merge of their
 * (max, sum, out) states, which runs lane by lane on the MMA fragments (one round through
 * shared memory, each warp combining and storing a share of the columns). With the query rows
 * through registers, that rewrite alone (one unit per CTA) measured 2-10% off 32x4096 to
 * 128x512 decode on the H200 against a merge of whole rows by every thread. A stage is filled either by 32 cp.async of 16 bytes per lane,
 * or, when page_size % 16 == 0, by four TMA boxes (a tensor map over the page pool, 128-byte
 * swizzle) that one lane issues and an mbarrier counts. Measured on the H200: TMA 0-1.8%
 * faster on long ranges (16x32768, 64x8192), 3-6% slower for 8-warp CTAs on short ranges
 * (1x8192, 8x4096), so the plan picks cp.async there. When the caller promises that the keys
 * before this step's query_len new ones are final (early_kv: the backend's page pools), each
 * warp's first stages of them go out before the PDL wait, while the kernel before (the RoPE
 * and K/V append) still runs: measured 0.6-2.9% off decode steps of batch 1-64 in the step
 * (and reading them after the wait 2% slower at batch 4, 1% at 64, thirty-fourth session; bulk
 * prefetches of further tiles into L2 there slowed the kernel before and gave no hits).
 * With a fused rope (ROPE: pl_cuda_attn_rope, one query row per sequence) that kernel is gone:
 * the CTAs normalize and rotate their raw q heads themselves, and the warp whose tile holds a
 * sequence's new position appends its key and value (holds_new below). */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cuda/attn_cuda.h"
#include "cuda/elem.cuh"
#include "cuda/ptx.cuh"
#include "cuda/diag_stamps.cuh"
#include "cuda/tma_cuda.h"

namespace {

constexpr int kD = 128, kRowB = 256, kTK = 16, kStages = 3, kRows = 16;
constexpr int kStageBytes = 2 * kTK * kRowB;                  /* K + V: 8 KiB */
constexpr int kWarpRing = kStages * kStageBytes;              /* 24 KiB */
constexpr int kQBytes = kRows * kRowB;                        /* 4 KiB */
/* NW warps per CTA: 4 (100 KiB, two CTAs per SM) or 8 (196 KiB, one CTA per SM: for few
 * long (row chunk, KV head, row) units, a unit's stream shared by twice the warps) */
template <int NW> constexpr int smem_bytes() { return kQBytes + NW * kWarpRing; }
/* TMA variant: the same plus 1 KiB to align the base for the 128-byte swizzle and the warps'
 * stage barriers */
template <int NW> constexpr int smem_bytes_tma() { return 1024 + smem_bytes<NW>() + NW * kStages * 8; }
/* the warps' merge: per slot, 8-row half and lane, 32 outputs and (max, sum); a CTA of several
 * units has two slots of one half of its own (8.5 KiB: two CTAs per SM still fit) */
constexpr int kMergeOwn = 2 * 34 * 32 * 4;

/* TMA stage layout of a 16-key tile: head-dim halves [2][16 keys][128 bytes] in the 128-byte
 * swizzle (two boxes of 64 x 16), so ldmatrix rows of one 16-byte column hit distinct banks */
__device__ __forceinline__ uint32_t tswz(int r, int ch) {
    return (uint32_t)((ch >> 3) * 2048 + r * 128 + (((ch & 7) ^ (r & 7)) << 4));
}

/* ROPE: a lane's elements l + 32 j of one bf16 head of 128 (h points at element l), as two
 * packed pairs (j = 0, 1 and 2, 3), read through L2: the kernel before us wrote them */
__device__ __forceinline__ void load_head_lane(const unsigned short *h, uint32_t (&r)[2]) {
    r[0] = (uint32_t)__ldcg(h) | (uint32_t)__ldcg(h + 32) << 16;
    r[1] = (uint32_t)__ldcg(h + 64) | (uint32_t)__ldcg(h + 96) << 16;
}

__device__ __forceinline__ void unpack_head_lane(const uint32_t (&r)[2], float (&x)[4]) {
    x[0] = __uint_as_float(r[0] << 16), x[1] = __uint_as_float(r[0] & 0xffff0000u);
    x[2] = __uint_as_float(r[1] << 16), x[3] = __uint_as_float(r[1] & 0xffff0000u);
}

/* One work unit: (context split, 16-row chunk, KV head, sequence), and this warp's share of
 * its 16-key tiles (tiles warp, warp + NW, ...). */
struct Unit {
    int b, kvh, r0, split, ctx, k_begin, k_stop, my_tiles;
    const int32_t *bt; /* its block-table row */
};

/* Sequences ranked by context for p.strided == 2 without the host's ranking (at most this many;
 * past it, every grid-th unit in sequence order). Every CTA then ranks them itself before its
 * first loads, one ballot per 32 sequences. */
constexpr int kSortMax = 256;

/* order: the sequence of each rank (longest context first), or NULL for sequence order */
template <int NW> __device__ __noinline__ Unit unit_at(const pl_attn_params &p, int u, int warp, const int *order) {
    Unit U;
    const int G = p.group, L = p.query_len, R = G * L, chunks = (R + kRows - 1) / kRows;
    U.split = u % p.splits;
    int t = u / p.splits;
    U.r0 = (t % chunks) * kRows;
    t /= chunks;
    U.kvh = t % p.num_kv_heads;
    const int slot = t / p.num_kv_heads;
    if (p.rank_seq) { /* the host's ranking: the row and context by rank, no load waits on another */
        U.b = p.rank_seq[slot];
        U.ctx = p.rank_ctx[slot];
        U.bt = p.rank_bt + (size_t)slot * p.max_pages;
    } else {
        U.b = order ? order[slot] : slot;
        U.ctx = p.context_lens[U.b];
        U.bt = p.block_table + (size_t)U.b * p.max_pages;
    }
    /* visible range of the chunk's rows */
    const int lmax = (min(U.r0 + kRows, R) - 1) / G;
    const int kv_end = p.causal ? min(U.ctx, lmax + U.ctx - L + 1) : U.ctx;
    U.k_begin = U.split * p.chunk;
    U.k_stop = min(U.k_begin + p.chunk, kv_end);
    const int ntile_all = U.k_stop > U.k_begin ? (U.k_stop - U.k_begin + kTK - 1) / kTK : 0;
    U.my_tiles = ntile_all > warp ? (ntile_all - warp + NW - 1) / NW : 0;
    return U;
}

/* TMA: each warp's tiles come as four 2 KiB tensor-map boxes (K and V, two head-dim halves)
 * issued by one lane and counted on a per-stage mbarrier, instead of 32 cp.async of 16 bytes
 * per lane; needs page_size % 16 == 0 (a tile never crosses a page).
 * A CTA takes p.units_per_cta units, consecutive or (p.strided) every grid-th. Each warp's ring runs on across them: while
 * it computes the last tiles of one unit its next stages already hold the next unit's, so the
 * unit's merge, the next query rows and the first tiles' latency overlap the stream, where a
 * second wave of one-unit CTAs would start each from an empty ring. */
template <int NW, bool TMA, bool ROPE, bool LEAN>
__global__ void __launch_bounds__(NW * 32, NW == 4 ? 2 : 1)
    decode_mma_kernel(const __grid_constant__ pl_attn_params p, const __grid_constant__ CUtensorMap tk,
                      const __grid_constant__ CUtensorMap tv) {
    extern __shared__ __align__(128) unsigned char smem_raw[];
    unsigned char *smem = TMA ? smem_raw + ((1024u - (smem_u32(smem_raw) & 1023u)) & 1023u) : smem_raw;
    pdl_trigger(); /* the output projection after us may start loading its weights */
    PL_DIAG_SCOPE(2, p.units, p.units_per_cta, (unsigned long long)NW | (unsigned long long)ROPE << 8 | (unsigned long long)p.early_kv << 9);
    if (TMA && threadIdx.x == 0) { /* the descriptors do not depend on the kernel before us */
        tmap_prefetch(&tk);
        tmap_prefetch(&tv);
    }
    /* p.early_kv: the block table, the context lengths and every key before this step's
     * query_len new ones were written before the kernel before us started (the caller's
     * promise), so those are read before pdl_wait; everything else after it */
    if (!p.early_kv) {
        pdl_wait();
        PL_DIAG_MARK(4);
    }
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int G = p.group, L = p.query_len, R = G * L;
    float wq[4], wk[4]; /* ROPE: the lane's q and k norm weights (model constants) */
    if (ROPE)
#pragma unroll
        for (int j = 0; j < 4; ++j) wq[j] = p.rp.q_norm[lane + 32 * j], wk[j] = p.rp.k_norm[lane + 32 * j];
    /* this CTA's u_n units, local index k: a run from blockIdx.x * units_per_cta or, with
     * p.strided, every grid-th from blockIdx.x, so a sequence's units land on different CTAs
     * and each CTA's keys are a sum over several sequences */
    const int u_first = p.strided ? (int)blockIdx.x : (int)blockIdx.x * p.units_per_cta;
    const int u_step = p.strided ? (int)gridDim.x : 1;
    /* p.strided == 2: units in sequences of falling context, the odd passes over the grid run
     * backwards, so a CTA's longest unit comes with one of the shortest (each pass is a
     * permutation of its grid units; only the last may hold units past p.units) */
    __shared__ int s_order[kSortMax];
    const bool ranked = (p.strided == 2 || p.strided == 3) && p.batch <= kSortMax && !p.rank_seq; /* by this CTA */
    const bool reversed = (p.strided == 2 && (ranked || p.rank_seq)) || p.strided == 4;
    if (ranked) {
        /* every CTA ranks the same contexts alike (ties by sequence): each lane holds the
         * contexts of sequences lane + 32 i, and a warp ranks one sequence against 32 others
         * per ballot, so the loads are one round trip, not a loop of them */
        constexpr int kPer = kSortMax / 32;
        int cl[kPer];
#pragma unroll
        for (int i = 0; i < kPer; ++i) cl[i] = lane + 32 * i < p.batch ? p.context_lens[lane + 32 * i] : 0;
        for (int b = warp; b < p.batch; b += NW) {
            int mine = cl[0];
#pragma unroll
            for (int i = 1; i < kPer; ++i) mine = (b >> 5) == i ? cl[i] : mine; /* no local-memory indexing */
            const int cb = __shfl_sync(0xffffffffu, mine, b & 31);
            int r = 0;
#pragma unroll
            for (int i = 0; i < kPer; ++i) {
                const int j = lane + 32 * i;
                if (32 * i < p.batch) r += __popc(__ballot_sync(0xffffffffu, j < p.batch && (cl[i] > cb || (cl[i] == cb && j < b))));
            }
            if (lane == 0) s_order[r] = b;
        }
        __syncthreads();
    }
    auto unit_idx = [&](int k) {
        return reversed && (k & 1) ? k * u_step + (u_step - 1 - u_first) : u_first + k * u_step;
    };
    int u_n = p.strided ? p.units / u_step : min(p.units - u_first, p.units_per_cta);
    if (p.strided && unit_idx(u_n) < p.units) ++u_n; /* the last, partial pass */
    auto unit_k = [&](int k) { return unit_at<NW>(p, unit_idx(k), warp, ranked ? s_order : nullptr); };
    const uint16_t *Q = static_cast<const uint16_t *>(p.q);
    const uint16_t *K = static_cast<const uint16_t *>(p.k);
    const uint16_t *V = static_cast<const uint16_t *>(p.v);
    const uint32_t sQ = smem_u32(smem);
    const uint32_t ring = sQ + kQBytes + warp * kWarpRing;
    const uint32_t bars = sQ + kQBytes + NW * kWarpRing + warp * kStages * 8; /* TMA: this warp's stage barriers */
    /* the merge of the warps' states: its own region when another unit's stages may be in
     * flight, else the rings (idle by then) */
    float *mbuf = reinterpret_cast<float *>(smem + kQBytes + (p.units_per_cta > 1 ? NW * kWarpRing + (TMA ? NW * kStages * 8 : 0) : 0));
    if (TMA) {
        if (lane < kStages) mbar_init(bars + lane * 8, 1);
        mbar_init_fence();
        __syncwarp();
    }

    /* each K/V byte is read once per step: let it leave L2 before the activations and
     * metadata around it (measured: 1x8192, 8x4096 and 128x1024 1-3% faster, the long
     * shapes within 0.3%) */
    const uint64_t once = l2_evict_first();
    const int ps = p.page_size;
    const bool one_lookup = (ps % kTK) == 0;
    auto issue = [&](const Unit &U, int j, int stage) { /* U's j-th tile of this warp into a stage */
        const int t0 = U.k_begin + (warp + j * NW) * kTK;
        const int32_t *bt = U.bt;
        const uint32_t kb = ring + stage * kStageBytes, vb = kb + kTK * kRowB;
        if (TMA) {
            if (lane == 0) {
                const int pidx = p.page_shift >= 0 ? (t0 >> p.page_shift) : t0 / ps;
                const int row = (__ldg(bt + pidx) * p.num_kv_heads + U.kvh) * ps + (t0 - pidx * ps);
                const uint32_t bar = bars + stage * 8;
                mbar_expect_tx(bar, kStageBytes);
                tma_load_2d(kb, &tk, 0, row, bar, once);
                tma_load_2d(kb + 2048, &tk, 64, row, bar, once);
                tma_load_2d(vb, &tv, 0, row, bar, once);
                tma_load_2d(vb + 2048, &tv, 64, row, bar, once);
            }
            return;
        }
        int tpage = 0, tslot = 0;
        if (one_lookup) {
            const int pidx = p.page_shift >= 0 ? (t0 >> p.page_shift) : t0 / ps;
            tpage = __ldg(bt + pidx);
            tslot = t0 - pidx * ps;
        }
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const int key = i * 2 + (lane >> 4), ch = lane & 15;
            const int s = t0 + key;
            const void *ks = K, *vs = V;
            int n = 0;
            if (s < U.k_stop) {
                int page, slot;
                if (one_lookup) {
                    page = tpage;
                    slot = tslot + key;
                } else {
                    const int pidx = p.page_shift >= 0 ? (s >> p.page_shift) : s / ps;
                    page = __ldg(bt + pidx);
                    slot = s - pidx * ps;
                }
                const size_t off = (((size_t)page * p.num_kv_heads + U.kvh) * ps + slot) * kD + ch * 8;
                ks = K + off;
                vs = V + off;
                n = 16;
            }
            cp_async16_hint(kb + swz(key, ch), ks, n, once);
            cp_async16_hint(vb + swz(key, ch), vs, n, once);
        }
    };
    /* the issue cursor: this warp's next tile to load (unit iu, its tile ij), kStages - 1
     * tiles ahead of the one it computes, across units; gi counts the tiles issued */
    const Unit first = unit_k(0);
    int iu = 0, ij = 0;
    unsigned gi = 0;
    Unit IU = first;
    auto advance = [&]() { /* past the units with no tile for this warp */
        while (iu < u_n && ij >= IU.my_tiles) {
            if (++iu < u_n) IU = unit_k(iu);
            ij = 0;
        }
    };
    advance();
    /* ROPE (L = 1): the tile of a unit holding its context's last position, the step's new key
     * and value. The warp that loads it also loads their raw rows (lane l: elements l + 32 j,
     * k and v packed in pairs, with the page slot), one such tile in flight per warp (a second
     * one waits to be issued until the first is computed), and at that tile normalizes and
     * rotates the key, writes both to their slot (the K/V append) and over the tile's row,
     * which may hold the slot from before this write. */
    auto holds_new = [&](const Unit &U, int j) {
        const int t0 = U.k_begin + (warp + j * NW) * kTK;
        return U.ctx - 1 >= t0 && U.ctx - 1 < t0 + kTK;
    };
    bool kv_pend = false;
    uint32_t kraw[2] = {0u, 0u}, vraw[2] = {0u, 0u};
    int32_t kpage = -1, kslot = -1;
    auto issue_next = [&]() {
        if (iu >= u_n) return;
        if (ROPE && holds_new(IU, ij)) {
            if (kv_pend) return;
            const unsigned short *ks = static_cast<const unsigned short *>(p.rp.qkv) + (size_t)IU.b * p.rp.row_stride +
                                       (size_t)(p.num_heads + IU.kvh) * kD + lane,
                                 *vs = ks + (size_t)p.num_kv_heads * kD;
            load_head_lane(ks, kraw);
            load_head_lane(vs, vraw);
            kpage = __ldcg(p.rp.page_ids + IU.b);
            kslot = __ldcg(p.rp.slots + IU.b);
            kv_pend = true;
        }
        issue(IU, ij, (int)(gi % kStages));
        ++gi;
        ++ij;
        advance();
    };
    /* the first stages, while they hold old keys only, go out before the wait (cp.async: one
     * group each) */
    int early = 0;
    if (p.early_kv) {
        while (early < kStages - 1 && iu < u_n && IU.k_begin + (warp + ij * NW) * kTK + kTK <= IU.ctx - L) {
            issue_next();
            ++early;
            if (!TMA) cp_async_commit();
        }
        pdl_wait();
        PL_DIAG_MARK(4);
    }
    /* query rows of a unit (zero rows past R), 16 x 128, through registers: the next unit's are
     * loaded while this one streams */
    constexpr int kQPer = kRows * 16 / (NW * 32);
    uint4 qv[kQPer];
    auto load_q = [&](const Unit &U) {
#pragma unroll
        for (int i = 0; i < kQPer; ++i) {
            const int id = threadIdx.x + i * NW * 32, r = id >> 4, ch = id & 15, rr = U.r0 + r;
            qv[i] = make_uint4(0u, 0u, 0u, 0u);
            if (rr < R) {
                const int l = rr / G, h = U.kvh * G + rr % G;
                qv[i] = __ldcg(reinterpret_cast<const uint4 *>(Q + ((size_t)(U.b * L + l) * p.num_heads + h) * kD + ch * 8));
            }
        }
    };
    /* ROPE: raw q heads of a unit (L = 1: heads kvh * G + rr of token row b), lane l holding
     * elements l + 32 j of rows warp + NW i, with the row's cos / sin; normalized, rotated and
     * stored when the unit starts */
    constexpr int kQRowsW = kRows / NW;
    uint32_t qraw[kQRowsW][2];
    float qcs[2], qsn[2], kcs[2], ksn[2]; /* kcs, ksn: the computed unit's (its new key's row) */
    auto load_q_raw = [&](const Unit &U) {
        const unsigned short *row = static_cast<const unsigned short *>(p.rp.qkv) + (size_t)U.b * p.rp.row_stride;
#pragma unroll
        for (int i = 0; i < kQRowsW; ++i) {
            const int rr = warp + i * NW;
            qraw[i][0] = qraw[i][1] = 0u;
            if (rr < R) load_head_lane(row + (size_t)(U.kvh * G + rr) * kD + lane, qraw[i]);
        }
        const float *c = p.rp.cos_sin + (size_t)U.b * kD;
#pragma unroll
        for (int j = 0; j < 2; ++j) qcs[j] = __ldcg(c + lane + 32 * j), qsn[j] = __ldcg(c + kD / 2 + lane + 32 * j);
    };
    auto store_q_rope = [&]() {
#pragma unroll
        for (int j = 0; j < 2; ++j) kcs[j] = qcs[j], ksn[j] = qsn[j];
#pragma unroll
        for (int i = 0; i < kQRowsW; ++i) {
            const int rr = warp + i * NW;
            if (LEAN && rr >= R) continue; /* zeroed once (below) */
            float x[4];
            unpack_head_lane(qraw[i], x);
            if (rr < R) norm_rope_lane<__nv_bfloat16, 4>(x, wq, p.rp.eps, qcs, qsn); /* rows past R: zeros */
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int e = lane + 32 * j;
                asm volatile("st.shared.u16 [%0], %1;\n" ::"r"(sQ + swz(rr, e >> 3) + (e & 7) * 2), "h"((unsigned short)(__float_as_uint(x[j]) >> 16))
                             : "memory");
            }
        }
    };
    Unit CU = first; /* the unit computed */
    if (ROPE) load_q_raw(CU);
    else load_q(CU); /* ahead of the tiles not yet issued, as a cp.async group was */
#pragma unroll 1
    for (int j = early; j < kStages - 1; ++j) {
        issue_next();
        if (!TMA) cp_async_commit();
    }
    /* LEAN: the query rows past R, zeros in every unit, stored once here (each instruction a
     * warp runs once per unit is on the critical path of a short attention: PERF.md, forty-second
     * session); the unit loop's first barrier orders them before the first ldmatrix */
    if (ROPE && LEAN)
        for (int o = R * kRowB + (int)threadIdx.x * 16; o < kQBytes; o += NW * 32 * 16)
            asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};\n" ::"r"(sQ + o), "r"(0) : "memory");
    const int g = lane >> 2, t4 = lane & 3;
    const int halves = R > 8 ? 2 : 1; /* 8-row halves of a chunk that can hold rows */
    unsigned gc = 0;                   /* tiles computed */
    for (int cu = 0; cu < u_n; ++cu) {
        if (ROPE) store_q_rope();
        else
#pragma unroll
            for (int i = 0; i < kQPer; ++i) {
                const int id = threadIdx.x + i * NW * 32;
                asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(sQ + swz(id >> 4, id & 15)), "r"(qv[i].x), "r"(qv[i].y),
                             "r"(qv[i].z), "r"(qv[i].w)
                             : "memory");
            }
        __syncthreads();
        uint32_t qa[8][4];
#pragma unroll
        for (int ks = 0; ks < 8; ++ks) ldmatrix_x4(sQ + swz(lane & 15, ks * 2 + (lane >> 4)), qa[ks][0], qa[ks][1], qa[ks][2], qa[ks][3]);
        Unit NU = CU;
        if (cu + 1 < u_n) { /* the next unit's query rows land while this one streams */
            NU = unit_k(cu + 1);
            if (ROPE) load_q_raw(NU);
            else load_q(NU);
        }
        int lim[2];
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
            const int rr = CU.r0 + g + hr * 8;
            if (LEAN) /* query_len 1: every row is the last position (no division) */
                lim[hr] = rr < R ? (p.causal && L > 1 ? rr / G + CU.ctx - L : CU.ctx - 1) : -1;
            else
                lim[hr] = rr < R ? (p.causal ? rr / G + CU.ctx - L : CU.ctx - 1) : -1;
        }
        float acc[16][4];
#pragma unroll
        for (int i = 0; i < 16; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.f;
        float row_m[2] = {-INFINITY, -INFINITY}, row_l[2] = {0.f, 0.f};

        for (int j = 0; j < CU.my_tiles; ++j, ++gc) {
            __syncwarp(); /* every lane is done reading the stage refilled now */
            issue_next();
            const int slot = (int)(gc % kStages);
            const uint32_t kb = ring + slot * kStageBytes, vb = kb + kTK * kRowB;
            const int t0 = CU.k_begin + (warp + j * NW) * kTK;
            if (TMA) {
                mbar_wait(bars + slot * 8, (gc / kStages) & 1u);
                if (t0 + kTK > CU.k_stop) { /* rows past the context hold stale data (maybe NaN): P x V needs zeros */
                    for (int c = lane; c < kTK * 16; c += 32) {
                        const int r = c >> 4;
                        if (t0 + r >= CU.k_stop) asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};\n" ::"r"(vb + tswz(r, c & 15)), "r"(0) : "memory");
                    }
                    fence_proxy_async(); /* before a later unit's TMA refills this stage */
                    __syncwarp();
                }
            } else {
                cp_async_commit();
                cp_async_wait<kStages - 1>();
                __syncwarp();
            }
            if (ROPE && holds_new(CU, j)) {
                float x[4];
                unpack_head_lane(kraw, x);
                norm_rope_lane<__nv_bfloat16, 4>(x, wk, p.rp.eps, kcs, ksn);
                const int r = CU.ctx - 1 - t0;
                const bool ok = kpage >= 0 && kpage < p.num_pages && kslot >= 0 && kslot < ps;
                const size_t off = (((size_t)kpage * p.num_kv_heads + CU.kvh) * ps + kslot) * kD;
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                    const int e = lane + 32 * q;
                    const unsigned short kv = (unsigned short)(__float_as_uint(x[q]) >> 16);
                    const unsigned short vv = (unsigned short)(vraw[q >> 1] >> (16 * (q & 1)));
                    if (ok) {
                        const_cast<uint16_t *>(K)[off + e] = kv;
                        const_cast<uint16_t *>(V)[off + e] = vv;
                    }
                    const uint32_t o = (TMA ? tswz(r, e >> 3) : swz(r, e >> 3)) + (e & 7) * 2;
                    asm volatile("st.shared.u16 [%0], %1;\n" ::"r"(kb + o), "h"(kv) : "memory");
                    asm volatile("st.shared.u16 [%0], %1;\n" ::"r"(vb + o), "h"(vv) : "memory");
                }
                if (TMA) fence_proxy_async(); /* before a later TMA refills this stage */
                __syncwarp();
                kv_pend = false;
            }
            float s[2][4];
#pragma unroll
            for (int i = 0; i < 2; ++i) s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.f;
#pragma unroll
            for (int ks = 0; ks < 8; ++ks) {
                uint32_t b0, b1, b2, b3;
                const int kr = (lane & 7) + ((lane >> 4) << 3), kc = ks * 2 + ((lane >> 3) & 1);
                ldmatrix_x4(kb + (TMA ? tswz(kr, kc) : swz(kr, kc)), b0, b1, b2, b3);
                mma_bf16(s[0], qa[ks], b0, b1);
                mma_bf16(s[1], qa[ks], b2, b3);
            }
#pragma unroll
            for (int nt = 0; nt < 2; ++nt)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int key = t0 + nt * 8 + 2 * t4 + (e & 1);
                    const float x = s[nt][e] * p.scale_log2;
                    s[nt][e] = (key < CU.k_stop && key <= lim[e >> 1]) ? x : -INFINITY;
                }
#pragma unroll
            for (int hr = 0; hr < 2; ++hr) {
                float mx = fmaxf(fmaxf(s[0][2 * hr], s[0][2 * hr + 1]), fmaxf(s[1][2 * hr], s[1][2 * hr + 1]));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
                const float mnew = fmaxf(row_m[hr], mx);
                const float mb = mnew == -INFINITY ? 0.f : mnew;
                const float alpha = ex2(row_m[hr] - mb);
                row_m[hr] = mnew;
                float sum = 0.f;
#pragma unroll
                for (int nt = 0; nt < 2; ++nt) {
                    s[nt][2 * hr] = ex2(s[nt][2 * hr] - mb);
                    s[nt][2 * hr + 1] = ex2(s[nt][2 * hr + 1] - mb);
                    sum += s[nt][2 * hr] + s[nt][2 * hr + 1];
                }
                row_l[hr] = row_l[hr] * alpha + sum;
#pragma unroll
                for (int dt = 0; dt < 16; ++dt) {
                    acc[dt][2 * hr] *= alpha;
                    acc[dt][2 * hr + 1] *= alpha;
                }
            }
            uint32_t pa[4];
            pa[0] = pack_bf16(s[0][0], s[0][1]);
            pa[1] = pack_bf16(s[0][2], s[0][3]);
            pa[2] = pack_bf16(s[1][0], s[1][1]);
            pa[3] = pack_bf16(s[1][2], s[1][3]);
#pragma unroll
            for (int dp = 0; dp < 8; ++dp) {
                uint32_t b0, b1, b2, b3;
                const int vr = (lane & 7) + (((lane >> 3) & 1) << 3), vc = dp * 2 + (lane >> 4);
                ldmatrix_x4_trans(vb + (TMA ? tswz(vr, vc) : swz(vr, vc)), b0, b1, b2, b3);
                mma_bf16(acc[2 * dp], pa, b0, b1);
                mma_bf16(acc[2 * dp + 1], pa, b2, b3);
            }
        }

        /* merge the warps' (max, sum, out) states. Every warp holds the same fragment positions
         * (rows g, g + 8; columns 8 dt + 2 t4, + 1), so states combine lane by lane through
         * mbuf: [slot][half][34 values][lane], 32 outputs then (max, sum) */
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
            row_l[hr] += __shfl_xor_sync(0xffffffffu, row_l[hr], 1);
            row_l[hr] += __shfl_xor_sync(0xffffffffu, row_l[hr], 2);
        }
        auto put = [&](int slot) {
            float *sl = mbuf + (size_t)slot * halves * 34 * 32 + lane;
#pragma unroll
            for (int hr = 0; hr < 2; ++hr)
                if (hr < halves) {
#pragma unroll
                    for (int dt = 0; dt < 16; ++dt) {
                        sl[(hr * 34 + 2 * dt) * 32] = acc[dt][2 * hr];
                        sl[(hr * 34 + 2 * dt + 1) * 32] = acc[dt][2 * hr + 1];
                    }
                    sl[(hr * 34 + 32) * 32] = row_m[hr];
                    sl[(hr * 34 + 33) * 32] = row_l[hr];
                }
        };
        /* output row of half hr (false: past R); splits == 1 stores bf16 normalized, else f32
         * partials and (max, sum) */
        uint16_t *Out = static_cast<uint16_t *>(p.out);
        auto out_row = [&](int hr, size_t &orow) {
            const int rr = CU.r0 + g + hr * 8;
            if (LEAN) { /* rows past R: nothing to compute; query_len 1: row rr is head rr of token 0 */
                if (!(hr < halves && rr < R)) return false;
                const int l = L == 1 ? 0 : rr / G;
                orow = (size_t)(CU.b * L + l) * p.num_heads + CU.kvh * G + (rr - l * G);
            } else
                orow = (size_t)(CU.b * L + rr / G) * p.num_heads + CU.kvh * G + rr % G;
            if (p.splits > 1) orow = orow * p.splits + CU.split;
            return hr < halves && rr < R;
        };
        auto put_ml = [&](size_t sl, float m, float l) {
            p.part_ml[sl * 2] = m;
            p.part_ml[sl * 2 + 1] = l;
        };
        if (p.units_per_cta <= 1) {
            /* the rings, idle now (every copy landed): each warp leaves its state in its slot,
             * then combines all of them for its share of the columns and stores it */
            if (!TMA) cp_async_wait<0>();
            __syncthreads();
            put(warp);
            __syncthreads();
            constexpr int kDPW = 16 / NW; /* 8-column groups per warp */
#pragma unroll
            for (int hr = 0; hr < 2; ++hr) {
                size_t orow;
                if (!out_row(hr, orow)) continue;
                const float *base = mbuf + hr * 34 * 32 + lane;
                const size_t wst = (size_t)halves * 34 * 32; /* slot stride */
                float M = -INFINITY, a[NW], lsum = 0.f;
#pragma unroll
                for (int w = 0; w < NW; ++w) M = fmaxf(M, base[w * wst + 32 * 32]);
                const float mb = M == -INFINITY ? 0.f : M;
#pragma unroll
                for (int w = 0; w < NW; ++w) {
                    a[w] = ex2(base[w * wst + 32 * 32] - mb);
                    lsum += a[w] * base[w * wst + 33 * 32];
                }
                const float inv = lsum > 0.f ? 1.f / lsum : 0.f;
#pragma unroll
                for (int k = 0; k < kDPW; ++k) {
                    const int dt = warp * kDPW + k;
                    float o0 = 0.f, o1 = 0.f;
#pragma unroll
                    for (int w = 0; w < NW; ++w) {
                        o0 += a[w] * base[w * wst + (2 * dt) * 32];
                        o1 += a[w] * base[w * wst + (2 * dt + 1) * 32];
                    }
                    if (p.splits == 1) *reinterpret_cast<uint32_t *>(Out + orow * kD + dt * 8 + 2 * t4) = pack_bf16(o0 * inv, o1 * inv);
                    else *reinterpret_cast<float2 *>(p.part_o + orow * kD + dt * 8 + 2 * t4) = make_float2(o0, o1);
                }
                if (p.splits > 1 && warp == 0 && t4 == 0) put_ml(orow, M, lsum);
            }
        } else {
            /* own region (the rings hold the next unit's stages): pairwise, two slots, warp 0
             * ends with the CTA's state and stores it */
#pragma unroll 1
            for (int step = NW / 2; step >= 1; step >>= 1) {
                if (warp >= step && warp < 2 * step) put(warp - step);
                __syncthreads();
                if (warp < step) {
                    const float *sl = mbuf + (size_t)warp * halves * 34 * 32 + lane;
#pragma unroll
                    for (int hr = 0; hr < 2; ++hr)
                        if (hr < halves) {
                            const float m1 = sl[(hr * 34 + 32) * 32], l1 = sl[(hr * 34 + 33) * 32];
                            const float M = fmaxf(row_m[hr], m1), mb = M == -INFINITY ? 0.f : M;
                            const float a0 = ex2(row_m[hr] - mb), a1 = ex2(m1 - mb);
                            row_m[hr] = M;
                            row_l[hr] = row_l[hr] * a0 + l1 * a1;
#pragma unroll
                            for (int dt = 0; dt < 16; ++dt) {
                                acc[dt][2 * hr] = acc[dt][2 * hr] * a0 + sl[(hr * 34 + 2 * dt) * 32] * a1;
                                acc[dt][2 * hr + 1] = acc[dt][2 * hr + 1] * a0 + sl[(hr * 34 + 2 * dt + 1) * 32] * a1;
                            }
                        }
                }
                if (step > 1) __syncthreads(); /* read before the next round writes */
            }
            if (warp == 0)
#pragma unroll
                for (int hr = 0; hr < 2; ++hr) {
                    size_t orow;
                    if (!out_row(hr, orow)) continue;
                    if (p.splits == 1) {
                        const float inv = row_l[hr] > 0.f ? 1.f / row_l[hr] : 0.f;
#pragma unroll
                        for (int dt = 0; dt < 16; ++dt)
                            *reinterpret_cast<uint32_t *>(Out + orow * kD + dt * 8 + 2 * t4) = pack_bf16(acc[dt][2 * hr] * inv, acc[dt][2 * hr + 1] * inv);
                    } else {
#pragma unroll
                        for (int dt = 0; dt < 16; ++dt)
                            *reinterpret_cast<float2 *>(p.part_o + orow * kD + dt * 8 + 2 * t4) = make_float2(acc[dt][2 * hr], acc[dt][2 * hr + 1]);
                        if (t4 == 0) put_ml(orow, row_m[hr], row_l[hr]);
                    }
                }
        }
        CU = NU;
    }
}

/* The 2D view of a page pool the TMA boxes index: rows of head_dim (256 bytes), row
 * (page * num_kv_heads + kv_head) * page_size + slot; boxes of 16 rows x 64 elements. */
bool encode_pool_map(CUtensorMap *m, const void *pool, const pl_attn_params *p) {
    const unsigned long long rows = (unsigned long long)p->num_pages * p->num_kv_heads * p->page_size;
    return pl_cuda_tmap_2d_bf16(m, pool, kD, rows, kRowB, 64, kTK) != 0;
}

template <int NW, bool TMA, bool ROPE, bool LEAN>
cudaError_t launch_decode(const pl_attn_params *p, dim3 grid, const CUtensorMap &tk, const CUtensorMap &tv, cudaStream_t stream) {
    /* more than one unit per CTA (4 warps, chunks of at most 8 rows): the merge's own two slots */
    const int smem = (TMA ? smem_bytes_tma<NW>() : smem_bytes<NW>()) + (p->units_per_cta > 1 ? kMergeOwn : 0);
    cudaError_t e = cudaFuncSetAttribute(decode_mma_kernel<NW, TMA, ROPE, LEAN>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e == cudaSuccess) e = launch_pdl(decode_mma_kernel<NW, TMA, ROPE, LEAN>, grid, dim3(NW * 32), (size_t)smem, stream, p->pdl, *p, tk, tv);
    return e;
}

template <int NW, bool TMA>
cudaError_t launch_decode_r(const pl_attn_params *p, dim3 grid, const CUtensorMap &tk, const CUtensorMap &tv, cudaStream_t stream) {
    if (!p->lean) /* pl_cuda_attn_options.decode_lean 1: the kernels as before the forty-second session */
        return p->rope ? launch_decode<NW, TMA, true, false>(p, grid, tk, tv, stream) : launch_decode<NW, TMA, false, false>(p, grid, tk, tv, stream);
    return p->rope ? launch_decode<NW, TMA, true, true>(p, grid, tk, tv, stream) : launch_decode<NW, TMA, false, true>(p, grid, tk, tv, stream);
}

} // namespace

PL_DIAG_SETTER(pl_diag_set_attn_mma)

extern "C" int pl_cuda_attn_decode_mma_launch(const pl_attn_params *p, cudaStream_t stream, char *err, size_t err_len) {
    const dim3 grid((unsigned)((p->units + p->units_per_cta - 1) / p->units_per_cta));
    CUtensorMap tk, tv;
    memset(&tk, 0, sizeof tk);
    memset(&tv, 0, sizeof tv);
    bool tma = p->decode_copy != 1 && p->page_size % kTK == 0;
    if (tma) tma = encode_pool_map(&tk, p->k, p) && encode_pool_map(&tv, p->v, p);
    if (!tma && p->decode_copy == 2)
        return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "decode_copy: TMA copies need the driver's tensor-map encoder (none, or it refused a pool of %d pages)",
                       p->num_pages);
    cudaError_t e;
    if (p->wide_ctas) e = tma ? launch_decode_r<8, true>(p, grid, tk, tv, stream) : launch_decode_r<8, false>(p, grid, tk, tv, stream);
    else e = tma ? launch_decode_r<4, true>(p, grid, tk, tv, stream) : launch_decode_r<4, false>(p, grid, tk, tv, stream);
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) return pl_fail(err, err_len, PL_ERR_CUDA, "decode mma kernel launch: %s", cudaGetErrorString(e));
    return pl_cuda_attn_merge_launch(p, PL_BF16, stream, err, err_len);
}
