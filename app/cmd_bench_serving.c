/* pagellm bench-serving: the serving benchmark of spec 5.1/5.2. The parent builds (or loads)
 * the request trace, then runs every (KV mode, repeat) in a fresh process (this binary
 * re-executed with a hidden --single-run flag), forward order on even repeats and reverse on
 * odd ones, and reports per-field medians as a table, JSON and an SVG chart. With
 * --kv-budget-mib it runs the memory-capped admission sweep instead. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/ceiling.h"
#include "base/json.h"
#include "base/timing.h"
#include "cli.h"
#include "pagellm/cuda.h"
#include "pagellm/engine.h"

#define MAX_MODES 3
#define MAX_BUDGETS 32

typedef struct bench_opts {
    int num_seqs, batch_size, min_in, max_in, min_out, max_out, prefill_step, warmup, repeats, page_size;
    uint64_t seed, model_seed;
    int num_modes;
    pl_kv_mode modes[MAX_MODES];
    const char *model_dir, *shape, *trace_file, *save_trace, *json_out, *plot, *device, *wait_policy;
    pl_dtype dtype;
    int threads;
    double cooldown;
    int num_budgets;
    double budgets_mib[MAX_BUDGETS];
    /* hidden, for the child process */
    const char *single_run, *result_file;
    const char *steps_csv; /* --steps-csv: the parent's prefix; a child's own file */
    double child_budget_mib;
    double kv_fraction; /* --kv-budget-fraction: a CUDA engine's capped pool, share of free memory */
    double ceiling_gbps; /* the parent's CPU read ceiling, for the per-step roofline (0: none) */
    int attn_splits_shapes; /* --cuda-attn-splits shapes: the decode attention's splits from the shapes alone */
} bench_opts;

static void usage(FILE *f) {
    fprintf(f,
            "usage: pagellm bench-serving [flags]\n"
            "\n"
            "Continuous batching with chunked prefill on a request trace, once per KV mode, each\n"
            "(mode, repeat) in a fresh process (forward order on even repeats, reverse on odd);\n"
            "reported values are per-field medians over the repeats. Progress goes to stderr,\n"
            "the table to stdout.\n"
            "\n"
            "trace (Python random.Random(seed), bit-exact with the reference generator):\n"
            "  --num-seqs N          requests in the trace (default 16)\n"
            "  --min-input-len N     shortest prompt (default 128)\n"
            "  --max-input-len N     longest prompt (default 1024)\n"
            "  --min-output-len N    fewest new tokens (default 32)\n"
            "  --max-output-len N    most new tokens (default 128)\n"
            "  --seed N              trace seed (default 0)\n"
            "  --trace FILE          read the trace from a JSON file (default: generate it)\n"
            "  --save-trace FILE     write the trace (with its sha256) as JSON (default none)\n"
            "\n"
            "engine:\n"
            "  --batch-size N        decode slots (default 4)\n"
            "  --prefill-step N      tokens per prefill chunk (default 128)\n"
            "  --page-size N         tokens per KV page (default 128)\n"
            "  --kv-mode LIST        comma-separated of dense, paged-gather, paged\n"
            "                        (default dense,paged-gather,paged)\n"
            "  --kv-budget-mib LIST  memory-capped admission sweep: for each budget (MiB of K+V over\n"
            "                        all layers) one process per KV mode; reports peak concurrent\n"
            "                        requests, throughput and preemptions (default: off, plain run)\n"
            "\n"
            "model:\n"
            "  --shape NAME          built-in synthetic Qwen3 shape (default serve: vocab 151936\n"
            "                        tied, hidden 128, 4 layers, 4 query / 2 KV heads of 128)\n"
            "  --model DIR           a Hugging Face Qwen3 checkpoint directory (default none)\n"
            "  --model-seed N        weights seed of the synthetic model (default 0)\n"
            "  --dtype bf16|f32      activation and K/V dtype (default bf16)\n"
            "  --threads N           compute threads, 0 = all cores (default 0)\n"
            "  --device cpu|cuda     where the model runs (default cpu; cuda: weights, activations and\n"
            "                        K/V pages on the GPU; a KV mode the CUDA engine does not support\n"
            "                        ends the run with exit status 3)\n"
            "  --kv-budget-fraction F  --device cuda: the paged modes' page pools take this share of\n"
            "                        the free device memory (after weights, less 2 GiB), allocated up\n"
            "                        front (default 0.85); --kv-budget-mib runs a fixed-budget sweep\n"
            "  --cuda-attn-splits contexts|shapes  --device cuda: the decode attention's context\n"
            "                        splits from each step's own contexts (default) or from the\n"
            "                        batch's shapes alone (pl_model_options.cuda_attn_splits)\n"
            "  --omp-wait-policy P   OMP_WAIT_POLICY of the measured processes: passive, active or\n"
            "                        env (keep the environment's); default passive, because spinning\n"
            "                        OpenMP threads collapse throughput on a shared machine; an\n"
            "                        OMP_WAIT_POLICY already in the environment wins over the default\n"
            "\n"
            "runs and output:\n"
            "  --warmup N            complete unmeasured runs of the trace per process (default 1)\n"
            "  --repeats N           measured processes per mode (default 4; even when comparing)\n"
            "  --cooldown-seconds S  pause between processes (default 0)\n"
            "  --json-output FILE    configuration, hardware, trace, samples, medians (default none)\n"
            "  --steps-csv PREFIX    each measured process writes its decode steps to\n"
            "                        PREFIX.MODE.REPEAT.csv: rows, context tokens, ms, roofline ms,\n"
            "                        their ratio, each row's context ('a;b;c', the step's shape for\n"
            "                        bench_model_cuda --contexts) and after_prefill (1: a prefill chunk\n"
            "                        ran just before the step) (default none; not in --kv-budget-mib sweeps)\n"
            "  --plot FILE.svg       SVG bar chart of the comparison or sweep (default none)\n"
            "  -h, --help            this text\n"
            "\n"
            "Decode roofline: each decode step's (model weight bytes + K/V bytes its attention reads:\n"
            "the rows' contexts x K+V bytes per token over all layers) / the ceiling: on the CPU the\n"
            "streaming read bandwidth measured by the parent, on CUDA the device-to-device copy\n"
            "bandwidth (read + write) measured by each measured process. The table and the JSON give\n"
            "the median step, the median per-step roofline and the median of step / roofline, and\n"
            "the same over the steps at the full batch (a slot stays empty while the next request\n"
            "prefills, one chunk per iteration, so many steps run fewer rows). A prefill chunk's\n"
            "device time counts as prefill time: the engine waits for the device before its clock\n"
            "stops, so none of it lands in the next decode step.\n"
            "\n"
            "internal (the parent passes these to each measured process): --single-run MODE,\n"
            "  --result-file FILE, --child-budget-mib X (default 0 = uncapped), --ceiling-gbps X\n"
            "  (the CPU read ceiling for the roofline; default 0 = none)\n");
}

static int parse_modes(const char *v, bench_opts *o) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v);
    o->num_modes = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        pl_kv_mode m;
        if (pl_kv_mode_parse(tok, &m) != PL_OK) {
            fprintf(stderr, "pagellm: --kv-mode: unknown mode '%s' (dense, paged-gather, paged)\n", tok);
            return 1;
        }
        for (int i = 0; i < o->num_modes; i++)
            if (o->modes[i] == m) {
                fprintf(stderr, "pagellm: --kv-mode: '%s' listed twice\n", tok);
                return 1;
            }
        if (o->num_modes == MAX_MODES) return 1;
        o->modes[o->num_modes++] = m;
    }
    if (!o->num_modes) {
        fprintf(stderr, "pagellm: --kv-mode: empty list\n");
        return 1;
    }
    return 0;
}

static int parse_budgets(const char *v, bench_opts *o) {
    const char *p = v;
    o->num_budgets = 0;
    while (*p) {
        char *end = NULL;
        errno = 0;
        double x = strtod(p, &end);
        if (errno || end == p || (*end != ',' && *end != '\0') || !(x > 0) || x > 1e9) {
            fprintf(stderr, "pagellm: --kv-budget-mib: expected comma-separated positive numbers, got '%s'\n", v);
            return 1;
        }
        if (o->num_budgets == MAX_BUDGETS) {
            fprintf(stderr, "pagellm: --kv-budget-mib: at most %d budgets\n", MAX_BUDGETS);
            return 1;
        }
        o->budgets_mib[o->num_budgets++] = x;
        p = *end ? end + 1 : end;
    }
    if (!o->num_budgets) {
        fprintf(stderr, "pagellm: --kv-budget-mib: empty list\n");
        return 1;
    }
    return 0;
}

static int parse_args(int argc, char **argv, bench_opts *o) {
    *o = (bench_opts){16, 4, 128, 1024, 32, 128, 128, 1, 4, 128, 0, 0, 3, {PL_KV_DENSE, PL_KV_PAGED_GATHER, PL_KV_PAGED},
                      NULL, "serve", NULL, NULL, NULL, NULL, "cpu", "passive", PL_BF16, 0, 0.0, 0, {0}, NULL, NULL, NULL, 0.0, 0.0, 0.0, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
#define INTFLAG(name, field, lo, hi)                                              \
    if (pl_cli_is(a, name)) {                                                     \
        if (!(v = pl_cli_value(argc, argv, &i, name))) return 2;                  \
        if (pl_cli_int(name, v, lo, hi, &o->field)) return 2;                     \
        continue;                                                                 \
    }
#define STRFLAG(name, field)                                                      \
    if (pl_cli_is(a, name)) {                                                     \
        if (!(v = pl_cli_value(argc, argv, &i, name))) return 2;                  \
        o->field = v;                                                             \
        continue;                                                                 \
    }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 1;
        }
        INTFLAG("--num-seqs", num_seqs, 1, 100000)
        INTFLAG("--batch-size", batch_size, 1, 4096)
        INTFLAG("--min-input-len", min_in, 1, 10000000)
        INTFLAG("--max-input-len", max_in, 1, 10000000)
        INTFLAG("--min-output-len", min_out, 1, 10000000)
        INTFLAG("--max-output-len", max_out, 1, 10000000)
        INTFLAG("--prefill-step", prefill_step, 1, 10000000)
        INTFLAG("--warmup", warmup, 0, 1000)
        INTFLAG("--repeats", repeats, 1, 1000)
        INTFLAG("--page-size", page_size, 1, 65536)
        INTFLAG("--threads", threads, 0, 4096)
        STRFLAG("--model", model_dir)
        STRFLAG("--shape", shape)
        STRFLAG("--trace", trace_file)
        STRFLAG("--save-trace", save_trace)
        STRFLAG("--json-output", json_out)
        STRFLAG("--plot", plot)
        STRFLAG("--device", device)
        STRFLAG("--omp-wait-policy", wait_policy)
        STRFLAG("--single-run", single_run)
        STRFLAG("--result-file", result_file)
        STRFLAG("--steps-csv", steps_csv)
        if (pl_cli_is(a, "--seed")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--seed")) || pl_cli_u64("--seed", v, &o->seed)) return 2;
            continue;
        }
        if (pl_cli_is(a, "--model-seed")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--model-seed")) || pl_cli_u64("--model-seed", v, &o->model_seed))
                return 2;
            continue;
        }
        if (pl_cli_is(a, "--kv-mode")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--kv-mode")) || parse_modes(v, o)) return 2;
            continue;
        }
        if (pl_cli_is(a, "--kv-budget-mib")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--kv-budget-mib")) || parse_budgets(v, o)) return 2;
            continue;
        }
        if (pl_cli_is(a, "--kv-budget-fraction")) {
            float f;
            if (!(v = pl_cli_value(argc, argv, &i, "--kv-budget-fraction")) ||
                pl_cli_float("--kv-budget-fraction", v, 0.001f, 1.0f, &f))
                return 2;
            o->kv_fraction = strtod(v, NULL);
            continue;
        }
        if (pl_cli_is(a, "--child-budget-mib")) {
            float f;
            if (!(v = pl_cli_value(argc, argv, &i, "--child-budget-mib")) || pl_cli_float("--child-budget-mib", v, 0, 1e9, &f))
                return 2;
            o->child_budget_mib = strtod(v, NULL);
            continue;
        }
        if (pl_cli_is(a, "--ceiling-gbps")) {
            float f;
            if (!(v = pl_cli_value(argc, argv, &i, "--ceiling-gbps")) || pl_cli_float("--ceiling-gbps", v, 0, 1e9, &f))
                return 2;
            o->ceiling_gbps = strtod(v, NULL);
            continue;
        }
        if (pl_cli_is(a, "--cooldown-seconds")) {
            float f;
            if (!(v = pl_cli_value(argc, argv, &i, "--cooldown-seconds")) || pl_cli_float("--cooldown-seconds", v, 0, 3600, &f))
                return 2;
            o->cooldown = f;
            continue;
        }
        if (pl_cli_is(a, "--cuda-attn-splits")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--cuda-attn-splits"))) return 2;
            if (!strcmp(v, "shapes")) o->attn_splits_shapes = 1;
            else if (!strcmp(v, "contexts")) o->attn_splits_shapes = 0;
            else {
                fprintf(stderr, "pagellm: --cuda-attn-splits: expected shapes or contexts, got '%s'\n", v);
                return 2;
            }
            continue;
        }
        if (pl_cli_is(a, "--dtype")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--dtype"))) return 2;
            if (!strcmp(v, "bf16")) o->dtype = PL_BF16;
            else if (!strcmp(v, "f32")) o->dtype = PL_F32;
            else {
                fprintf(stderr, "pagellm: --dtype: expected bf16 or f32, got '%s'\n", v);
                return 2;
            }
            continue;
        }
        fprintf(stderr, "pagellm: bench-serving: unknown flag '%s' (see --help)\n", a);
        return 2;
#undef INTFLAG
#undef STRFLAG
    }
    if (o->min_in > o->max_in) {
        fprintf(stderr, "pagellm: --min-input-len %d exceeds --max-input-len %d\n", o->min_in, o->max_in);
        return 2;
    }
    if (o->min_out > o->max_out) {
        fprintf(stderr, "pagellm: --min-output-len %d exceeds --max-output-len %d\n", o->min_out, o->max_out);
        return 2;
    }
    if (strcmp(o->wait_policy, "passive") && strcmp(o->wait_policy, "active") && strcmp(o->wait_policy, "env")) {
        fprintf(stderr, "pagellm: --omp-wait-policy: expected passive, active or env, got '%s'\n", o->wait_policy);
        return 2;
    }
    if (strcmp(o->device, "cpu") && strcmp(o->device, "cuda")) {
        fprintf(stderr, "pagellm: --device: expected cpu or cuda, got '%s'\n", o->device);
        return 2;
    }
    /* Which KV modes run on CUDA is the engine's call (PL_ERR_UNSUPPORTED: exit status 3). */
    return 0;
}

/* ---- the measured process ---------------------------------------------------------------- */

/* Per-process result fields, in the order of the table; parents take medians field by field. */
typedef struct field_def {
    const char *key, *label;
    int table; /* 1: printed in the table */
    int higher_better;
} field_def;

static const field_def k_fields[] = {
    {"prefill_tok_s", "prefill tok/s", 1, 1},
    {"decode_tok_s", "decode tok/s (first tokens excluded)", 1, 1},
    {"output_tok_s", "output tok/s", 1, 1},
    {"total_tok_s", "total tok/s", 1, 1},
    {"requests_s", "requests/s", 1, 1},
    {"wall_s", "wall time of the measured run (s)", 1, 0},
    {"peak_kv_bytes", "peak KV bytes", 1, 0},
    {"peak_kv_mib", "peak KV MiB", 1, 0},
    {"peak_dense_bytes", "peak dense bytes", 0, 0},
    {"peak_paged_bytes", "peak paged pool bytes", 0, 0},
    {"peak_active_requests", "peak active requests", 1, 1},
    {"peak_live_pages", "peak live pages", 1, 0},
    {"peak_capacity_pages", "peak capacity pages", 1, 0},
    {"tail_waste_slots", "tail-waste slots", 1, 0},
    {"tail_live_slots", "live slots at that snapshot", 1, 0},
    {"tail_waste_bytes", "tail-waste bytes", 0, 0},
    {"tail_waste_fraction", "tail-waste fraction", 1, 0},
    {"decode_step_median_ms", "decode step median (ms)", 1, 0},
    {"decode_step_p95_ms", "decode step p95 (ms)", 1, 0},
    {"decode_step_max_ms", "decode step max (ms)", 1, 0},
    {"decode_step_roofline_median_ms", "decode step roofline, median (ms)", 1, 0},
    {"decode_step_vs_roofline_median", "decode step / its roofline, median", 1, 0},
    {"decode_step_kv_bytes_median", "K/V bytes read per decode step, median", 1, 0},
    {"decode_full_steps", "decode steps at the full batch", 1, 0},
    {"decode_full_step_median_ms", "full-batch decode step median (ms)", 1, 0},
    {"decode_full_vs_roofline_median", "full-batch decode step / its roofline, median", 1, 0},
    {"roofline_gbps", "roofline ceiling (GB/s)", 1, 1},
    {"copy_gbps", "device-to-device copy (GB/s)", 0, 1},
    {"decode_gap_median_ms", "decode gap median (ms)", 1, 0},
    {"decode_gap_p95_ms", "decode gap p95 (ms)", 1, 0},
    {"decode_gap_max_ms", "decode gap max (ms)", 1, 0},
    {"reused_page_allocations", "reused page allocations", 1, 0},
    {"storage_growths", "pool growths", 1, 0},
    {"copied_pages_on_growth", "pages copied on growth", 1, 0},
    {"paged_growth_copy_bytes", "paged growth copy bytes", 1, 0},
    {"dense_growth_copy_bytes", "dense growth copy bytes", 1, 0},
    {"dense_staging_copy_bytes", "dense staging copy bytes", 1, 0},
    {"logical_kv_copy_mib", "logical KV copy volume (MiB)", 1, 0},
    {"gather_prefill_copy_bytes", "prefill gather copy bytes (not in volume)", 1, 0},
    {"prompt_tokens", "prefill tokens", 1, 0},
    {"generated_tokens", "generated tokens", 1, 0},
    {"decode_tokens", "decode tokens", 1, 0},
    {"decode_calls", "decode calls", 1, 0},
    {"decode_rows_mean", "rows per decode call, mean", 1, 1},
    {"decode_gaps", "decode gaps", 1, 0},
    {"preemptions", "preemptions", 1, 0},
    {"failed_requests", "failed requests", 1, 0},
    {"prefill_s", "prefill time (s)", 0, 0},
    {"decode_s", "decode time (s)", 0, 0},
    {"weight_bytes", "model weight bytes", 0, 0},
    {"kv_budget_bytes", "KV budget bytes", 0, 0},
};
#define NUM_FIELDS ((int)(sizeof k_fields / sizeof k_fields[0]))

static int field_index(const char *key) {
    for (int i = 0; i < NUM_FIELDS; i++)
        if (!strcmp(k_fields[i].key, key)) return i;
    return -1;
}

static int load_model(const bench_opts *o, pl_model **model, char *err, size_t err_len) {
    pl_model_options mo = {0};
    mo.act_dtype = o->dtype;
    mo.device = strcmp(o->device, "cuda") ? PL_DEVICE_CPU : PL_DEVICE_CUDA;
    mo.num_threads = o->threads;
    mo.cuda_attn_splits = o->attn_splits_shapes;
    if (o->model_dir) return pl_model_load(o->model_dir, &mo, model, err, err_len);
    return pl_model_create_synthetic(o->shape, o->model_seed, &mo, model, err, err_len);
}

static int run_trace_once(pl_engine *e, const pl_trace *t, int *failed, double *wall, char *err, size_t err_len) {
    double t0 = pl_now_seconds();
    for (int i = 0; i < t->num_requests; i++) {
        pl_request_params p = {0};
        p.prompt = t->requests[i].prompt;
        p.prompt_len = t->requests[i].prompt_len;
        p.max_new_tokens = t->requests[i].max_new_tokens;
        p.ignore_eos = 1; /* benchmark mode: fixed output budgets */
        int rc = pl_engine_submit(e, &p, NULL, err, err_len);
        if (rc != PL_OK) return rc;
    }
    int rc = pl_engine_run(e, err, err_len);
    *wall = pl_now_seconds() - t0;
    pl_request_result r;
    *failed = 0;
    while (pl_engine_poll(e, &r)) {
        if (r.finish != PL_FINISH_LENGTH) (*failed)++;
        pl_request_result_free(&r);
    }
    return rc;
}

/* Per-step decode roofline (issue 8): step i reads the weights once plus the K/V of
 * the tokens its attention attends (ctx[i], summed over its rows) at `gbps` GB/s. Sets the
 * median roofline (ms), the median of step / roofline and the median K/V bytes per step;
 * the first two are NaN without a ceiling (gbps <= 0), all three NaN without steps. The
 * same over the steps whose rows[i] == full (a trace's batch is often short of its slots
 * while a new request prefills): their count, median step (ms) and median step / roofline. */
static void decode_roofline(const double *step_s, const int64_t *ctx, const int *rows, int n, int full, double weight_bytes,
                            double kv_bytes_per_token, double gbps, double *roof_ms, double *ratio, double *kv_bytes,
                            int *full_n, double *full_ms, double *full_ratio) {
    *roof_ms = *ratio = *kv_bytes = *full_ms = *full_ratio = NAN;
    *full_n = 0;
    if (n <= 0 || !step_s || !ctx) return;
    double *kv = malloc(sizeof(double) * (size_t)n), *roof = malloc(sizeof(double) * (size_t)n),
           *rat = malloc(sizeof(double) * (size_t)n);
    if (kv && roof && rat) {
        for (int i = 0; i < n; i++) {
            kv[i] = (double)ctx[i] * kv_bytes_per_token;
            roof[i] = gbps > 0 ? (weight_bytes + kv[i]) / (gbps * 1e9) : 0;
            rat[i] = roof[i] > 0 ? step_s[i] / roof[i] : 0;
        }
        *kv_bytes = pl_median(kv, n);
        if (gbps > 0 && weight_bytes + kv_bytes_per_token > 0) {
            *roof_ms = 1e3 * pl_median(roof, n);
            *ratio = pl_median(rat, n);
        }
        /* the full-batch steps, packed in place (kv and roof are done with) */
        int k = 0;
        for (int i = 0; rows && i < n; i++)
            if (rows[i] == full) {
                kv[k] = step_s[i];
                roof[k++] = rat[i];
            }
        *full_n = k;
        if (k > 0) {
            *full_ms = 1e3 * pl_median(kv, k);
            if (gbps > 0 && weight_bytes + kv_bytes_per_token > 0) *full_ratio = pl_median(roof, k);
        }
    }
    free(kv);
    free(roof);
    free(rat);
}

static int child_main(const bench_opts *o) {
    char err[512];
    pl_kv_mode mode;
    if (pl_kv_mode_parse(o->single_run, &mode) != PL_OK || !o->result_file || !o->trace_file) {
        fprintf(stderr, "pagellm: --single-run needs a KV mode, --result-file and --trace\n");
        return 2;
    }
    pl_trace t;
    if (pl_trace_load(o->trace_file, &t, err, sizeof err)) {
        fprintf(stderr, "pagellm: %s\n", err);
        return 1;
    }
    /* CUDA: the copy ceiling of the roofline, measured in this process before the model is
     * on the device (its 2 x 2 GiB buffers are freed again); CPU: the parent's read ceiling. */
    int cuda = !strcmp(o->device, "cuda");
    double copy_gbps = NAN, roof_gbps = o->ceiling_gbps > 0 ? o->ceiling_gbps : NAN;
    char gpu[256] = "";
    if (cuda) {
        double g = pl_cuda_measure_copy_gbps(0, 0, gpu, sizeof gpu, err, sizeof err);
        if (g > 0) {
            copy_gbps = roof_gbps = g;
            fprintf(stderr, "  [%s] %s: device-to-device copy %.0f GB/s (read + write)\n", o->single_run, gpu, g);
        } else {
            roof_gbps = NAN;
            fprintf(stderr, "pagellm: warning: no copy ceiling, the roofline fields stay empty: %s\n", err);
        }
    }
    pl_model *model = NULL;
    if (load_model(o, &model, err, sizeof err)) {
        fprintf(stderr, "pagellm: model: %s\n", err);
        pl_trace_free(&t);
        return 1;
    }
    pl_engine_config ec = {mode, o->batch_size, o->prefill_step, o->page_size,
                           (size_t)(o->child_budget_mib * 1048576.0), 0, o->kv_fraction};
    pl_engine *e = NULL;
    int rc = pl_engine_create(model, &ec, &e, err, sizeof err);
    int failed = 0;
    double wall = 0;
    for (int w = 0; rc == PL_OK && w < o->warmup; w++) {
        fprintf(stderr, "  [%s] warmup %d/%d\n", o->single_run, w + 1, o->warmup);
        rc = run_trace_once(e, &t, &failed, &wall, err, sizeof err);
    }
    if (rc == PL_OK) rc = pl_engine_reset_metrics(e, err, sizeof err); /* measured run starts with empty pools */
    if (rc == PL_OK) {
        fprintf(stderr, "  [%s] measured run\n", o->single_run);
        rc = run_trace_once(e, &t, &failed, &wall, err, sizeof err);
    }
    if (rc != PL_OK) {
        if (rc == PL_ERR_UNSUPPORTED)
            fprintf(stderr, "pagellm: bench-serving: KV mode %s is not supported on --device %s: %s\n", o->single_run,
                    o->device, err);
        else fprintf(stderr, "pagellm: %s run: %s\n", o->single_run, err);
        pl_engine_destroy(e);
        pl_model_free(model);
        pl_trace_free(&t);
        return rc == PL_ERR_UNSUPPORTED ? 3 : 1;
    }
    pl_engine_metrics m;
    pl_engine_get_metrics(e, &m);
    double v[NUM_FIELDS] = {0};
#define SET(key, val) v[field_index(key)] = (double)(val)
    int64_t gen = m.generated_tokens;
    SET("prefill_tok_s", m.prefill_seconds > 0 ? m.prompt_tokens / m.prefill_seconds : 0);
    SET("decode_tok_s", m.decode_seconds > 0 ? m.decode_tokens / m.decode_seconds : 0);
    SET("output_tok_s", gen / wall);
    SET("total_tok_s", (pl_trace_prompt_tokens(&t) + gen) / wall);
    SET("requests_s", t.num_requests / wall);
    SET("wall_s", wall);
    SET("peak_kv_bytes", m.peak_kv_bytes);
    SET("peak_kv_mib", m.peak_kv_bytes / 1048576.0);
    SET("peak_dense_bytes", m.peak_dense_bytes);
    SET("peak_paged_bytes", m.peak_paged_bytes);
    SET("peak_active_requests", m.peak_active_requests);
    SET("peak_live_pages", m.peak_live_pages);
    SET("peak_capacity_pages", m.peak_capacity_pages);
    SET("tail_waste_slots", m.tail_waste_slots);
    SET("tail_live_slots", m.tail_live_slots);
    SET("tail_waste_bytes", m.tail_waste_bytes);
    SET("tail_waste_fraction", m.tail_live_slots ? (double)m.tail_waste_slots / (double)m.tail_live_slots : 0);
    SET("decode_step_median_ms", 1e3 * pl_median(m.step_samples, m.num_step_samples));
    SET("decode_step_p95_ms", 1e3 * pl_percentile_nearest(m.step_samples, m.num_step_samples, 0.95));
    SET("decode_step_max_ms", 1e3 * pl_percentile_nearest(m.step_samples, m.num_step_samples, 1.0));
    {
        const pl_model_config *mc = pl_model_get_config(model);
        const double kv_tok = 2.0 * mc->num_layers * mc->num_kv_heads * mc->head_dim * (o->dtype == PL_F32 ? 4.0 : 2.0);
        double roof_ms, ratio, kv_bytes, full_ms, full_ratio;
        int full_n;
        decode_roofline(m.step_samples, m.step_context_tokens, m.step_rows, m.num_step_samples, o->batch_size,
                        (double)pl_model_weight_bytes(model), kv_tok, roof_gbps > 0 ? roof_gbps : 0, &roof_ms, &ratio, &kv_bytes,
                        &full_n, &full_ms, &full_ratio);
        SET("decode_step_roofline_median_ms", roof_ms);
        SET("decode_step_vs_roofline_median", ratio);
        SET("decode_step_kv_bytes_median", kv_bytes);
        SET("decode_full_steps", full_n);
        SET("decode_full_step_median_ms", full_ms);
        SET("decode_full_vs_roofline_median", full_ratio);
        SET("roofline_gbps", roof_gbps);
        SET("copy_gbps", copy_gbps);
        if (o->steps_csv) { /* the measured run's decode steps, one line each, in order */
            FILE *sf = fopen(o->steps_csv, "w");
            if (!sf) {
                fprintf(stderr, "pagellm: --steps-csv '%s': %s\n", o->steps_csv, strerror(errno));
            } else {
                const double wb = (double)pl_model_weight_bytes(model);
                fprintf(sf, "step,rows,context_tokens,ms,roofline_ms,ratio,contexts,after_prefill\n");
                for (int i = 0; i < m.num_step_samples; i++) {
                    const double roof = roof_gbps > 0 ? 1e3 * (wb + (double)m.step_context_tokens[i] * kv_tok) / (roof_gbps * 1e9) : NAN;
                    fprintf(sf, "%d,%d,%lld,%.4f,%.4f,%.4f,", i, m.step_rows ? m.step_rows[i] : 0, (long long)m.step_context_tokens[i],
                            1e3 * m.step_samples[i], roof, 1e3 * m.step_samples[i] / roof);
                    /* the occupied slots' contexts in slot order: the step's shape */
                    for (int b = 0, first = 1; m.step_slot_contexts && b < o->batch_size; b++) {
                        const int32_t c = m.step_slot_contexts[(size_t)i * o->batch_size + b];
                        if (c > 0) fprintf(sf, "%s%d", first ? "" : ";", (int)c), first = 0;
                    }
                    fprintf(sf, ",%d\n", m.step_after_prefill ? m.step_after_prefill[i] : 0);
                }
                if (fclose(sf) != 0) fprintf(stderr, "pagellm: --steps-csv '%s': %s\n", o->steps_csv, strerror(errno));
            }
        }
    }
    SET("decode_gap_median_ms", 1e3 * pl_median(m.gap_samples, m.num_gap_samples));
    SET("decode_gap_p95_ms", 1e3 * pl_percentile_nearest(m.gap_samples, m.num_gap_samples, 0.95));
    SET("decode_gap_max_ms", 1e3 * pl_percentile_nearest(m.gap_samples, m.num_gap_samples, 1.0));
    SET("reused_page_allocations", m.reused_page_allocations);
    SET("storage_growths", m.storage_growths);
    SET("copied_pages_on_growth", m.copied_pages_on_growth);
    SET("paged_growth_copy_bytes", m.paged_growth_copy_bytes);
    SET("dense_growth_copy_bytes", m.dense_growth_copy_bytes);
    SET("dense_staging_copy_bytes", m.dense_staging_copy_bytes);
    SET("logical_kv_copy_mib",
        (m.paged_growth_copy_bytes + m.dense_growth_copy_bytes + m.dense_staging_copy_bytes) / 1048576.0);
    SET("gather_prefill_copy_bytes", m.gather_prefill_copy_bytes);
    SET("prompt_tokens", m.prompt_tokens);
    SET("generated_tokens", gen);
    SET("decode_tokens", m.decode_tokens);
    SET("decode_calls", m.decode_calls);
    /* the batch a trace really decodes at: admission (one prefill chunk per iteration) may keep it
     * well under --batch-size */
    SET("decode_rows_mean", m.decode_calls ? (double)m.decode_tokens / (double)m.decode_calls : 0.0);
    SET("decode_gaps", m.num_gap_samples);
    SET("preemptions", m.preemptions);
    SET("failed_requests", failed);
    SET("prefill_s", m.prefill_seconds);
    SET("decode_s", m.decode_seconds);
    SET("weight_bytes", pl_model_weight_bytes(model));
    SET("kv_budget_bytes", ec.kv_budget_bytes);
#undef SET
    FILE *f = fopen(o->result_file, "w");
    if (!f) {
        fprintf(stderr, "pagellm: --result-file '%s': %s\n", o->result_file, strerror(errno));
        rc = 1;
    } else {
        pl_json_writer w;
        pl_json_init(&w, f, 0);
        pl_json_begin_object(&w);
        for (int i = 0; i < NUM_FIELDS; i++) {
            pl_json_key(&w, k_fields[i].key);
            pl_json_double(&w, v[i]);
        }
        pl_json_key(&w, "threads");
        pl_json_int(&w, omp_get_max_threads());
        if (gpu[0]) {
            pl_json_key(&w, "gpu");
            pl_json_string(&w, gpu);
        }
        pl_json_end_object(&w);
        fputc('\n', f);
        if (fclose(f)) rc = 1;
    }
    fprintf(stderr, "  [%s] output %.2f tok/s, decode %.2f tok/s, prefill %.1f tok/s, peak KV %.1f MiB\n",
            o->single_run, v[field_index("output_tok_s")], v[field_index("decode_tok_s")],
            v[field_index("prefill_tok_s")], v[field_index("peak_kv_mib")]);
    pl_engine_destroy(e);
    pl_model_free(model);
    pl_trace_free(&t);
    return rc;
}

/* ---- the parent ------------------------------------------------------------------------- */

typedef struct run_result {
    int ok;
    int unsupported; /* the process exited 3: its KV mode is not supported on the device */
    double v[NUM_FIELDS];
    int threads;
    char gpu[128];   /* the GPU's name ("" on the CPU) */
} run_result;

static int spawn_child(const bench_opts *o, pl_kv_mode mode, double budget_mib, double ceiling_gbps,
                       const char *trace_path, const char *result_path, const char *steps_path, run_result *res) {
    char bs[16], ps[16], pg[16], wu[16], th[16], ms[32], bud[64], cg[64], kf[64];
    snprintf(kf, sizeof kf, "%.17g", o->kv_fraction);
    snprintf(bs, sizeof bs, "%d", o->batch_size);
    snprintf(ps, sizeof ps, "%d", o->prefill_step);
    snprintf(pg, sizeof pg, "%d", o->page_size);
    snprintf(wu, sizeof wu, "%d", o->warmup);
    snprintf(th, sizeof th, "%d", o->threads);
    snprintf(ms, sizeof ms, "%llu", (unsigned long long)o->model_seed);
    snprintf(bud, sizeof bud, "%.17g", budget_mib);
    snprintf(cg, sizeof cg, "%.17g", ceiling_gbps > 0 ? ceiling_gbps : 0.0);
    char *args[40];
    int n = 0;
    args[n++] = "pagellm";
    args[n++] = "bench-serving";
    args[n++] = "--single-run";
    args[n++] = (char *)pl_kv_mode_name(mode);
    args[n++] = "--result-file";
    args[n++] = (char *)result_path;
    args[n++] = "--trace";
    args[n++] = (char *)trace_path;
    args[n++] = "--batch-size";
    args[n++] = bs;
    args[n++] = "--prefill-step";
    args[n++] = ps;
    args[n++] = "--page-size";
    args[n++] = pg;
    args[n++] = "--warmup";
    args[n++] = wu;
    args[n++] = "--threads";
    args[n++] = th;
    args[n++] = "--dtype";
    args[n++] = o->dtype == PL_F32 ? "f32" : "bf16";
    args[n++] = "--child-budget-mib";
    args[n++] = bud;
    args[n++] = "--device";
    args[n++] = (char *)o->device;
    if (o->kv_fraction > 0) {
        args[n++] = "--kv-budget-fraction";
        args[n++] = kf;
    }
    if (steps_path) {
        args[n++] = "--steps-csv";
        args[n++] = (char *)steps_path;
    }
    if (o->attn_splits_shapes) {
        args[n++] = "--cuda-attn-splits";
        args[n++] = "shapes";
    }
    args[n++] = "--ceiling-gbps";
    args[n++] = cg;
    if (o->model_dir) {
        args[n++] = "--model";
        args[n++] = (char *)o->model_dir;
    } else {
        args[n++] = "--shape";
        args[n++] = (char *)o->shape;
        args[n++] = "--model-seed";
        args[n++] = ms;
    }
    args[n] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "pagellm: fork failed: %s\n", strerror(errno));
        return 1;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* the run ends with the parent */
        execv("/proc/self/exe", args);
        fprintf(stderr, "pagellm: cannot re-execute /proc/self/exe: %s\n", strerror(errno));
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    memset(res, 0, sizeof *res);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
        res->unsupported = 1;
        fprintf(stderr, "pagellm: the %s run: KV mode not supported on --device %s\n", pl_kv_mode_name(mode), o->device);
        return 1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "pagellm: the %s run failed (status %d)\n", pl_kv_mode_name(mode), status);
        return 1;
    }
    FILE *f = fopen(result_path, "rb");
    if (!f) return 1;
    char buf[16384];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    cJSON *root = cJSON_Parse(buf);
    if (!root) return 1;
    for (int i = 0; i < NUM_FIELDS; i++) {
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(root, k_fields[i].key);
        res->v[i] = cJSON_IsNumber(x) ? x->valuedouble : NAN;
    }
    const cJSON *th_j = cJSON_GetObjectItemCaseSensitive(root, "threads");
    res->threads = cJSON_IsNumber(th_j) ? th_j->valueint : 0;
    const cJSON *gpu_j = cJSON_GetObjectItemCaseSensitive(root, "gpu");
    if (cJSON_IsString(gpu_j) && gpu_j->valuestring) snprintf(res->gpu, sizeof res->gpu, "%s", gpu_j->valuestring);
    cJSON_Delete(root);
    res->ok = 1;
    remove(result_path);
    return 0;
}

static void cpu_model(char *out, size_t len) {
    snprintf(out, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10)) {
            char *p = strchr(line, ':');
            if (p) {
                p++;
                while (*p == ' ' || *p == '\t') p++;
                p[strcspn(p, "\n")] = '\0';
                snprintf(out, len, "%s", p);
            }
            break;
        }
    fclose(f);
}

/* vocab size and first EOS id of the model the children will load (the trace's id range). */
static int model_vocab(const bench_opts *o, int *vocab, int32_t *eos, char *err, size_t err_len) {
    if (!o->model_dir) {
        pl_model_config c;
        int rc = pl_model_shape_config(o->shape, &c, err, err_len);
        if (rc) return rc;
        *vocab = c.vocab_size;
        *eos = c.num_eos ? c.eos_ids[0] : -1;
        return PL_OK;
    }
    const char *names[2] = {"config.json", "generation_config.json"};
    *vocab = 0;
    *eos = -1;
    for (int k = 0; k < 2; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", o->model_dir, names[k]);
        FILE *f = fopen(path, "rb");
        if (!f) {
            if (k == 0) return pl_fail(err, err_len, PL_ERR_IO, "--model: cannot open '%s'", path);
            continue;
        }
        static char buf[1 << 20];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        cJSON *root = cJSON_Parse(buf);
        if (!root) continue;
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "vocab_size");
        if (cJSON_IsNumber(v)) *vocab = v->valueint;
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "eos_token_id");
        if (cJSON_IsArray(e)) e = cJSON_GetArrayItem(e, 0);
        if (cJSON_IsNumber(e)) *eos = e->valueint;
        cJSON_Delete(root);
    }
    if (*vocab <= 0) return pl_fail(err, err_len, PL_ERR_INVALID, "--model: config.json lacks vocab_size");
    return PL_OK;
}

static double median_of(run_result *rr, int n, int field) {
    double v[1024];
    int k = 0;
    for (int i = 0; i < n && k < 1024; i++)
        if (rr[i].ok) v[k++] = rr[i].v[field];
    return pl_median(v, k);
}

static void fmt_value(char *out, size_t len, double x) {
    if (isnan(x)) snprintf(out, len, "-");
    else if (fabs(x) >= 1e6 && x == floor(x)) snprintf(out, len, "%.0f", x);
    else if (x == floor(x) && fabs(x) < 1e6) snprintf(out, len, "%.0f", x);
    else if (fabs(x) >= 100) snprintf(out, len, "%.1f", x);
    else snprintf(out, len, "%.4g", x);
}

/* ---- SVG ---------------------------------------------------------------------------------- */

static const char *k_colors[MAX_MODES] = {"#d9822b", "#7f8c8d", "#2b7bd9"};

/* Panels of horizontal bars, one panel per metric, one bar per series. */
static int write_svg(const char *path, const char *title, const char *subtitle, int num_panels,
                     const char *const *panel_labels, int num_series, const char *const *series, const double *values,
                     const int *higher_better, int base) {
    FILE *f = fopen(path, "w");
    if (!f) return 1;
    const int W = 860, left = 300, bar_h = 18, gap = 6, panel_gap = 22, top = 70;
    int panel_h = num_series * (bar_h + gap) + panel_gap;
    int H = top + num_panels * panel_h + 40;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n", W, H, W, H);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"20\" y=\"26\" font-size=\"16\" font-weight=\"bold\">");
    for (const char *p = title; *p; p++) fputs(*p == '&' ? "&amp;" : *p == '<' ? "&lt;" : (char[2]){*p, 0}, f);
    fprintf(f, "</text>\n<text x=\"20\" y=\"46\" fill=\"#555\">");
    for (const char *p = subtitle; *p; p++) fputs(*p == '&' ? "&amp;" : *p == '<' ? "&lt;" : (char[2]){*p, 0}, f);
    fprintf(f, "</text>\n");
    for (int s = 0; s < num_series; s++) {
        int x = W - 150, y = 20 + s * 16;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>", x, y, k_colors[s % MAX_MODES]);
        fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text>\n", x + 18, y + 10, series[s]);
    }
    for (int p = 0; p < num_panels; p++) {
        int y0 = top + p * panel_h;
        double vmax = 0;
        for (int s = 0; s < num_series; s++)
            if (values[p * num_series + s] > vmax) vmax = values[p * num_series + s];
        fprintf(f, "<text x=\"20\" y=\"%d\" font-weight=\"bold\">%s</text>\n", y0 + bar_h - 4, panel_labels[p]);
        fprintf(f, "<text x=\"20\" y=\"%d\" fill=\"#777\" font-size=\"10\">%s</text>\n", y0 + bar_h + 10,
                higher_better[p] ? "higher is better" : "lower is better");
        for (int s = 0; s < num_series; s++) {
            double v = values[p * num_series + s];
            int y = y0 + s * (bar_h + gap);
            int w = vmax > 0 && !isnan(v) ? (int)((W - left - 200) * v / vmax) : 0;
            if (w < 1 && v > 0) w = 1;
            char txt[96], num[64];
            fmt_value(num, sizeof num, v);
            double bv = base >= 0 ? values[p * num_series + base] : NAN;
            if (base >= 0 && s != base && bv != 0 && !isnan(bv) && !isnan(v))
                snprintf(txt, sizeof txt, "%s (%.3gx %s)", num, v / bv, series[base]);
            else snprintf(txt, sizeof txt, "%s", num);
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>", left, y, w, bar_h,
                    k_colors[s % MAX_MODES]);
            fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text>\n", left + w + 6, y + bar_h - 5, txt);
        }
    }
    fprintf(f, "</svg>\n");
    return fclose(f) ? 1 : 0;
}

/* ---- JSON output --------------------------------------------------------------------------- */

static void json_config(pl_json_writer *w, const bench_opts *o, const pl_trace *t, const char *sha, const char *gpu) {
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    pl_json_key(w, "configuration");
    pl_json_begin_object(w);
    pl_json_key(w, "model");
    pl_json_string(w, o->model_dir ? o->model_dir : o->shape);
    pl_json_key(w, "model_kind");
    pl_json_string(w, o->model_dir ? "checkpoint" : "synthetic");
    if (!o->model_dir) {
        pl_json_key(w, "model_seed");
        pl_json_int(w, (int64_t)o->model_seed);
        pl_model_config c;
        char err[128];
        if (pl_model_shape_config(o->shape, &c, err, sizeof err) == PL_OK) {
            pl_json_key(w, "shape");
            pl_json_begin_object(w);
            pl_json_key(w, "vocab_size"); pl_json_int(w, c.vocab_size);
            pl_json_key(w, "hidden_size"); pl_json_int(w, c.hidden_size);
            pl_json_key(w, "num_layers"); pl_json_int(w, c.num_layers);
            pl_json_key(w, "num_heads"); pl_json_int(w, c.num_heads);
            pl_json_key(w, "num_kv_heads"); pl_json_int(w, c.num_kv_heads);
            pl_json_key(w, "head_dim"); pl_json_int(w, c.head_dim);
            pl_json_key(w, "intermediate_size"); pl_json_int(w, c.intermediate_size);
            pl_json_end_object(w);
        }
    }
    pl_json_key(w, "dtype"); pl_json_string(w, o->dtype == PL_F32 ? "f32" : "bf16");
    pl_json_key(w, "device"); pl_json_string(w, o->device);
    pl_json_key(w, "cuda_attn_splits"); pl_json_string(w, o->attn_splits_shapes ? "shapes" : "contexts");
    pl_json_key(w, "num_seqs"); pl_json_int(w, t->num_requests);
    pl_json_key(w, "min_input_len"); pl_json_int(w, o->min_in);
    pl_json_key(w, "max_input_len"); pl_json_int(w, o->max_in);
    pl_json_key(w, "min_output_len"); pl_json_int(w, o->min_out);
    pl_json_key(w, "max_output_len"); pl_json_int(w, o->max_out);
    pl_json_key(w, "seed"); pl_json_int(w, (int64_t)o->seed);
    pl_json_key(w, "trace_file"); if (o->trace_file) pl_json_string(w, o->trace_file); else pl_json_null(w);
    pl_json_key(w, "batch_size"); pl_json_int(w, o->batch_size);
    pl_json_key(w, "prefill_step"); pl_json_int(w, o->prefill_step);
    pl_json_key(w, "page_size"); pl_json_int(w, o->page_size);
    pl_json_key(w, "warmup"); pl_json_int(w, o->warmup);
    pl_json_key(w, "repeats"); pl_json_int(w, o->repeats);
    pl_json_key(w, "threads_flag"); pl_json_int(w, o->threads);
    pl_json_key(w, "omp_wait_policy");
    if (getenv("OMP_WAIT_POLICY")) pl_json_string(w, getenv("OMP_WAIT_POLICY")); else pl_json_null(w);
    pl_json_key(w, "kv_modes");
    pl_json_begin_array(w);
    for (int i = 0; i < o->num_modes; i++) pl_json_string(w, pl_kv_mode_name(o->modes[i]));
    pl_json_end_array(w);
    pl_json_end_object(w);
    pl_json_key(w, "hardware");
    pl_json_begin_object(w);
    pl_json_key(w, "cpu_model"); pl_json_string(w, cpu);
    pl_json_key(w, "cpu_cores"); pl_json_int(w, sysconf(_SC_NPROCESSORS_ONLN));
    pl_json_key(w, "simd"); pl_json_string(w, pl_cpu_simd_name());
    pl_json_key(w, "gpu"); if (gpu && *gpu) pl_json_string(w, gpu); else pl_json_null(w);
    pl_json_end_object(w);
    pl_json_key(w, "request_trace_sha256");
    pl_json_string(w, sha);
    pl_json_key(w, "prompt_tokens"); pl_json_int(w, pl_trace_prompt_tokens(t));
    pl_json_key(w, "output_tokens"); pl_json_int(w, pl_trace_output_tokens(t));
}

static void json_trace(pl_json_writer *w, const pl_trace *t) {
    pl_json_key(w, "request_trace");
    pl_json_begin_array(w);
    for (int i = 0; i < t->num_requests; i++) {
        pl_json_begin_object(w);
        pl_json_key(w, "request_id"); pl_json_int(w, t->requests[i].request_id);
        pl_json_key(w, "max_new_tokens"); pl_json_int(w, t->requests[i].max_new_tokens);
        pl_json_key(w, "prompt_token_ids");
        fprintf(w->f, "[");
        for (int j = 0; j < t->requests[i].prompt_len; j++) fprintf(w->f, j ? ",%d" : "%d", t->requests[i].prompt[j]);
        fprintf(w->f, "]");
        w->after_key = 0;
        w->first[w->depth] = 0;
        pl_json_end_object(w);
    }
    pl_json_end_array(w);
}

/* Opens --json-output and writes the fields every report starts with; NULL (message
 * printed) when the file cannot be opened. */
static FILE *json_begin(pl_json_writer *w, const bench_opts *o, const char *benchmark, const pl_trace *t,
                        const char *sha, const char *gpu) {
    FILE *f = fopen(o->json_out, "w");
    if (!f) {
        fprintf(stderr, "pagellm: --json-output '%s': %s\n", o->json_out, strerror(errno));
        return NULL;
    }
    pl_json_init(w, f, 1);
    pl_json_begin_object(w);
    pl_json_key(w, "benchmark");
    pl_json_string(w, benchmark);
    json_config(w, o, t, sha, gpu);
    return f;
}

/* Appends the trace, closes the report; nonzero when the write failed. */
static int json_end(pl_json_writer *w, FILE *f, const bench_opts *o, const pl_trace *t) {
    json_trace(w, t);
    pl_json_end_object(w);
    fputc('\n', f);
    if (fclose(f)) {
        fprintf(stderr, "pagellm: --json-output '%s': write failed\n", o->json_out);
        return 1;
    }
    fprintf(stderr, "wrote %s\n", o->json_out);
    return 0;
}

static void json_fields(pl_json_writer *w, const double *v) {
    pl_json_begin_object(w);
    for (int i = 0; i < NUM_FIELDS; i++) {
        pl_json_key(w, k_fields[i].key);
        pl_json_double(w, v[i]);
    }
    pl_json_end_object(w);
}

/* ---- comparison ------------------------------------------------------------------------------ */

static int run_comparison(const bench_opts *o, const pl_trace *t, const char *sha, const char *trace_path,
                          const char *dir, const pl_ceilings *ceil) {
    int R = o->repeats, M = o->num_modes;
    const int cuda = !strcmp(o->device, "cuda");
    run_result *rr = calloc((size_t)R * M, sizeof(run_result));
    if (!rr) return 1;
    char result_path[4200];
    snprintf(result_path, sizeof result_path, "%s/result.json", dir);
    int failed = 0, done = 0;
    double t_start = pl_now_seconds();
    for (int r = 0; r < R && !failed; r++)
        for (int k = 0; k < M && !failed; k++) {
            int mi = r % 2 == 0 ? k : M - 1 - k;
            fprintf(stderr, "[%d/%d] %s, repeat %d/%d (%.0f s elapsed)\n", ++done, R * M,
                    pl_kv_mode_name(o->modes[mi]), r + 1, R, pl_now_seconds() - t_start);
            char steps_path[4200];
            if (o->steps_csv) snprintf(steps_path, sizeof steps_path, "%s.%s.%d.csv", o->steps_csv, pl_kv_mode_name(o->modes[mi]), r + 1);
            if (spawn_child(o, o->modes[mi], 0.0, cuda ? 0.0 : ceil->read_gbps, trace_path, result_path,
                            o->steps_csv ? steps_path : NULL, &rr[mi * R + r]))
                failed = rr[mi * R + r].unsupported ? 3 : 1;
            if (o->cooldown > 0 && !failed) {
                struct timespec ts = {(time_t)o->cooldown, (long)((o->cooldown - floor(o->cooldown)) * 1e9)};
                nanosleep(&ts, NULL);
            }
        }
    if (failed) {
        free(rr);
        return failed;
    }
    double med[MAX_MODES][NUM_FIELDS];
    for (int mi = 0; mi < M; mi++)
        for (int fi = 0; fi < NUM_FIELDS; fi++) med[mi][fi] = median_of(&rr[mi * R], R, fi);
    /* the roofline's ceiling: CPU read bandwidth (parent), or the median over every measured
     * process of its own device-to-device copy bandwidth */
    double copy_med = NAN;
    const char *gpu = "";
    {
        int fc = field_index("copy_gbps"), k = 0;
        double *cv = malloc(sizeof(double) * (size_t)(R * M));
        for (int i = 0; cv && i < R * M; i++) {
            if (rr[i].ok && rr[i].v[fc] > 0) cv[k++] = rr[i].v[fc];
            if (rr[i].ok && rr[i].gpu[0]) gpu = rr[i].gpu;
        }
        if (k > 0) copy_med = pl_median(cv, k);
        free(cv);
    }
    const char *ceil_key = cuda ? "copy_gbps" : "read_gbps";
    const char *ceil_desc = cuda ? "device-to-device copy, bytes read + written, cudaMemcpyAsync of 2 GiB, median of 10; "
                                   "median over the measured processes, each measuring its own"
                                 : "CPU streaming read bandwidth, measured by the parent process";
    const double ceil_gbps = cuda ? copy_med : ceil->read_gbps;
    int dense = -1;
    for (int mi = 0; mi < M; mi++)
        if (o->modes[mi] == PL_KV_DENSE) dense = mi;

    /* table */
    printf("\nbench-serving: %s%s, %s, trace %d requests (%lld prompt / %lld output tokens), sha256 %.16s...\n",
           o->model_dir ? "model " : "synthetic ", o->model_dir ? o->model_dir : o->shape,
           o->dtype == PL_F32 ? "f32" : "bf16", t->num_requests, (long long)pl_trace_prompt_tokens(t),
           (long long)pl_trace_output_tokens(t), sha);
    printf("batch %d, prefill step %d, page size %d, warmup %d, medians of %d fresh processes per mode; "
           "%d threads, OMP_WAIT_POLICY=%s; read ceiling %.1f GB/s\n", o->batch_size, o->prefill_step,
           o->page_size, o->warmup, R, rr[0].threads, getenv("OMP_WAIT_POLICY") ? getenv("OMP_WAIT_POLICY") : "(unset)",
           ceil->read_gbps);
    if (cuda) printf("device cuda: %s, device-to-device copy %.1f GB/s (read + write)\n", *gpu ? gpu : "(unknown GPU)", copy_med);
    printf("\n");
    printf("%-40s", "metric");
    for (int mi = 0; mi < M; mi++) printf(" %16s", pl_kv_mode_name(o->modes[mi]));
    if (dense >= 0)
        for (int mi = 0; mi < M; mi++)
            if (mi != dense) {
                char h[64];
                snprintf(h, sizeof h, "%s/dense", pl_kv_mode_name(o->modes[mi]));
                printf(" %18s", h);
            }
    printf("\n");
    for (int fi = 0; fi < NUM_FIELDS; fi++) {
        if (!k_fields[fi].table) continue;
        printf("%-40s", k_fields[fi].label);
        for (int mi = 0; mi < M; mi++) {
            char b[64];
            fmt_value(b, sizeof b, med[mi][fi]);
            printf(" %16s", b);
        }
        if (dense >= 0)
            for (int mi = 0; mi < M; mi++)
                if (mi != dense) {
                    if (med[dense][fi] != 0 && !isnan(med[dense][fi]))
                        printf(" %17.4fx", med[mi][fi] / med[dense][fi]);
                    else printf(" %18s", "-");
                }
        printf("\n");
    }
    int step = field_index("decode_step_median_ms"), wb = field_index("weight_bytes");
    if (!cuda) {
        printf("\ndecode step roofline (weights once per step at the read ceiling): %.2f ms",
               ceil->read_gbps > 0 ? med[0][wb] / (ceil->read_gbps * 1e9) * 1e3 : NAN);
        for (int mi = 0; mi < M; mi++)
            printf("; %s at %.0f%%", pl_kv_mode_name(o->modes[mi]),
                   100.0 * (med[0][wb] / (ceil->read_gbps * 1e9) * 1e3) / med[mi][step]);
    }
    int rf = field_index("decode_step_roofline_median_ms"), rx = field_index("decode_step_vs_roofline_median");
    printf("\ndecode step vs its roofline ((weights + K/V read by the step) / %s ceiling %.1f GB/s):",
           cuda ? "copy" : "read", ceil_gbps);
    int fn = field_index("decode_full_steps"), fx = field_index("decode_full_vs_roofline_median");
    for (int mi = 0; mi < M; mi++)
        printf("%s %s: step median %.3f ms, roofline median %.3f ms, median step/roofline %.2fx (%.2fx over the %.0f steps "
               "at batch %d)",
               mi ? ";" : "", pl_kv_mode_name(o->modes[mi]), med[mi][step], med[mi][rf], med[mi][rx], med[mi][fx], med[mi][fn],
               o->batch_size);
    printf("\n");
    if (R > 1 && M > 1 && R % 2) printf("note: an odd repeat count does not balance the forward/reverse order\n");
    fflush(stdout);

    if (o->json_out) {
        pl_json_writer w;
        FILE *f = json_begin(&w, o, "bench-serving", t, sha, gpu);
        if (!f) {
            free(rr);
            return 1;
        }
        pl_json_key(&w, "ceilings");
        pl_json_begin_object(&w);
        pl_json_key(&w, "read_gbps"); pl_json_double(&w, ceil->read_gbps);
        pl_json_key(&w, "fma_f32_gflops"); pl_json_double(&w, ceil->fma_f32_gflops);
        pl_json_key(&w, "bf16_dot_gflops"); pl_json_double(&w, ceil->bf16_dot_gflops);
        pl_json_key(&w, "threads"); pl_json_int(&w, ceil->threads);
        pl_json_key(&w, "copy_gbps"); pl_json_double(&w, copy_med);
        pl_json_key(&w, "roofline_ceiling"); pl_json_string(&w, ceil_key);
        pl_json_key(&w, "roofline_ceiling_gbps"); pl_json_double(&w, ceil_gbps);
        pl_json_key(&w, "roofline_ceiling_description"); pl_json_string(&w, ceil_desc);
        pl_json_key(&w, "decode_roofline");
        pl_json_string(&w, "per decode step: (model weight bytes + sum over the step's rows of context tokens incl. the new "
                           "one x K+V bytes per token over all layers) / roofline_ceiling_gbps; the medians report the "
                           "median over steps of each process, then the median over processes");
        pl_json_end_object(&w);
        pl_json_key(&w, "execution_order");
        pl_json_begin_array(&w);
        for (int r = 0; r < R; r++) {
            pl_json_begin_array(&w);
            for (int k = 0; k < M; k++) pl_json_string(&w, pl_kv_mode_name(o->modes[r % 2 == 0 ? k : M - 1 - k]));
            pl_json_end_array(&w);
        }
        pl_json_end_array(&w);
        pl_json_key(&w, "medians");
        pl_json_begin_object(&w);
        for (int mi = 0; mi < M; mi++) {
            pl_json_key(&w, pl_kv_mode_name(o->modes[mi]));
            json_fields(&w, med[mi]);
        }
        pl_json_end_object(&w);
        if (dense >= 0) {
            pl_json_key(&w, "ratios_vs_dense");
            pl_json_begin_object(&w);
            for (int mi = 0; mi < M; mi++) {
                if (mi == dense) continue;
                double v[NUM_FIELDS];
                for (int fi = 0; fi < NUM_FIELDS; fi++)
                    v[fi] = med[dense][fi] != 0 ? med[mi][fi] / med[dense][fi] : NAN;
                pl_json_key(&w, pl_kv_mode_name(o->modes[mi]));
                json_fields(&w, v);
            }
            pl_json_end_object(&w);
        }
        pl_json_key(&w, "samples");
        pl_json_begin_object(&w);
        for (int mi = 0; mi < M; mi++) {
            pl_json_key(&w, pl_kv_mode_name(o->modes[mi]));
            pl_json_begin_array(&w);
            for (int r = 0; r < R; r++) json_fields(&w, rr[mi * R + r].v);
            pl_json_end_array(&w);
        }
        pl_json_end_object(&w);
        json_end(&w, f, o, t);
    }
    if (o->plot) {
        static const char *keys[] = {"output_tok_s", "decode_tok_s", "prefill_tok_s", "decode_step_median_ms",
                                     "decode_gap_p95_ms", "peak_kv_mib", "logical_kv_copy_mib"};
        static const char *labels[] = {"output tok/s", "decode tok/s", "prefill tok/s", "decode step median (ms)",
                                       "decode gap p95 (ms)", "peak KV (MiB)", "logical KV copy (MiB)"};
        enum { NP = sizeof keys / sizeof keys[0] };
        double vals[NP * MAX_MODES];
        int hb[NP];
        const char *series[MAX_MODES];
        for (int mi = 0; mi < M; mi++) series[mi] = pl_kv_mode_name(o->modes[mi]);
        for (int p = 0; p < NP; p++) {
            int fi = field_index(keys[p]);
            hb[p] = k_fields[fi].higher_better;
            for (int mi = 0; mi < M; mi++) vals[p * M + mi] = med[mi][fi];
        }
        char title[256], sub[512];
        snprintf(title, sizeof title, "pagellm bench-serving: dense vs paged-gather vs paged KV");
        snprintf(sub, sizeof sub, "%s %s, %d requests, batch %d, prefill step %d, page %d; medians of %d processes",
                 o->model_dir ? o->model_dir : o->shape, o->dtype == PL_F32 ? "f32" : "bf16", t->num_requests,
                 o->batch_size, o->prefill_step, o->page_size, R);
        if (write_svg(o->plot, title, sub, NP, labels, M, series, vals, hb, dense))
            fprintf(stderr, "pagellm: --plot '%s': write failed\n", o->plot);
        else fprintf(stderr, "wrote %s\n", o->plot);
    }
    free(rr);
    return 0;
}

/* ---- memory-capped sweep -------------------------------------------------------------------- */

static int run_sweep(const bench_opts *o, const pl_trace *t, const char *sha, const char *trace_path, const char *dir) {
    int B = o->num_budgets, M = o->num_modes;
    run_result *rr = calloc((size_t)B * M, sizeof(run_result));
    if (!rr) return 1;
    int json_failed = 0;
    char result_path[4200];
    snprintf(result_path, sizeof result_path, "%s/result.json", dir);
    int done = 0;
    for (int b = 0; b < B; b++)
        for (int k = 0; k < M; k++) {
            int mi = b % 2 == 0 ? k : M - 1 - k;
            fprintf(stderr, "[%d/%d] %s at %.6g MiB\n", ++done, B * M, pl_kv_mode_name(o->modes[mi]), o->budgets_mib[b]);
            if (spawn_child(o, o->modes[mi], o->budgets_mib[b], 0.0, trace_path, result_path, NULL, &rr[b * M + mi]))
                fprintf(stderr, "pagellm: (the %s run at %.6g MiB is recorded as failed)\n",
                        pl_kv_mode_name(o->modes[mi]), o->budgets_mib[b]);
        }
    int fa = field_index("peak_active_requests"), fo = field_index("output_tok_s"), fp = field_index("preemptions"),
        ff = field_index("failed_requests"), fk = field_index("peak_kv_mib");
    printf("\nmemory-capped admission sweep: %s, batch %d (slots), %d requests, one process per cell\n\n",
           o->model_dir ? o->model_dir : o->shape, o->batch_size, t->num_requests);
    printf("%12s %14s %18s %14s %12s %10s %14s\n", "budget MiB", "mode", "peak concurrent", "output tok/s",
           "preemptions", "failed", "peak KV MiB");
    for (int b = 0; b < B; b++)
        for (int mi = 0; mi < M; mi++) {
            run_result *r = &rr[b * M + mi];
            if (!r->ok) {
                printf("%12.6g %14s %18s\n", o->budgets_mib[b], pl_kv_mode_name(o->modes[mi]), "run failed");
                continue;
            }
            printf("%12.6g %14s %18.0f %14.2f %12.0f %10.0f %14.2f\n", o->budgets_mib[b], pl_kv_mode_name(o->modes[mi]),
                   r->v[fa], r->v[fo], r->v[fp], r->v[ff], r->v[fk]);
        }
    if (o->json_out) {
        pl_json_writer w;
        const char *gpu = "";
        for (int i = 0; i < B * M; i++)
            if (rr[i].ok && rr[i].gpu[0]) gpu = rr[i].gpu;
        FILE *f = json_begin(&w, o, "bench-serving kv-budget sweep", t, sha, gpu);
        if (!f) json_failed = 1;
        else {
            pl_json_key(&w, "kv_budget_sweep");
            pl_json_begin_array(&w);
            for (int b = 0; b < B; b++)
                for (int mi = 0; mi < M; mi++) {
                    pl_json_begin_object(&w);
                    pl_json_key(&w, "kv_budget_mib"); pl_json_double(&w, o->budgets_mib[b]);
                    pl_json_key(&w, "kv_mode"); pl_json_string(&w, pl_kv_mode_name(o->modes[mi]));
                    pl_json_key(&w, "ok"); pl_json_bool(&w, rr[b * M + mi].ok);
                    pl_json_key(&w, "metrics");
                    json_fields(&w, rr[b * M + mi].v);
                    pl_json_end_object(&w);
                }
            pl_json_end_array(&w);
            json_failed = json_end(&w, f, o, t);
        }
    }
    if (o->plot) {
        int NP = 2 * B;
        double *vals = calloc((size_t)NP * M, sizeof(double));
        char(*labels)[64] = calloc((size_t)NP, 64);
        const char **lp = calloc((size_t)NP, sizeof(char *));
        int *hb = calloc((size_t)NP, sizeof(int));
        const char *series[MAX_MODES];
        for (int mi = 0; mi < M; mi++) series[mi] = pl_kv_mode_name(o->modes[mi]);
        if (vals && labels && lp && hb) {
            for (int b = 0; b < B; b++) {
                snprintf(labels[2 * b], 64, "%.6g MiB: peak concurrent", o->budgets_mib[b]);
                snprintf(labels[2 * b + 1], 64, "%.6g MiB: output tok/s", o->budgets_mib[b]);
                lp[2 * b] = labels[2 * b];
                lp[2 * b + 1] = labels[2 * b + 1];
                hb[2 * b] = hb[2 * b + 1] = 1;
                for (int mi = 0; mi < M; mi++) {
                    vals[2 * b * M + mi] = rr[b * M + mi].ok ? rr[b * M + mi].v[fa] : 0;
                    vals[(2 * b + 1) * M + mi] = rr[b * M + mi].ok ? rr[b * M + mi].v[fo] : 0;
                }
            }
            char sub[256];
            snprintf(sub, sizeof sub, "%s, batch %d slots, %d requests", o->model_dir ? o->model_dir : o->shape,
                     o->batch_size, t->num_requests);
            int base = -1;
            for (int mi = 0; mi < M; mi++)
                if (o->modes[mi] == PL_KV_DENSE) base = mi;
            if (!write_svg(o->plot, "pagellm bench-serving: fixed KV budget sweep", sub, NP, lp, M, series, vals, hb, base))
                fprintf(stderr, "wrote %s\n", o->plot);
        }
        free(vals);
        free(labels);
        free(lp);
        free(hb);
    }
    free(rr);
    return json_failed;
}

int pl_cmd_bench_serving(int argc, char **argv) {
    bench_opts o;
    int prc = parse_args(argc, argv, &o);
    if (prc == 1) return 0; /* --help */
    if (prc) return 2;
    if (o.single_run) return child_main(&o);
    int explicit_policy = 0;
    for (int i = 1; i < argc; i++) explicit_policy |= pl_cli_is(argv[i], "--omp-wait-policy");
    if (strcmp(o.wait_policy, "env") && (explicit_policy || !getenv("OMP_WAIT_POLICY")))
        setenv("OMP_WAIT_POLICY", o.wait_policy, 1); /* read by the children's OpenMP runtime */

    char err[512];
    pl_trace t;
    if (o.trace_file) {
        if (pl_trace_load(o.trace_file, &t, err, sizeof err)) {
            fprintf(stderr, "pagellm: --trace: %s\n", err);
            return 1;
        }
    } else {
        int vocab;
        int32_t eos;
        if (model_vocab(&o, &vocab, &eos, err, sizeof err)) {
            fprintf(stderr, "pagellm: %s\n", err);
            return 2;
        }
        pl_trace_config tc = {o.num_seqs, o.min_in, o.max_in, o.min_out, o.max_out, vocab, eos, o.seed};
        if (pl_trace_generate(&tc, &t, err, sizeof err)) {
            fprintf(stderr, "pagellm: trace: %s\n", err);
            return 2;
        }
    }
    char sha[65];
    if (pl_trace_sha256(&t, sha, err, sizeof err)) {
        fprintf(stderr, "pagellm: %s\n", err);
        pl_trace_free(&t);
        return 1;
    }
    fprintf(stderr, "trace: %d requests, %lld prompt tokens, %lld output tokens, sha256 %s\n", t.num_requests,
            (long long)pl_trace_prompt_tokens(&t), (long long)pl_trace_output_tokens(&t), sha);
    if (o.save_trace) {
        if (pl_trace_save(&t, o.save_trace, err, sizeof err)) {
            fprintf(stderr, "pagellm: --save-trace: %s\n", err);
            pl_trace_free(&t);
            return 1;
        }
        fprintf(stderr, "wrote %s\n", o.save_trace);
    }
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/pagellm-bench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "pagellm: cannot create a temporary directory in %s: %s\n", tmp ? tmp : "/tmp", strerror(errno));
        pl_trace_free(&t);
        return 1;
    }
    char trace_path[4200];
    snprintf(trace_path, sizeof trace_path, "%s/trace.json", dir);
    int rc = 0;
    if (pl_trace_save(&t, trace_path, err, sizeof err)) {
        fprintf(stderr, "pagellm: %s\n", err);
        rc = 1;
    }
    if (!rc) {
        if (o.num_budgets) {
            rc = run_sweep(&o, &t, sha, trace_path, dir);
        } else {
            pl_ceilings c = {0};
            fprintf(stderr, "measuring machine ceilings...\n");
            pl_measure_ceilings(o.threads, 1.0, &c);
            rc = run_comparison(&o, &t, sha, trace_path, dir, &c);
        }
    }
    remove(trace_path);
    rmdir(dir);
    pl_trace_free(&t);
    return rc;
}
