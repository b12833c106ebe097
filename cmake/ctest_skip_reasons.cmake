# SPDX-License-Identifier: Apache-2.0
# Run by ctest after the tests (CTEST_CUSTOM_POST_TEST in the build tree's
# CTestCustom.cmake, written by test/CMakeLists.txt): ctest lists skipped
# tests without their reasons, so this prints the reason each one left in
# its note file (GPUPRIM_TEST_SKIP_NOTE: NOTES/<test name>.txt, written by
# a test as it exits 77; the folder is cleared before each run).
#   cmake -DNOTES=<build>/Testing/Temporary/skipped -P ctest_skip_reasons.cmake
file(GLOB notes "${NOTES}/*.txt")
if(NOT notes)
  return()
endif()
list(SORT notes)
set(reasons "")
foreach(note IN LISTS notes)
  get_filename_component(test_name "${note}" NAME_WLE)
  file(READ "${note}" reason)
  string(STRIP "${reason}" reason)
  # "test_large: skipped (...)" needs no second "test_large: " in front.
  string(FIND "${reason}" "${test_name}: " at)
  if(at EQUAL 0)
    string(LENGTH "${test_name}: " prefix)
    string(SUBSTRING "${reason}" ${prefix} -1 reason)
  endif()
  string(APPEND reasons "  ${test_name}: ${reason}\n")
endforeach()
message("Why the skipped tests did not run:\n${reasons}")
