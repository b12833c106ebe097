# SPDX-License-Identifier: Apache-2.0
# Run by ctest after the tests (CTEST_CUSTOM_POST_TEST in the build tree's
# CTestCustom.cmake, written by test/CMakeLists.txt): ctest lists skipped
# tests without their reasons, so this prints the reason each skipped test
# gave. A test that skips (exit 77) ends its output with one line saying
# "skipped" (": skipped", "skipped (", "skipped:", "skipped,") or starting
# "SKIP: "; the lines come from this run's Testing/Temporary/LastTest.log.
#   cmake -DLOG=<build>/Testing/Temporary/LastTest.log -P ctest_skip_reasons.cmake
if(NOT EXISTS "${LOG}")
  return()
endif()
# One list element a line: brackets and semicolons (which would join or
# split CMake list elements) are stood in for while the lines are walked.
file(READ "${LOG}" log_text)
string(REPLACE "[" "<gpuprim-lb>" log_text "${log_text}")
string(REPLACE "]" "<gpuprim-rb>" log_text "${log_text}")
string(REPLACE ";" "<gpuprim-sc>" log_text "${log_text}")
string(REPLACE "\n" ";" log_lines "${log_text}")
set(test_name "")
set(in_output FALSE)
set(last_line "")
set(reasons "")
foreach(line IN LISTS log_lines)
  if(line MATCHES "^[0-9]+/[0-9]+ Test: (.+)$")
    set(test_name "${CMAKE_MATCH_1}")
  elseif(line STREQUAL "Output:")
    set(in_output TRUE)
    set(last_line "")
  elseif(line STREQUAL "<end of output>")
    set(in_output FALSE)
    # Only a test's last line: a test that ran may mention a skipped case.
    if(last_line MATCHES "^SKIP: |: skipped|skipped( \\(|:|,)")
      string(REGEX REPLACE "^${test_name}: " "" last_line "${last_line}")
      string(APPEND reasons "  ${test_name}: ${last_line}\n")
    endif()
  elseif(in_output AND NOT line MATCHES "^-+$" AND NOT line STREQUAL "")
    set(last_line "${line}")
  endif()
endforeach()
if(reasons)
  string(REPLACE "<gpuprim-lb>" "[" reasons "${reasons}")
  string(REPLACE "<gpuprim-rb>" "]" reasons "${reasons}")
  string(REPLACE "<gpuprim-sc>" ";" reasons "${reasons}")
  message("Why the skipped tests did not run:\n${reasons}")
endif()
