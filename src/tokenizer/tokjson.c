#include "tokenizer/tokjson.h"

#include <stdlib.h>
#include <string.h>

#include "pagellm/status.h"

typedef struct cur {
    const char *p, *end, *base;
} cur;

static void ws(cur *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\r' || *c->p == '\t')) c->p++;
}

static int hex4(const char *p, const char *end, unsigned *v) {
    if (end - p < 4) return 1;
    unsigned x = 0;
    for (int i = 0; i < 4; i++) {
        char h = p[i];
        x <<= 4;
        if (h >= '0' && h <= '9') x |= (unsigned)(h - '0');
        else if (h >= 'a' && h <= 'f') x |= (unsigned)(h - 'a' + 10);
        else if (h >= 'A' && h <= 'F') x |= (unsigned)(h - 'A' + 10);
        else return 1;
    }
    *v = x;
    return 0;
}

static size_t put_utf8(char *out, unsigned cp) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* The string at c->p, unescaped into out (NUL-terminated) when out != NULL. The unescaped
 * form is never longer than the quoted source. Length, or -1 when malformed. */
static long str(cur *c, char *out) {
    if (c->p >= c->end || *c->p != '"') return -1;
    c->p++;
    long o = 0;
    while (c->p < c->end) {
        const char *q = c->p;
        while (q < c->end && *q != '"' && *q != '\\') q++;
        if (out) memcpy(out + o, c->p, (size_t)(q - c->p));
        o += q - c->p;
        c->p = q;
        if (q >= c->end) return -1;
        if (*q == '"') {
            c->p++;
            if (out) out[o] = '\0';
            return o;
        }
        if (++c->p >= c->end) return -1;
        char e = *c->p++;
        char ch;
        switch (e) {
        case '"': ch = '"'; break;
        case '\\': ch = '\\'; break;
        case '/': ch = '/'; break;
        case 'b': ch = '\b'; break;
        case 'f': ch = '\f'; break;
        case 'n': ch = '\n'; break;
        case 'r': ch = '\r'; break;
        case 't': ch = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (hex4(c->p, c->end, &cp)) return -1;
            c->p += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF && c->end - c->p >= 6 && c->p[0] == '\\' && c->p[1] == 'u' &&
                !hex4(c->p + 2, c->end, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                c->p += 6;
            } else if (cp >= 0xD800 && cp <= 0xDFFF) {
                cp = 0xFFFD; /* a lone surrogate names no character */
            }
            char tmp[4];
            size_t k = put_utf8(tmp, cp);
            if (out) memcpy(out + o, tmp, k);
            o += (long)k;
            continue;
        }
        default: return -1;
        }
        if (out) out[o] = ch;
        o++;
    }
    return -1;
}

static int skip_value(cur *c) {
    ws(c);
    if (c->p >= c->end) return 1;
    if (*c->p == '"') return str(c, NULL) < 0;
    if (*c->p == '{' || *c->p == '[') {
        int depth = 0;
        do {
            if (c->p >= c->end) return 1;
            char ch = *c->p;
            if (ch == '"') {
                if (str(c, NULL) < 0) return 1;
                continue;
            }
            if (ch == '{' || ch == '[') depth++;
            else if (ch == '}' || ch == ']') depth--;
            c->p++;
        } while (depth > 0);
        return 0;
    }
    const char *s = c->p;
    while (c->p < c->end && !strchr(",}] \t\r\n", *c->p)) c->p++;
    return c->p == s;
}

/* Key of an object member at c->p (raw, no unescaping): sets [*k, *k + *kn). */
static int raw_key(cur *c, const char **k, size_t *kn) {
    ws(c);
    const char *s = c->p + 1;
    if (str(c, NULL) < 0) return 1;
    *k = s;
    *kn = (size_t)(c->p - 1 - s);
    ws(c);
    if (c->p >= c->end || *c->p != ':') return 1;
    c->p++;
    ws(c);
    return 0;
}

static int is_key(const char *k, size_t kn, const char *want) { return kn == strlen(want) && !memcmp(k, want, kn); }

typedef struct span {
    const char *s, *e;
} span;

/* Finds model.vocab and model.merges. */
static int find_spans(cur *c, span *vocab, span *merges) {
    ws(c);
    if (c->p >= c->end || *c->p != '{') return 1;
    c->p++;
    ws(c);
    if (c->p < c->end && *c->p == '}') return 0;
    for (;;) {
        const char *k;
        size_t kn;
        if (raw_key(c, &k, &kn)) return 1;
        if (is_key(k, kn, "model") && c->p < c->end && *c->p == '{') {
            c->p++;
            ws(c);
            while (c->p < c->end && *c->p != '}') {
                const char *mk;
                size_t mkn;
                if (raw_key(c, &mk, &mkn)) return 1;
                span *sp = is_key(mk, mkn, "vocab") ? vocab : is_key(mk, mkn, "merges") ? merges : NULL;
                const char *s = c->p;
                if (skip_value(c)) return 1;
                if (sp) {
                    sp->s = s;
                    sp->e = c->p;
                }
                ws(c);
                if (c->p < c->end && *c->p == ',') {
                    c->p++;
                    ws(c);
                }
            }
            if (c->p >= c->end) return 1;
            c->p++;
        } else if (skip_value(c)) {
            return 1;
        }
        ws(c);
        if (c->p >= c->end) return 1;
        if (*c->p == '}') return 0;
        if (*c->p != ',') return 1;
        c->p++;
    }
}

static int parse_vocab(const span *sp, pl_tokjson *t) {
    cur c = {sp->s, sp->e, sp->s};
    size_t cap = 1024;
    t->vocab_arena = malloc((size_t)(sp->e - sp->s) + 1);
    t->keys = malloc(cap * sizeof *t->keys);
    t->ids = malloc(cap * sizeof *t->ids);
    if (!t->vocab_arena || !t->keys || !t->ids) return 1;
    size_t o = 0;
    ws(&c);
    if (c.p >= c.end || *c.p != '{') return 1;
    c.p++;
    ws(&c);
    if (c.p < c.end && *c.p == '}') return 0;
    for (;;) {
        ws(&c);
        long k = str(&c, t->vocab_arena + o);
        if (k < 0) return 1;
        ws(&c);
        if (c.p >= c.end || *c.p++ != ':') return 1;
        ws(&c);
        long v = 0;
        const char *d = c.p;
        while (c.p < c.end && *c.p >= '0' && *c.p <= '9' && v < 100000000) v = v * 10 + (*c.p++ - '0');
        if (c.p == d || (c.p < c.end && strchr(".eE-", *c.p)) || v >= 100000000) return 1;
        if (t->num_vocab == cap) {
            cap *= 2;
            char **nk = realloc(t->keys, cap * sizeof *nk);
            if (nk) t->keys = nk;
            int32_t *ni = realloc(t->ids, cap * sizeof *ni);
            if (ni) t->ids = ni;
            if (!nk || !ni) return 1;
        }
        t->keys[t->num_vocab] = t->vocab_arena + o;
        t->ids[t->num_vocab++] = (int32_t)v;
        o += (size_t)k + 1;
        ws(&c);
        if (c.p >= c.end) return 1;
        if (*c.p == '}') return 0;
        if (*c.p++ != ',') return 1;
    }
}

static int parse_merges(const span *sp, pl_tokjson *t) {
    cur c = {sp->s, sp->e, sp->s};
    size_t cap = 1024;
    t->merge_arena = malloc((size_t)(sp->e - sp->s) + 2);
    t->left = malloc(cap * sizeof *t->left);
    t->right = malloc(cap * sizeof *t->right);
    if (!t->merge_arena || !t->left || !t->right) return 1;
    size_t o = 0;
    ws(&c);
    if (c.p >= c.end || *c.p != '[') return 1;
    c.p++;
    ws(&c);
    if (c.p < c.end && *c.p == ']') return 0;
    for (;;) {
        ws(&c);
        if (c.p >= c.end) return 1;
        char *l, *r;
        if (*c.p == '[') { /* ["a", "b"] */
            c.p++;
            ws(&c);
            l = t->merge_arena + o;
            long k = str(&c, l);
            if (k < 0) return 1;
            o += (size_t)k + 1;
            ws(&c);
            if (c.p >= c.end || *c.p++ != ',') return 1;
            ws(&c);
            r = t->merge_arena + o;
            k = str(&c, r);
            if (k < 0) return 1;
            o += (size_t)k + 1;
            ws(&c);
            if (c.p >= c.end || *c.p++ != ']') return 1;
        } else { /* "a b": byte-level tokens hold no plain space */
            l = t->merge_arena + o;
            long k = str(&c, l);
            if (k < 0) return 1;
            char *sp_ = memchr(l, ' ', (size_t)k);
            if (!sp_) return 1;
            *sp_ = '\0';
            r = sp_ + 1;
            o += (size_t)k + 1;
        }
        if (t->num_merges == cap) {
            cap *= 2;
            char **nl = realloc(t->left, cap * sizeof *nl);
            if (nl) t->left = nl;
            char **nr = realloc(t->right, cap * sizeof *nr);
            if (nr) t->right = nr;
            if (!nl || !nr) return 1;
        }
        t->left[t->num_merges] = l;
        t->right[t->num_merges++] = r;
        ws(&c);
        if (c.p >= c.end) return 1;
        if (*c.p == ']') return 0;
        if (*c.p++ != ',') return 1;
    }
}

int pl_tokjson_read(const char *doc, size_t len, const char *path, pl_tokjson *out, char *err, size_t err_len) {
    memset(out, 0, sizeof *out);
    cur c = {doc, doc + len, doc};
    span vocab = {NULL, NULL}, merges = {NULL, NULL};
    if (find_spans(&c, &vocab, &merges))
        return pl_fail(err, err_len, PL_ERR_INVALID, "tokenizer: '%s' is not a JSON object (malformed near byte %zu)",
                       path, (size_t)(c.p - doc));
    if (!vocab.s || !merges.s)
        return pl_fail(err, err_len, PL_ERR_INVALID, "tokenizer: %s: model.vocab and model.merges are required", path);
    if (parse_vocab(&vocab, out)) {
        pl_tokjson_free(out);
        return pl_fail(err, err_len, PL_ERR_INVALID, "tokenizer: %s: model.vocab is not an object of token -> id",
                       path);
    }
    if (parse_merges(&merges, out)) {
        pl_tokjson_free(out);
        return pl_fail(err, err_len, PL_ERR_INVALID,
                       "tokenizer: %s: model.merges is not an array of [\"a\", \"b\"] pairs or \"a b\" strings", path);
    }
    /* The rest of the document with the two values blanked, for cJSON. */
    span first = vocab.s < merges.s ? vocab : merges, second = vocab.s < merges.s ? merges : vocab;
    const char *fill1 = vocab.s < merges.s ? "{}" : "[]", *fill2 = vocab.s < merges.s ? "[]" : "{}";
    size_t n = len - (size_t)(vocab.e - vocab.s) - (size_t)(merges.e - merges.s) + 4;
    out->rest = malloc(n + 1);
    if (!out->rest) {
        pl_tokjson_free(out);
        return pl_fail(err, err_len, PL_ERR_NOMEM, "tokenizer: out of memory");
    }
    size_t o = 0;
    memcpy(out->rest + o, doc, (size_t)(first.s - doc));
    o += (size_t)(first.s - doc);
    memcpy(out->rest + o, fill1, 2);
    o += 2;
    memcpy(out->rest + o, first.e, (size_t)(second.s - first.e));
    o += (size_t)(second.s - first.e);
    memcpy(out->rest + o, fill2, 2);
    o += 2;
    memcpy(out->rest + o, second.e, (size_t)(doc + len - second.e));
    o += (size_t)(doc + len - second.e);
    out->rest[o] = '\0';
    out->rest_len = o;
    return PL_OK;
}

void pl_tokjson_free(pl_tokjson *t) {
    free(t->keys);
    free(t->ids);
    free(t->left);
    free(t->right);
    free(t->vocab_arena);
    free(t->merge_arena);
    free(t->rest);
    memset(t, 0, sizeof *t);
}

long pl_tokjson_parse_string(const char *s, size_t n, char *out) {
    cur c = {s, s + n, s};
    ws(&c);
    long k = str(&c, out);
    if (k < 0) return -1;
    ws(&c);
    return c.p == c.end ? k : -1;
}
