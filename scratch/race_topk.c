// Scratch: a few top-k calls covering every CUDA path, small enough for racecheck.
#include <gpuprim/gpuprim.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static gpuprim_context_t c;
static void one(const float *x, unsigned long long n, int rows, unsigned long long len, unsigned long long k, int order) {
  gpuprim_buffer_t b, ko, io; unsigned long long slots = rows ? (n / len) * k : k;
  gpuprim_buffer_create(c, GPUPRIM_DTYPE_F32, n, &b); gpuprim_buffer_upload(c, b, 0, x, n);
  gpuprim_buffer_create(c, GPUPRIM_DTYPE_F32, slots, &ko); gpuprim_buffer_create(c, GPUPRIM_DTYPE_U32, slots, &io);
  int st;
  if (rows) { gpuprim_segments_t s; gpuprim_segments_init_rows(&s, n / len, len); st = gpuprim_segmented_topk(c, &s, b, k, order, ko, io); }
  else st = gpuprim_topk(c, b, k, order, ko, io);
  gpuprim_context_synchronize(c);
  printf("n %llu rows %d len %llu k %llu: %d %s\n", n, rows, len, k, st, st ? gpuprim_context_last_error(c) : "");
  gpuprim_buffer_destroy(c, b); gpuprim_buffer_destroy(c, ko); gpuprim_buffer_destroy(c, io);
}
int main(void) {
  gpuprim_context_options_t o; gpuprim_context_options_init(&o); o.backend = GPUPRIM_BACKEND_CUDA;
  if (gpuprim_context_create(&o, &c, NULL, 0)) return 1;
  unsigned long long n = 40000; float *x = malloc(n * 4), *e = malloc(n * 4);
  srand(5); for (unsigned long long i = 0; i < n; ++i) { x[i] = (float)rand() / RAND_MAX - 0.5f; e[i] = 1.0f; }
  one(x, 5000, 0, 0, 100, 1);     // block select
  one(x, 40000, 0, 0, 10, 1);     // radix select, sampled first pass
  one(x, 40000, 0, 0, 5000, 0);   // radix select, k past the block sort
  one(e, 20000, 0, 0, 7, 1);      // all equal: position digits
  one(x, 12000, 1, 3000, 64, 1);  // rows, block select
  one(x, 36000, 1, 12000, 9, 0);  // rows, radix select
  one(x, 4096, 1, 16, 8, 1);      // rows, networks
  return 0;
}
