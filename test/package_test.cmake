# SPDX-License-Identifier: Apache-2.0
# ctest driver for the "package" tests: what a user gets from `cmake --install`.
#
#   cmake -DSTEP=<step> -DBUILD_DIR=<gpuprim build> -DSOURCE_DIR=<gpuprim source>
#         -DWORK_DIR=<scratch> -DVERSION=<gpuprim version> -DGENERATOR=<generator>
#         [-DCONFIG=<config>] [-DC_COMPILER=...] [-DCUDA_ROOT=<toolkit>]
#         [-DWITH_CUDA=ON|OFF] [-DSHARED_LIBS=ON|OFF] [-DLIBDIR=lib] -P package_test.cmake
#
# Steps (package_install runs first, as the fixture of the others):
#   install           install BUILD_DIR into WORK_DIR/staging, then move it to
#                     WORK_DIR/prefix (so every consumer below also proves the
#                     package relocatable); check LICENSE, NOTICE, the header,
#                     the CMake package and both .pc files are there
#                     (SHARED_LIBS, a BUILD_SHARED_LIBS build: gpuprim.pc only)
#   cmake_static      examples/cmake_consumer (C99) on gpuprim::gpuprim, the
#                     static library (CUDA build: with the CUDA toolkit given)
#   cmake_shared      examples/cmake_consumer on gpuprim::gpuprim_shared with no
#                     CUDA toolkit visible: PATH without nvcc, no CUDA_PATH,
#                     CUDAToolkit_ROOT, ...; once with COMPONENTS shared (must
#                     not even look for CUDAToolkit), once with no components
#                     and find_package(CUDAToolkit) disabled
#   pkgconfig_shared  cc main.c $(pkg-config --cflags --libs gpuprim)
#   pkgconfig_static  cc main.c $(pkg-config --static --cflags --libs gpuprim-static)
#   version           find_package(gpuprim <v> CONFIG): 0.2, 0.2.0 and 0.2...<0.3
#                     found; 0.1, 0.3, 1.0, 0.3...1.0 and 0.1...<1.0 refused (0.x:
#                     a minor release may break the ABI, so only 0.2.* is 0.2)
# Each consumer sorts 100008 keys and checks them (examples/cmake_consumer/main.c);
# a binary that should be static must not need libgpuprim.so, a shared one must.
cmake_minimum_required(VERSION 3.25)

foreach(required STEP BUILD_DIR SOURCE_DIR WORK_DIR VERSION GENERATOR)
  if(NOT DEFINED ${required} OR "${${required}}" STREQUAL "")
    message(FATAL_ERROR "package_test.cmake: -D${required}=... is required")
  endif()
endforeach()
if(NOT DEFINED LIBDIR OR LIBDIR STREQUAL "")
  set(LIBDIR lib)
endif()

set(prefix ${WORK_DIR}/prefix)
set(consumer_source ${SOURCE_DIR}/examples/cmake_consumer)
set(config_args)
if(NOT "${CONFIG}" STREQUAL "")
  set(config_args --config ${CONFIG})
endif()

function(run_step what)
  message(STATUS "${STEP}: ${what}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${STEP}: ${what} failed (${result}):\n${output}")
  endif()
  set(step_output "${output}" PARENT_SCOPE)
endfunction()

# Runs a consumer program and checks its report.
function(run_consumer program)
  run_step("run ${program}" ${program})
  message("${step_output}")
  if(NOT step_output MATCHES "libgpuprim ${VERSION} on (CPU|CUDA): sum 1145, max 1000, 100008 keys sorted ok")
    message(FATAL_ERROR "${STEP}: ${program} did not report the expected results")
  endif()
endfunction()

# expect: SHARED (must load libgpuprim.so) or STATIC (must not).
function(check_linkage program expect)
  find_program(READELF readelf)
  if(NOT READELF)
    message(STATUS "${STEP}: no readelf, linkage of ${program} not checked")
    return()
  endif()
  execute_process(COMMAND ${READELF} -d ${program} OUTPUT_VARIABLE dynamic RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${STEP}: readelf -d ${program} failed")
  endif()
  if(dynamic MATCHES "NEEDED[^\n]*libgpuprim")
    set(shared TRUE)
  else()
    set(shared FALSE)
  endif()
  if(expect STREQUAL "SHARED" AND NOT shared)
    message(FATAL_ERROR "${STEP}: ${program} should load libgpuprim.so but does not:\n${dynamic}")
  elseif(expect STREQUAL "STATIC" AND shared)
    message(FATAL_ERROR "${STEP}: ${program} should be linked statically but loads libgpuprim.so:\n${dynamic}")
  endif()
  message(STATUS "${STEP}: ${program} links libgpuprim ${expect} as expected")
endfunction()

function(find_consumer_program build_dir out)
  foreach(candidate ${build_dir}/gpuprim_consumer ${build_dir}/gpuprim_consumer.exe
                    ${build_dir}/${CONFIG}/gpuprim_consumer ${build_dir}/${CONFIG}/gpuprim_consumer.exe)
    if(EXISTS ${candidate} AND NOT IS_DIRECTORY ${candidate})
      set(${out} ${candidate} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "${STEP}: built, but gpuprim_consumer was not found under ${build_dir}")
endfunction()

# cmake -S examples/cmake_consumer, build, run. ARGN: more configure arguments;
# ENV_PREFIX: a command prefix (cmake -E env ...) for the configure step.
function(cmake_consumer build_dir linkage)
  cmake_parse_arguments(arg "" "" "ENV_PREFIX;ARGS" ${ARGN})
  set(configure_args -S ${consumer_source} -B ${build_dir} -G "${GENERATOR}"
      -DCMAKE_PREFIX_PATH=${prefix} ${arg_ARGS})
  if(NOT "${GENERATOR_PLATFORM}" STREQUAL "")
    list(APPEND configure_args -A "${GENERATOR_PLATFORM}")
  endif()
  if(NOT "${CONFIG}" STREQUAL "")
    list(APPEND configure_args -DCMAKE_BUILD_TYPE=${CONFIG})
  endif()
  if(NOT "${C_COMPILER}" STREQUAL "")
    list(APPEND configure_args -DCMAKE_C_COMPILER=${C_COMPILER})
  endif()
  file(REMOVE_RECURSE ${build_dir})
  run_step("configure examples/cmake_consumer in ${build_dir}" ${arg_ENV_PREFIX} ${CMAKE_COMMAND} ${configure_args})
  set(configure_output "${step_output}" PARENT_SCOPE)
  run_step("build" ${CMAKE_COMMAND} --build ${build_dir} ${config_args})
  find_consumer_program(${build_dir} program)
  check_linkage(${program} ${linkage})
  run_consumer(${program})
endfunction()

if(STEP STREQUAL "install")
  set(staging ${WORK_DIR}/staging)
  file(REMOVE_RECURSE ${WORK_DIR})
  file(MAKE_DIRECTORY ${WORK_DIR})
  run_step("install ${BUILD_DIR} into ${staging}" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${staging} ${config_args})
  file(RENAME ${staging} ${prefix})
  message(STATUS "install: moved ${staging} to ${prefix}")
  set(static_pc ${LIBDIR}/pkgconfig/gpuprim-static.pc)
  set(expected include/gpuprim/gpuprim.h share/doc/gpuprim/LICENSE share/doc/gpuprim/NOTICE
      ${LIBDIR}/cmake/gpuprim/gpuprimConfig.cmake ${LIBDIR}/cmake/gpuprim/gpuprimConfigVersion.cmake
      ${LIBDIR}/pkgconfig/gpuprim.pc)
  if(SHARED_LIBS)
    # No static library, so no .pc file for one.
    if(EXISTS ${prefix}/${static_pc})
      message(FATAL_ERROR "install: a BUILD_SHARED_LIBS build installed ${static_pc}")
    endif()
  else()
    list(APPEND expected ${static_pc})
  endif()
  foreach(file IN LISTS expected)
    if(NOT EXISTS ${prefix}/${file})
      message(FATAL_ERROR "install: the installed tree has no ${file}")
    endif()
  endforeach()
  file(GLOB_RECURSE installed_text ${prefix}/*.pc ${prefix}/*.cmake)
  foreach(file IN LISTS installed_text)
    file(READ ${file} text)
    string(FIND "${text}" "${staging}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "install: ${file} names the install prefix ${staging}: not relocatable")
    endif()
  endforeach()
  file(READ ${prefix}/share/doc/gpuprim/LICENSE license)
  if(NOT license MATCHES "Apache License")
    message(FATAL_ERROR "install: share/doc/gpuprim/LICENSE is not the licence text")
  endif()
  message(STATUS "install: passed")

elseif(STEP STREQUAL "cmake_static")
  set(args -DGPUPRIM_TARGET=gpuprim::gpuprim)
  if(NOT "${CUDA_ROOT}" STREQUAL "")
    list(APPEND args -DCUDAToolkit_ROOT=${CUDA_ROOT})
  endif()
  cmake_consumer(${WORK_DIR}/cmake_static STATIC ARGS ${args})
  message(STATUS "cmake_static: passed")

elseif(STEP STREQUAL "cmake_shared")
  # The environment of a machine without a CUDA toolkit: no nvcc on PATH, none
  # of the variables FindCUDAToolkit reads.
  set(path_entries "$ENV{PATH}")
  string(REPLACE ":" ";" path_entries "${path_entries}")
  set(clean_path)
  foreach(entry IN LISTS path_entries)
    if(NOT EXISTS "${entry}/nvcc")
      list(APPEND clean_path "${entry}")
    endif()
  endforeach()
  string(REPLACE ";" ":" clean_path "${clean_path}")
  set(no_cuda ${CMAKE_COMMAND} -E env --unset=CUDA_PATH --unset=CUDA_HOME --unset=CUDA_ROOT
      --unset=CUDAToolkit_ROOT --unset=CUDACXX --unset=NVCC_PREPEND_FLAGS "PATH=${clean_path}")
  # 1. COMPONENTS shared: the package must not look for a CUDA toolkit at all
  #    (a default install in /usr/local/cuda would still be found if it did).
  set(build ${WORK_DIR}/cmake_shared_component)
  cmake_consumer(${build} SHARED ENV_PREFIX ${no_cuda}
    ARGS -DGPUPRIM_TARGET=gpuprim::gpuprim_shared -DGPUPRIM_COMPONENTS=shared)
  file(STRINGS ${build}/CMakeCache.txt cuda_entries REGEX "^CUDAToolkit|^CUDA_")
  if(cuda_entries)
    message(FATAL_ERROR "cmake_shared: find_package(gpuprim COMPONENTS shared) looked for CUDA:\n${cuda_entries}")
  endif()
  # 2. No components, and no CUDA toolkit to be found whatever happens.
  cmake_consumer(${WORK_DIR}/cmake_shared_default SHARED ENV_PREFIX ${no_cuda}
    ARGS -DGPUPRIM_TARGET=gpuprim::gpuprim_shared -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON)
  if(WITH_CUDA AND NOT configure_output MATCHES "static gpuprim::gpuprim is not available")
    message(FATAL_ERROR "cmake_shared: a CUDA build found without a CUDA toolkit should say that the static library is not available:\n${configure_output}")
  endif()
  message(STATUS "cmake_shared: passed")

elseif(STEP MATCHES "^pkgconfig_(shared|static)$")
  set(kind ${CMAKE_MATCH_1})
  find_program(PKG_CONFIG NAMES pkg-config pkgconf)
  if(NOT PKG_CONFIG)
    message(FATAL_ERROR "${STEP}: pkg-config is not installed (apt-get install pkg-config)")
  endif()
  if("${C_COMPILER}" STREQUAL "")
    set(C_COMPILER cc)
  endif()
  set(pc_env ${CMAKE_COMMAND} -E env --unset=PKG_CONFIG_SYSROOT_DIR
      "PKG_CONFIG_PATH=${prefix}/${LIBDIR}/pkgconfig")
  set(program ${WORK_DIR}/pkgconfig_${kind}/gpuprim_consumer)
  file(REMOVE_RECURSE ${WORK_DIR}/pkgconfig_${kind})
  file(MAKE_DIRECTORY ${WORK_DIR}/pkgconfig_${kind})
  if(kind STREQUAL "shared")
    set(module gpuprim)
    set(query --cflags --libs)
    set(linkage SHARED)
  else()
    set(module gpuprim-static)
    set(query --static --cflags --libs)
    set(linkage STATIC)
  endif()
  run_step("pkg-config --modversion ${module}" ${pc_env} ${PKG_CONFIG} --modversion ${module})
  string(STRIP "${step_output}" modversion)
  if(NOT modversion STREQUAL VERSION)
    message(FATAL_ERROR "${STEP}: pkg-config says ${module} ${modversion}, expected ${VERSION}")
  endif()
  run_step("pkg-config ${query} ${module}" ${pc_env} ${PKG_CONFIG} ${query} ${module})
  string(STRIP "${step_output}" flags)
  message(STATUS "${STEP}: ${flags}")
  separate_arguments(flags UNIX_COMMAND "${flags}")
  set(extra)
  if(kind STREQUAL "shared")
    run_step("pkg-config --variable=libdir" ${pc_env} ${PKG_CONFIG} --variable=libdir ${module})
    string(STRIP "${step_output}" libdir)
    if(NOT EXISTS ${libdir}/libgpuprim.so)
      message(FATAL_ERROR "${STEP}: libdir ${libdir} from gpuprim.pc has no libgpuprim.so")
    endif()
    set(extra -Wl,-rpath,${libdir})
  endif()
  run_step("compile and link" ${C_COMPILER} -std=c99 -Wall -Wextra -Werror
    ${consumer_source}/main.c -o ${program} ${flags} ${extra})
  check_linkage(${program} ${linkage})
  # Run with no library path from the environment: the program must carry
  # what it needs (rpath for the shared library, everything for the static).
  run_step("run ${program}" ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${program})
  message("${step_output}")
  if(NOT step_output MATCHES "libgpuprim ${VERSION} on (CPU|CUDA): sum 1145, max 1000, 100008 keys sorted ok")
    message(FATAL_ERROR "${STEP}: ${program} did not report the expected results")
  endif()
  message(STATUS "${STEP}: passed")

elseif(STEP STREQUAL "version")
  set(project_dir ${WORK_DIR}/version_check)
  file(REMOVE_RECURSE ${project_dir})
  file(WRITE ${project_dir}/CMakeLists.txt [=[
cmake_minimum_required(VERSION 3.25)
project(gpuprim_version_check NONE)
find_package(gpuprim ${WANT} CONFIG COMPONENTS shared)
message(STATUS "gpuprim_version_check: want ${WANT}: found '${gpuprim_FOUND}' version '${gpuprim_VERSION}'")
if(gpuprim_FOUND)
  file(WRITE ${CMAKE_BINARY_DIR}/result "found")
else()
  file(WRITE ${CMAKE_BINARY_DIR}/result "refused")
endif()
]=])
  foreach(case "0.2:found" "0.2.0:found" "0.2...<0.3:found"
               "0.1:refused" "0.3:refused" "1.0:refused" "0.3...1.0:refused" "0.1...<1.0:refused")
    string(REPLACE ":" ";" case "${case}")
    list(GET case 0 want)
    list(GET case 1 expected)
    file(REMOVE_RECURSE ${project_dir}/build)
    run_step("find_package(gpuprim ${want} CONFIG)" ${CMAKE_COMMAND} -S ${project_dir} -B ${project_dir}/build
      -G "${GENERATOR}" -DCMAKE_PREFIX_PATH=${prefix} -DWANT=${want})
    file(READ ${project_dir}/build/result got)
    if(NOT got STREQUAL expected)
      message(FATAL_ERROR "version: find_package(gpuprim ${want}) ${got} gpuprim ${VERSION}, expected ${expected}:\n${step_output}")
    endif()
    message(STATUS "version: gpuprim ${VERSION} for ${want}: ${got}, as expected")
  endforeach()
  message(STATUS "version: passed")

else()
  message(FATAL_ERROR "package_test.cmake: unknown STEP '${STEP}'")
endif()
