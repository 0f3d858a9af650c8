#!/bin/sh
# CLI checks of the model commands: --help exits 0, bad flags exit 2, make-model writes a
# checkpoint that logits loads, and the output has the documented size.
set -u
bin=${PAGELLM_BIN:?PAGELLM_BIN unset}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() { # expect CODE command...
    want=$1; shift
    "$@" >"$tmp/out" 2>&1; got=$?
    if [ "$got" != "$want" ]; then echo "FAIL: $* -> $got, want $want"; cat "$tmp/out"; fail=1; fi
}
for c in make-model logits bench-model; do
    expect 0 "$bin" $c --help
    expect 2 "$bin" $c --no-such-flag
done
expect 2 "$bin" make-model --shape nope --out "$tmp/x"
expect 2 "$bin" make-model --shape tiny
expect 2 "$bin" logits --model "$tmp/m" --ids 1,x --out "$tmp/l"
expect 2 "$bin" bench-model --batches 0
expect 0 "$bin" make-model --shape tiny-untied --seed 9 --out "$tmp/m" --threads 2
expect 0 "$bin" logits --model "$tmp/m" --ids 1,2,3,4,5 --all-positions --chunk 2 --threads 2 --out "$tmp/l"
size=$(wc -c <"$tmp/l")
[ "$size" = $((5 * 1024 * 4)) ] || { echo "FAIL: logits size $size"; fail=1; }
expect 0 "$bin" logits --model "$tmp/m" --ids 7 --threads 2 --out "$tmp/l1"
[ "$(wc -c <"$tmp/l1")" = 4096 ] || { echo "FAIL: last-row logits size"; fail=1; }
expect 1 "$bin" logits --model "$tmp/m" --ids 5000 --threads 2 --out "$tmp/l2"
grep -q "tokens\[0\]: id 5000" "$tmp/out" || { echo "FAIL: token range message"; cat "$tmp/out"; fail=1; }
expect 1 "$bin" logits --model "$tmp/nothere" --ids 1 --out "$tmp/l3"
grep -q "config.json: cannot read" "$tmp/out" || { echo "FAIL: missing dir message"; cat "$tmp/out"; fail=1; }
[ $fail = 0 ] && echo "model CLI checks passed"
exit $fail
