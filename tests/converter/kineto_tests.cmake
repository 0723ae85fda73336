# Tests of the Kineto linker (included from tests/converter/CMakeLists.txt).
et_add_test(kineto_trace_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/kineto_trace_test.cc
  LIBS et_kineto_link nlohmann_json::nlohmann_json)
if(EXISTS ${CMAKE_CURRENT_LIST_DIR}/kineto_link_test.cc)
  et_add_test(kineto_link_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/kineto_link_test.cc
    LIBS et_kineto_link nlohmann_json::nlohmann_json)
endif()
et_add_test(kineto_alignment_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/kineto_alignment_test.cc
  LIBS et_kineto_link nlohmann_json::nlohmann_json)
et_add_test(sequence_aligner_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/sequence_aligner_test.cc
  LIBS et_kineto_link)
et_add_test(host_op_matcher_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/host_op_matcher_test.cc
  LIBS et_kineto_link)
et_add_test(gpu_op_linker_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/gpu_op_linker_test.cc
  LIBS et_kineto_link)
et_add_test(sync_edges_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/sync_edges_test.cc
  LIBS et_kineto_link)
