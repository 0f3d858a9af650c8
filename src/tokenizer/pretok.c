#include "tokenizer/pretok.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "pagellm/status.h"

const char pl_qwen2_split_pattern[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/* Character classes of the split. NL is \r or \n; SP is any other White_Space. */
enum { C_O = 0, C_L = 1, C_N = 2, C_SP = 3, C_NL = 4 };

int pl_pretok_is_space(unsigned cp) {
    if (cp < 0x80) return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20;
    return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
           cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

static const unsigned char k_ascii_class[128] = {
    C_O,  C_O,  C_O,  C_O,  C_O,  C_O,  C_O,  C_O,  C_O,  C_SP, C_NL, C_SP, C_SP, C_NL, C_O,  C_O,
    C_O,  C_O,  C_O,  C_O,  C_O,  C_O,  C_O,  C_O,  C_O,  C_O,  C_O,  C_O,  C_O,  C_O,  C_O,  C_O,
    C_SP, C_O,  C_O,  C_O,  C_O,  C_O,  C_O,  C_O,  C_O,  C_O,  C_O,  C_O,  C_O,  C_O,  C_O,  C_O,
    C_N,  C_N,  C_N,  C_N,  C_N,  C_N,  C_N,  C_N,  C_N,  C_N,  C_O,  C_O,  C_O,  C_O,  C_O,  C_O,
    C_O,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,
    C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_O,  C_O,  C_O,  C_O,  C_O,
    C_O,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,
    C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_L,  C_O,  C_O,  C_O,  C_O,  C_O,
};

/* Decodes the (valid) character at s[i]; sets *next past it. */
static inline unsigned decode_at(const unsigned char *s, size_t i, size_t *next) {
    unsigned c = s[i];
    if (c < 0x80) {
        *next = i + 1;
        return c;
    }
    if (c < 0xE0) {
        *next = i + 2;
        return ((c & 0x1Fu) << 6) | (s[i + 1] & 0x3Fu);
    }
    if (c < 0xF0) {
        *next = i + 3;
        return ((c & 0x0Fu) << 12) | ((s[i + 1] & 0x3Fu) << 6) | (s[i + 2] & 0x3Fu);
    }
    *next = i + 4;
    return ((c & 0x07u) << 18) | ((s[i + 1] & 0x3Fu) << 12) | ((s[i + 2] & 0x3Fu) << 6) | (s[i + 3] & 0x3Fu);
}

static inline int class_of(unsigned cp) {
    if (cp < 0x80) return k_ascii_class[cp];
    if (pl_pretok_is_space(cp)) return C_SP;
    switch (utf8proc_category((utf8proc_int32_t)cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO: return C_L;
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO: return C_N;
    default: return C_O;
    }
}

/* Class of the character at s[i] (i < len); *next is set past it. */
static inline int class_at(const unsigned char *s, size_t i, size_t *next) {
    if (s[i] < 0x80) {
        *next = i + 1;
        return k_ascii_class[s[i]];
    }
    return class_of(decode_at(s, i, next));
}

/* Skips a run of letters starting at i; returns its end. */
static inline size_t skip_letters(const unsigned char *s, size_t len, size_t i) {
    while (i < len) {
        size_t nx;
        if (class_at(s, i, &nx) != C_L) break;
        i = nx;
    }
    return i;
}

static inline int lower_is(unsigned char c, char want) { return (c | 0x20) == want; }

/* (?i:'s|'t|'re|'ve|'m|'ll|'d) at pos (s[pos] == '\''): match length or 0. Case-insensitive
 * with Unicode folding, so U+017F (long s) also counts as s. */
static size_t contraction(const unsigned char *s, size_t len, size_t pos) {
    size_t r = len - pos - 1;
    const unsigned char *p = s + pos + 1;
    if (r == 0) return 0;
    if (lower_is(p[0], 's') || lower_is(p[0], 't') || lower_is(p[0], 'm') || lower_is(p[0], 'd')) return 2;
    if (r >= 2 && p[0] == 0xC5 && p[1] == 0xBF) return 3;
    if (r >= 2 && ((lower_is(p[0], 'r') && lower_is(p[1], 'e')) || (lower_is(p[0], 'v') && lower_is(p[1], 'e')) ||
                   (lower_is(p[0], 'l') && lower_is(p[1], 'l'))))
        return 3;
    return 0;
}

size_t pl_pretok_next(const unsigned char *s, size_t len, size_t pos) {
    size_t j;
    if (s[pos] == '\'') {
        size_t m = contraction(s, len, pos);
        if (m) return pos + m;
    }
    int c = class_at(s, pos, &j);
    if (c == C_L) return skip_letters(s, len, j);
    /* [^\r\n\p{L}\p{N}]?\p{L}+ with the optional character present. */
    int cn = C_O;
    size_t jn = j;
    if (j < len) cn = class_at(s, j, &jn);
    if ((c == C_O || c == C_SP) && j < len && cn == C_L) return skip_letters(s, len, jn);
    if (c == C_N) return j;
    /*  ?[^\s\p{L}\p{N}]+[\r\n]* */
    if (c == C_O || (s[pos] == ' ' && j < len && cn == C_O)) {
        size_t i = c == C_O ? j : jn;
        while (i < len) {
            size_t nx;
            if (class_at(s, i, &nx) != C_O) break;
            i = nx;
        }
        while (i < len && (s[i] == '\r' || s[i] == '\n')) i++;
        return i;
    }
    /* c is white space: \s*[\r\n]+ ends after the run's last \r or \n; otherwise \s+(?!\S)
     * leaves the run's last character for the next token when a non-space follows. */
    size_t last_nl = 0, last_start = pos, i = pos;
    int have_nl = 0;
    while (i < len) {
        size_t nx;
        int k = class_at(s, i, &nx);
        if (k != C_SP && k != C_NL) break;
        if (k == C_NL) {
            have_nl = 1;
            last_nl = nx;
        }
        last_start = i;
        i = nx;
    }
    if (have_nl) return last_nl;
    if (i == len) return i;
    if (last_start > pos) return last_start;
    return i;
}

struct pl_pretok_regex {
    pcre2_code *code;
    pcre2_match_data *md;
};

/* The pattern with \s and \S spelled as explicit White_Space classes: PCRE2 10.42 also counts
 * U+180E as \s, which Unicode (and Oniguruma) no longer do. */
static char *explicit_space_pattern(void) {
    static const char ws[] = "\\x{09}-\\x{0D}\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}"
                             "\\x{202F}\\x{205F}\\x{3000}";
    size_t n = strlen(pl_qwen2_split_pattern);
    char *out = malloc(n * 16 + 1);
    if (!out) return NULL;
    size_t o = 0;
    int in_class = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = pl_qwen2_split_pattern[i];
        if (ch == '\\' && (pl_qwen2_split_pattern[i + 1] == 's' || pl_qwen2_split_pattern[i + 1] == 'S')) {
            int neg = pl_qwen2_split_pattern[i + 1] == 'S';
            /* Inside [^...] only \s occurs: splice the ranges in. Outside: a class of its own. */
            if (in_class && !neg) {
                memcpy(out + o, ws, sizeof ws - 1);
                o += sizeof ws - 1;
            } else {
                out[o++] = '[';
                if (neg) out[o++] = '^';
                memcpy(out + o, ws, sizeof ws - 1);
                o += sizeof ws - 1;
                out[o++] = ']';
            }
            i++;
            continue;
        }
        if (ch == '\\') {
            out[o++] = ch;
            out[o++] = pl_qwen2_split_pattern[++i];
            continue;
        }
        if (ch == '[') in_class = 1;
        if (ch == ']') in_class = 0;
        out[o++] = ch;
    }
    out[o] = '\0';
    return out;
}

int pl_pretok_regex_create(pl_pretok_regex **out, char *err, size_t err_len) {
    *out = NULL;
    pl_pretok_regex *re = calloc(1, sizeof *re);
    char *pat = explicit_space_pattern();
    if (!re || !pat) {
        free(re);
        free(pat);
        return pl_fail(err, err_len, PL_ERR_NOMEM, "pretok regex: out of memory");
    }
    int ec;
    PCRE2_SIZE off;
    re->code = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &ec,
                             &off, NULL);
    free(pat);
    if (!re->code) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof msg);
        free(re);
        return pl_fail(err, err_len, PL_ERR_INTERNAL, "pretok regex: PCRE2 compile failed at %zu: %s", (size_t)off,
                       (const char *)msg);
    }
    pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE); /* optional: falls back to the interpreter */
    re->md = pcre2_match_data_create_from_pattern(re->code, NULL);
    if (!re->md) {
        pcre2_code_free(re->code);
        free(re);
        return pl_fail(err, err_len, PL_ERR_NOMEM, "pretok regex: out of memory");
    }
    *out = re;
    return PL_OK;
}

size_t pl_pretok_regex_next(pl_pretok_regex *re, const unsigned char *s, size_t len, size_t pos) {
    int rc = pcre2_match(re->code, (PCRE2_SPTR)s, len, pos, PCRE2_NO_UTF_CHECK, re->md, NULL);
    if (rc < 0) return len; /* cannot happen: the alternatives cover every character */
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(re->md);
    /* Every character matches some alternative, so matches are contiguous. */
    if (ov[0] != pos || ov[1] <= pos) return len;
    return ov[1];
}

void pl_pretok_regex_free(pl_pretok_regex *re) {
    if (!re) return;
    pcre2_match_data_free(re->md);
    pcre2_code_free(re->code);
    free(re);
}
