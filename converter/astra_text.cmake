# ASTRA-sim 1.0 text workloads -> Chakra .et (included from converter/CMakeLists.txt).
add_library(et_astra_text
  ${CMAKE_CURRENT_LIST_DIR}/astra_text_converter.cc
  ${CMAKE_CURRENT_LIST_DIR}/astra_text_parser.cc
)
target_include_directories(et_astra_text PUBLIC ${CMAKE_SOURCE_DIR})
target_compile_options(et_astra_text PRIVATE ${ET_WARNINGS})
target_link_libraries(et_astra_text PUBLIC et_proto absl::status absl::statusor
  absl::strings absl::str_format)
