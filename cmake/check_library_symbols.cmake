# SPDX-License-Identifier: Apache-2.0
# The library never ends the process nor prints (the developers' guide): no
# call of exit/abort and kin, nor of the printing functions. Besides a
# mistake in our code, this catches one the compiler makes silently: nvcc
# compiles a host call of a __device__-only function inside a template into
# ::exit(1) (it did, in the narrow scan's three-pass launch, and the calling
# program ended with status 1 and nothing printed).
#
#   cmake -DNM=<nm> -DLIBRARY=<libgpuprim.a or .so> -P check_library_symbols.cmake
#
# A static library is read member by member (nm -u: what its objects call);
# a shared one by its dynamic imports (nm -D --undefined-only), which for a
# CUDA build include what the static CUDA runtime linked into it calls.
# Prints "library symbols: ok (N undefined symbols read)", or "library
# symbols: refused: <names>" and fails.
cmake_minimum_required(VERSION 3.16)
if(NOT NM OR NOT LIBRARY)
  message(FATAL_ERROR "check_library_symbols: set -DNM=<nm> and -DLIBRARY=<library file>")
endif()
if(NOT EXISTS "${LIBRARY}")
  message(FATAL_ERROR "check_library_symbols: ${LIBRARY} does not exist")
endif()

if(LIBRARY MATCHES "\\.a$")
  set(nm_arguments -u "${LIBRARY}")
else()
  set(nm_arguments -D --undefined-only "${LIBRARY}")
endif()
execute_process(COMMAND "${NM}" ${nm_arguments}
                OUTPUT_VARIABLE listing ERROR_VARIABLE nm_errors RESULT_VARIABLE nm_status)
if(NOT nm_status EQUAL 0)
  message(FATAL_ERROR "check_library_symbols: ${NM} ${nm_arguments} failed (${nm_status}): ${nm_errors}")
endif()

# Symbol names as nm prints them ("                 U exit", "U exit@GLIBC_2.2.5").
set(forbidden exit _exit _Exit quick_exit abort printf vprintf puts putchar perror fprintf vfprintf fputs
              stdout stderr)
string(REPLACE "\n" ";" lines "${listing}")
set(read 0)
set(found "")
foreach(line IN LISTS lines)
  if(line MATCHES "^[ \t]*[Uw][ \t]+([^ \t@]+)")
    math(EXPR read "${read} + 1")
    set(name "${CMAKE_MATCH_1}")
    if(name IN_LIST forbidden AND NOT name IN_LIST found)
      list(APPEND found "${name}")
    endif()
  endif()
endforeach()
if(read EQUAL 0)
  message(FATAL_ERROR "check_library_symbols: no undefined symbols read from ${LIBRARY}: is it a library?")
endif()
if(found)
  list(JOIN found ", " found_text)
  # One unwrapped line to match (FATAL_ERROR's text is wrapped at its width).
  message(STATUS "library symbols: refused: ${found_text}")
  message(FATAL_ERROR "check_library_symbols: ${LIBRARY} calls ${found_text}: the library must not end the "
                      "process or print (a host call of a __device__-only function compiles to exit(1); "
                      "nm -u the objects to find which one)")
endif()
message(STATUS "library symbols: ok (${read} undefined symbols read, none of: ${forbidden})")
