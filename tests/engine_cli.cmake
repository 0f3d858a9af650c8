# bench-serving end to end (help, flag errors, a tiny comparison, trace round trip, sweep).
add_test(NAME engine_cli COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/engine_cli.sh WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(engine_cli PROPERTIES ENVIRONMENT "OMP_NUM_THREADS=2;PAGELLM_ROOT=${CMAKE_SOURCE_DIR};PAGELLM_BIN=$<TARGET_FILE:pagellm>" TIMEOUT 600)
