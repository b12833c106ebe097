# SPDX-License-Identifier: Apache-2.0
# ctest driver for the "package" tests: what a user gets from `cmake --install`.
#
#   cmake -DSTEP=<step> -DBUILD_DIR=<gpuprim build> -DSOURCE_DIR=<gpuprim source>
#         -DWORK_DIR=<scratch> -DVERSION=<gpuprim version> -DGENERATOR=<generator>
#         [-DCONFIG=<config>] [-DC_COMPILER=...] [-DCUDA_ROOT=<toolkit>]
#         [-DWITH_CUDA=ON|OFF] [-DSHARED_LIBS=ON|OFF] [-DLIBDIR=lib]
#         [-DPKGCONFIG_RPATH=ON|OFF] -P package_test.cmake
#
# Steps (package_install runs first, as the fixture of the others):
#   install           install BUILD_DIR into WORK_DIR/staging, then move it to
#                     WORK_DIR/prefix (so every consumer below also proves the
#                     package relocatable); check LICENSE, NOTICE, the header,
#                     the CMake package and the .pc files are there
#                     (SHARED_LIBS, a BUILD_SHARED_LIBS build: no gpuprim-static.pc)
#   cmake_static      examples/cmake_consumer (C99) on gpuprim::gpuprim, the
#                     static library (CUDA build: with the CUDA toolkit given)
#   cmake_static_no_cuda
#                     the static library of a CUDA build with no CUDA toolkit
#                     to be found: configuring a consumer of gpuprim::gpuprim
#                     (no components, and COMPONENTS static) must fail with
#                     the reason and the ways out, not "target was not found";
#                     one of gpuprim::gpuprim_shared must still build and run.
#                     A CPU-only build checks this on a copy of its install
#                     marked as a CUDA build (gpuprim_WITH_CUDA in the config
#                     file: without a toolkit, the static targets are never
#                     loaded, so the library itself does not matter)
#   cmake_shared      examples/cmake_consumer on gpuprim::gpuprim_shared with no
#                     CUDA toolkit visible: PATH without nvcc, no CUDA_PATH,
#                     CUDAToolkit_ROOT, ...; once with COMPONENTS shared (must
#                     not even look for CUDAToolkit), once with no components
#                     and find_package(CUDAToolkit) disabled
#   pkgconfig_shared  cc main.c $(pkg-config --cflags --libs gpuprim), and
#                     gpuprim-shared with --static; in a BUILD_SHARED_LIBS
#                     build also gpuprim with --static (the shared library)
#   pkgconfig_static  cc main.c $(pkg-config --static --cflags --libs gpuprim),
#                     and gpuprim-static with and without --static
#                     Every pkg-config program runs with LD_LIBRARY_PATH unset
#                     and nothing added to the .pc's flags (PKGCONFIG_RPATH=OFF,
#                     a build whose .pc files carry no rpath: -Wl,-rpath added)
#   version           find_package(gpuprim <v> CONFIG) for this version 0.M.P:
#                     0.M, 0.M.P and 0.M...<0.(M+1) found; 0.(M-1), 0.(M+1),
#                     1.0, 0.(M+1)...1.0 and 0.1...<1.0 refused (0.x: a minor
#                     release may break the ABI, so only 0.M.* is 0.M)
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

# The configure arguments of examples/cmake_consumer in build_dir, with ARGN.
function(consumer_configure_args build_dir prefix_dir out)
  set(args -S ${consumer_source} -B ${build_dir} -G "${GENERATOR}"
      -DCMAKE_PREFIX_PATH=${prefix_dir} ${ARGN})
  if(NOT "${GENERATOR_PLATFORM}" STREQUAL "")
    list(APPEND args -A "${GENERATOR_PLATFORM}")
  endif()
  if(NOT "${CONFIG}" STREQUAL "")
    list(APPEND args -DCMAKE_BUILD_TYPE=${CONFIG})
  endif()
  if(NOT "${C_COMPILER}" STREQUAL "")
    list(APPEND args -DCMAKE_C_COMPILER=${C_COMPILER})
  endif()
  set(${out} "${args}" PARENT_SCOPE)
endfunction()

# cmake -S examples/cmake_consumer, build, run. ARGS: more configure arguments;
# ENV_PREFIX: a command prefix (cmake -E env ...) for the configure step;
# PREFIX: the gpuprim install (default: the one package_install made).
function(cmake_consumer build_dir linkage)
  cmake_parse_arguments(arg "" "PREFIX" "ENV_PREFIX;ARGS" ${ARGN})
  if(NOT arg_PREFIX)
    set(arg_PREFIX ${prefix})
  endif()
  consumer_configure_args(${build_dir} ${arg_PREFIX} configure_args ${arg_ARGS})
  file(REMOVE_RECURSE ${build_dir})
  run_step("configure examples/cmake_consumer in ${build_dir}" ${arg_ENV_PREFIX} ${CMAKE_COMMAND} ${configure_args})
  set(configure_output "${step_output}" PARENT_SCOPE)
  run_step("build" ${CMAKE_COMMAND} --build ${build_dir} ${config_args})
  find_consumer_program(${build_dir} program)
  check_linkage(${program} ${linkage})
  run_consumer(${program})
endfunction()

# Configures examples/cmake_consumer, which must fail, with output that has
# every EXPECT string (whitespace-insensitive: CMake wraps its messages) and
# no FORBID one. Same ARGS, ENV_PREFIX and PREFIX as cmake_consumer.
function(cmake_consumer_fails build_dir)
  cmake_parse_arguments(arg "" "PREFIX" "ENV_PREFIX;ARGS;EXPECT;FORBID" ${ARGN})
  if(NOT arg_PREFIX)
    set(arg_PREFIX ${prefix})
  endif()
  consumer_configure_args(${build_dir} ${arg_PREFIX} configure_args ${arg_ARGS})
  file(REMOVE_RECURSE ${build_dir})
  message(STATUS "${STEP}: configure examples/cmake_consumer in ${build_dir} (${arg_ARGS}), expecting failure")
  execute_process(COMMAND ${arg_ENV_PREFIX} ${CMAKE_COMMAND} ${configure_args}
                  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(result EQUAL 0)
    message(FATAL_ERROR "${STEP}: configuring ${build_dir} succeeded, but should have failed:\n${output}")
  endif()
  string(REGEX REPLACE "[ \t\r\n]+" " " flat "${output}")
  foreach(text IN LISTS arg_EXPECT)
    string(FIND "${flat}" "${text}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${STEP}: configuring ${build_dir} failed, but without saying '${text}':\n${output}")
    endif()
  endforeach()
  foreach(text IN LISTS arg_FORBID)
    string(FIND "${flat}" "${text}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${STEP}: configuring ${build_dir} failed with '${text}':\n${output}")
    endif()
  endforeach()
  message(STATUS "${STEP}: failed as expected, saying what is missing and the ways out")
endfunction()

# A command prefix giving the environment of a machine without a CUDA toolkit:
# no nvcc on PATH, none of the variables FindCUDAToolkit reads. (A default
# install in /usr/local/cuda is still found: disable find_package(CUDAToolkit)
# where that matters.)
function(no_cuda_environment out)
  set(path_entries "$ENV{PATH}")
  string(REPLACE ":" ";" path_entries "${path_entries}")
  set(clean_path)
  foreach(entry IN LISTS path_entries)
    if(NOT EXISTS "${entry}/nvcc")
      list(APPEND clean_path "${entry}")
    endif()
  endforeach()
  string(REPLACE ";" ":" clean_path "${clean_path}")
  set(${out} ${CMAKE_COMMAND} -E env --unset=CUDA_PATH --unset=CUDA_HOME --unset=CUDA_ROOT
      --unset=CUDAToolkit_ROOT --unset=CUDACXX --unset=NVCC_PREPEND_FLAGS "PATH=${clean_path}" PARENT_SCOPE)
endfunction()

# cc main.c $(pkg-config <query> <module>), then run it with LD_LIBRARY_PATH
# unset: it must find what it needs by itself (linkage: SHARED or STATIC).
function(pkgconfig_consumer name module query linkage)
  set(pc_env ${CMAKE_COMMAND} -E env --unset=PKG_CONFIG_SYSROOT_DIR
      "PKG_CONFIG_PATH=${prefix}/${LIBDIR}/pkgconfig")
  string(REPLACE ";" " " shown "${query}")
  run_step("pkg-config --modversion ${module}" ${pc_env} ${PKG_CONFIG} --modversion ${module})
  string(STRIP "${step_output}" modversion)
  if(NOT modversion STREQUAL VERSION)
    message(FATAL_ERROR "${STEP}: pkg-config says ${module} ${modversion}, expected ${VERSION}")
  endif()
  run_step("pkg-config ${shown} ${module}" ${pc_env} ${PKG_CONFIG} ${query} ${module})
  string(STRIP "${step_output}" flags)
  message(STATUS "${STEP}: pkg-config ${shown} ${module}: ${flags}")
  separate_arguments(flags UNIX_COMMAND "${flags}")
  set(extra)
  if(linkage STREQUAL "SHARED")
    run_step("pkg-config --variable=libdir ${module}" ${pc_env} ${PKG_CONFIG} --variable=libdir ${module})
    string(STRIP "${step_output}" libdir)
    if(NOT EXISTS ${libdir}/libgpuprim.so)
      message(FATAL_ERROR "${STEP}: libdir ${libdir} from ${module}.pc has no libgpuprim.so")
    endif()
    # The rpath is the .pc's job, unless this build was told to leave it out.
    if(NOT "${PKGCONFIG_RPATH}" STREQUAL "" AND NOT PKGCONFIG_RPATH)
      if(flags MATCHES "-rpath")
        message(FATAL_ERROR "${STEP}: built with GPUPRIM_PKGCONFIG_RPATH=OFF, but ${module}.pc gives an rpath: ${flags}")
      endif()
      set(extra -Wl,-rpath,${libdir})
    endif()
  endif()
  set(dir ${WORK_DIR}/pkgconfig_${name})
  set(program ${dir}/gpuprim_consumer)
  file(REMOVE_RECURSE ${dir})
  file(MAKE_DIRECTORY ${dir})
  run_step("compile and link" ${C_COMPILER} -std=c99 -Wall -Wextra -Werror
    ${consumer_source}/main.c -o ${program} ${flags} ${extra})
  check_linkage(${program} ${linkage})
  run_step("run ${program}" ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${program})
  message("${step_output}")
  if(NOT step_output MATCHES "libgpuprim ${VERSION} on (CPU|CUDA): sum 1145, max 1000, 100008 keys sorted ok")
    message(FATAL_ERROR "${STEP}: ${program} did not report the expected results")
  endif()
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
      ${LIBDIR}/pkgconfig/gpuprim.pc ${LIBDIR}/pkgconfig/gpuprim-shared.pc)
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

elseif(STEP STREQUAL "cmake_static_no_cuda")
  no_cuda_environment(no_cuda)
  set(cuda_prefix ${prefix})
  if(NOT WITH_CUDA)
    # A CPU-only build: a copy of its install, marked as a CUDA build.
    set(cuda_prefix ${WORK_DIR}/prefix_marked_cuda)
    file(REMOVE_RECURSE ${cuda_prefix})
    file(COPY ${prefix}/ DESTINATION ${cuda_prefix})
    set(config_file ${cuda_prefix}/${LIBDIR}/cmake/gpuprim/gpuprimConfig.cmake)
    file(READ ${config_file} text)
    string(REPLACE "set(gpuprim_WITH_CUDA OFF)" "set(gpuprim_WITH_CUDA ON)" marked "${text}")
    if(marked STREQUAL text)
      message(FATAL_ERROR "${STEP}: no 'set(gpuprim_WITH_CUDA OFF)' in ${config_file} to mark it as a CUDA build")
    endif()
    file(WRITE ${config_file} "${marked}")
    message(STATUS "${STEP}: CPU-only build: checking a copy of its install marked as a CUDA build, ${cuda_prefix}")
  endif()
  set(says_why "gpuprim::gpuprim, the static library of this gpuprim (built with the CUDA backend)"
      "CUDA::cudart_static" "no CUDA toolkit was looked for (CMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit is set)"
      "-DCUDAToolkit_ROOT=" "gpuprim::gpuprim_shared" "BUILD_SHARED_LIBS=ON")
  set(generic "but the target was not found" "dependency CUDAToolkit could not be found")
  # 1. No components: gpuprim is found (for gpuprim::gpuprim_shared), and
  #    linking gpuprim::gpuprim stops the generate step, saying why.
  cmake_consumer_fails(${WORK_DIR}/no_cuda_default PREFIX ${cuda_prefix} ENV_PREFIX ${no_cuda}
    ARGS -DGPUPRIM_TARGET=gpuprim::gpuprim -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON
    EXPECT "$<gpuprim::gpuprim is not available:" ${says_why} FORBID ${generic})
  # 2. COMPONENTS static: gpuprim is not found, saying why.
  cmake_consumer_fails(${WORK_DIR}/no_cuda_component PREFIX ${cuda_prefix} ENV_PREFIX ${no_cuda}
    ARGS -DGPUPRIM_TARGET=gpuprim::gpuprim -DGPUPRIM_COMPONENTS=static -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON
    EXPECT "component 'static'" ${says_why} FORBID ${generic})
  # 3. The shared library, no components, next to that stand-in: still works.
  cmake_consumer(${WORK_DIR}/no_cuda_shared SHARED PREFIX ${cuda_prefix} ENV_PREFIX ${no_cuda}
    ARGS -DGPUPRIM_TARGET=gpuprim::gpuprim_shared -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON)
  if(NOT configure_output MATCHES "static gpuprim::gpuprim is not available")
    message(FATAL_ERROR "${STEP}: no status line on the static library:\n${configure_output}")
  endif()
  message(STATUS "${STEP}: passed")

elseif(STEP STREQUAL "cmake_shared")
  no_cuda_environment(no_cuda)
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
  find_program(PKG_CONFIG NAMES pkg-config pkgconf)
  if(NOT PKG_CONFIG)
    message(FATAL_ERROR "${STEP}: pkg-config is not installed (apt-get install pkg-config)")
  endif()
  if("${C_COMPILER}" STREQUAL "")
    set(C_COMPILER cc)
  endif()
  if(STEP STREQUAL "pkgconfig_shared")
    pkgconfig_consumer(shared gpuprim "--cflags;--libs" SHARED)
    pkgconfig_consumer(shared_module_static gpuprim-shared "--static;--cflags;--libs" SHARED)
    if(SHARED_LIBS)
      # No static library installed: --static gives the shared one, which runs.
      pkgconfig_consumer(shared_only_static gpuprim "--static;--cflags;--libs" SHARED)
    endif()
  else()
    pkgconfig_consumer(static gpuprim "--static;--cflags;--libs" STATIC)
    pkgconfig_consumer(static_module_static gpuprim-static "--static;--cflags;--libs" STATIC)
    pkgconfig_consumer(static_module gpuprim-static "--cflags;--libs" STATIC)
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
  # The cases from this version (0.M.P): its series is found, its neighbours
  # and 1.0 are not (0.x: a minor release may break the ABI).
  string(REGEX MATCH "^0\\.([0-9]+)\\.[0-9]+$" _ "${VERSION}")
  if(NOT CMAKE_MATCH_1 OR CMAKE_MATCH_1 LESS 2)
    message(FATAL_ERROR "version: the cases are written for 0.M.P with M >= 2, not ${VERSION}")
  endif()
  set(minor ${CMAKE_MATCH_1})
  math(EXPR previous "${minor} - 1")
  math(EXPR next "${minor} + 1")
  foreach(case "0.${minor}:found" "${VERSION}:found" "0.${minor}...<0.${next}:found"
               "0.${previous}:refused" "0.${next}:refused" "1.0:refused" "0.${next}...1.0:refused"
               "0.1...<1.0:refused")
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
