# GPU tests of the CUDA backend and the model on it exit 77 without a CUDA device (CI):
# CTest reports them as skipped.
foreach(t test_cuda_backend test_cuda_model)
  if(TARGET ${t})
    set_tests_properties(${t} PROPERTIES SKIP_RETURN_CODE 77)
  endif()
endforeach()
