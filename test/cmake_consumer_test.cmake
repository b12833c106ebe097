# SPDX-License-Identifier: Apache-2.0
# ctest driver: install the build tree into a temporary prefix, then
# configure, build and run examples/cmake_consumer against that prefix with
# find_package(gpuprim CONFIG REQUIRED).
#
#   cmake -DBUILD_DIR=<gpuprim build> -DSOURCE_DIR=<gpuprim source> -DWORK_DIR=<scratch>
#         -DGENERATOR=<generator> [-DGENERATOR_PLATFORM=...] [-DCONFIG=<config>]
#         [-DC_COMPILER=...] [-DCXX_COMPILER=...] [-DCUDA_ROOT=<toolkit>]
#         -P cmake_consumer_test.cmake
cmake_minimum_required(VERSION 3.25)

foreach(required BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR)
  if(NOT DEFINED ${required} OR "${${required}}" STREQUAL "")
    message(FATAL_ERROR "cmake_consumer_test.cmake: -D${required}=... is required")
  endif()
endforeach()

function(run_step what)
  message(STATUS "cmake_consumer: ${what}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "cmake_consumer: ${what} failed (${result}):\n${output}")
  endif()
  set(step_output "${output}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
set(consumer_build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

set(config_args)
if(NOT "${CONFIG}" STREQUAL "")
  set(config_args --config ${CONFIG})
endif()

run_step("install ${BUILD_DIR} into ${prefix}"
  ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} ${config_args})
if(NOT EXISTS ${prefix}/include/gpuprim/gpuprim.h)
  message(FATAL_ERROR "cmake_consumer: the install has no include/gpuprim/gpuprim.h")
endif()
file(GLOB_RECURSE package_config ${prefix}/*/gpuprimConfig.cmake)
if(NOT package_config)
  message(FATAL_ERROR "cmake_consumer: the install has no gpuprimConfig.cmake")
endif()

set(configure_args
  -S ${SOURCE_DIR}/examples/cmake_consumer -B ${consumer_build} -G "${GENERATOR}"
  -DCMAKE_PREFIX_PATH=${prefix})
if(NOT "${GENERATOR_PLATFORM}" STREQUAL "")
  list(APPEND configure_args -A "${GENERATOR_PLATFORM}")
endif()
if(NOT "${CONFIG}" STREQUAL "")
  list(APPEND configure_args -DCMAKE_BUILD_TYPE=${CONFIG})
endif()
if(NOT "${C_COMPILER}" STREQUAL "")
  list(APPEND configure_args -DCMAKE_C_COMPILER=${C_COMPILER})
endif()
if(NOT "${CXX_COMPILER}" STREQUAL "")
  list(APPEND configure_args -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
endif()
if(NOT "${CUDA_ROOT}" STREQUAL "")
  list(APPEND configure_args -DCUDAToolkit_ROOT=${CUDA_ROOT})
endif()
run_step("configure examples/cmake_consumer" ${CMAKE_COMMAND} ${configure_args})
run_step("build examples/cmake_consumer" ${CMAKE_COMMAND} --build ${consumer_build} ${config_args})

# The program: directly in the build directory, or in <config>/ for multi-config generators.
set(program)
foreach(candidate ${consumer_build}/gpuprim_consumer ${consumer_build}/gpuprim_consumer.exe
                  ${consumer_build}/${CONFIG}/gpuprim_consumer ${consumer_build}/${CONFIG}/gpuprim_consumer.exe)
  if(EXISTS ${candidate} AND NOT IS_DIRECTORY ${candidate})
    set(program ${candidate})
    break()
  endif()
endforeach()
if(NOT program)
  message(FATAL_ERROR "cmake_consumer: built, but gpuprim_consumer was not found under ${consumer_build}")
endif()
run_step("run ${program}" ${program})
message("${step_output}")
message(STATUS "cmake_consumer: passed")
