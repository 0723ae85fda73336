# Tests of the ASTRA-sim text workload converter (included from tests/converter/CMakeLists.txt).
et_add_test(astra_text_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/astra_text_test.cc
  LIBS et_astra_text)
