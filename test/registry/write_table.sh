#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Writes the test registry's table, DIR/registry_cases.h, for the scripts
# that compile the registry without CMake (run_fuzz.sh, run_sanitizers.sh):
# one TR_CASE(<name>) line per test/registry/<name>_case.c in the C locale's
# order, as test/CMakeLists.txt writes it. Run from the repository root.
#   test/registry/write_table.sh DIR
set -eu
dir=${1:?usage: test/registry/write_table.sh DIR}
mkdir -p "$dir"
{
  echo "/* Written by test/registry/write_table.sh: one line per test/registry/<name>_case.c. */"
  for source in $(LC_ALL=C ls test/registry/*_case.c); do
    echo "TR_CASE($(basename "$source" _case.c))"
  done
} > "$dir/registry_cases.h"
