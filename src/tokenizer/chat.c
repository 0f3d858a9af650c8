/* Qwen3's chat template (tokenizer_config.json "chat_template"), written out in C for turns
 * without tools: ChatML blocks, the last assistant turn after the last user query carries
 * its <think> block, and the generation prompt can switch thinking off. */
#include <stdlib.h>
#include <string.h>

#include "pagellm/status.h"
#include "tokenizer/tokenizer_internal.h"

typedef struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
} sbuf;

static void put(sbuf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t nc = (b->n + n + 1) * 2;
        char *p = realloc(b->p, nc);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = nc;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void puts_(sbuf *b, const char *s) { put(b, s, strlen(s)); }

/* A view of a string: [s, s + n). */
typedef struct view {
    const char *s;
    size_t n;
} view;

static view lstrip_nl(view v) {
    while (v.n && v.s[0] == '\n') v.s++, v.n--;
    return v;
}

static view rstrip_nl(view v) {
    while (v.n && v.s[v.n - 1] == '\n') v.n--;
    return v;
}

/* Last occurrence of needle in v, or NULL. */
static const char *find_last(view v, const char *needle) {
    size_t k = strlen(needle);
    for (size_t i = v.n; i >= k; i--)
        if (!memcmp(v.s + i - k, needle, k)) return v.s + i - k;
    return NULL;
}

static const char *find_first(view v, const char *needle) {
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= v.n; i++)
        if (!memcmp(v.s + i, needle, k)) return v.s + i;
    return NULL;
}

static int starts_ends(const char *s, const char *pre, const char *suf) {
    size_t n = strlen(s), a = strlen(pre), b = strlen(suf);
    return n >= a && n >= b && !strncmp(s, pre, a) && !strcmp(s + n - b, suf);
}

int pl_tokenizer_apply_chat(const pl_tokenizer *tok, const pl_chat_message *messages, size_t n,
                            int add_generation_prompt, int enable_thinking, char **text, size_t *len, char *err,
                            size_t err_len) {
    if (!tok || !text || (!messages && n)) return pl_fail(err, err_len, PL_ERR_INVALID, "apply_chat: NULL argument");
    *text = NULL;
    if (!tok->chat_ok)
        return pl_fail(err, err_len, PL_ERR_UNSUPPORTED,
                       "apply_chat: the tokenizer's chat template is not Qwen's ChatML template");
    for (size_t i = 0; i < n; i++) {
        const char *r = messages[i].role;
        if (!r || (strcmp(r, "system") && strcmp(r, "user") && strcmp(r, "assistant") && strcmp(r, "tool")))
            return pl_fail(err, err_len, PL_ERR_INVALID,
                           "messages[%zu].role: '%s' is not system, user, assistant or tool", i, r ? r : "(null)");
        if (!messages[i].content)
            return pl_fail(err, err_len, PL_ERR_INVALID, "messages[%zu].content: NULL", i);
    }
    sbuf b = {0};
    puts_(&b, "");
    if (n && !strcmp(messages[0].role, "system")) {
        puts_(&b, "<|im_start|>system\n");
        puts_(&b, messages[0].content);
        puts_(&b, "<|im_end|>\n");
    }
    /* The last user turn that is not a wrapped tool response. */
    size_t last_query = n ? n - 1 : 0;
    for (size_t k = n; k-- > 0;) {
        const pl_chat_message *m = &messages[k];
        if (!strcmp(m->role, "user") && !starts_ends(m->content, "<tool_response>", "</tool_response>")) {
            last_query = k;
            break;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const pl_chat_message *m = &messages[i];
        if (!strcmp(m->role, "user") || (!strcmp(m->role, "system") && i > 0)) {
            puts_(&b, "<|im_start|>");
            puts_(&b, m->role);
            puts_(&b, "\n");
            puts_(&b, m->content);
            puts_(&b, "<|im_end|>\n");
        } else if (!strcmp(m->role, "assistant")) {
            view content = {m->content, strlen(m->content)}, reasoning = {"", 0};
            if (m->reasoning_content) {
                reasoning.s = m->reasoning_content;
                reasoning.n = strlen(m->reasoning_content);
            } else if (find_first(content, "</think>")) {
                view all = content;
                const char *last_close = find_last(all, "</think>");
                content.s = last_close + 8;
                content.n = (size_t)(all.s + all.n - content.s);
                content = lstrip_nl(content);
                view before = {all.s, (size_t)(find_first(all, "</think>") - all.s)};
                before = rstrip_nl(before);
                const char *open = find_last(before, "<think>");
                if (open) {
                    before.n = (size_t)(before.s + before.n - (open + 7));
                    before.s = open + 7;
                }
                reasoning = lstrip_nl(before);
            }
            puts_(&b, "<|im_start|>assistant\n");
            if (i > last_query && (i == n - 1 || reasoning.n)) {
                view r = rstrip_nl(lstrip_nl(reasoning));
                puts_(&b, "<think>\n");
                put(&b, r.s, r.n);
                puts_(&b, "\n</think>\n\n");
                content = lstrip_nl(content);
            }
            put(&b, content.s, content.n);
            puts_(&b, "<|im_end|>\n");
        } else if (!strcmp(m->role, "tool")) {
            if (i == 0 || strcmp(messages[i - 1].role, "tool")) puts_(&b, "<|im_start|>user");
            puts_(&b, "\n<tool_response>\n");
            puts_(&b, m->content);
            puts_(&b, "\n</tool_response>");
            if (i == n - 1 || strcmp(messages[i + 1].role, "tool")) puts_(&b, "<|im_end|>\n");
        }
    }
    if (add_generation_prompt) {
        puts_(&b, "<|im_start|>assistant\n");
        if (!enable_thinking) puts_(&b, "<think>\n\n</think>\n\n");
    }
    if (b.oom) {
        free(b.p);
        return pl_fail(err, err_len, PL_ERR_NOMEM, "apply_chat: out of memory");
    }
    *text = b.p;
    if (len) *len = b.n;
    return PL_OK;
}
