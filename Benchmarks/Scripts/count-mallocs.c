// A malloc counter to preload (LD_PRELOAD) into a benchmark process: counts every call that allocates
// (malloc, calloc, realloc and the aligned forms the Swift runtime uses), on all threads, forwards each to
// glibc's own entry point, and prints `mallocs: N` to standard error at exit. Linux with glibc only.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static unsigned long calls;

static void count(void) { __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED); }

void *malloc(size_t size) {
  count();
  return __libc_malloc(size);
}

void *calloc(size_t number, size_t size) {
  count();
  return __libc_calloc(number, size);
}

void *realloc(void *pointer, size_t size) {
  count();
  return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
  count();
  return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
  count();
  return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
  count();
  void *pointer = __libc_memalign(alignment, size);
  if (!pointer) return ENOMEM;
  *out = pointer;
  return 0;
}

__attribute__((destructor)) static void report(void) {
  fprintf(stderr, "mallocs: %lu\n", __atomic_load_n(&calls, __ATOMIC_RELAXED));
}
