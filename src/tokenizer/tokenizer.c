#define _POSIX_C_SOURCE 200809L /* strdup */
#include "pagellm/tokenizer.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "pagellm/status.h"
#include "tokenizer/tokenizer_internal.h"
#include "tokenizer/tokjson.h"

/* ---- UTF-8 ---- */

int pl_utf8_step(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    if (c < 0x80) return 1;
    int need;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) need = 1;
    else if (c == 0xE0) need = 2, lo = 0xA0;
    else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) need = 2;
    else if (c == 0xED) need = 2, hi = 0x9F;
    else if (c == 0xF0) need = 3, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) need = 3;
    else if (c == 0xF4) need = 3, hi = 0x8F;
    else return -1;
    for (int k = 1; k <= need; k++) {
        if ((size_t)k >= n) return 0;
        if (s[k] < lo || s[k] > hi) return -k;
        lo = 0x80;
        hi = 0xBF;
    }
    return need + 1;
}

static int utf8_valid(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        if (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (!(w & 0x8080808080808080ull)) {
                i += 8;
                continue;
            }
        }
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        int k = pl_utf8_step(s + i, n - i);
        if (k <= 0) return 0;
        i += (size_t)k;
    }
    return 1;
}

/* Appends src to dst (room for 3 * n bytes), replacing invalid maximal subparts by U+FFFD.
 * With final == 0 an unfinished character at the end is left: returns the bytes consumed. */
static size_t utf8_lossy(char *dst, size_t *dn, const unsigned char *src, size_t n, int final) {
    size_t i = 0, o = *dn;
    while (i < n) {
        if (src[i] < 0x80) {
            dst[o++] = (char)src[i++];
            continue;
        }
        int k = pl_utf8_step(src + i, n - i);
        if (k > 0) {
            memcpy(dst + o, src + i, (size_t)k);
            o += (size_t)k;
            i += (size_t)k;
            continue;
        }
        if (k == 0 && !final) break;
        memcpy(dst + o, "\xEF\xBF\xBD", 3);
        o += 3;
        i += k == 0 ? n - i : (size_t)(-k);
    }
    *dn = o;
    return i;
}

char *pl_utf8_sanitize(const char *src, size_t n, size_t *out_len) {
    char *dst = malloc(3 * n + 1);
    if (!dst) return NULL;
    size_t dn = 0;
    utf8_lossy(dst, &dn, (const unsigned char *)src, n, 1);
    dst[dn] = '\0';
    *out_len = dn;
    return dst;
}

/* ---- loading ---- */

/* GPT-2's byte-level alphabet: printable bytes stand for themselves, the rest for 256 + k. */
static void byte_level_tables(unsigned short byte_to_cp[256], short cp_to_byte[324]) {
    int k = 0;
    for (int i = 0; i < 324; i++) cp_to_byte[i] = -1;
    for (int b = 0; b < 256; b++) {
        int printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        byte_to_cp[b] = (unsigned short)(printable ? b : 256 + k++);
        cp_to_byte[byte_to_cp[b]] = (short)b;
    }
}

/* Byte-level string -> raw bytes (into out, room for strlen(s)); -1 if a character is outside
 * the alphabet. */
static long byte_level_decode(const char *s, const short cp_to_byte[324], unsigned char *out) {
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), i = 0;
    long o = 0;
    while (i < n) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate(p + i, (utf8proc_ssize_t)(n - i), &cp);
        if (k <= 0 || cp < 0 || cp >= 324 || cp_to_byte[cp] < 0) return -1;
        out[o++] = (unsigned char)cp_to_byte[cp];
        i += (size_t)k;
    }
    return o;
}

static int read_file(const char *path, const char *what, char **data, size_t *len, char *err, size_t err_len) {
    FILE *f = fopen(path, "rb");
    if (!f) return pl_fail(err, err_len, PL_ERR_IO, "%s: cannot open '%s': %s", what, path, strerror(errno));
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (cap - n < 65536) {
            size_t nc = cap ? cap * 2 : 1 << 20;
            char *nb = realloc(buf, nc + 1);
            if (!nb) {
                free(buf);
                fclose(f);
                return pl_fail(err, err_len, PL_ERR_NOMEM, "%s: out of memory reading '%s'", what, path);
            }
            buf = nb;
            cap = nc;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return pl_fail(err, err_len, PL_ERR_IO, "%s: read error on '%s'", what, path);
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return PL_OK;
}

static const char *json_str(const cJSON *obj, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int json_true(const cJSON *obj, const char *key) { return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(obj, key)); }

/* The normalizer, pre-tokenizer and model fields this implementation can honour exactly. */
static int check_pipeline(const cJSON *root, const char *path, int *nfc, char *err, size_t err_len) {
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    if (!cJSON_IsObject(model)) return pl_fail(err, err_len, PL_ERR_INVALID, "%s: no \"model\" object", path);
    const char *type = json_str(model, "type");
    if (!type || strcmp(type, "BPE"))
        return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s: model.type '%s' is not supported (only BPE)", path,
                       type ? type : "(missing)");
    const char *pfx = json_str(model, "continuing_subword_prefix"), *sfx = json_str(model, "end_of_word_suffix");
    if ((pfx && *pfx) || (sfx && *sfx) || json_true(model, "byte_fallback") || json_true(model, "ignore_merges"))
        return pl_fail(err, err_len, PL_ERR_UNSUPPORTED,
                       "%s: BPE options (subword prefix/suffix, byte_fallback, ignore_merges) are not supported", path);
    const cJSON *dropout = cJSON_GetObjectItemCaseSensitive(model, "dropout");
    if (dropout && !cJSON_IsNull(dropout))
        return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s: BPE dropout is not supported", path);

    const cJSON *norm = cJSON_GetObjectItemCaseSensitive(root, "normalizer");
    *nfc = 0;
    if (norm && !cJSON_IsNull(norm)) {
        const char *nt = json_str(norm, "type");
        if (!nt || strcmp(nt, "NFC"))
            return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s: normalizer '%s' is not supported (only NFC)", path,
                           nt ? nt : "(no type)");
        *nfc = 1;
    }

    const cJSON *pre = cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer");
    const char *pt = pre ? json_str(pre, "type") : NULL;
    const cJSON *seq = pre ? cJSON_GetObjectItemCaseSensitive(pre, "pretokenizers") : NULL;
    int ok = pt && !strcmp(pt, "Sequence") && cJSON_IsArray(seq) && cJSON_GetArraySize(seq) == 2;
    if (ok) {
        const cJSON *split = cJSON_GetArrayItem(seq, 0), *bl = cJSON_GetArrayItem(seq, 1);
        const cJSON *pat = cJSON_GetObjectItemCaseSensitive(split, "pattern");
        const char *re = pat ? json_str(pat, "Regex") : NULL;
        const char *st = json_str(split, "type"), *beh = json_str(split, "behavior"), *bt = json_str(bl, "type");
        ok = st && !strcmp(st, "Split") && re && !strcmp(re, pl_qwen2_split_pattern) && beh &&
             !strcmp(beh, "Isolated") && !json_true(split, "invert") && bt && !strcmp(bt, "ByteLevel") &&
             !json_true(bl, "add_prefix_space") && !json_true(bl, "use_regex");
    }
    if (!ok)
        return pl_fail(err, err_len, PL_ERR_UNSUPPORTED,
                       "%s: pre_tokenizer is not Qwen2's (Split on the Qwen2 regex, then ByteLevel)", path);
    const cJSON *dec = cJSON_GetObjectItemCaseSensitive(root, "decoder");
    const char *dt = dec ? json_str(dec, "type") : NULL;
    if (!dt || strcmp(dt, "ByteLevel"))
        return pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s: decoder '%s' is not supported (only ByteLevel)", path,
                       dt ? dt : "(missing)");
    return PL_OK;
}

static int id_of(const pl_tokenizer *tok, const char *token, int32_t *id) {
    for (int i = 0; i < tok->num_added; i++)
        if (!strcmp(tok->added[i].content, token)) {
            *id = tok->added[i].id;
            return 1;
        }
    return 0;
}

static int load_config(pl_tokenizer *tok, const char *path, int required, char *err, size_t err_len) {
    char *data = NULL;
    size_t len = 0;
    FILE *probe = fopen(path, "rb");
    if (!probe && !required) return PL_OK;
    if (probe) fclose(probe);
    int rc = read_file(path, "tokenizer_config", &data, &len, err, err_len);
    if (rc) return rc;
    cJSON *root = cJSON_ParseWithLength(data, len);
    free(data);
    if (!root) return pl_fail(err, err_len, PL_ERR_INVALID, "tokenizer_config: '%s' is not valid JSON", path);
    const cJSON *eos = cJSON_GetObjectItemCaseSensitive(root, "eos_token");
    const char *eos_name = cJSON_IsString(eos) ? eos->valuestring : (eos ? json_str(eos, "content") : NULL);
    if (eos_name) {
        int32_t id;
        if (!id_of(tok, eos_name, &id)) {
            rc = pl_fail(err, err_len, PL_ERR_INVALID, "tokenizer_config: %s: eos_token '%s' is not an added token of "
                                                       "the tokenizer", path, eos_name);
            cJSON_Delete(root);
            return rc;
        }
        tok->eos_id = id;
    }
    const char *tpl = json_str(root, "chat_template");
    if (tpl) tok->chat_ok = strstr(tpl, "<|im_start|>") != NULL;
    cJSON_Delete(root);
    return PL_OK;
}

static int cmp_added_len_desc(const void *a, const void *b) {
    const pl_added_token *x = a, *y = b;
    return x->len < y->len ? 1 : x->len > y->len ? -1 : (x->id > y->id) - (x->id < y->id);
}

/* Fills the tokenizer from tokenizer.json: root is the document without model.vocab and
 * model.merges, which come from tj. */
static int build(pl_tokenizer *tok, const cJSON *root, const pl_tokjson *tj, const char *path, char *err,
                 size_t err_len) {
    int rc = check_pipeline(root, path, &tok->nfc, err, err_len);
    if (rc) return rc;
    const cJSON *added = cJSON_GetObjectItemCaseSensitive(root, "added_tokens");
    int32_t max_vocab = -1, max_id = -1;
    size_t nv = tj->num_vocab, total_len = 0, maxl = 0;
    for (size_t i = 0; i < nv; i++) {
        if (tj->ids[i] > max_vocab) max_vocab = tj->ids[i];
        size_t l = strlen(tj->keys[i]);
        total_len += l;
        if (l > maxl) maxl = l;
    }
    if (nv == 0) return pl_fail(err, err_len, PL_ERR_INVALID, "%s: model.vocab is empty", path);
    max_id = max_vocab;
    if (added && !cJSON_IsArray(added))
        return pl_fail(err, err_len, PL_ERR_INVALID, "%s: added_tokens is not an array", path);
    int na = added ? cJSON_GetArraySize(added) : 0;
    for (int i = 0; i < na; i++) {
        const cJSON *a = cJSON_GetArrayItem(added, i);
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(a, "id");
        const char *content = json_str(a, "content");
        if (!cJSON_IsNumber(id) || id->valueint < 0 || id->valuedouble > 1e8 || !content || !*content)
            return pl_fail(err, err_len, PL_ERR_INVALID, "%s: added_tokens[%d]: needs an integer id and a content",
                           path, i);
        if (json_true(a, "lstrip") || json_true(a, "rstrip") || json_true(a, "single_word"))
            return pl_fail(err, err_len, PL_ERR_UNSUPPORTED,
                           "%s: added_tokens[%d] '%s': lstrip/rstrip/single_word are not supported", path, i, content);
        if (id->valueint > max_id) max_id = id->valueint;
    }
    tok->vocab_size = max_id + 1;
    size_t vs = (size_t)tok->vocab_size;
    tok->tok_str = calloc(vs, sizeof *tok->tok_str);
    tok->added_index = malloc(vs * sizeof *tok->added_index);
    tok->added = calloc((size_t)(na ? na : 1), sizeof *tok->added);
    const unsigned char **tb = calloc((size_t)max_vocab + 1, sizeof *tb);
    int32_t *tl = calloc((size_t)max_vocab + 1, sizeof *tl);
    unsigned char *bytes = malloc(total_len + 1);
    size_t nm = tj->num_merges;
    int32_t *ml = malloc((nm + 1) * sizeof *ml), *mr = malloc((nm + 1) * sizeof *mr);
    unsigned char *tmp = malloc(4 * maxl + 64);
    rc = PL_OK;
    if (!tok->tok_str || !tok->added_index || !tok->added || !tb || !tl || !bytes || !ml || !mr || !tmp) {
        rc = pl_fail(err, err_len, PL_ERR_NOMEM, "%s: out of memory", path);
        goto done;
    }
    for (size_t i = 0; i < vs; i++) tok->added_index[i] = -1;
    unsigned short b2c[256];
    short c2b[324];
    byte_level_tables(b2c, c2b);
    size_t o = 0;
    for (size_t i = 0; i < nv; i++) {
        int32_t id = tj->ids[i];
        if (tok->tok_str[id]) {
            rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: model.vocab: id %d is used twice", path, (int)id);
            goto done;
        }
        long n = byte_level_decode(tj->keys[i], c2b, bytes + o);
        if (n <= 0) {
            rc = pl_fail(err, err_len, PL_ERR_UNSUPPORTED, "%s: model.vocab token '%s' is not in the byte-level alphabet",
                         path, tj->keys[i]);
            goto done;
        }
        tok->tok_str[id] = strdup(tj->keys[i]);
        if (!tok->tok_str[id]) {
            rc = pl_fail(err, err_len, PL_ERR_NOMEM, "%s: out of memory", path);
            goto done;
        }
        tb[id] = bytes + o;
        tl[id] = (int32_t)n;
        o += (size_t)n;
        if ((size_t)n > tok->max_token_bytes) tok->max_token_bytes = (size_t)n;
    }
    rc = pl_bpe_init(&tok->bpe, max_vocab + 1, tb, tl, nm, err, err_len);
    if (rc) goto done;
    size_t m = 0;
    for (; m < nm; m++) {
        const char *parts[2] = {tj->left[m], tj->right[m]};
        int32_t ids[2] = {-1, -1};
        for (int k = 0; k < 2; k++) {
            long n = strlen(parts[k]) <= 4 * maxl ? byte_level_decode(parts[k], c2b, tmp) : -1;
            if (n > 0) ids[k] = pl_bpe_lookup(&tok->bpe, tmp, (size_t)n);
        }
        if (ids[0] < 0 || ids[1] < 0) {
            rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: model.merges[%zu]: not a pair of vocab tokens", path, m);
            goto done;
        }
        ml[m] = ids[0];
        mr[m] = ids[1];
    }
    rc = pl_bpe_set_merges(&tok->bpe, ml, mr, m, err, err_len);
    if (rc) goto done;
    for (int i = 0; i < na; i++) {
        const cJSON *a = cJSON_GetArrayItem(added, i);
        pl_added_token *t = &tok->added[tok->num_added];
        t->id = cJSON_GetObjectItemCaseSensitive(a, "id")->valueint;
        t->content = strdup(json_str(a, "content"));
        if (!t->content) {
            rc = pl_fail(err, err_len, PL_ERR_NOMEM, "%s: out of memory", path);
            goto done;
        }
        t->len = strlen(t->content);
        t->special = json_true(a, "special");
        tok->num_added++;
        if (t->len > tok->max_token_bytes) tok->max_token_bytes = t->len;
    }
    qsort(tok->added, (size_t)tok->num_added, sizeof *tok->added, cmp_added_len_desc);
    for (int i = 0; i < tok->num_added; i++) {
        pl_added_token *t = &tok->added[i];
        if (tok->added_index[t->id] >= 0) {
            rc = pl_fail(err, err_len, PL_ERR_INVALID, "%s: added_tokens: id %d is listed twice", path, (int)t->id);
            goto done;
        }
        tok->added_index[t->id] = i;
        tok->added_first[(unsigned char)t->content[0]] = 1;
        free(tok->tok_str[t->id]);
        tok->tok_str[t->id] = strdup(t->content);
        if (!tok->tok_str[t->id]) {
            rc = pl_fail(err, err_len, PL_ERR_NOMEM, "%s: out of memory", path);
            goto done;
        }
    }
    /* Defaults when tokenizer_config.json is absent: ChatML when <|im_start|> exists. */
    int32_t id;
    tok->eos_id = id_of(tok, "<|im_end|>", &id) ? id : id_of(tok, "<|endoftext|>", &id) ? id : -1;
    tok->chat_ok = id_of(tok, "<|im_start|>", &id) && id_of(tok, "<|im_end|>", &id);
done:
    free(tb);
    free(tl);
    free(bytes);
    free(ml);
    free(mr);
    free(tmp);
    return rc;
}

int pl_tokenizer_load(const char *tokenizer_path, const char *config_path, pl_tokenizer **out, char *err,
                      size_t err_len) {
    if (!out) return pl_fail(err, err_len, PL_ERR_INVALID, "out: NULL");
    *out = NULL;
    if (!tokenizer_path || !*tokenizer_path)
        return pl_fail(err, err_len, PL_ERR_INVALID, "tokenizer_path: empty");
    char *data = NULL;
    size_t len = 0;
    int rc = read_file(tokenizer_path, "tokenizer", &data, &len, err, err_len);
    if (rc) return rc;
    pl_tokjson tj;
    rc = pl_tokjson_read(data, len, tokenizer_path, &tj, err, err_len);
    free(data);
    if (rc) return rc;
    cJSON *root = cJSON_ParseWithLength(tj.rest, tj.rest_len);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        pl_tokjson_free(&tj);
        return pl_fail(err, err_len, PL_ERR_INVALID, "tokenizer: '%s' is not a JSON object", tokenizer_path);
    }
    pl_tokenizer *tok = calloc(1, sizeof *tok);
    if (!tok) {
        cJSON_Delete(root);
        pl_tokjson_free(&tj);
        return pl_fail(err, err_len, PL_ERR_NOMEM, "tokenizer: out of memory");
    }
    rc = build(tok, root, &tj, tokenizer_path, err, err_len);
    cJSON_Delete(root);
    pl_tokjson_free(&tj);
    if (!rc) {
        if (config_path) {
            rc = load_config(tok, config_path, 1, err, err_len);
        } else {
            /* tokenizer_config.json beside tokenizer.json, when there is one. */
            const char *slash = strrchr(tokenizer_path, '/');
            size_t dl = slash ? (size_t)(slash - tokenizer_path + 1) : 0;
            char *cp = malloc(dl + sizeof "tokenizer_config.json");
            if (!cp) {
                rc = pl_fail(err, err_len, PL_ERR_NOMEM, "tokenizer: out of memory");
            } else {
                memcpy(cp, tokenizer_path, dl);
                memcpy(cp + dl, "tokenizer_config.json", sizeof "tokenizer_config.json");
                rc = load_config(tok, cp, 0, err, err_len);
                free(cp);
            }
        }
    }
    if (!rc && tok->eos_id < 0)
        rc = pl_fail(err, err_len, PL_ERR_INVALID, "tokenizer: %s: no EOS token (no eos_token in tokenizer_config.json, "
                                                   "no <|im_end|> or <|endoftext|>)", tokenizer_path);
    if (rc) {
        pl_tokenizer_free(tok);
        return rc;
    }
    *out = tok;
    return PL_OK;
}

void pl_tokenizer_free(pl_tokenizer *tok) {
    if (!tok) return;
    pl_bpe_free(&tok->bpe);
    if (tok->tok_str)
        for (int32_t i = 0; i < tok->vocab_size; i++) free(tok->tok_str[i]);
    free(tok->tok_str);
    for (int i = 0; i < tok->num_added; i++) free(tok->added[i].content);
    free(tok->added);
    free(tok->added_index);
    free(tok);
}

int32_t pl_tokenizer_vocab_size(const pl_tokenizer *tok) { return tok->vocab_size; }
int32_t pl_tokenizer_eos_id(const pl_tokenizer *tok) { return tok->eos_id; }
size_t pl_tokenizer_max_token_bytes(const pl_tokenizer *tok) { return tok->max_token_bytes; }

void pl_token_buf_free(pl_token_buf *buf) {
    if (!buf) return;
    free(buf->ids);
    buf->ids = NULL;
    buf->n = buf->cap = 0;
}

/* ---- encode ---- */

/* Code points with NFC_QC=Yes, combining class 0 and no role as the second character of a
 * composition: text made only of these is already NFC (the Unicode quick check), so
 * normalizing can be skipped. tests/test_tokenizer.c checks every range against utf8proc. */
static const uint32_t k_nfc_safe[][2] = {
    {0x0000, 0x02FF},   {0x0400, 0x0482},   {0x048A, 0x052F},   {0x05D0, 0x05EA},   {0x0621, 0x064A},
    {0x0660, 0x0669},   {0x1E00, 0x1EFF},   {0x2002, 0x20CF},   {0x2190, 0x2328},   {0x232B, 0x23FF},
    {0x2500, 0x27BF},   {0x3000, 0x3029},   {0x3030, 0x303F},   {0x3041, 0x3096},   {0x30A1, 0x30FF},
    {0x4E00, 0x9FFF},   {0xAC00, 0xD7A3},   {0xFE00, 0xFE0F},   {0xFF01, 0xFFEF},   {0xFFFD, 0xFFFD},
    {0x1F000, 0x1FAFF},
};

int pl_tok_nfc_safe_ranges(const uint32_t (**ranges)[2]) {
    *ranges = k_nfc_safe;
    return (int)(sizeof k_nfc_safe / sizeof k_nfc_safe[0]);
}

static inline int nfc_safe_cp(uint32_t cp) {
    int lo = 0, hi = (int)(sizeof k_nfc_safe / sizeof k_nfc_safe[0]) - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (cp < k_nfc_safe[mid][0]) hi = mid - 1;
        else if (cp > k_nfc_safe[mid][1]) lo = mid + 1;
        else return 1;
    }
    return 0;
}

/* Nonzero when s is NFC for certain without normalizing. */
static int surely_nfc(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate(s + i, (utf8proc_ssize_t)(n - i), &cp);
        if (k <= 0 || !nfc_safe_cp((uint32_t)cp)) return 0;
        i += (size_t)k;
    }
    return 1;
}

typedef struct encode_ctx {
    const pl_tokenizer *tok;
    pl_pretok_regex *re; /* NULL: fast path */
    pl_bpe_scratch sc;
    pl_token_buf *out;
} encode_ctx;

/* Text between added tokens: NFC, split, BPE. */
static int encode_plain(encode_ctx *c, const unsigned char *s, size_t n, char *err, size_t err_len) {
    if (n == 0) return PL_OK;
    utf8proc_uint8_t *norm = NULL;
    if (c->tok->nfc && !surely_nfc(s, n)) {
        utf8proc_ssize_t k = utf8proc_map(s, (utf8proc_ssize_t)n, &norm, UTF8PROC_STABLE | UTF8PROC_COMPOSE);
        if (k < 0)
            return pl_fail(err, err_len, PL_ERR_INTERNAL, "tokenizer: NFC failed: %s", utf8proc_errmsg(k));
        s = norm;
        n = (size_t)k;
    }
    size_t pos = 0;
    int rc = PL_OK;
    while (pos < n) {
        size_t end = c->re ? pl_pretok_regex_next(c->re, s, n, pos) : pl_pretok_next(s, n, pos);
        int bad = c->re ? pl_bpe_encode_word_reference(&c->tok->bpe, s + pos, end - pos, c->out)
                        : pl_bpe_encode_word(&c->tok->bpe, s + pos, end - pos, 1, &c->sc, c->out);
        if (bad) {
            rc = pl_fail(err, err_len, PL_ERR_NOMEM, "tokenizer: out of memory encoding");
            break;
        }
        pos = end;
    }
    free(norm);
    return rc;
}

/* The added token starting at s (longest first), or -1. */
static int match_added(const pl_tokenizer *tok, const unsigned char *s, size_t n) {
    for (int i = 0; i < tok->num_added; i++) {
        const pl_added_token *t = &tok->added[i];
        if (t->len <= n && (unsigned char)t->content[0] == s[0] && memcmp(t->content, s, t->len) == 0) return i;
    }
    return -1;
}

static int encode_impl(const pl_tokenizer *tok, pl_pretok_regex *re, const char *text, size_t len, unsigned flags,
                       pl_token_buf *out, char *err, size_t err_len) {
    if (!tok || !out || (!text && len))
        return pl_fail(err, err_len, PL_ERR_INVALID, "tokenizer encode: NULL %s", !tok ? "tok" : !out ? "out" : "text");
    size_t n0 = out->n;
    const unsigned char *s = (const unsigned char *)text;
    char *clean = NULL;
    if (!utf8_valid(s, len)) {
        clean = pl_utf8_sanitize(text, len, &len);
        if (!clean) return pl_fail(err, err_len, PL_ERR_NOMEM, "tokenizer: out of memory encoding");
        s = (const unsigned char *)clean;
    }
    encode_ctx c = {.tok = tok, .re = re, .out = out};
    int rc = PL_OK;
    size_t start = 0;
    if ((flags & PL_TOK_MATCH_SPECIAL) && tok->num_added) {
        for (size_t i = 0; i < len && !rc;) {
            if (!tok->added_first[s[i]]) {
                i++;
                continue;
            }
            int a = match_added(tok, s + i, len - i);
            if (a < 0) {
                i++;
                continue;
            }
            rc = encode_plain(&c, s + start, i - start, err, err_len);
            if (!rc && pl_token_buf_push(out, tok->added[a].id))
                rc = pl_fail(err, err_len, PL_ERR_NOMEM, "tokenizer: out of memory encoding");
            i += tok->added[a].len;
            start = i;
        }
    }
    if (!rc) rc = encode_plain(&c, s + start, len - start, err, err_len);
    pl_bpe_scratch_free(&c.sc);
    free(clean);
    if (rc) out->n = n0;
    return rc;
}

int pl_tokenizer_encode(const pl_tokenizer *tok, const char *text, size_t len, unsigned flags, pl_token_buf *out,
                        char *err, size_t err_len) {
    return encode_impl(tok, NULL, text, len, flags, out, err, err_len);
}

int pl_tokenizer_encode_reference(const pl_tokenizer *tok, pl_pretok_regex *re, const char *text, size_t len,
                                  unsigned flags, pl_token_buf *out, char *err, size_t err_len) {
    if (!re) return pl_fail(err, err_len, PL_ERR_INVALID, "re: NULL");
    return encode_impl(tok, re, text, len, flags, out, err, err_len);
}

/* ---- lookups ---- */

const char *pl_tokenizer_id_to_token(const pl_tokenizer *tok, int32_t id) {
    if (id < 0 || id >= tok->vocab_size) return NULL;
    return tok->tok_str[id];
}

const char *pl_tokenizer_token_bytes(const pl_tokenizer *tok, int32_t id, size_t *len) {
    if (id < 0 || id >= tok->vocab_size) return NULL;
    if (tok->added_index[id] >= 0) {
        const pl_added_token *t = &tok->added[tok->added_index[id]];
        *len = t->len;
        return t->content;
    }
    if (id >= tok->bpe.num_ids || tok->bpe.len[id] <= 0) return NULL;
    *len = (size_t)tok->bpe.len[id];
    return (const char *)tok->bpe.arena + tok->bpe.off[id];
}

int pl_tokenizer_token_to_id(const pl_tokenizer *tok, const char *token, int32_t *id, char *err, size_t err_len) {
    if (!tok || !token || !id) return pl_fail(err, err_len, PL_ERR_INVALID, "token_to_id: NULL argument");
    if (id_of(tok, token, id)) return PL_OK;
    unsigned short b2c[256];
    short c2b[324];
    byte_level_tables(b2c, c2b);
    size_t n = strlen(token);
    unsigned char *tmp = malloc(n + 1);
    if (!tmp) return pl_fail(err, err_len, PL_ERR_NOMEM, "token_to_id: out of memory");
    long k = byte_level_decode(token, c2b, tmp);
    int32_t found = k > 0 ? pl_bpe_lookup(&tok->bpe, tmp, (size_t)k) : -1;
    free(tmp);
    if (found < 0) return pl_fail(err, err_len, PL_ERR_INVALID, "token: unknown token '%s'", token);
    *id = found;
    return PL_OK;
}

int pl_tokenizer_is_special(const pl_tokenizer *tok, int32_t id) {
    if (id < 0 || id >= tok->vocab_size || tok->added_index[id] < 0) return 0;
    return tok->added[tok->added_index[id]].special;
}

/* ---- decode ---- */

/* Bytes of one id for decoding: *n = 0 for a skipped id; fails on an unknown id. */
static int id_bytes(const pl_tokenizer *tok, int32_t id, unsigned flags, size_t index, const char **b, size_t *n,
                    char *err, size_t err_len) {
    *n = 0;
    *b = "";
    const char *p = pl_tokenizer_token_bytes(tok, id, n);
    if (!p) {
        *n = 0;
        if (flags & PL_TOK_SKIP_UNKNOWN) return PL_OK;
        return pl_fail(err, err_len, PL_ERR_INVALID, "ids[%zu]: %d is not a token id (the vocab has ids 0..%d)", index,
                       (int)id, (int)tok->vocab_size - 1);
    }
    if ((flags & PL_TOK_SKIP_SPECIAL) && pl_tokenizer_is_special(tok, id)) {
        *n = 0;
        return PL_OK;
    }
    *b = p;
    return PL_OK;
}

int pl_tokenizer_decode(const pl_tokenizer *tok, const int32_t *ids, size_t n, unsigned flags, char **text,
                        size_t *len, char *err, size_t err_len) {
    if (!tok || !text || (!ids && n)) return pl_fail(err, err_len, PL_ERR_INVALID, "tokenizer decode: NULL argument");
    *text = NULL;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        const char *b;
        size_t k;
        int rc = id_bytes(tok, ids[i], flags, i, &b, &k, err, err_len);
        if (rc) return rc;
        total += k;
    }
    unsigned char *raw = malloc(total + 1);
    char *dst = malloc(3 * total + 1);
    if (!raw || !dst) {
        free(raw);
        free(dst);
        return pl_fail(err, err_len, PL_ERR_NOMEM, "tokenizer decode: out of memory");
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        const char *b;
        size_t k;
        id_bytes(tok, ids[i], flags, i, &b, &k, err, err_len);
        memcpy(raw + o, b, k);
        o += k;
    }
    size_t dn = 0;
    utf8_lossy(dst, &dn, raw, o, 1);
    free(raw);
    dst[dn] = '\0';
    *text = dst;
    if (len) *len = dn;
    return PL_OK;
}

void pl_detok_init(pl_detok *d, const pl_tokenizer *tok, unsigned flags) {
    memset(d, 0, sizeof *d);
    d->tok = tok;
    d->flags = flags;
}

static int detok_reserve(pl_detok *d, size_t need) {
    if (need <= d->out_cap) return 0;
    size_t nc = need < 256 ? 256 : need * 2;
    char *p = realloc(d->out, nc);
    if (!p) return 1;
    d->out = p;
    d->out_cap = nc;
    return 0;
}

int pl_detok_push(pl_detok *d, int32_t id, const char **text, size_t *len, char *err, size_t err_len) {
    const char *b;
    size_t k;
    int rc = id_bytes(d->tok, id, d->flags, 0, &b, &k, err, err_len);
    if (rc) return rc;
    size_t n = (size_t)d->npend + k;
    if (detok_reserve(d, 4 * n + 4))
        return pl_fail(err, err_len, PL_ERR_NOMEM, "detok: out of memory");
    /* pending bytes + this token, staged at the back half of the buffer */
    unsigned char *src = (unsigned char *)d->out + 3 * n + 1;
    memcpy(src, d->pend, (size_t)d->npend);
    memcpy(src + d->npend, b, k);
    size_t dn = 0;
    size_t used = utf8_lossy(d->out, &dn, src, n, 0);
    d->npend = (int)(n - used);
    memmove(d->pend, src + used, (size_t)d->npend);
    d->out[dn] = '\0';
    *text = d->out;
    if (len) *len = dn;
    return PL_OK;
}

int pl_detok_flush(pl_detok *d, const char **text, size_t *len, char *err, size_t err_len) {
    if (detok_reserve(d, 16)) return pl_fail(err, err_len, PL_ERR_NOMEM, "detok: out of memory");
    size_t dn = 0;
    utf8_lossy(d->out, &dn, d->pend, (size_t)d->npend, 1);
    d->npend = 0;
    d->out[dn] = '\0';
    *text = d->out;
    if (len) *len = dn;
    return PL_OK;
}

void pl_detok_free(pl_detok *d) {
    free(d->out);
    d->out = NULL;
    d->out_cap = 0;
}
