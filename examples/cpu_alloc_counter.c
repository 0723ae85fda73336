/* Counts the bytes PyTorch's CPU allocator holds, for record_trace.py's memory
 * truth (docs/memory-model.md). Loaded with LD_PRELOAD; record_trace.py builds
 * it with the system C compiler and re-executes itself with it.
 *
 * Why posix_memalign: c10's CPU allocator (c10/core/impl/alloc_cpu.cpp,
 * alloc_cpu) allocates every CPU tensor storage with posix_memalign(&p, 64,
 * nbytes) and frees it with free(). Torch 1.13's CPU profiler exports no
 * memory events, so the allocator's own calls are the truth. Only calls made
 * from libc10.so count (the caller's address, resolved once per caller with
 * dladdr): oneDNN and others call posix_memalign for their own scratch memory,
 * which is not tensor storage.
 *
 * Live bytes are the requested sizes of the counted blocks not yet freed; the
 * peak is their maximum since the last alloc_counter_reset_peak(). Thread-safe
 * (one mutex: the counted calls are tensor allocations, not a hot path). The
 * table of live blocks is mmap'ed, never malloc'ed, so that counting cannot
 * recurse into the allocator it counts. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

extern void __libc_free(void* ptr);

/* Open addressing with linear probing; 2^22 slots (64 MiB of address space,
 * touched only where used) is far above the live tensors of any step. */
#define kSlots (1u << 22)
typedef struct {
  uintptr_t ptr; /* 0: empty */
  uint64_t bytes;
} Slot;

static Slot* table;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t live_bytes, peak_bytes, counted_calls;
static int (*real_posix_memalign)(void**, size_t, size_t);
/* The last two callers seen in and out of libc10 (a cache for dladdr). */
static uintptr_t c10_caller, other_caller;

static size_t SlotOf(uintptr_t p) {
  return (size_t)((p >> 4) * 0x9E3779B97F4A7C15ull >> 42) & (kSlots - 1);
}

static int FromC10(void* caller) {
  uintptr_t c = (uintptr_t)caller;
  if (c == __atomic_load_n(&c10_caller, __ATOMIC_RELAXED)) return 1;
  if (c == __atomic_load_n(&other_caller, __ATOMIC_RELAXED)) return 0;
  Dl_info info;
  int yes = dladdr(caller, &info) && info.dli_fname &&
            strstr(info.dli_fname, "libc10.so") != NULL;
  __atomic_store_n(yes ? &c10_caller : &other_caller, c, __ATOMIC_RELAXED);
  return yes;
}

static void Insert(uintptr_t p, uint64_t bytes) {
  if (!table) {
    void* m = mmap(NULL, sizeof(Slot) * kSlots, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return;
    table = (Slot*)m;
  }
  size_t i = SlotOf(p);
  while (table[i].ptr) i = (i + 1) & (kSlots - 1);
  table[i].ptr = p;
  table[i].bytes = bytes;
  live_bytes += bytes;
  ++counted_calls;
  if (live_bytes > peak_bytes) peak_bytes = live_bytes;
}

/* Removes p if counted (backward-shift deletion keeps probe chains intact). */
static void Erase(uintptr_t p) {
  if (!table) return;
  size_t i = SlotOf(p);
  while (table[i].ptr && table[i].ptr != p) i = (i + 1) & (kSlots - 1);
  if (!table[i].ptr) return;
  live_bytes -= table[i].bytes;
  size_t hole = i;
  for (size_t j = (i + 1) & (kSlots - 1); table[j].ptr;
       j = (j + 1) & (kSlots - 1)) {
    size_t home = SlotOf(table[j].ptr);
    /* Move j into the hole unless its home lies cyclically in (hole, j]. */
    int stays =
        hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (stays) continue;
    table[hole] = table[j];
    hole = j;
  }
  table[hole].ptr = 0;
}

int posix_memalign(void** out, size_t alignment, size_t size) {
  if (!real_posix_memalign)
    real_posix_memalign =
        (int (*)(void**, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
  int rc = real_posix_memalign(out, alignment, size);
  if (rc == 0 && *out && FromC10(__builtin_return_address(0))) {
    pthread_mutex_lock(&lock);
    Insert((uintptr_t)*out, size);
    pthread_mutex_unlock(&lock);
  }
  return rc;
}

void free(void* ptr) {
  if (ptr && table) {
    pthread_mutex_lock(&lock);
    Erase((uintptr_t)ptr);
    pthread_mutex_unlock(&lock);
  }
  __libc_free(ptr);
}

uint64_t alloc_counter_live_bytes(void) {
  pthread_mutex_lock(&lock);
  uint64_t v = live_bytes;
  pthread_mutex_unlock(&lock);
  return v;
}

uint64_t alloc_counter_peak_bytes(void) {
  pthread_mutex_lock(&lock);
  uint64_t v = peak_bytes;
  pthread_mutex_unlock(&lock);
  return v;
}

uint64_t alloc_counter_calls(void) {
  pthread_mutex_lock(&lock);
  uint64_t v = counted_calls;
  pthread_mutex_unlock(&lock);
  return v;
}

void alloc_counter_reset_peak(void) {
  pthread_mutex_lock(&lock);
  peak_bytes = live_bytes;
  pthread_mutex_unlock(&lock);
}
