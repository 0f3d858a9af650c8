/* pagellm generate: prompt in, streamed text out. Encodes the prompt (optionally through the
 * chat template), prefills it in chunks through a paged KV cache, then samples one token at a
 * time, printing each complete character as soon as it exists. Timings go to stderr. */
#define _POSIX_C_SOURCE 200809L /* access */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/timing.h"
#include "cli.h"
#include "pagellm/model.h"
#include "pagellm/tokenizer.h"
#include "tokenizer_cli.h"

static void usage(FILE *f) {
    fprintf(f,
            "usage: pagellm generate --prompt TEXT [flags]\n"
            "  --prompt TEXT        the prompt (required)\n"
            "  --model DIR          Hugging Face Qwen3 directory (default: the built-in synthetic model\n"
            "                       of --shape with random weights and the real Qwen3 tokenizer)\n"
            "  --shape NAME         synthetic model shape (default small)\n"
            "  --model-seed N       synthetic weights seed (default 0)\n"
            "  --tokenizer FILE     tokenizer.json (default: DIR/tokenizer.json with --model when it\n"
            "                       exists, else " PL_TOKENIZER_DEFAULT_HELP ")\n"
            "  --chat               wrap the prompt as a user turn in the chat template with the\n"
            "                       generation prompt (default: off, raw text)\n"
            "  --system TEXT        with --chat: a system turn first (default: none)\n"
            "  --no-think           with --chat: thinking off (empty think block) (default: on)\n"
            "  --max-tokens N       most new tokens (default 128)\n"
            "  --temperature T      0 = greedy (default 0.6)\n"
            "  --top-p P            nucleus sampling, 1 = off (default 0.95)\n"
            "  --top-k K            0 = off (default 20)\n"
            "  --seed S             sampling seed (default 0)\n"
            "  --ignore-eos         keep going past EOS (default: stop at EOS)\n"
            "  --prefill-chunk N    prompt tokens per forward pass (default 512)\n"
            "  --page-size N        KV page size in tokens (default 16)\n"
            "  --f32                float32 activations and K/V (default: bf16)\n"
            "  --threads N          threads, 0 = all cores (default 0)\n"
            "  --device D           cpu or cuda (default cpu; cuda: weights, activations and KV pages\n"
            "                       on the GPU)\n"
            "  --help               this text\n"
            "Text streams to stdout; time to first token, prefill and decode tok/s go to stderr.\n");
}

static int is_eos(const pl_model_config *cfg, int32_t eos_tok, int32_t id) {
    if (id == eos_tok) return 1;
    for (int i = 0; i < cfg->num_eos; i++)
        if (cfg->eos_ids[i] == id) return 1;
    return 0;
}

int pl_cmd_generate(int argc, char **argv) {
    const char *prompt = NULL, *dir = NULL, *shape = "small", *tok_path = NULL, *system = NULL, *v;
    int chat = 0, no_think = 0, max_tokens = 128, top_k = 20, ignore_eos = 0, chunk = 512, page = 16, f32 = 0;
    int threads = 0;
    pl_device device = PL_DEVICE_CPU;
    float temperature = 0.6f, top_p = 0.95f;
    uint64_t seed = 0, model_seed = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (pl_cli_is(a, "--prompt")) {
            if (!(prompt = pl_cli_value(argc, argv, &i, "--prompt"))) return 2;
        } else if (pl_cli_is(a, "--model-seed")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--model-seed")) || pl_cli_u64("--model-seed", v, &model_seed))
                return 2;
        } else if (pl_cli_is(a, "--model")) {
            if (!(dir = pl_cli_value(argc, argv, &i, "--model"))) return 2;
        } else if (pl_cli_is(a, "--shape")) {
            if (!(shape = pl_cli_value(argc, argv, &i, "--shape"))) return 2;
        } else if (pl_cli_is(a, "--tokenizer")) {
            if (!(tok_path = pl_cli_value(argc, argv, &i, "--tokenizer"))) return 2;
        } else if (pl_cli_is(a, "--system")) {
            if (!(system = pl_cli_value(argc, argv, &i, "--system"))) return 2;
        } else if (!strcmp(a, "--chat")) {
            chat = 1;
        } else if (!strcmp(a, "--no-think")) {
            no_think = 1;
        } else if (!strcmp(a, "--ignore-eos")) {
            ignore_eos = 1;
        } else if (!strcmp(a, "--f32")) {
            f32 = 1;
        } else if (pl_cli_is(a, "--max-tokens")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--max-tokens")) || pl_cli_int("--max-tokens", v, 0, 1 << 24, &max_tokens))
                return 2;
        } else if (pl_cli_is(a, "--temperature")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--temperature")) ||
                pl_cli_float("--temperature", v, 0, 100, &temperature))
                return 2;
        } else if (pl_cli_is(a, "--top-p")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--top-p")) || pl_cli_float("--top-p", v, 1e-6, 1, &top_p)) return 2;
        } else if (pl_cli_is(a, "--top-k")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--top-k")) || pl_cli_int("--top-k", v, 0, 1 << 24, &top_k)) return 2;
        } else if (pl_cli_is(a, "--seed")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--seed")) || pl_cli_u64("--seed", v, &seed)) return 2;
        } else if (pl_cli_is(a, "--prefill-chunk")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--prefill-chunk")) ||
                pl_cli_int("--prefill-chunk", v, 1, 1 << 20, &chunk))
                return 2;
        } else if (pl_cli_is(a, "--page-size")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--page-size")) || pl_cli_int("--page-size", v, 1, 1 << 16, &page))
                return 2;
        } else if (pl_cli_is(a, "--threads")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--threads")) || pl_cli_int("--threads", v, 0, 1024, &threads))
                return 2;
        } else if (pl_cli_is(a, "--device")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--device"))) return 2;
            if (!strcmp(v, "cpu")) {
                device = PL_DEVICE_CPU;
            } else if (!strcmp(v, "cuda")) {
                device = PL_DEVICE_CUDA;
            } else {
                fprintf(stderr, "pagellm generate: --device: expected cpu or cuda, got '%s'\n", v);
                return 2;
            }
        } else {
            fprintf(stderr, "pagellm generate: unknown flag '%s' (see --help)\n", a);
            return 2;
        }
    }
    if (!prompt) {
        fprintf(stderr, "pagellm generate: --prompt is required (see --help)\n");
        return 2;
    }
    if ((system || no_think) && !chat) {
        fprintf(stderr, "pagellm generate: --system and --no-think go with --chat\n");
        return 2;
    }
    char path[4096], err[512];
    if (!tok_path) {
        /* A checkpoint's own tokenizer first; synthetic checkpoints (make-model) have none. */
        if (dir) snprintf(path, sizeof path, "%s/tokenizer.json", dir);
        if ((!dir || access(path, R_OK) != 0) && pl_cli_default_tokenizer(path, sizeof path)) return 2;
        tok_path = path;
    }

    pl_tokenizer *tok = NULL;
    pl_model *m = NULL;
    pl_sampler *sampler = NULL;
    char *text = NULL;
    float *logits = NULL;
    pl_token_buf ids = {0};
    pl_kv_pools pools;
    pl_kv_seq seq;
    int have_pools = 0, have_seq = 0, rc = 0;
    pl_detok dt;
    pl_detok_init(&dt, NULL, 0);

    if (pl_tokenizer_load(tok_path, NULL, &tok, err, sizeof err)) goto fail;
    pl_detok_init(&dt, tok, PL_TOK_SKIP_SPECIAL | PL_TOK_SKIP_UNKNOWN);
    if (chat) {
        pl_chat_message msgs[2] = {{"system", system, NULL}, {"user", prompt, NULL}};
        size_t k = system ? 0 : 1;
        if (pl_tokenizer_apply_chat(tok, msgs + k, 2 - k, 1, !no_think, &text, NULL, err, sizeof err)) goto fail;
    }
    const char *in = text ? text : prompt;
    if (pl_tokenizer_encode(tok, in, strlen(in), PL_TOK_MATCH_SPECIAL, &ids, err, sizeof err)) goto fail;
    if (ids.n == 0) {
        snprintf(err, sizeof err, "--prompt: encodes to no tokens");
        goto fail;
    }

    pl_model_options o = {f32 ? PL_F32 : PL_BF16, device, threads, dir ? 1 : 0, 0};
    double t_load = pl_now_seconds();
    if (dir ? pl_model_load(dir, &o, &m, err, sizeof err)
            : pl_model_create_synthetic(shape, model_seed, &o, &m, err, sizeof err))
        goto fail;
    t_load = pl_now_seconds() - t_load;
    const pl_model_config *cfg = pl_model_get_config(m);
    for (size_t i = 0; i < ids.n; i++)
        if (ids.ids[i] >= cfg->vocab_size) {
            snprintf(err, sizeof err, "prompt token %d is outside the model's vocab (%d)", (int)ids.ids[i],
                     cfg->vocab_size);
            goto fail;
        }
    if (cfg->max_position_embeddings > 0 && (long)ids.n + max_tokens > cfg->max_position_embeddings) {
        snprintf(err, sizeof err, "--max-tokens: %zu prompt + %d new tokens exceed the model's %d positions", ids.n,
                 max_tokens, cfg->max_position_embeddings);
        goto fail;
    }
    pl_sampler_params sp = {temperature, top_k, top_p, seed};
    if (pl_sampler_create(&sp, cfg->vocab_size, &sampler, err, sizeof err)) goto fail;
    logits = malloc(sizeof(float) * (size_t)cfg->vocab_size);
    if (!logits) {
        snprintf(err, sizeof err, "out of memory");
        goto fail;
    }
    if (pl_model_create_pools(m, page, PL_POOL_GROWABLE, 0, &pools, err, sizeof err)) goto fail;
    have_pools = 1;
    if (pl_kv_seq_init(&seq, &pools, err, sizeof err)) goto fail;
    have_seq = 1;
    if (!dir) fprintf(stderr, "[synthetic model '%s' (random weights, seed %llu): the text is noise]\n", shape,
                      (unsigned long long)model_seed);

    /* Prefill in chunks; the last chunk's logits give the first token. */
    pl_kv_seq *seqp = &seq;
    int n = (int)ids.n;
    double t0 = pl_now_seconds();
    for (int pos = 0; pos < n; pos += chunk) {
        int len = n - pos < chunk ? n - pos : chunk;
        pl_forward_batch b = {1, ids.ids + pos, &len, &pos, &seqp, NULL, 0};
        if (pl_model_forward(m, &b, logits, err, sizeof err)) goto fail;
    }
    double t_prefill = pl_now_seconds() - t0, t_first = 0, t_decode0 = 0;
    int generated = 0;
    const char *piece;
    size_t plen;
    while (generated < max_tokens) {
        int32_t next = pl_sampler_sample(sampler, logits);
        generated++;
        if (generated == 1) {
            t_first = pl_now_seconds() - t0;
            t_decode0 = pl_now_seconds();
        }
        int stop = !ignore_eos && is_eos(cfg, pl_tokenizer_eos_id(tok), next);
        if (!stop) {
            if (pl_detok_push(&dt, next, &piece, &plen, err, sizeof err)) goto fail;
            fwrite(piece, 1, plen, stdout);
            fflush(stdout);
        }
        if (stop || generated == max_tokens) break;
        int one = 1, pos = n + generated - 1;
        pl_forward_batch b = {1, &next, &one, &pos, &seqp, NULL, 0};
        if (pl_model_forward(m, &b, logits, err, sizeof err)) goto fail;
    }
    double t_decode = generated > 1 ? pl_now_seconds() - t_decode0 : 0;
    if (pl_detok_flush(&dt, &piece, &plen, err, sizeof err)) goto fail;
    fwrite(piece, 1, plen, stdout);
    printf("\n");
    fflush(stdout);
    fprintf(stderr,
            "[%s: load %.2f s | prompt %d tokens, prefill %.3f s = %.1f tok/s | time to first token %.3f s | "
            "%d new tokens, decode %.1f tok/s]\n",
            dir ? dir : shape, t_load, n, t_prefill, t_prefill > 0 ? n / t_prefill : 0.0, t_first, generated,
            t_decode > 0 ? (generated - 1) / t_decode : 0.0);
    goto done;
fail:
    fprintf(stderr, "pagellm: generate: %s\n", err);
    rc = 1;
done:
    if (have_seq) pl_kv_seq_destroy(&seq);
    if (have_pools) pl_kv_pools_destroy(&pools);
    pl_detok_free(&dt);
    pl_sampler_free(sampler);
    pl_model_free(m);
    pl_tokenizer_free(tok);
    pl_token_buf_free(&ids);
    free(logits);
    free(text);
    return rc;
}
