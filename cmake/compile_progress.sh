#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Compiler launcher (CMAKE_CUDA_COMPILER_LAUNCHER, GPUPRIM_COMPILE_PROGRESS=ON):
# runs the compile command it is given and, while a compile takes long, prints
# a line every 20 s, so a build is never silent for a minute. The compiler's
# own output and exit status pass through unchanged.
source=""
for arg in "$@"; do
  case "$arg" in *.cu | *.cpp | *.c) source=${arg##*/} ;; esac
done
"$@" &
compiler=$!
(
  elapsed=0
  while sleep 20 </dev/null >/dev/null 2>&1; do
    elapsed=$((elapsed + 20))
    echo "    ... still compiling ${source:-CUDA code} (${elapsed} s)"
  done
) &
ticker=$!
wait "$compiler"
status=$?
kill "$ticker" 2>/dev/null
wait "$ticker" 2>/dev/null
exit "$status"
