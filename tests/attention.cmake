# `pagellm bench-attention` end to end on a tiny shape (page 16, so tiles cross pages): every
# variant is checked against REFERENCE inside the command, which fails on a mismatch; and a
# bad flag must exit nonzero (2).
add_test(NAME cli_bench_attention_smoke
         COMMAND pagellm bench-attention --contexts 40 --batches 1,2 --chunk 16 --chunk-contexts 40
                 --prefill-len 24 --page-size 16 --warmup 0 --iterations 1 --ceiling-seconds 0.1
                 --json-output ${CMAKE_BINARY_DIR}/bench_attention_smoke.json
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(cli_bench_attention_smoke PROPERTIES ENVIRONMENT "OMP_NUM_THREADS=2" TIMEOUT 300)
add_test(NAME cli_bench_attention_bad_flag COMMAND pagellm bench-attention --bogus)
set_tests_properties(cli_bench_attention_bad_flag PROPERTIES WILL_FAIL TRUE)
