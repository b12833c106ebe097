# SPDX-License-Identifier: Apache-2.0
# The library calls nothing that ends the process or prints
# (cmake/check_library_symbols.cmake), checked on every test run; its
# self-test feeds it an object that calls exit, so it cannot pass by reading
# nothing. Included from CMakeLists.txt when BUILD_TESTING.
if(CMAKE_NM)
  add_test(NAME library_symbols
           COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DLIBRARY=$<TARGET_FILE:gpuprim>
                   -P ${PROJECT_SOURCE_DIR}/cmake/check_library_symbols.cmake)
  add_library(gpuprim_symbol_check_bad STATIC ${PROJECT_SOURCE_DIR}/test/symbol_check/ends_the_process.c)
  add_test(NAME library_symbols_self_test
           COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DLIBRARY=$<TARGET_FILE:gpuprim_symbol_check_bad>
                   -P ${PROJECT_SOURCE_DIR}/cmake/check_library_symbols.cmake)
  set_tests_properties(library_symbols_self_test PROPERTIES PASS_REGULAR_EXPRESSION "library symbols: refused: exit\n")
  set_tests_properties(library_symbols library_symbols_self_test PROPERTIES LABELS "gpuprim;unit" TIMEOUT 60)
else()
  message(WARNING "gpuprim: no nm found (CMAKE_NM): the library's symbol check (no exit, no printing) is not "
                  "registered as a test")
endif()
