#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Before/after of a kernel change in one device run: the same benchmarks
# built from a base commit and from the working tree, run in alternation on
# one GPU, then compared row by row (bench/ab_table.py).
#
#   bench/ab_gpu.sh prepare BASE [DIR]    here: BASE's sources into DIR
#                                         (default .ab/base)
#   bench/ab_gpu.sh build [TARGET...]     on the GPU machine: both trees
#   bench/ab_gpu.sh run ROUNDS BENCH [ARGS...]
#                                         on the GPU machine: ROUNDS rounds of
#                                         base then new (new then base on odd
#                                         rounds), csv into $OUT (or .ab/out);
#                                         FIRST_ROUND=K numbers them from K
#                                         (more rounds in a later call)
#   python3 bench/ab_table.py DIR         compare the csv files of DIR
#
# The device tool copies the working tree, not .git, so `prepare` exports
# BASE here; name .ab in the run's carry. Each tree builds into a folder the
# carry does not replace (build-gpu, build-ab-base: ignored build outputs
# stay between calls while the machine is warm), so build once, then run.
# TARGET: benchmark targets (default: every benchmark). The base tree is
# configured like the new one (Release, this GPU's architecture, CUB from
# CCCL_INCLUDE when set, e.g. .cccl/include from
# ../shared/tools/get_cub36.sh .cccl).
# Other pairs of trees in the same device call (every device minute is
# scarce): AB_BASE_SRC and AB_NEW_SRC name the sources (default .ab/base
# and the working tree), BASE_BUILD and BUILD_DIR their build folders
# (default build-ab-base and build-gpu). For example, a branch against the
# same base: `prepare BRANCH .ab/alt` here, then on the GPU machine
# `AB_NEW_SRC=.ab/alt BUILD_DIR=build-ab-alt bench/ab_gpu.sh build ...`
# and the same variables for `run`.
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 2

BASE_SRC=${AB_BASE_SRC:-.ab/base}
NEW_SRC=${AB_NEW_SRC:-.}
BASE_BUILD=${BASE_BUILD:-build-ab-base}
NEW_BUILD=${BUILD_DIR:-build-gpu}
OUT=${OUT:-.ab/out}
BENCHES="gpuprim_bench sort_matrix_bench segmented_bench topk_bench select_bench reduce_by_key_bench
         search_bench merge_bench histogram_bench argreduce_bench adjacent_difference_bench"

die() { echo "ab_gpu.sh: $*" >&2; exit 2; }

configure() {  # source build
    [ -f "$2/build.ninja" ] && return 0
    local arch=${CUDA_ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)}
    [ -n "$arch" ] || die "no GPU found (set CUDA_ARCH to build anyway)"
    local cccl=()
    [ -n "${CCCL_INCLUDE:-}" ] && cccl=("-DGPUPRIM_BENCH_CCCL_INCLUDE=$(cd "$CCCL_INCLUDE" && pwd)")
    cmake -G Ninja -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch-real" \
        -DGPUPRIM_WITH_CUDA=ON -DGPUPRIM_BUILD_BENCH=ON -DBUILD_TESTING=OFF -DGPUPRIM_BUILD_EXAMPLES=OFF \
        -DGPUPRIM_BUILD_PYTHON=OFF "${cccl[@]}" >"$2.configure.log" 2>&1 ||
        { tail -20 "$2.configure.log"; die "configuring $1 failed"; }
}

case ${1:-} in
prepare)
    [ $# -eq 2 ] || [ $# -eq 3 ] || die "usage: prepare BASE [DIR]"
    rev=$(git rev-parse --verify "$2^{commit}") || die "no commit $2"
    [ $# -eq 3 ] && BASE_SRC=$3
    rm -rf "$BASE_SRC" && mkdir -p "$BASE_SRC" || exit 2
    # -m: the files take the time of extraction, not the commit's, so that
    # ninja rebuilds a base build folder that holds an earlier base's objects
    # (with the commit's times, an older base looked up to date).
    git archive "$rev" | tar -x -m -C "$BASE_SRC" || die "git archive failed"
    echo "$rev" >"$BASE_SRC/AB_BASE_COMMIT"
    grep -qx '/.ab/' .gitignore 2>/dev/null || echo "note: .ab/ should be ignored (.gitignore) and carried"
    echo "$rev in $BASE_SRC ($(du -sh "$BASE_SRC" | cut -f1)); carry .ab in the device run"
    ;;
build)
    shift
    [ -f "$BASE_SRC/CMakeLists.txt" ] || die "no base sources: run 'prepare BASE' here and carry .ab"
    [ -f "$NEW_SRC/CMakeLists.txt" ] || die "no sources in $NEW_SRC"
    targets=("$@")
    [ ${#targets[@]} -gt 0 ] || read -r -a targets <<<"$(echo $BENCHES)"
    mkdir -p "$(dirname "$NEW_BUILD")"
    configure "$BASE_SRC" "$BASE_BUILD"
    configure "$NEW_SRC" "$NEW_BUILD"
    jobs=$(nproc)
    # Both at once, half the cores each: the longest files of either tree
    # set the pace.
    ninja -C "$BASE_BUILD" -j $((jobs / 2 > 0 ? jobs / 2 : 1)) "${targets[@]}" >"$BASE_BUILD.build.log" 2>&1 &
    base_pid=$!
    ninja -C "$NEW_BUILD" -j $((jobs / 2 > 0 ? jobs / 2 : 1)) "${targets[@]}" >"$NEW_BUILD.build.log" 2>&1
    new_rc=$?
    wait $base_pid
    base_rc=$?
    [ $base_rc -eq 0 ] || { tail -30 "$BASE_BUILD.build.log"; die "base build failed"; }
    [ $new_rc -eq 0 ] || { tail -30 "$NEW_BUILD.build.log"; die "new build failed"; }
    new_name="the working tree"
    [ "$NEW_SRC" = . ] || new_name="$(cat "$NEW_SRC/AB_BASE_COMMIT" 2>/dev/null || echo "$NEW_SRC")"
    echo "built ${targets[*]}: base $(cat "$BASE_SRC/AB_BASE_COMMIT") in $BASE_BUILD, $new_name in $NEW_BUILD"
    ;;
run)
    [ $# -ge 3 ] || die "usage: run ROUNDS BENCH [ARGS...]"
    rounds=$2 bench=$3
    shift 3
    mkdir -p "$OUT" || exit 2
    for tree in base new; do
        dir=$NEW_BUILD; [ $tree = base ] && dir=$BASE_BUILD
        [ -x "$dir/bench/$bench" ] || die "$dir/bench/$bench is not built (build $bench first)"
    done
    first=${FIRST_ROUND:-0}
    for ((r = first; r < first + rounds; ++r)); do
        order="base new"; [ $((r % 2)) -eq 1 ] && order="new base"
        for tree in $order; do
            dir=$NEW_BUILD; [ $tree = base ] && dir=$BASE_BUILD
            "$dir/bench/$bench" "$@" --csv "$OUT/ab-$bench-$tree-$r.csv" >"$OUT/ab-$bench-$tree-$r.log" 2>&1 ||
                { tail -5 "$OUT/ab-$bench-$tree-$r.log"; die "$bench ($tree, round $r) failed"; }
            echo "$bench $tree round $r done"
        done
    done
    ;;
*)
    sed -n '3,32p' "$0"
    exit 2
    ;;
esac
