#!/usr/bin/env bash
# bench-serving end to end on a tiny model: help, flag errors (exit 2), a two-mode run with
# JSON, table and SVG, the saved trace round trip, and a capped-budget sweep.
set -u
bin=${PAGELLM_BIN:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! eval "$1"; then echo "FAILED: $1"; fail=1; fi; }

"$bin" bench-serving --help >"$tmp/help" 2>&1; check '[ $? -eq 0 ]'
for f in --num-seqs --batch-size --prefill-step --kv-mode --page-size --seed --warmup --repeats --trace \
         --save-trace --kv-budget-mib --json-output --plot --shape --model --device; do
    check "grep -q -- '$f' '$tmp/help'"
done
"$bin" bench-serving --bogus >/dev/null 2>"$tmp/err"; check '[ $? -eq 2 ]'
check "grep -q 'unknown flag' '$tmp/err'"
"$bin" bench-serving --kv-mode dense,nope >/dev/null 2>"$tmp/err"; check '[ $? -eq 2 ]'
"$bin" bench-serving --batch-size 0 >/dev/null 2>"$tmp/err"; check '[ $? -eq 2 ]'
"$bin" bench-serving --min-input-len 9 --max-input-len 3 >/dev/null 2>"$tmp/err"; check '[ $? -eq 2 ]'

# the seed trace's sha256 without running anything heavy: save it from the default flags
small="--shape tiny-untied --num-seqs 3 --min-input-len 16 --max-input-len 48 --min-output-len 2 --max-output-len 5 \
--page-size 16 --prefill-step 16 --batch-size 2 --warmup 0"
"$bin" bench-serving $small --kv-mode dense,paged --repeats 2 --save-trace "$tmp/trace.json" \
    --json-output "$tmp/out.json" --plot "$tmp/out.svg" >"$tmp/table" 2>"$tmp/log"
check '[ $? -eq 0 ]'
check "grep -q 'paged/dense' '$tmp/table'"
check "grep -q 'output tok/s' '$tmp/table'"
check "grep -q '\"medians\"' '$tmp/out.json'"
check "grep -q '\"request_trace_sha256\"' '$tmp/out.json'"
check "grep -q '\"cpu_model\"' '$tmp/out.json'"
check "grep -q '</svg>' '$tmp/out.svg'"
sha=$(grep -o '"request_trace_sha256":"[0-9a-f]*"' "$tmp/trace.json" | cut -d'"' -f4)
"$bin" bench-serving $small --kv-mode paged --repeats 1 --trace "$tmp/trace.json" --json-output "$tmp/out2.json" \
    >/dev/null 2>"$tmp/log2"
check '[ $? -eq 0 ]'
check "grep -q \"$sha\" '$tmp/out2.json'"
"$bin" bench-serving $small --kv-mode dense,paged --kv-budget-mib 0.5,4 --json-output "$tmp/sweep.json" \
    --plot "$tmp/sweep.svg" >"$tmp/sweep" 2>"$tmp/log3"
check '[ $? -eq 0 ]'
check "grep -q 'peak concurrent' '$tmp/sweep'"
check "grep -q '\"kv_budget_sweep\"' '$tmp/sweep.json'"
if [ $fail -ne 0 ]; then
    cat "$tmp/log" "$tmp/log2" "$tmp/log3" 2>/dev/null | tail -30
    exit 1
fi
echo "engine_cli: ok"
