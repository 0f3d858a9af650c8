# Model CLI checks (make-model, logits, bench-model flags), run against the built CLI.
add_test(NAME model_cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/model_cli.sh WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(model_cli PROPERTIES ENVIRONMENT "OMP_NUM_THREADS=2;PAGELLM_ROOT=${CMAKE_SOURCE_DIR};PAGELLM_BIN=$<TARGET_FILE:pagellm>" TIMEOUT 300)
