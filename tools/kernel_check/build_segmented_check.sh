set -e
NV="nvcc -std=c++17 -O3 -arch=sm_90 -I include -I src -I tools/kernel_check --expt-relaxed-constexpr -lineinfo"
mkdir -p /tmp/b
which nvcc || export PATH=/usr/local/cuda/bin:$PATH
$NV -c src/cuda/segment/segmented_scan.cu -o /tmp/b/a.o &
$NV -c src/cuda/segment/segment_check.cu -o /tmp/b/b.o &
$NV -c src/cuda/util/check.cpp -o /tmp/b/c.o &
$NV -c src/core/segments.cpp -o /tmp/b/d.o &
$NV -c tools/kernel_check/check_segmented_scan.cu -o /tmp/b/e.o &
wait
$NV /tmp/b/*.o -o /tmp/b/check
