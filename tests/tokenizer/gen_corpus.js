// Deterministic tokenizer test corpus: English prose, code, CJK, Arabic, Hindi and other
// scripts, emoji with ZWJ sequences, long digit runs, mixed whitespace, newlines and tabs,
// contractions in several cases, text holding special tokens, decomposed characters NFC
// recomposes, and random mixes of all of these.
//
// Left out on purpose (documented in docs/PERF.md, "Tokenizer"): U+0085 and U+FEFF, where
// the npm reference's JavaScript \s differs from Unicode White_Space (Hugging Face's
// Oniguruma and pagellm agree on White_Space); U+017F after an apostrophe, which
// Oniguruma/PCRE2 case-fold to 's and JavaScript does not; NUL and lone surrogates (not
// representable in the CLI's C strings / not valid UTF-8); and characters assigned after
// Unicode 15.0 (utf8proc 2.8's tables).
//
// Usage: node gen_corpus.js [count]  -> JSON lines on stdout. As a module: corpus(count).
"use strict";

function rng(seed) {
  // mulberry32: small, deterministic across Node versions
  let a = seed >>> 0;
  return function () {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  "the of and to in is was for that with as on by at from his her they this which be or are an " +
  "had not but have were one all their there been has when who will more no if out so said what " +
  "up its about into than them can only other new some could time these two may then do first any " +
  "my now such like our over man me even most made after also did many before must through back " +
  "years where much your way well down should because each just those people how too little state " +
  "good very make world still own see men work long get here between both life being under never " +
  "day same another know while last might us great old year off come since against go came right " +
  "used take three tokenizer serving engine paged attention cache throughput latency kernel " +
  "Qwen transformer embedding vocabulary merges regex Unicode normalization byte-level " +
  "internationalization antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis " +
  "naïve café résumé coöperate façade Zürich São Paulo Ångström"
).split(" ");
const PUNCT = [".", ",", ";", ":", "!", "?", "...", " -", " —", "'", "\"", ")", "(", "[", "]", "&", "%", "$", "#", "@", "*"];
const CONTRACTIONS = [
  "'s", "'S", "'t", "'T", "'re", "'RE", "'Re", "'rE", "'ve", "'VE", "'Ve", "'m", "'M", "'ll", "'LL", "'Ll",
  "'lL", "'d", "'D", "’s", "’ll", "''", "'", "'x", "'sx", "'llama", "'dog", "'123", "' s",
];
const CODE = [
  "int main(int argc, char **argv) {\n    printf(\"hello %d\\n\", argc);\n    return 0;\n}\n",
  "def f(x):\n\tif x > 0:\n\t\treturn x ** 2\n\treturn -x  # negative\n",
  "for (let i = 0; i < n; ++i) { sum += a[i] * b[i]; }\r\n",
  "    SELECT id, name FROM users WHERE age >= 18 ORDER BY name DESC;",
  "#include <stdio.h>\n#define MAX(a,b) ((a)>(b)?(a):(b))\n\n\n",
  "x=[1,2,3];y={'a':1,\"b\":[True,False,None]}\n",
  "if (p != NULL && *p == '\\0') { p++; }   \t\n",
  "fn main() -> Result<(), Box<dyn Error>> {\n    let v: Vec<u8> = vec![0xFF; 32];\n    Ok(())\n}",
  "<div class=\"main\"><p>Hello &amp; welcome</p></div>\n<!-- comment -->",
  "$ ls -la /usr/local/bin | grep -E '^-rwx' > out.txt 2>&1 &&   echo done",
  "    \n    \n\t\t\n",
  "{\"key\": \"value\", \"n\": 12345678901234567890, \"f\": -1.5e-10}",
  "a+=b;c-=d;e*=f;g/=h;i%=j;k<<=1;l>>=2;m&&n||!o",
];
const SCRIPTS = {
  zh: "我们今天去公园散步，天气非常好。机器学习是人工智能的一个分支。这个分词器需要正确处理中文字符！",
  ja: "日本語のテキストをトークン化します。ひらがな、カタカナ、漢字が混ざっています。ｶﾀｶﾅ",
  ko: "안녕하세요 세계! 한국어 문장을 토큰화합니다. 서울은 대한민국의 수도입니다.",
  ar: "مرحبا بالعالم. هذه جملة باللغة العربية، وهي تُكتب من اليمين إلى اليسار. ١٢٣٤٥",
  hi: "नमस्ते दुनिया। यह हिन्दी का वाक्य है, जिसमें मात्राएँ और संयुक्ताक्षर हैं। १२३४५",
  ru: "Привет, мир! Это предложение на русском языке. Ёлка и йогурт.",
  el: "Γειά σου Κόσμε! Αυτή είναι μια ελληνική πρόταση.",
  he: "שלום עולם. זה משפט בעברית.",
  th: "สวัสดีชาวโลก นี่คือประโยคภาษาไทย",
  vi: "Xin chào thế giới. Tiếng Việt có nhiều dấu thanh: ả, ẫ, ợ, ự.",
  tr: "İstanbul'da ılık bir gün; Şişli'de çay içtik.",
  de: "Größenwahn und Straße: Äpfel, Öl, Übermut — ß ẞ.",
  am: "ሰላም ለዓለም",
  ta: "வணக்கம் உலகம்",
};
const EMOJI = [
  "😀", "😂", "🤖", "🚀", "❤️", "👍🏽", "👩‍💻", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🧑🏿‍🚀", "🇯🇵", "🇺🇸🇫🇷", "#️⃣", "1️⃣",
  "☕", "✅", "🫠", "🐈‍⬛", "👁️‍🗨️", "🧔🏻‍♂️", "⭐️", "🔥🔥🔥",
];
const SPACES = [" ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\r\n", "\r", " \n", "\n ", " \t ", "\u00a0", "\u3000", "\u2003", "\u2009", "\u202f", "\u1680", "\u2028", "\v", "\f"];
const SPECIAL = [
  "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>", "<tool_call>", "</tool_call>",
  "<|vision_start|>", "<|fim_prefix|>", "<|im_start", "im_end|>", "<|im_sta rt|>", "<<|im_end|>>", "<|IM_END|>",
  "< think>", "<|box_start|><|box_end|>",
];
// Decomposed or compatibility forms that NFC changes.
const NFC_CASES = [
  "e\u0301", "a\u0308", "n\u0303o", "\u212b", "\u2126", "A\u030a", "\u1100\u1161\u11a8", "\u1112\u1161\u11ab",
  "o\u0302\u0301", "q\u0307\u0323", "\u0041\u0301\u0300", "\u30ab\u3099", "\u0915\u093c",
];

function pick(r, a) {
  return a[Math.floor(r() * a.length)];
}

function digits(r, n) {
  let s = "";
  for (let i = 0; i < n; i++) s += String.fromCharCode(48 + Math.floor(r() * 10));
  return s;
}

function sentence(r) {
  const n = 3 + Math.floor(r() * 14);
  let s = "";
  for (let i = 0; i < n; i++) {
    let w = pick(r, WORDS);
    if (i === 0 || r() < 0.08) w = w[0].toUpperCase() + w.slice(1);
    if (r() < 0.03) w = w.toUpperCase();
    if (r() < 0.06) w += pick(r, CONTRACTIONS.slice(0, 20));
    if (r() < 0.05) w = digits(r, 1 + Math.floor(r() * 5));
    s += (i ? " " : "") + w;
    if (r() < 0.1) s += pick(r, PUNCT);
  }
  return s + pick(r, [".", ".", ".", "!", "?", "...", ""]);
}

function prose(r) {
  const n = 1 + Math.floor(r() * 6);
  let s = "";
  for (let i = 0; i < n; i++) s += (i ? pick(r, [" ", " ", "  ", "\n", "\n\n"]) : "") + sentence(r);
  return s;
}

function slice(r, text) {
  const chars = Array.from(text);
  const a = Math.floor(r() * chars.length), len = 1 + Math.floor(r() * 40);
  return chars.slice(a, a + len).join("");
}

function mix(r) {
  const parts = [];
  const n = 2 + Math.floor(r() * 10);
  for (let i = 0; i < n; i++) {
    switch (Math.floor(r() * 9)) {
      case 0: parts.push(pick(r, WORDS)); break;
      case 1: parts.push(pick(r, SPACES)); break;
      case 2: parts.push(pick(r, EMOJI)); break;
      case 3: parts.push(slice(r, pick(r, Object.values(SCRIPTS)))); break;
      case 4: parts.push(digits(r, 1 + Math.floor(r() * 12))); break;
      case 5: parts.push(pick(r, PUNCT) + pick(r, CONTRACTIONS)); break;
      case 6: parts.push(pick(r, NFC_CASES)); break;
      case 7: parts.push(pick(r, SPECIAL)); break;
      default: parts.push(slice(r, pick(r, CODE)));
    }
  }
  return parts.join(r() < 0.5 ? "" : " ");
}

function corpus(count) {
  const r = rng(20260529);
  const out = [];
  const add = (s) => out.push(s);
  // Fixed cases first: edge shapes the regex alternatives care about.
  [
    "", " ", "  ", "\n", "\n\n\n", "\t", " \t\n \t", "a", "A", "'", "''", "'s", "x's", "X'S", "don't", "WE'LL",
    "they're", "THEY'RE", "I'm", "i'M", "you've", "he'd", "It's", "it'S", "'Ll", "'lL", "rock'n'roll",
    "Hello, world!", "hello   world", "hello \n world", "hello\n\nworld", "trailing spaces   ", "   leading",
    "a  b", "a\t\tb", "a \t b", "line1\r\nline2\r\n", "x\u00a0y", "x\u3000y", "x\u2003\u2003y",
    "12345678901234567890123456789012345678901234567890", "3.14159", "1,000,000", "v1.2.3-rc4", "0x7fffffff",
    "!!!", "?!?!", "...\n", " ...\n\n", "(a)", "[x]", "--flag=value", "user@example.com", "https://example.com/a?b=c&d=e",
    "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", "<think>\n\n</think>\n\n", "<|endoftext|><|endoftext|>",
    "a<|im_end|>b", " <|im_end|> ", "<|im_end|", "<|im_end|>>", "\ufffd", "x\ufffdy",
    "😀", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇯🇵🇺🇸", "e\u0301", "\u212b", "\u1100\u1161\u11a8",
    "\u0000", "a\u0000b", " \u0000\u0000 x", "\ud800", "x\udc00y", "\ud83d", "ab\udfff\ud800cd",
  ].forEach(add);
  for (const s of Object.values(SCRIPTS)) add(s);
  for (const s of CODE) add(s);
  for (const c of CONTRACTIONS) {
    add(c);
    add("word" + c);
    add("WORD" + c + " next");
    add(" " + c + "\n");
  }
  for (const e of EMOJI) {
    add(e);
    add("I " + e + " it" + e + e);
  }
  for (const s of SPECIAL) {
    add(s);
    add("before" + s + "after");
    add(" " + s + " \n" + s + s);
  }
  for (let n of [1, 2, 3, 4, 7, 15, 31, 64, 100, 257]) add(digits(r, n));
  for (let n of [1, 2, 3, 5, 8, 17, 40, 100]) {
    add(" ".repeat(n) + "x");
    add("x" + " ".repeat(n));
    add("\n".repeat(n) + " ".repeat(n) + "y");
    add("\t".repeat(n) + "z");
    add("!".repeat(n));
  }
  // Long strings exercise the heap BPE path and long pre-tokens.
  add(" ".repeat(3000));
  add("=".repeat(2000) + "\n");
  add("a".repeat(1000));
  add("ab".repeat(700));
  add(digits(r, 2000));
  add(Array.from({ length: 200 }, () => sentence(r)).join(" "));
  add(Array.from({ length: 40 }, () => pick(r, Object.values(SCRIPTS))).join("\n"));
  add(Array.from({ length: 300 }, () => pick(r, EMOJI)).join(""));
  // Generated bulk.
  while (out.length < count) {
    const k = out.length % 10;
    if (k < 3) add(prose(r));
    else if (k === 3) add(pick(r, CODE).replace(/ {4}/g, pick(r, ["    ", "\t", "  "])) + slice(r, pick(r, CODE)));
    else if (k === 4) add(slice(r, pick(r, Object.values(SCRIPTS))) + pick(r, SPACES) + slice(r, pick(r, Object.values(SCRIPTS))));
    else if (k === 5) add(pick(r, EMOJI) + pick(r, SPACES) + sentence(r) + pick(r, EMOJI));
    else if (k === 6) add(digits(r, 1 + Math.floor(r() * 60)) + pick(r, SPACES) + pick(r, PUNCT) + digits(r, 3));
    else if (k === 7) add(pick(r, SPACES) + sentence(r) + pick(r, SPACES) + pick(r, SPACES) + sentence(r));
    else if (k === 8) add("<|im_start|>" + pick(r, ["user", "system", "assistant"]) + "\n" + prose(r) + "<|im_end|>\n");
    else add(mix(r));
  }
  return out;
}

module.exports = { corpus, rng };

if (require.main === module) {
  const count = Number(process.argv[2] || 2500);
  for (const s of corpus(count)) process.stdout.write(JSON.stringify(s) + "\n");
}
