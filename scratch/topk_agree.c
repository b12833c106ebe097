// Scratch: CUDA top-k against the CPU backend's, random and adversarial cases.
#include <gpuprim/gpuprim.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }
static gpuprim_context_t make(gpuprim_backend_t b) {
  gpuprim_context_options_t o; gpuprim_context_options_init(&o); o.backend = b; gpuprim_context_t c;
  if (gpuprim_context_create(&o, &c, NULL, 0)) { printf("no context %d\n", b); exit(1); } return c; }
static int run(gpuprim_context_t c, int dt, const void *keys, uint64_t n, int offsets, const uint64_t *off, uint64_t segs, uint64_t rowlen,
               uint64_t k, int order, int idt, void *kout, void *iout, uint64_t slots) {
  size_t es = gpuprim_dtype_size(dt), is = gpuprim_dtype_size(idt);
  gpuprim_buffer_t b, ko, io, ob = NULL;
  gpuprim_buffer_create(c, dt, n, &b); if (n) gpuprim_buffer_upload(c, b, 0, keys, n);
  gpuprim_buffer_create(c, dt, slots, &ko); gpuprim_buffer_create(c, idt, slots, &io);
  memset(kout, 0xA5, slots * es); memset(iout, 0x5A, slots * is);
  if (slots) { gpuprim_buffer_upload(c, ko, 0, kout, slots); gpuprim_buffer_upload(c, io, 0, iout, slots); }
  int st;
  if (segs == (uint64_t)-1) st = gpuprim_topk(c, b, k, order, ko, io);
  else { gpuprim_segments_t s;
    if (offsets) { gpuprim_buffer_create(c, GPUPRIM_DTYPE_U64, segs + 1, &ob); gpuprim_buffer_upload(c, ob, 0, off, segs + 1); gpuprim_segments_init_offsets(&s, ob); }
    else gpuprim_segments_init_rows(&s, segs, rowlen);
    st = gpuprim_segmented_topk(c, &s, b, k, order, ko, io); }
  if (st) printf("status %d: %s\n", st, gpuprim_context_last_error(c));
  if (slots) { gpuprim_buffer_download(c, ko, 0, kout, slots); gpuprim_buffer_download(c, io, 0, iout, slots); }
  gpuprim_buffer_destroy(c, b); gpuprim_buffer_destroy(c, ko); gpuprim_buffer_destroy(c, io); if (ob) gpuprim_buffer_destroy(c, ob);
  return st;
}
int main(int argc, char **argv) {
  int cases = argc > 1 ? atoi(argv[1]) : 300;
  gpuprim_context_t cpu = make(GPUPRIM_BACKEND_CPU), gpu = make(getenv("AGREE_CPU") ? GPUPRIM_BACKEND_CPU : GPUPRIM_BACKEND_CUDA);
  int dts[] = {GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_F64, GPUPRIM_DTYPE_U64, GPUPRIM_DTYPE_I64,
               GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_BF16, GPUPRIM_DTYPE_I8, GPUPRIM_DTYPE_U8, GPUPRIM_DTYPE_I16, GPUPRIM_DTYPE_U16};
  uint64_t sizes[] = {1, 2, 5, 31, 100, 128, 129, 255, 256, 1000, 4096, 8191, 8192, 8193, 20000, 100000, 1 << 20, 3000017};
  int fails = 0;
  for (int t = 0; t < cases; ++t) {
    int dt = dts[rnd() % 12];
    int layout = rnd() % 3;  // 0 flat, 1 rows, 2 offsets
    uint64_t n = sizes[rnd() % 18];
    if (t < 24) { dt = dts[t % 12]; n = t < 12 ? 1 << 22 : 65536 * 256 / 16; layout = t < 12 ? 0 : 1; }
    size_t es = gpuprim_dtype_size(dt);
    uint64_t segs = (uint64_t)-1, rowlen = 0, *off = NULL;
    int mode = rnd() % 6;  // data: 0 random, 1 all equal, 2 few distinct, 3 low bits, 4 sorted-ish, 5 special floats
    unsigned char *keys = malloc(n * es + 8);
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t v = rnd();
      if (mode == 1) v = 0x3F80000012345678ull; else if (mode == 2) v = (v % 5) * 0x0101010101010101ull; else if (mode == 3) v &= 0xFF;
      else if (mode == 4) v = i * 7919;
      else if (mode == 5) { uint64_t sp[] = {0x7FC00000u, 0xFFC00001u, 0x80000000u, 0, 0x7F800000u, 0xFF800000u, 1, 0x7FF8000000000001ull, 0xFFF0000000000000ull, 0x8000000000000000ull, 0x7E00, 0xFE01, 0x8000}; v = (rnd() % 3) ? sp[rnd() % 13] : v; }
      memcpy(keys + i * es, &v, es);
    }
    uint64_t k;
    if (layout == 0) { k = (rnd() % 4 == 0) ? n : (rnd() % 3 == 0 ? 1 + rnd() % 16 : 1 + rnd() % (n < 5000 ? n : 5000)); if (k > n) k = n; }
    else if (layout == 1) {
      uint64_t lens[] = {1, 3, 16, 100, 128, 129, 256, 1000, 4096, 8193, 70000};
      rowlen = lens[rnd() % 11]; while (rowlen > n) rowlen /= 2; if (!rowlen) rowlen = 1; segs = n / rowlen; n = segs * rowlen;
      k = 1 + rnd() % (rowlen < 100 ? rowlen : 100); if (rnd() % 5 == 0) k = rowlen; if (rnd() % 7 == 0 && rowlen > 5000) k = 5000;
    } else {
      segs = 1 + rnd() % 50; off = malloc((segs + 1) * 8); off[0] = rnd() % 3; if (off[0] > n) off[0] = n;
      for (uint64_t s = 1; s <= segs; ++s) { uint64_t room = n - off[s - 1]; uint64_t len = rnd() % 4 == 0 ? 0 : (rnd() % 2 ? rnd() % (room / 2 + 1) : rnd() % (300 < room + 1 ? 300 : room + 1)); off[s] = off[s - 1] + len; }
      k = 1 + rnd() % 200; if (rnd() % 6 == 0) k = 6000;
    }
    uint64_t nsegs = segs == (uint64_t)-1 ? 1 : segs, slots = nsegs * k;
    int idt = (rnd() % 2) ? GPUPRIM_DTYPE_U32 : GPUPRIM_DTYPE_I64; size_t is = gpuprim_dtype_size(idt);
    int order = rnd() % 2;
    void *ka = malloc(slots * es + 8), *ia = malloc(slots * is + 8), *kb = malloc(slots * es + 8), *ib = malloc(slots * is + 8);
    int s1 = run(cpu, dt, keys, n, layout == 2, off, segs, rowlen, k, order, idt, ka, ia, slots);
    if (getenv("AGREE_TRACE")) fprintf(stderr, "case %d dt %d layout %d n %llu segs %lld rowlen %llu k %llu order %d mode %d\n", t, dt, layout, (unsigned long long)n, (long long)segs, (unsigned long long)rowlen, (unsigned long long)k, order, mode);
    int s2 = run(gpu, dt, keys, n, layout == 2, off, segs, rowlen, k, order, idt, kb, ib, slots);
    int bad = s1 != s2 || memcmp(ka, kb, slots * es) || memcmp(ia, ib, slots * is);
    if (bad) { ++fails; printf("MISMATCH case %d dt %d layout %d n %llu segs %lld rowlen %llu k %llu order %d mode %d\n", t, dt, layout,
      (unsigned long long)n, (long long)segs, (unsigned long long)rowlen, (unsigned long long)k, order, mode);
      for (uint64_t j = 0; j < slots && j < 100000; ++j) if (memcmp((char*)ia + j*is, (char*)ib + j*is, is) || memcmp((char*)ka + j*es, (char*)kb + j*es, es)) {
        uint64_t x = 0, y = 0, u = 0, w = 0; memcpy(&x, (char*)ia + j*is, is); memcpy(&y, (char*)ib + j*is, is); memcpy(&u, (char*)ka + j*es, es); memcpy(&w, (char*)kb + j*es, es);
        printf("  first diff at %llu: cpu idx %llu key %llx, gpu idx %llu key %llx\n", (unsigned long long)j, (unsigned long long)x, (unsigned long long)u, (unsigned long long)y, (unsigned long long)w); break; } }
    free(keys); free(off); free(ka); free(ia); free(kb); free(ib);
  }
  printf("%d cases, %d mismatches\n", cases, fails);
  return fails != 0;
}
