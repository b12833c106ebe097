/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libgpuprim: GPU reduce, prefix scan and sort behind a stable C ABI.
 *
 * Usage in brief:
 *   gpuprim_context_t ctx;
 *   gpuprim_context_create(NULL, &ctx, NULL, 0);          // CUDA if usable, else CPU
 *   gpuprim_buffer_t buf;
 *   gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_F32, n, &buf);
 *   gpuprim_buffer_upload(ctx, buf, 0, host_data, n);
 *   float total;
 *   gpuprim_reduce(ctx, GPUPRIM_OP_SUM, buf, &total);
 *   gpuprim_sort(ctx, buf, NULL, buf, NULL, GPUPRIM_ORDER_ASCENDING);  // in place
 *   gpuprim_buffer_download(ctx, buf, 0, host_data, n);
 *   gpuprim_buffer_destroy(ctx, buf);
 *   gpuprim_context_destroy(ctx);
 *
 * Conventions that hold for every function below:
 * - Every function returns a gpuprim_status_t; GPUPRIM_SUCCESS is 0.
 *   gpuprim_get_error_string() names a status, and gpuprim_context_last_error()
 *   gives the detailed message of the last failed call on a context (which
 *   argument, what was wrong, the CUDA error text).
 * - Failure is atomic: a call either succeeds or changes nothing. It leaves
 *   every buffer, every handle and every output argument as they were, and
 *   returns only the codes its documentation lists (plus INTERNAL, which is
 *   a bug in libgpuprim). Two exceptions: after GPUPRIM_ERROR_DEVICE the
 *   contents of the call's output buffers are unspecified; and a call that
 *   fails with OUT_OF_MEMORY may have given back the context's cached
 *   workspace (it keeps it whenever the memory allows; see
 *   gpuprim_context_get_workspace_size()).
 * - Handles are checked without trusting their bits: they are not pointers
 *   but serial numbers that libgpuprim looks up in its own tables, and it
 *   never reads memory through a handle. Every function that takes a context
 *   returns NULL_POINTER for a NULL context and INVALID_HANDLE for any other
 *   value that is not a live context: a destroyed context, a buffer handle,
 *   a pointer to anything, any integer. A buffer argument gives NULL_POINTER
 *   when NULL (where it is required), CONTEXT_MISMATCH when it is a live
 *   buffer of another context, and INVALID_HANDLE for anything else: a
 *   buffer destroyed by gpuprim_buffer_destroy() or with its context, or a
 *   value that never was a buffer handle. A handle, once invalid, stays
 *   invalid forever: handles are never reused within a process, however
 *   many contexts and buffers come and go. Any function that reaches the
 *   device may return DEVICE. The error lists below name the codes beyond
 *   these.
 * - Aliasing: an output may be "in place" where a function says so. In place
 *   means the output is the input buffer itself, or another buffer over
 *   exactly the same memory (the same address and count, e.g. two wraps of
 *   one pointer, or a wrap of an owned buffer's data). Any other overlap of
 *   an output with an input, or with another output, is INVALID_ARGUMENT.
 * - Device faults: CUDA treats some errors inside a kernel (an illegal
 *   address, e.g. a wrapped pointer whose memory was freed) as fatal to the
 *   process's CUDA state. The call reports GPUPRIM_ERROR_DEVICE with CUDA's
 *   text; afterwards every call that reaches that device, on any context and
 *   creating a new CUDA context included, may report the same error. No
 *   call returns a wrong result, and destroy still frees what it can. Only a
 *   new process (or the application's own cudaDeviceReset(), which also
 *   invalidates all device memory of the process) recovers. CPU contexts are
 *   unaffected.
 * - Counts and offsets are element counts (uint64_t), never byte counts.
 * - Threads: every function may be called from any thread. Calls on one
 *   context are serialized by the context's lock: threads may share a
 *   context, and each call runs whole, one after another (for speed, give
 *   each thread a context of its own: distinct contexts never wait for each
 *   other). gpuprim_context_destroy() waits for a call running on the
 *   context to finish; a call that comes later gets INVALID_HANDLE.
 *   gpuprim_context_last_error() gives the message of the last failed call
 *   on the context from any thread.
 * - fork() (POSIX; e.g. Python's multiprocessing with the "fork" start
 *   method, its default on Linux before 3.14): a child process may create
 *   CPU contexts and make every call, and may use the CPU contexts it
 *   inherited; the parent's contexts keep working in the parent. The
 *   thread engines' worker pools (oneTBB's, OpenMP's) do not survive
 *   fork() (GNU libgomp's makes the child wait forever), so in a process
 *   forked after libgpuprim was loaded the CPU backend never uses them:
 *   each call that runs in parallel starts its threads (at most
 *   cpu_threads, at most the CPUs) and joins them before it returns.
 *   Results are bitwise the same; only small calls cost a little more. Not
 *   covered: forking while another thread of the parent is inside a
 *   gpuprim call (the child inherits that call's locks as they were: use
 *   only contexts created in the child, or fork when no call is running),
 *   a library loaded after the fork into a child of a process that had
 *   already used OpenMP itself, and CUDA, which cannot be used in a child
 *   of a process that initialized it (a CUDA limitation; use the CPU
 *   backend there, or start processes with "spawn").
 * - Blocking: functions that return data to host memory (download, reduce,
 *   dot) block until the result is there. Functions whose results stay in
 *   buffers (upload excepted, which blocks until the host memory may be
 *   reused) are ordered on the context's stream and may return before the
 *   device has finished; gpuprim_context_synchronize() waits for them.
 *   On the CPU backend every call completes before it returns.
 *
 * API stability:
 * - Stable: every declaration in this header outside the section guarded by
 *   GPUPRIM_EXPERIMENTAL_API (at the end). Within a release series 0.MINOR.x
 *   (e.g. 0.4.0, 0.4.1) their signatures, struct layouts, enum values and
 *   documented behaviour do not change: a program built against 0.4.x runs
 *   with any 0.4.y library (the shared library's SONAME is libgpuprim.so.0.4).
 *   A new minor release (0.5) may change them, listed in the CHANGELOG, and
 *   has a new SONAME, so a program built against an older one never loads it;
 *   from 1.0 on, the ABI only grows within a major version.
 * - Experimental: declarations in the GPUPRIM_EXPERIMENTAL_API section, seen
 *   only by code that defines GPUPRIM_EXPERIMENTAL_API before including this
 *   header (like zstd's ZSTD_STATIC_LINKING_ONLY). They may change or go away
 *   in any release, patch releases included; use them only when you can
 *   rebuild against each release. New functions start there and move to
 *   the stable part in a later minor release. Experimental now (added after
 *   0.2.0): argmin/argmax (gpuprim_argreduce), adjacent differences
 *   (gpuprim_adjacent_difference), searchsorted
 *   (gpuprim_searchsorted, per row gpuprim_searchsorted_rows), histograms (gpuprim_histogram_even,
 *   gpuprim_histogram_range, gpuprim_bincount; per row gpuprim_histogram_even_rows,
 *   gpuprim_histogram_range_rows, gpuprim_bincount_rows), the merge of sorted runs
 *   (gpuprim_merge), select, partition, unique and run-length encoding
 *   (gpuprim_select, gpuprim_partition, gpuprim_unique,
 *   gpuprim_run_length_encode), reduce-by-key and group-by
 *   (gpuprim_reduce_by_key, gpuprim_group_by), argsort, the segments
 *   (gpuprim_segments_t) with segmented sort, argsort, reduce and scan,
 *   top-k (flat and segmented), and the distributed calls (communicators
 *   attached to contexts; distributed reduce, scan, sort, argsort and
 *   top-k).
 * - What the documentation below promises: results, errors, aliasing and
 *   ordering rules, whether a call blocks, and an upper bound on the CUDA
 *   workspace a call may keep. How a call runs (its kernels, paths by size,
 *   passes over the data) is described in docs/HOW_IT_RUNS.md and may change
 *   in any release.
 */
#ifndef GPUPRIM_GPUPRIM_H
#define GPUPRIM_GPUPRIM_H

#include <stddef.h>
#include <stdint.h>

#define GPUPRIM_VERSION_MAJOR 0
#define GPUPRIM_VERSION_MINOR 4
#define GPUPRIM_VERSION_PATCH 0
/* One number that compares: major * 10000 + minor * 100 + patch. */
#define GPUPRIM_VERSION_NUMBER \
    (GPUPRIM_VERSION_MAJOR * 10000 + GPUPRIM_VERSION_MINOR * 100 + GPUPRIM_VERSION_PATCH)

#if defined(GPUPRIM_STATIC_DEFINE)
#  define GPUPRIM_API
#elif defined(_WIN32)
#  if defined(GPUPRIM_BUILDING_LIBRARY)
#    define GPUPRIM_API __declspec(dllexport)
#  else
#    define GPUPRIM_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__) && __GNUC__ >= 4
#  define GPUPRIM_API __attribute__((visibility("default")))
#else
#  define GPUPRIM_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Status codes                                                              */
/* ------------------------------------------------------------------------ */

typedef enum gpuprim_status {
    GPUPRIM_SUCCESS = 0,
    /* A required pointer argument (handle, host pointer, output) is NULL. */
    GPUPRIM_ERROR_NULL_POINTER = 1,
    /* A handle is not a live object: a context that is not a context, or a
     * buffer that was destroyed. */
    GPUPRIM_ERROR_INVALID_HANDLE = 2,
    /* A buffer passed to a context was made by another context. */
    GPUPRIM_ERROR_CONTEXT_MISMATCH = 3,
    /* An enum argument has a value this version does not know. */
    GPUPRIM_ERROR_INVALID_ENUM = 4,
    /* Buffers whose dtypes must agree do not. */
    GPUPRIM_ERROR_DTYPE_MISMATCH = 5,
    /* Buffers whose counts must agree do not. */
    GPUPRIM_ERROR_SIZE_MISMATCH = 6,
    /* An offset/count range lies outside a buffer. */
    GPUPRIM_ERROR_OUT_OF_RANGE = 7,
    /* A count whose size in bytes does not fit in 64 bits (in size_t where
     * that is narrower), or a wrapped range that runs past the end of the
     * address space. Rejected before anything is allocated. A size that
     * fits but that no allocator can satisfy is OUT_OF_MEMORY. */
    GPUPRIM_ERROR_OVERFLOW = 8,
    /* Any other argument error: a bad options struct, a host pointer passed
     * where device memory is required, forbidden aliasing. */
    GPUPRIM_ERROR_INVALID_ARGUMENT = 9,
    /* Host or device memory could not be allocated (the memory for the
     * result, for temporary storage, or for libgpuprim's own bookkeeping).
     * The context stays usable. */
    GPUPRIM_ERROR_OUT_OF_MEMORY = 10,
    /* The backend asked for is not available (not built, or no device). */
    GPUPRIM_ERROR_BACKEND_UNAVAILABLE = 11,
    /* The CUDA runtime reported an error; the message holds CUDA's text. */
    GPUPRIM_ERROR_DEVICE = 12,
    /* A bug in libgpuprim. Please report it with the message. */
    GPUPRIM_ERROR_INTERNAL = 13,
    /* (Experimental.) The context's CUDA stream is capturing a CUDA graph
     * and the call cannot be captured: it waits for the device, reads a
     * result back to the host, allocates or frees device memory, or its
     * workspace would have to grow (see "CUDA graphs" in the experimental
     * section). Refused before anything was enqueued: the capture is intact
     * and nothing changed. Any call may return it while its context's stream
     * captures. */
    GPUPRIM_ERROR_NOT_CAPTURABLE = 14
} gpuprim_status_t;

/* Static, never-NULL English name of a status ("invalid handle"). Unknown
 * values give "unknown status". */
GPUPRIM_API const char *gpuprim_get_error_string(gpuprim_status_t status);

/* Library version at run time, as GPUPRIM_VERSION_NUMBER and as "0.4.0". */
GPUPRIM_API uint32_t gpuprim_version_number(void);
GPUPRIM_API const char *gpuprim_version_string(void);

/* ------------------------------------------------------------------------ */
/* Enums (values are part of the ABI and never change)                       */
/* ------------------------------------------------------------------------ */

typedef enum gpuprim_backend {
    GPUPRIM_BACKEND_AUTO = 0, /* CUDA when a usable device exists, else CPU */
    GPUPRIM_BACKEND_CPU = 1,
    GPUPRIM_BACKEND_CUDA = 2
} gpuprim_backend_t;

typedef enum gpuprim_dtype {
    GPUPRIM_DTYPE_I32 = 0,
    GPUPRIM_DTYPE_U32 = 1,
    GPUPRIM_DTYPE_I64 = 2,
    GPUPRIM_DTYPE_U64 = 3,
    GPUPRIM_DTYPE_F32 = 4,
    GPUPRIM_DTYPE_F64 = 5,
    /* 16-bit floats, passed as their bit patterns (uint16_t in C): IEEE 754
       binary16 (numpy float16, torch.float16, CUDA __half) and bfloat16
       (torch.bfloat16, CUDA __nv_bfloat16: the top half of an f32). */
    GPUPRIM_DTYPE_F16 = 6,
    GPUPRIM_DTYPE_BF16 = 7,
    GPUPRIM_DTYPE_I8 = 8,
    GPUPRIM_DTYPE_U8 = 9,
    GPUPRIM_DTYPE_I16 = 10,
    GPUPRIM_DTYPE_U16 = 11
} gpuprim_dtype_t;

/*
 * Reduction / scan operators.
 * - SUM on integers wraps modulo 2^bits, like C unsigned arithmetic (for
 *   signed types too). SUM on floats is deterministic: the same input on the
 *   same backend and device gives a bitwise identical result every run; it
 *   may differ in rounding between backends. On the CPU backend it is also
 *   the same for every cpu_threads and CPU: elements go to 32 interleaved
 *   accumulators per block of 512, which combine pairwise, and the blocks'
 *   sums combine in a binary tree whose shape depends on the count only
 *   (numpy's pairwise summation, widened). Its error is at most
 *   (20 + ceil(log2(ceil(n / 512)))) * u * sum(|x_i|) to first order
 *   (u = 2^-24 for f32, 2^-53 for f64); dot the same with |a_i * b_i|.
 *   A float SUM (or dot) that is
 *   NaN is always the canonical quiet NaN (0x7FC00000, 0x7FF8000000000000),
 *   whatever NaN payloads the input holds.
 * - MIN/MAX on floats follow IEEE 754-2019 minimum/maximum: a NaN in the
 *   input makes the result NaN (of several NaNs, the one whose bit pattern is
 *   largest as an unsigned integer), and -0.0 counts as less than +0.0. The
 *   results are exact and deterministic.
 * - Identities (the result of reducing zero elements, and element 0 of an
 *   exclusive scan): SUM 0; MIN the type's largest value (+inf for floats);
 *   MAX the type's smallest value (-inf for floats).
 * - Zeros' signs in float SUM: a reduce (and dot) of only -0.0 gives +0.0
 *   (the sum starts from +0.0, as CUB's and numpy's sum do). SUM scans of
 *   every float dtype (plain or segmented) without an initial value start
 *   from -0.0 (-0.0 + x == x), so an inclusive scan's element 0 is the
 *   input's element 0 and a run of -0.0 stays -0.0, as numpy's cumsum
 *   gives; an exclusive scan's element 0 is +0.0.
 * - F16 and BF16: SUM, dot and SUM scans accumulate in f32 (products by f32
 *   fused multiply-add) and round to the dtype once, to nearest even: the
 *   reduce result at the end, each scan output on its own. So a sum is about
 *   as accurate as an f32 sum of the same values, then rounded: it overflows
 *   to inf only if the final value does. Deterministic like f32. MIN/MAX are
 *   exact, with the f32 rules (NaN with the largest bit pattern, -0 < +0).
 *   A NaN result of SUM is the canonical quiet NaN (0x7E00, 0x7FC0).
 * - I8, U8, I16, U16: SUM and dot wrap modulo 2^8 or 2^16 like the wider
 *   integers (computed in 32 bits; the low bits are the same).
 * - The caller's floating-point environment does not reach the results:
 *   every call computes with IEEE defaults (round to nearest even,
 *   subnormals kept, no traps) on every thread it uses, whatever rounding
 *   mode, flush-to-zero / denormals-are-zero setting (-ffast-math,
 *   torch.set_flush_denormal) or enabled trap the calling thread has; and
 *   the call leaves that environment as it was, exception flags included
 *   (the library's own compares of NaNs raise none the caller sees).
 *   (Since 0.4.0; before, the CPU backend computed in the caller's.)
 */
typedef enum gpuprim_op {
    GPUPRIM_OP_SUM = 0,
    GPUPRIM_OP_MIN = 1,
    GPUPRIM_OP_MAX = 2
} gpuprim_op_t;

typedef enum gpuprim_scan_kind {
    GPUPRIM_SCAN_INCLUSIVE = 0, /* out[i] = in[0] op ... op in[i] */
    GPUPRIM_SCAN_EXCLUSIVE = 1  /* out[0] = identity, out[i] = in[0] op ... op in[i-1] */
} gpuprim_scan_kind_t;

typedef enum gpuprim_order {
    GPUPRIM_ORDER_ASCENDING = 0,
    GPUPRIM_ORDER_DESCENDING = 1
} gpuprim_order_t;

/* Size in bytes of one element of dtype, or 0 for an unknown dtype. */
GPUPRIM_API size_t gpuprim_dtype_size(gpuprim_dtype_t dtype);

/* ------------------------------------------------------------------------ */
/* Context                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct gpuprim_context_s *gpuprim_context_t;
typedef struct gpuprim_buffer_s *gpuprim_buffer_t;

/*
 * Options for gpuprim_context_create(). Always fill with
 * gpuprim_context_options_init() first: struct_size lets later versions add
 * fields without breaking callers built against this one. A library older
 * than the header the caller was built with accepts the larger struct when
 * every byte past the fields it knows is zero (the newer options are left at
 * their defaults), and refuses it with INVALID_ARGUMENT otherwise, never
 * ignoring an option that was set. The structs of older headers are
 * accepted too, the fields they lack taking their defaults: 0.2.0's
 * (struct_size 24: the fields up to cuda_stream) and 0.3.0's (32: up to
 * cpu_threads). Any other struct_size smaller than this version's, or above
 * 4096, is INVALID_ARGUMENT.
 */
/*
 * (Experimental.) A host's allocator for the context's memory (PyTorch's
 * caching allocator, CuPy's pool, RMM, a database's buffer manager): see
 * gpuprim_context_options_t.allocate. allocate returns 0 and sets *memory to
 * at least `bytes` bytes (bytes > 0), aligned to 256 bytes, usable on
 * `stream` (the context's cudaStream_t; NULL on the CPU backend), or returns
 * nonzero when it cannot. deallocate gives back a block allocate returned,
 * with the same bytes, ordered on `stream`: work libgpuprim enqueued on the
 * stream before it may still read the block (a stream-ordered allocator
 * such as cudaFreeAsync honours that; one that frees at once must
 * synchronize the stream first). Both are called on the thread making the
 * libgpuprim call, with the context's lock held: they must not call
 * libgpuprim on the same context. user: passed through untouched.
 */
typedef int (*gpuprim_allocate_fn)(void *user, uint64_t bytes, void *stream, void **memory);
typedef void (*gpuprim_deallocate_fn)(void *user, void *memory, uint64_t bytes, void *stream);

typedef struct gpuprim_context_options {
    uint64_t struct_size;   /* sizeof(gpuprim_context_options_t) */
    int32_t backend;        /* a gpuprim_backend_t; default AUTO */
    int32_t device_ordinal; /* CUDA device; default 0. Must be >= 0 on every
                               backend (options valid on one machine are
                               valid on all); the CPU backend does not use it */
    void *cuda_stream;      /* a cudaStream_t to order all work on; NULL
                               (default) makes the context create its own.
                               The caller keeps ownership and must keep the
                               stream alive until the context is destroyed. */
    int32_t cpu_threads;    /* CPU backend: how many threads one call may use;
                               0 (default) = every core the process may run
                               on (the thread engine's default: oneTBB's, or
                               OpenMP's, which OMP_NUM_THREADS sets).
                               Negative is INVALID_ARGUMENT on every
                               backend; the CUDA backend does not use it.
                               Any positive value up to INT32_MAX is
                               accepted, but a call never runs on more
                               threads than the CPUs the process may run on
                               (its CPU affinity mask when the context is
                               created; std::thread::hardware_concurrency()
                               where there is none), on every thread engine
                               (oneTBB, OpenMP; the build without one runs
                               every call on the calling thread). A larger
                               value only cuts the work into more, smaller
                               pieces (a sort into at most 16 runs); it
                               starts no more threads.
                               Results are bitwise the same for every value
                               (see the float rules at gpuprim_op_t). Calls
                               on inputs of a few thousand elements run on
                               the calling thread alone. (Since 0.3.0.) */
    int32_t reserved;       /* 0 (what the init function and any
                               initializer that leaves it out give): room
                               for a later option, named so that no byte of
                               the struct is padding a newer header could
                               use unseen. Nonzero is INVALID_ARGUMENT.
                               (Since 0.4.0; 0.3.0's struct_size 32 covers
                               it as padding, which is not read.) */
    /* (Experimental.) The host's allocator: when allocate is set (then
       deallocate must be too; INVALID_ARGUMENT otherwise), every block of
       the context's memory comes from it: buffers made by the context, the
       workspace, and on CUDA the context's own zeroed counters; only
       the small slot that values returned to the host land in is pinned
       host memory from cudaHostAlloc. Memory is device memory on
       CUDA and host memory on the CPU backend. NULL (default): cudaMalloc /
       the C allocator. An allocate that fails makes the call fail with
       OUT_OF_MEMORY with nothing changed; a block not aligned to 256 bytes
       is given back and the call fails with INVALID_ARGUMENT. Every block
       is given back by gpuprim_buffer_destroy, a workspace that grows or is
       released, or gpuprim_context_destroy, which gives back all that is
       left. */
    gpuprim_allocate_fn allocate;
    gpuprim_deallocate_fn deallocate;
    void *allocator_user;  /* passed to allocate and deallocate */
} gpuprim_context_options_t;

/* Fill *options with the defaults. Does nothing if options is NULL. It
 * writes this version's whole struct (sizeof(gpuprim_context_options_t) of
 * this header): code holding an older version's struct (a binding written
 * for 0.3.0's 32 bytes) sets struct_size and its fields itself instead. */
GPUPRIM_API void gpuprim_context_options_init(gpuprim_context_options_t *options);

/*
 * Create a context: the owner of buffers, of the device workspace and of the
 * stream every call is ordered on.
 * options: NULL for the defaults. With backend AUTO the environment variable
 *   GPUPRIM_BACKEND decides when it is set to cpu, cuda or auto (any case;
 *   set but empty counts as unset, auto as AUTO); otherwise CUDA is chosen
 *   when libgpuprim was built with CUDA and the device exists, else CPU. Any
 *   other value of GPUPRIM_BACKEND is INVALID_ARGUMENT (it is read only when
 *   the backend option is AUTO). Asking for CUDA (by option or environment)
 *   where it is not usable is an error, never a silent fallback.
 * context: receives the new handle; set to NULL on failure.
 * error_message, error_message_capacity: optional (NULL/0) host buffer that
 *   receives a NUL-terminated message when creation fails (there is no
 *   context to ask then); truncated to fit.
 * Errors: NULL_POINTER (context), INVALID_ARGUMENT (struct_size or bytes
 *   past the known fields, a bad GPUPRIM_BACKEND value, negative device or
 *   cpu_threads),
 *   INVALID_ENUM (backend), BACKEND_UNAVAILABLE, DEVICE, OUT_OF_MEMORY.
 */
GPUPRIM_API gpuprim_status_t gpuprim_context_create(const gpuprim_context_options_t *options,
                                                    gpuprim_context_t *context,
                                                    char *error_message,
                                                    size_t error_message_capacity);

/*
 * Destroy a context: waits for its work, frees every buffer it still owns
 * (wrapped memory is left alone) and its workspace. NULL is a no-op. The
 * handle and its buffers' handles are invalid afterwards, forever. If
 * another thread is inside a call on the context, destroy waits for that
 * call to return. Never fails on a live context (device errors while waiting
 * are ignored: the memory is freed regardless), except while its stream is
 * capturing into a CUDA graph: then NOT_CAPTURABLE, and the context and the
 * capture are left as they were (end the capture, then destroy).
 * Errors: INVALID_HANDLE (not a live context, e.g. destroyed already),
 *   NOT_CAPTURABLE.
 */
GPUPRIM_API gpuprim_status_t gpuprim_context_destroy(gpuprim_context_t context);

/* The backend the context runs on (CPU or CUDA, never AUTO).
 * Errors: NULL_POINTER (backend). */
GPUPRIM_API gpuprim_status_t gpuprim_context_get_backend(gpuprim_context_t context,
                                                         gpuprim_backend_t *backend);

/*
 * The device the context runs on: ordinal (-1 on CPU) and a NUL-terminated
 * name ("NVIDIA H100 80GB HBM3", or "CPU") truncated to name_capacity.
 * Either output may be NULL. Errors: none beyond the context's.
 */
GPUPRIM_API gpuprim_status_t gpuprim_context_get_device(gpuprim_context_t context,
                                                        int32_t *ordinal, char *name,
                                                        size_t name_capacity);

/* Block until every call made on the context so far has finished on the
 * device. Then, like gpuprim_context_check_deferred (experimental), report
 * a bad CSR offset that a deferred offsets check found.
 * Errors: INVALID_HANDLE, DEVICE, INVALID_ARGUMENT (a deferred offsets
 * check's failure; the wait itself has completed). */
GPUPRIM_API gpuprim_status_t gpuprim_context_synchronize(gpuprim_context_t context);

/*
 * The detailed message of the last call on this context that failed (from
 * any thread), or "" if none has. The string is the calling thread's own
 * copy: it stays valid, unchanged, until this thread calls
 * gpuprim_context_last_error() again, whatever other threads do. Returns
 * the static string "invalid context handle" for NULL or any value that is
 * not a live context.
 */
GPUPRIM_API const char *gpuprim_context_last_error(gpuprim_context_t context);

/*
 * Bytes of device workspace the context currently holds for temporary
 * storage (CUDA). It grows to the largest need seen and is reused, so repeated
 * calls do not allocate device memory. gpuprim_context_release_workspace()
 * waits for the context's work and frees it. The CPU backend keeps its
 * sort's scratch host memory the same way (keys packed with their
 * positions, 8 or 16 bytes a key, and the copies a merge of sorted runs, an
 * in-place value sort or a bit range needs: 48 bytes a key for 8-byte keys
 * whose values are sorted in place on 16 threads; a workspace query gives
 * a call's bytes). A call whose workspace cannot grow fails with
 * OUT_OF_MEMORY and keeps the old block (to make room, libgpuprim
 * gives the old block back and tries once more; after a second failure it
 * takes the old block again, which fails only if another user of the device
 * took that memory in between: then the workspace is left empty).
 * Errors: NULL_POINTER (bytes); release: DEVICE.
 */
GPUPRIM_API gpuprim_status_t gpuprim_context_get_workspace_size(gpuprim_context_t context,
                                                                uint64_t *bytes);
GPUPRIM_API gpuprim_status_t gpuprim_context_release_workspace(gpuprim_context_t context);

/* ------------------------------------------------------------------------ */
/* Buffers: typed arrays in the context's memory (device memory on CUDA)     */
/* ------------------------------------------------------------------------ */

/*
 * Create a buffer of count elements of dtype, contents uninitialized.
 * count may be 0. Errors: NULL_POINTER, INVALID_HANDLE, INVALID_ENUM (dtype),
 * OVERFLOW (count * size does not fit), OUT_OF_MEMORY, DEVICE.
 */
GPUPRIM_API gpuprim_status_t gpuprim_buffer_create(gpuprim_context_t context,
                                                   gpuprim_dtype_t dtype, uint64_t count,
                                                   gpuprim_buffer_t *buffer);

/*
 * Wrap memory the caller owns (a PyTorch/CuPy tensor, a cudaMalloc'd array)
 * as a buffer, without copying. On CUDA, data must be device (or managed)
 * memory accessible from the context's device; a host pointer is refused
 * with INVALID_ARGUMENT. On CPU it is host memory. data must be aligned to
 * the dtype's size. The caller keeps ownership: destroying the buffer or the
 * context does not free it, and it must outlive the buffer.
 * data may be NULL only when count is 0; with count 0 data is not used at
 * all (any value is taken, aligned or not) and gpuprim_buffer_get_info()
 * reports NULL for it.
 * Wrapping memory that another buffer already covers is allowed; see the
 * aliasing rule at the top for how such buffers may be combined.
 * Errors: NULL_POINTER, INVALID_HANDLE, INVALID_ENUM, OVERFLOW,
 * INVALID_ARGUMENT (misaligned, not device memory, wrong device), DEVICE,
 * OUT_OF_MEMORY (libgpuprim's record of the buffer).
 */
GPUPRIM_API gpuprim_status_t gpuprim_buffer_wrap(gpuprim_context_t context,
                                                 gpuprim_dtype_t dtype, void *data,
                                                 uint64_t count, gpuprim_buffer_t *buffer);

/* Destroy a buffer (frees its memory unless wrapped) after the work queued
 * on the context has finished. NULL buffer is a no-op. The handle is invalid
 * afterwards, forever: a second destroy gives INVALID_HANDLE and never
 * touches another buffer. Allocates nothing, so it cannot fail for want of
 * memory.
 * Errors: INVALID_HANDLE (a buffer already destroyed, or not a buffer),
 * CONTEXT_MISMATCH, DEVICE (waiting for the queued work failed; the buffer
 * stays alive and may be destroyed again, or freed with its context). */
GPUPRIM_API gpuprim_status_t gpuprim_buffer_destroy(gpuprim_context_t context,
                                                    gpuprim_buffer_t buffer);

/*
 * Describe a buffer: dtype, count and the address of its first element
 * (device address on CUDA). Each output may be NULL.
 * Errors: NULL_POINTER (buffer), INVALID_HANDLE, CONTEXT_MISMATCH.
 */
GPUPRIM_API gpuprim_status_t gpuprim_buffer_get_info(gpuprim_context_t context,
                                                     gpuprim_buffer_t buffer,
                                                     gpuprim_dtype_t *dtype, uint64_t *count,
                                                     void **data);

/*
 * Copy count elements from host memory into buffer[offset, offset+count).
 * Blocks until host_data may be reused. host_data may be NULL when count is 0.
 * Errors: NULL_POINTER, INVALID_HANDLE, CONTEXT_MISMATCH, OUT_OF_RANGE, DEVICE.
 */
GPUPRIM_API gpuprim_status_t gpuprim_buffer_upload(gpuprim_context_t context,
                                                   gpuprim_buffer_t buffer, uint64_t offset,
                                                   const void *host_data, uint64_t count);

/*
 * Copy buffer[offset, offset+count) into host memory. Waits for the work
 * ordered before it on the context, then blocks until the data is there.
 * Errors: as gpuprim_buffer_upload().
 */
GPUPRIM_API gpuprim_status_t gpuprim_buffer_download(gpuprim_context_t context,
                                                     gpuprim_buffer_t buffer, uint64_t offset,
                                                     void *host_data, uint64_t count);

/* ------------------------------------------------------------------------ */
/* Reduce                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * Reduce the whole of input with op and write one element of input's dtype
 * to host memory at result (e.g. a float for F32). Blocks.
 * Errors: NULL_POINTER, INVALID_HANDLE, CONTEXT_MISMATCH, INVALID_ENUM (op),
 * DEVICE, OUT_OF_MEMORY.
 */
GPUPRIM_API gpuprim_status_t gpuprim_reduce(gpuprim_context_t context, gpuprim_op_t op,
                                            gpuprim_buffer_t input, void *result);

/*
 * As gpuprim_reduce(), but the result lands in element 0 of result, a buffer
 * of the same dtype and count >= 1. Ordered on the context's stream: does
 * not wait for the device. Only element 0 of result is written, so the rule
 * is about that element: it must not lie inside input's memory (result must
 * not be input, nor a buffer whose element 0 is one of input's elements);
 * the rest of result may overlap anything.
 * Errors: as gpuprim_reduce(), plus DTYPE_MISMATCH, SIZE_MISMATCH (result
 * count 0), INVALID_ARGUMENT (result's element 0 inside input).
 */
GPUPRIM_API gpuprim_status_t gpuprim_reduce_to_buffer(gpuprim_context_t context,
                                                      gpuprim_op_t op, gpuprim_buffer_t input,
                                                      gpuprim_buffer_t result);

/*
 * Dot product: sum over i of a[i] * b[i]; a and b have the same dtype and
 * count. Integers wrap; floats use fused multiply-add and are deterministic
 * like SUM. Result to host (blocking) or to element 0 of a buffer
 * (stream-ordered; as for gpuprim_reduce_to_buffer(), result's element 0
 * must not lie inside a or b).
 * Errors: as gpuprim_reduce(), plus DTYPE_MISMATCH, SIZE_MISMATCH,
 * INVALID_ARGUMENT.
 */
GPUPRIM_API gpuprim_status_t gpuprim_dot(gpuprim_context_t context, gpuprim_buffer_t a,
                                         gpuprim_buffer_t b, void *result);
GPUPRIM_API gpuprim_status_t gpuprim_dot_to_buffer(gpuprim_context_t context,
                                                   gpuprim_buffer_t a, gpuprim_buffer_t b,
                                                   gpuprim_buffer_t result);

/* ------------------------------------------------------------------------ */
/* Scan                                                                      */
/* ------------------------------------------------------------------------ */

/*
 * Prefix scan of input into output with op (SUM, MIN, MAX), inclusive or
 * exclusive. output has input's dtype and count; output may be input (in
 * place, as defined at the top: the same buffer or the same memory).
 * Float SUM scans are deterministic run to run. On the CPU backend, for
 * every cpu_threads too: blocks of 8192 elements, each block started from
 * the running total of the blocks before it (each block's total added up
 * pairwise as in a SUM reduce, the totals added in block order), then one
 * element at a time; output i is within (8192 + ceil(n / 8192)) * u *
 * sum(|x_j|, j <= i) of the exact prefix sum. Stream-ordered.
 * Errors: NULL_POINTER, INVALID_HANDLE, CONTEXT_MISMATCH, INVALID_ENUM,
 * DTYPE_MISMATCH, SIZE_MISMATCH, INVALID_ARGUMENT (output overlaps input
 * without being in place), DEVICE, OUT_OF_MEMORY.
 */
GPUPRIM_API gpuprim_status_t gpuprim_scan(gpuprim_context_t context, gpuprim_op_t op,
                                          gpuprim_scan_kind_t kind, gpuprim_buffer_t input,
                                          gpuprim_buffer_t output);

/* ------------------------------------------------------------------------ */
/* Sort                                                                      */
/* ------------------------------------------------------------------------ */

/*
 * Stable sort of keys, optionally carrying values along (values[i] moves
 * with keys[i]). Stream-ordered.
 * keys_in, keys_out: same dtype and count. keys_out may be keys_in (in place).
 * values_in, values_out: both NULL (keys only) or both given, of any one
 *   dtype (it need not be the keys' dtype) and the keys' count; values_out
 *   may be values_in. Values are moved bit for bit.
 * Order: ascending or descending; equal keys keep their input order in both.
 *   Floats order as -inf < negatives < -0.0 < +0.0 < positives < +inf < NaN
 *   so ascending puts NaN last and descending puts it first. Among NaNs,
 *   ascending: positive NaNs by increasing bit pattern, then negative NaNs
 *   by decreasing bit pattern (0xFFFFFFFF before 0xFF800001 for f32; 0xFFFF
 *   before 0xFC01 for f16, before 0xFF81 for bf16). Keys and values may be
 *   of any dtype (1, 2, 4 or 8 bytes each).
 * In place (as defined at the top) is allowed for keys_out/keys_in and for
 * values_out/values_in; no other pair may overlap: keys and values must lie
 * in distinct memory.
 * Errors: NULL_POINTER, INVALID_HANDLE, CONTEXT_MISMATCH, INVALID_ENUM,
 * DTYPE_MISMATCH, SIZE_MISMATCH, INVALID_ARGUMENT (one of the values buffers
 * NULL, forbidden aliasing), DEVICE, OUT_OF_MEMORY.
 * Workspace (CUDA, from the context's cached workspace): at most one extra
 * copy of keys and values, plus 0.5 bytes a key and a few tens of KiB.
 * Keys already in the order asked for, or strictly against it, cost about
 * one read of the keys (plus a copy out of place); docs/HOW_IT_RUNS.md says
 * when that applies. Results are the same either way.
 */
GPUPRIM_API gpuprim_status_t gpuprim_sort(gpuprim_context_t context, gpuprim_buffer_t keys_in,
                                          gpuprim_buffer_t values_in, gpuprim_buffer_t keys_out,
                                          gpuprim_buffer_t values_out, gpuprim_order_t order);

/*
 * Options for gpuprim_sort_with_options(). Fill with
 * gpuprim_sort_options_init() first; struct_size follows the rules of
 * gpuprim_context_options_t (a newer header's larger struct is accepted when
 * its unknown tail is zero).
 */
typedef struct gpuprim_sort_options {
    uint64_t struct_size; /* sizeof(gpuprim_sort_options_t) */
    int32_t order;        /* a gpuprim_order_t; default ASCENDING */
    /* Sort by bits [begin_bit, end_bit) of each key only, like CUB's
       begin_bit/end_bit: keys equal in those bits keep their input order, the
       other bits are carried along untouched. The bits are those of the key's
       order-preserving unsigned form: unsigned keys as they are; signed keys
       with the sign bit flipped; floats mapped so that unsigned order is the
       float order above: (bits with the sign bit set) minus the number of
       negative-NaN patterns for positive floats, the complemented bits minus
       that number for negative ones, so -inf maps to 0 and every NaN to the
       top (e.g. f16 2.0 = 0x4000 maps to 0xC000 - 0x3FF = 0xBC01, so a range
       over the exponent does not split exactly at powers of two). Descending
       order complements that form, so
       bits [b, e) descending orders by those bits from high to low. Fewer
       bits cost less: e.g. [0, 16) of u32 keys known to be below 65536 takes
       about half the work of the full key.
       Default 0 and 0: end_bit 0 means the key's width (8 * its size). */
    uint32_t begin_bit;
    uint32_t end_bit;
    uint32_t reserved; /* 0 (what the init function and any initializer that
                          leaves it out give): room for a later option, named
                          so that no byte of the struct is padding a newer
                          header could use unseen. Nonzero is
                          INVALID_ARGUMENT. (Since 0.4.0.) */
} gpuprim_sort_options_t;

/* Fill *options with the defaults. Does nothing if options is NULL. */
GPUPRIM_API void gpuprim_sort_options_init(gpuprim_sort_options_t *options);

/*
 * gpuprim_sort() with options (NULL: the defaults, which make it
 * gpuprim_sort(..., GPUPRIM_ORDER_ASCENDING)). Same buffers, rules and
 * workspace as gpuprim_sort().
 * Errors: as gpuprim_sort(), plus INVALID_ARGUMENT (struct_size; a bit range
 * with begin_bit >= end_bit or end_bit past the key's bits, the message
 * naming both) and INVALID_ENUM (options->order).
 */
GPUPRIM_API gpuprim_status_t gpuprim_sort_with_options(gpuprim_context_t context,
                                                       gpuprim_buffer_t keys_in,
                                                       gpuprim_buffer_t values_in,
                                                       gpuprim_buffer_t keys_out,
                                                       gpuprim_buffer_t values_out,
                                                       const gpuprim_sort_options_t *options);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GPUPRIM_GPUPRIM_H */

/* ------------------------------------------------------------------------ */
/* Experimental API: #define GPUPRIM_EXPERIMENTAL_API before including this  */
/* header. Not covered by the stability promise above. Outside the main      */
/* include guard, so a later include with the macro defined still adds it.   */
/* The conventions at the top of this header hold here too.                  */
/* ------------------------------------------------------------------------ */
#if defined(GPUPRIM_EXPERIMENTAL_API) && !defined(GPUPRIM_GPUPRIM_H_EXPERIMENTAL)
#define GPUPRIM_GPUPRIM_H_EXPERIMENTAL

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Embedding: the workspace held still, CUDA graphs                          */
/* ------------------------------------------------------------------------ */

/*
 * Grow the context's workspace so that it holds at least `bytes` in all
 * (gpuprim_context_get_workspace_size), then, with fix != 0, hold it still:
 * until gpuprim_context_release_workspace (or this call with fix = 0) the
 * workspace neither grows nor moves, and a call that would need more fails
 * with OUT_OF_MEMORY naming the bytes it needs and the bytes held, with
 * nothing changed. bytes = 0 keeps the size held now, e.g. after running
 * the calls once to warm them up, which leaves the workspace at the largest
 * need of those shapes (a few calls size their workspace by the data too:
 * group-by on the CPU backend by the number of distinct keys; the calls on
 * CSR offsets by the longest segment), or after a workspace query
 * (gpuprim_context_begin_workspace_query), which finds those sizes without
 * running the calls. Growth comes from the context's allocator and goes to
 * the block most calls use (see "CUDA graphs" below);
 * gpuprim_context_reserve_workspace_sizes grows each block by its own size.
 * The distributed calls also keep a block of their own (their received
 * data and plan), which no query can size and neither call grows: run the
 * distributed calls once before holding; held smaller than a distributed
 * call needs, that call fails with OUT_OF_MEMORY on every rank, saying so.
 * Why: a CUDA graph keeps the workspace's address it captured; a workspace
 * that grows or is released afterwards would leave the graph pointing at
 * memory given back.
 * Errors: OUT_OF_MEMORY (the growth; the old workspace is kept),
 *   NOT_CAPTURABLE (growth while the stream captures).
 */
GPUPRIM_API gpuprim_status_t gpuprim_context_reserve_workspace(gpuprim_context_t context, uint64_t bytes,
                                                               int32_t fix);

/*
 * The workspace of calls, found without running them (the sizes to reserve
 * before capturing a CUDA graph, or for a query planner's budget).
 * main_bytes: the block most calls use (the one
 *   gpuprim_context_reserve_workspace(bytes) grows).
 * side_bytes: the second block (CUDA): argsort without keys_out, group-by,
 *   top-k past 8192 keys, segmented sorts; 0 on the CPU backend, which has
 *   one block.
 * bounded: nonzero when some size depends on the data, and is then the
 *   most the calls can take: the calls on CSR offsets (by the longest
 *   segment, taken as segments->max_segment_length when given, else the
 *   whole data), group-by on the CPU backend (by the
 *   number of distinct keys). Zero: the sizes are what the calls take.
 * struct_size: sizeof(gpuprim_workspace_sizes_t), set by the caller before
 *   either call below. Smaller, or above 4096, is INVALID_ARGUMENT. A larger
 *   one (a newer header's) is accepted: gpuprim_context_end_workspace_query
 *   writes the fields this version knows and zeroes the bytes past them;
 *   gpuprim_context_reserve_workspace_sizes needs those bytes to be zero
 *   (as gpuprim_context_options_t's rules say).
 */
typedef struct gpuprim_workspace_sizes {
    uint64_t struct_size; /* sizeof(gpuprim_workspace_sizes_t) */
    uint64_t main_bytes;  /* the block most calls use (what reserve_workspace(bytes) grows) */
    uint64_t side_bytes;  /* the second block: argsort without keys_out, group-by, top-k past
                             8192 keys, segmented sorts */
    int32_t bounded;      /* nonzero: some size depends on the data (e.g. the longest CSR
                             segment) and is the most it can take */
    int32_t reserved;     /* 0: room for a later field (no byte of the struct is padding);
                             written 0; reserve_workspace_sizes refuses nonzero */
} gpuprim_workspace_sizes_t;

/*
 * Start a workspace query on the context. Until
 * gpuprim_context_end_workspace_query, each primitive call on the context
 * (from any thread) checks its arguments and returns their status exactly
 * as it would, but runs nothing: it enqueues nothing, allocates nothing,
 * writes no output (host results and counts included) and reads no
 * buffer's contents (CSR offsets included: the errors that depend on the
 * data, a bad offset or a segment too long for the indices' dtype, come
 * from the real call only).
 * It records the workspace that call of that shape would take, per block:
 * the query's sizes are the largest over its calls. A query enqueues
 * nothing, so it is allowed while the stream captures a CUDA graph (the
 * graph gets no nodes). Buffer create, destroy, upload, download, the
 * workspace calls and synchronize work as usual during a query; the
 * distributed calls are INVALID_ARGUMENT.
 * Errors: INVALID_ARGUMENT (a query is already open on the context).
 */
GPUPRIM_API gpuprim_status_t gpuprim_context_begin_workspace_query(gpuprim_context_t context);

/*
 * End the context's workspace query and write its sizes to *sizes (see
 * gpuprim_workspace_sizes_t). The query ends whatever the error: with sizes
 * NULL or a bad struct_size its sizes are lost, nothing written.
 * Errors: INVALID_ARGUMENT (no query open; struct_size), NULL_POINTER
 *   (sizes).
 */
GPUPRIM_API gpuprim_status_t gpuprim_context_end_workspace_query(gpuprim_context_t context,
                                                                 gpuprim_workspace_sizes_t *sizes);

/*
 * Grow each block of the workspace to at least its size in *sizes (0: as it
 * is; bounded is not read), then, with fix != 0, hold both still as
 * gpuprim_context_reserve_workspace does (fix = 0 lets them grow again).
 * With the sizes of a query over the calls to be captured, those calls then
 * run and capture without growing the workspace. On the CPU backend the one
 * block grows to main_bytes + side_bytes.
 * Errors: NULL_POINTER (sizes), INVALID_ARGUMENT (struct_size),
 *   OUT_OF_MEMORY (a growth, or main_bytes + side_bytes past 2^64; both
 *   blocks and their hold are then as they were), NOT_CAPTURABLE (growth
 *   while the stream captures).
 */
GPUPRIM_API gpuprim_status_t gpuprim_context_reserve_workspace_sizes(gpuprim_context_t context,
                                                                     const gpuprim_workspace_sizes_t *sizes,
                                                                     int32_t fix);

/*
 * CUDA graphs (CUDA backend). A call on a context whose stream is capturing
 * (cudaStreamBeginCapture on the stream given in the options, or on the
 * context's own stream, gpuprim_context_get_stream) is captured into the
 * graph when it only enqueues work:
 * - every stream-ordered call: reduce and dot to a buffer, scan, sort,
 *   argsort, segmented calls and top-k on uniform rows (row_length) or,
 *   with their offsets check deferred, on CSR offsets (see
 *   gpuprim_context_set_offsets_check for the exceptions), searchsorted,
 *   merge, histograms, and select, partition,
 *   unique, run-length encode, reduce-by-key and group-by with their count
 *   going to a device buffer only;
 * - provided the workspace already holds what the call needs: before
 *   capture, run the same calls on the same shapes inside a workspace query
 *   and reserve its sizes held still (gpuprim_context_reserve_workspace_sizes
 *   with fix), or warm the calls up by running them once and then hold the
 *   workspace still. (A warm-up takes what its data needed; a segmented
 *   call on CSR offsets with its check deferred takes, while capturing,
 *   what its offsets' bound may need, as a query reports: size those by a
 *   query.) (gpuprim_context_reserve_workspace by bytes grows only
 *   the block most calls use; argsort without keys_out, group-by, top-k of
 *   rows past 8192 keys and segmented sorts also keep a second block, which
 *   a query's side_bytes or a warm-up sizes.) A workspace query may itself
 *   run while the stream captures: it adds nothing to the graph.
 * These are refused with NOT_CAPTURABLE, before anything is enqueued: calls
 * returning a value or count to the host, argmin/argmax, segmented calls
 * and top-k on CSR offsets whose check is not deferred (the call waits for
 * it), the deferred ones that gpuprim_context_set_offsets_check names,
 * check_deferred, segmented sorts of uniform rows longer than the largest sorting network
 * (4096 keys at most; their row table comes from host memory), upload,
 * download, synchronize, buffer create and destroy, workspace growth or
 * release, the distributed calls, and gpuprim_context_destroy (the context
 * stays live).
 * A captured graph reads and writes the buffers and the workspace the
 * calls saw: replay it on the context's stream (or ordered with it), after
 * writing new data into the same buffers, while those buffers live and the
 * workspace is held still (gpuprim_context_reserve_workspace with fix).
 * Replays compute what the calls would compute on the data then present.
 */

/*
 * How calls on CSR offsets (segmented sort, argsort, reduce, scan and
 * top-k) check them. The check finds a bad offset (the rules at
 * gpuprim_segments_t), a segment longer than segments->max_segment_length,
 * and, for argsort and top-k, a segment whose last index the indices'
 * dtype cannot hold.
 * - GPUPRIM_OFFSETS_CHECK_WAIT (the default): the call waits for the check
 *   (on CUDA it runs on the device) and returns INVALID_ARGUMENT naming the
 *   first fault.
 * - GPUPRIM_OFFSETS_CHECK_DEFERRED: the check runs in stream order, before
 *   the call's other work, and the call returns without waiting for it. A
 *   call whose offsets fail writes nothing: its outputs (a reduce's
 *   identities for empty segments included) keep what they held. The
 *   first failure is kept, and later ones counted, until
 *   gpuprim_context_check_deferred or gpuprim_context_synchronize reports
 *   it: INVALID_ARGUMENT, with gpuprim_context_last_error naming the entry
 *   point, the call's number among the context's calls on CSR offsets (a
 *   graph replay reports the number of the captured call), the fault as
 *   the waiting check words it, and how many more calls failed. The next
 *   call on offsets does its work as usual.
 *   On CUDA, deferred calls can be captured into a CUDA graph, except two,
 *   refused with NOT_CAPTURABLE before anything is enqueued: a segmented
 *   sort whose segments may be longer than the largest sorting network
 *   (4096 keys, less on a device whose shared memory cannot hold that network
 *   for the call's keys and values), and a segmented
 *   top-k whose segments may be longer than 8192 keys. "May be": by
 *   segments->max_segment_length when given, else by the data's count n.
 *   Outside capture, those two wait for the lengths of their long segments
 *   (not for the check's verdict). Deferred checks cost one small kernel
 *   and no wait; they read whole buffers (no narrowing to what the
 *   segments cover) and pick their path by max_segment_length or n rather
 *   than by the longest segment, so give max_segment_length where it is
 *   known. The CPU backend checks at the call, as in waiting mode, and
 *   reports in the same deferred way.
 * Setting the mode affects later calls only.
 * Errors: INVALID_ENUM (mode).
 */
typedef enum gpuprim_offsets_check {
    GPUPRIM_OFFSETS_CHECK_WAIT = 0,
    GPUPRIM_OFFSETS_CHECK_DEFERRED = 1
} gpuprim_offsets_check_t;
GPUPRIM_API gpuprim_status_t gpuprim_context_set_offsets_check(gpuprim_context_t context,
                                                               gpuprim_offsets_check_t mode);

/*
 * Waits for the context's work, then reports the first failure a deferred
 * offsets check found since the last report (and forgets it): SUCCESS when
 * none. Refused while the stream captures (it waits).
 * Errors: INVALID_ARGUMENT (the failure), NOT_CAPTURABLE, DEVICE.
 */
GPUPRIM_API gpuprim_status_t gpuprim_context_check_deferred(gpuprim_context_t context);

/*
 * The cudaStream_t the context orders its work on (the options' stream, or
 * the one it created), as void *, for capture and for ordering a host's own
 * work with the context's; NULL on the CPU backend.
 * Errors: NULL_POINTER (stream).
 */
GPUPRIM_API gpuprim_status_t gpuprim_context_get_stream(gpuprim_context_t context, void **stream);

/* ------------------------------------------------------------------------ */
/* Argmin / argmax                                                           */
/* ------------------------------------------------------------------------ */

/*
 * The position of the least (op MIN, argmin) or greatest (op MAX, argmax)
 * element of input, written to *index: exactly what numpy's np.argmin /
 * np.argmax give on the flat array. Blocks until *index is written.
 * - Of several equal extremes, the first position.
 * - Floats: if input holds a NaN, the position of the first NaN, for MIN and
 *   MAX alike, whatever its sign and payload (NaN propagates, as in numpy).
 *   -0.0 and +0.0 compare equal (the first of them wins where a zero is the
 *   extreme); +-inf and subnormals are ordinary values. F16 and BF16
 *   compare by value, like the other floats.
 * - Integers of every width compare by value (signed as signed).
 * The result does not depend on the backend, the device, cpu_threads or
 * how the work is cut: it is the one position these rules define.
 * input: any dtype, at least one element (numpy raises on an empty array).
 * Errors: NULL_POINTER (input, index), INVALID_HANDLE, CONTEXT_MISMATCH,
 * INVALID_ENUM (op not a gpuprim_op_t), INVALID_ARGUMENT (op SUM, naming
 * 'op'; an empty input, naming 'input'), DEVICE, OUT_OF_MEMORY. On failure
 * *index is left as it was.
 * Workspace (CUDA, from the context's cached workspace): 16 bytes per block
 * of the first pass (at most a few thousand blocks: a few tens of KiB);
 * none when one block does all the work.
 */
GPUPRIM_API gpuprim_status_t gpuprim_argreduce(gpuprim_context_t context, gpuprim_op_t op, gpuprim_buffer_t input,
                                               uint64_t *index);

/* ------------------------------------------------------------------------ */
/* Search in sorted data                                                     */
/* ------------------------------------------------------------------------ */

/* Which bound gpuprim_searchsorted() gives (numpy's side= argument). */
typedef enum gpuprim_side {
    GPUPRIM_SIDE_LEFT = 0, /* lower bound: the first position whose key is not before the query */
    GPUPRIM_SIDE_RIGHT = 1 /* upper bound: the first position whose key is after the query */
} gpuprim_side_t;

/*
 * For each query, the position in sorted where it would be inserted to keep
 * sorted in order: np.searchsorted(sorted, queries, side) for an ascending
 * buffer, and the same rule for a descending one. With n = sorted's count:
 * - SIDE_LEFT: indices[j] = the number of keys that come strictly before
 *   queries[j] in the order (the lower bound, 0 to n);
 * - SIDE_RIGHT: the number of keys that come before queries[j] or equal it
 *   (the upper bound).
 * "Before" is the order of gpuprim_sort() with that order, bit for bit:
 * floats order -inf < ... < -0.0 < +0.0 < ... < +inf < NaN, the NaNs by
 * their bit patterns as the sort puts them (so -0.0 and +0.0 are distinct
 * keys, and so are NaNs of distinct payloads; numpy's searchsorted ties
 * them). Integers compare by value, signed as signed.
 * sorted: any dtype, n >= 0 keys, sorted in `order` by those rules (as
 *   gpuprim_sort() leaves them). That is not checked: on a buffer that is not
 *   sorted every index is still in [0, n], but which is unspecified.
 * queries: sorted's dtype, any count m (0: nothing is written), any order.
 *   Sorted queries run faster (a merge of the queries with the keys in place
 *   of independent binary searches); the results are the same.
 * indices: I32, U32, I64 or U64 with m elements; n itself must fit its
 *   dtype (I32: n <= 2^31 - 1). It must not overlap sorted or queries.
 * Stream-ordered. Deterministic: the one answer the rule defines, on every
 * backend.
 * Errors: NULL_POINTER (sorted, queries, indices), INVALID_HANDLE,
 * CONTEXT_MISMATCH, INVALID_ENUM (side, order), DTYPE_MISMATCH (queries'
 * dtype; indices not an index dtype), SIZE_MISMATCH (indices' count),
 * INVALID_ARGUMENT (n past what the indices' dtype holds; overlapping
 * buffers), DEVICE, OUT_OF_MEMORY.
 * Workspace: none.
 */
GPUPRIM_API gpuprim_status_t gpuprim_searchsorted(gpuprim_context_t context, gpuprim_buffer_t sorted,
                                                  gpuprim_buffer_t queries, gpuprim_side_t side,
                                                  gpuprim_order_t order, gpuprim_buffer_t indices);

/*
 * gpuprim_searchsorted() of each row on its own (torch.searchsorted of 2-D
 * tensors): sorted holds `rows` rows of n keys each, queries `rows` rows of
 * m queries each (both row-major), and indices[r * m + j] is the bound of
 * queries[r * m + j] among the n keys of row r (0 to n, counted from the
 * row's first key). Every row of sorted is sorted in `order`. rows >= 1;
 * rows = 1 is gpuprim_searchsorted().
 * indices: as for gpuprim_searchsorted() (queries' count; n must fit).
 * Each tile of queries stays within one row (docs/HOW_IT_RUNS.md): rows of
 * few queries leave much of a tile idle on CUDA.
 * Errors: as gpuprim_searchsorted(), plus INVALID_ARGUMENT (rows 0; the
 * count of sorted or of queries not a multiple of rows).
 * Workspace: none.
 */
GPUPRIM_API gpuprim_status_t gpuprim_searchsorted_rows(gpuprim_context_t context, gpuprim_buffer_t sorted,
                                                       gpuprim_buffer_t queries, uint64_t rows,
                                                       gpuprim_side_t side, gpuprim_order_t order,
                                                       gpuprim_buffer_t indices);

/* ------------------------------------------------------------------------ */
/* Merge                                                                     */
/* ------------------------------------------------------------------------ */

/*
 * The stable merge of two sorted runs: keys_out receives the keys of keys_a
 * and keys_b in `order` (the order, float order and ties of gpuprim_sort()),
 * equal keys from keys_a first, each run's equal keys in their order; so
 * keys_out is the stable sort of keys_a followed by keys_b. Values (if given)
 * move with their keys. Stream-ordered.
 * keys_a, keys_b: one dtype, each sorted in `order` as gpuprim_sort() leaves
 *   keys (not checked: with runs out of order the outputs are unspecified,
 *   and nothing outside the buffers is read or written). Either may be empty;
 *   they may overlap each other.
 * keys_out: the keys' dtype, count_a + count_b elements.
 * values_a, values_b, values_out: all NULL (keys only) or all given, of any
 *   one dtype, each with its keys' count.
 * The outputs must not overlap any input or each other (no in place).
 * Errors: NULL_POINTER, INVALID_HANDLE, CONTEXT_MISMATCH, INVALID_ENUM
 * (order), DTYPE_MISMATCH, SIZE_MISMATCH, INVALID_ARGUMENT (some values
 * buffers NULL and others not; overlapping outputs), DEVICE, OUT_OF_MEMORY.
 * Workspace (CUDA): 8 bytes per tile of outputs (7,680 outputs a tile for
 * 4-byte keys alone, down to 1,536 for 8-byte keys with 8-byte values),
 * plus 8 bytes.
 */
GPUPRIM_API gpuprim_status_t gpuprim_merge(gpuprim_context_t context, gpuprim_buffer_t keys_a,
                                           gpuprim_buffer_t values_a, gpuprim_buffer_t keys_b,
                                           gpuprim_buffer_t values_b, gpuprim_buffer_t keys_out,
                                           gpuprim_buffer_t values_out, gpuprim_order_t order);

/* ------------------------------------------------------------------------ */
/* Adjacent differences                                                      */
/* ------------------------------------------------------------------------ */

/*
 * The difference of each element and the one before it: output[0] =
 * input[0] and output[i] = input[i] - input[i - 1] for 0 < i < count
 * (CUB's DeviceAdjacentDifference::SubtractLeftCopy; numpy's
 * np.diff(input, prepend=0), and np.diff(input) is output[1:]). It undoes
 * an inclusive SUM scan: gpuprim_scan(SUM, INCLUSIVE) of output gives input
 * back, exactly for integers (delta encoding and decoding). output[0] is
 * input[0]'s bits (a NaN there keeps its payload).
 * - Integers wrap modulo 2^bits in their dtype (signed ones as two's
 *   complement), as numpy's do.
 * - F32, F64: one IEEE subtraction in the dtype, rounded to nearest even.
 *   F16, BF16: both elements widened to f32 (exactly), subtracted in f32 and
 *   rounded once to the dtype (numpy's float16 rule; the same bits as one
 *   IEEE subtraction in the dtype, as f32 has more than twice the
 *   significand bits plus two). A NaN result (inf - inf, a NaN element) is
 *   the canonical quiet NaN (positive, payload 0), as float sums give;
 *   subnormals are kept (no flush to zero).
 * The result does not depend on the backend, the device, cpu_threads or
 * how the work is cut. Stream-ordered.
 * input: any dtype, any count (0: nothing is done).
 * output: input's dtype and count; it may be input (in place: the same
 *   buffer or the same memory), or must not overlap it.
 * Errors: NULL_POINTER, INVALID_HANDLE, CONTEXT_MISMATCH, DTYPE_MISMATCH,
 * SIZE_MISMATCH, INVALID_ARGUMENT (output overlaps input without being in
 * place), DEVICE, OUT_OF_MEMORY. On failure output is left as it was.
 * Workspace: none out of place. In place (the elements before each piece,
 * copied before any piece is written over): CUDA one element per chunk of
 * 512 (1- and 2-byte dtypes), 256 (4-byte) or 128 (8-byte) elements, at
 * most 1/128 of input's bytes, from the context's workspace; CPU one
 * element per 2^16, from the heap.
 */
GPUPRIM_API gpuprim_status_t gpuprim_adjacent_difference(gpuprim_context_t context, gpuprim_buffer_t input,
                                                         gpuprim_buffer_t output);

/* ------------------------------------------------------------------------ */
/* Histograms                                                                */
/* ------------------------------------------------------------------------ */

/*
 * Rules of the three histogram calls:
 * - counts: U32 or U64, one element per bin (bins = its count, 1 to 2^32);
 *   every element is written: counts[b] = the number of input elements in
 *   bin b (U32 counts wrap modulo 2^32). It must not overlap the inputs.
 * - Elements outside every bin are ignored, and so are NaNs.
 * - Stream-ordered. Deterministic: the counts are integers, the same on
 *   every backend and run.
 * Errors of every call: NULL_POINTER, INVALID_HANDLE, CONTEXT_MISMATCH,
 * DTYPE_MISMATCH (counts not U32 or U64), INVALID_ARGUMENT (counts with no
 * elements or more than 2^32; overlapping buffers), DEVICE, OUT_OF_MEMORY;
 * and each call's own below.
 * Workspace (CUDA): none.
 */

/*
 * bins even-width bins over [*lower, *upper): np.histogram(input, bins,
 * range=(lower, upper)) except that upper itself is outside (CUB's
 * HistogramEven rule). lower, upper: host pointers to one element of
 * input's dtype each, lower < upper by value; floats finite (and upper -
 * lower finite in f64). The bin of x, for lower <= x < upper:
 * - integers: floor((x - lower) * bins / (upper - lower)), exactly;
 * - floats: floor((x - lower) * (bins / (upper - lower))) computed in f64
 *   (x and the bounds widened exactly; -0.0 is 0; where bins / (upper -
 *   lower) overflows f64, f64 bounds a few subnormals apart:
 *   floor((x - lower) / (upper - lower) * bins)), clamped to bins - 1: every
 *   x with lower <= x < upper counts (x just below upper in the last bin),
 *   and an element within a rounding of an inner edge may count in the bin
 *   next to the one exact arithmetic gives, as in CUB. NaN, x < lower and
 *   x >= upper never count.
 * Errors: INVALID_ARGUMENT also for the bounds (naming 'lower' or 'upper').
 */
GPUPRIM_API gpuprim_status_t gpuprim_histogram_even(gpuprim_context_t context, gpuprim_buffer_t input,
                                                    const void *lower, const void *upper,
                                                    gpuprim_buffer_t counts);

/*
 * Bins given by edges: counts[b] = the number of elements x with
 * edges[b] <= x < edges[b + 1] (CUB's HistogramRange rule; np.histogram
 * also counts x == the last edge). edges: input's dtype, bins + 1 >= 2
 * elements, in increasing order by value (not checked: with edges out of
 * order each element still counts in at most one bin, which one is
 * unspecified). Floats compare by value (-0.0 equals +0.0).
 * counts: edges' count - 1 elements.
 * Errors: DTYPE_MISMATCH also for edges; SIZE_MISMATCH (counts' count);
 * INVALID_ARGUMENT (fewer than 2 edges).
 */
GPUPRIM_API gpuprim_status_t gpuprim_histogram_range(gpuprim_context_t context, gpuprim_buffer_t input,
                                                     gpuprim_buffer_t edges, gpuprim_buffer_t counts);

/*
 * counts[v] = the number of elements equal to v, for v = 0 .. bins - 1
 * (np.bincount(input, minlength=bins)[:bins]); other values, negative ones
 * included, are ignored. input: an integer dtype.
 * Errors: DTYPE_MISMATCH also for input (not an integer dtype).
 */
GPUPRIM_API gpuprim_status_t gpuprim_bincount(gpuprim_context_t context, gpuprim_buffer_t input,
                                              gpuprim_buffer_t counts);

/*
 * The three calls above on each row of a 2-D input on its own (a row-wise
 * np.histogram / np.bincount; torch.histc of each row): input holds `rows`
 * rows of n = input's count / rows elements each (row-major), counts holds
 * `rows` rows of bins counts, and counts[r * bins + b] is the count of bin
 * b among the n elements of row r: exactly the counts the flat call gives
 * on that row alone (the same bins, rules and dtypes; every count written,
 * rows of no elements included). rows >= 1; rows = 1 is the flat call.
 * bins = counts' count / rows (1 to 2^32 a row); for
 * gpuprim_histogram_range_rows the same edges serve every row, and counts'
 * count must be rows * (edges' count - 1).
 * Errors: as the flat calls, plus INVALID_ARGUMENT (rows 0; the count of
 * input not a multiple of rows; for _even_rows and bincount_rows, the
 * count of counts not a multiple of rows, or more than 2^32 bins a row)
 * and, for _range_rows, SIZE_MISMATCH (counts' count not rows * bins,
 * counts with no elements included, where the flat rule says
 * INVALID_ARGUMENT).
 * Workspace (CUDA): none.
 */
GPUPRIM_API gpuprim_status_t gpuprim_histogram_even_rows(gpuprim_context_t context, gpuprim_buffer_t input,
                                                         uint64_t rows, const void *lower, const void *upper,
                                                         gpuprim_buffer_t counts);
GPUPRIM_API gpuprim_status_t gpuprim_histogram_range_rows(gpuprim_context_t context, gpuprim_buffer_t input,
                                                          uint64_t rows, gpuprim_buffer_t edges,
                                                          gpuprim_buffer_t counts);
GPUPRIM_API gpuprim_status_t gpuprim_bincount_rows(gpuprim_context_t context, gpuprim_buffer_t input,
                                                   uint64_t rows, gpuprim_buffer_t counts);

/* ------------------------------------------------------------------------ */
/* Select, partition, unique, run-length encode, reduce-by-key, group-by    */
/* ------------------------------------------------------------------------ */

/*
 * Rules of the calls whose output size depends on the data (gpuprim_select,
 * gpuprim_partition, gpuprim_unique, gpuprim_run_length_encode,
 * gpuprim_reduce_by_key, gpuprim_group_by):
 * - The number of elements (or runs) written goes to *count (a host
 *   pointer: the call then blocks until it is known), to element 0 of
 *   count_out (a buffer of I32, U32, I64 or U64, count >= 1, in the
 *   context's memory: stream-ordered, the call does not wait), or both. At
 *   least one of them is given; the input's count must fit count_out's
 *   dtype (INVALID_ARGUMENT otherwise).
 * - Outputs hold at least as many elements as the input (the most the call
 *   can write); elements past those written are left as they were.
 * - Outputs must not overlap any input or each other (no in place).
 * - values / values_out (optional, both NULL or both given): values of any
 *   dtype, one per input element, carried with their elements.
 * - Deterministic; the same results on every backend (float sums of
 *   gpuprim_reduce_by_key() and gpuprim_group_by(): the same on every run
 *   of a backend).
 * Errors of every call: NULL_POINTER, INVALID_HANDLE, CONTEXT_MISMATCH,
 * INVALID_ENUM, DTYPE_MISMATCH (count_out not an index dtype), SIZE_MISMATCH
 * (an output shorter than the input; values of another count; count_out of
 * no elements), INVALID_ARGUMENT (count and count_out both NULL; counts that
 * do not fit; overlapping buffers), DEVICE, OUT_OF_MEMORY. On an error
 * nothing is written (neither the outputs nor *count).
 */

/* Which elements gpuprim_select() and gpuprim_partition() keep. */
typedef enum gpuprim_keep {
    GPUPRIM_KEEP_FLAGGED = 0,       /* flags[i] != 0 */
    GPUPRIM_KEEP_LESS = 1,          /* x < scalar */
    GPUPRIM_KEEP_LESS_EQUAL = 2,    /* x <= scalar */
    GPUPRIM_KEEP_GREATER = 3,       /* x > scalar */
    GPUPRIM_KEEP_GREATER_EQUAL = 4, /* x >= scalar */
    GPUPRIM_KEEP_EQUAL = 5,         /* x == scalar */
    GPUPRIM_KEEP_NOT_EQUAL = 6,     /* x != scalar */
    GPUPRIM_KEEP_IN_RANGE = 7,      /* scalar <= x < scalar_high */
    GPUPRIM_KEEP_NAN = 8,           /* x is a NaN (floats; never for integers) */
    GPUPRIM_KEEP_NOT_NAN = 9        /* x is not a NaN (every integer) */
} gpuprim_keep_t;

/*
 * A predicate a C caller states without code. Comparisons are by value, as
 * numpy's and C's operators: integers as their type (signed as signed),
 * floats as IEEE (f16/bf16 widened exactly): -0.0 == +0.0, a NaN compares
 * false with everything, so only NOT_EQUAL and NAN keep NaNs.
 * kind: a gpuprim_keep_t.
 * flags: KEEP_FLAGGED only (else NULL): a buffer of an integer dtype (any
 *   width) with the input's count; element i is kept where flags[i] has a
 *   bit set.
 * scalar, scalar_high: host pointers to one element of the input's dtype
 *   each: scalar for the comparisons and IN_RANGE, scalar_high for IN_RANGE
 *   only (else ignored). Read during the call only.
 */
typedef struct gpuprim_predicate {
    int32_t kind;
    gpuprim_buffer_t flags;
    const void *scalar;
    const void *scalar_high;
} gpuprim_predicate_t;

/*
 * Keep the elements of input for which predicate holds, in their order
 * (np.compress, x[mask], cub::DeviceSelect::If / Flagged):
 * output[j] is the j-th kept element; values_out[j] its value; positions[j]
 * its position in input (np.flatnonzero, torch.nonzero of 1-D).
 * input: any dtype. output: input's dtype, or NULL (positions only).
 * positions: NULL, or I32, U32, I64 or U64; the input's count must fit it.
 * At least one of output, values_out, positions is given.
 * count / count_out: the number kept (the rules above).
 * Errors: the rules above; INVALID_ENUM (predicate->kind); NULL_POINTER
 * (predicate; flags, scalar or scalar_high where the kind needs it);
 * DTYPE_MISMATCH (flags not an integer dtype; positions not an index dtype);
 * SIZE_MISMATCH (flags of another count); INVALID_ARGUMENT (output,
 * values_out and positions all NULL; flags given with a comparison kind).
 * Workspace (CUDA): 16 bytes per tile of 4096 input elements (3072 for
 * 8-byte dtypes), rounded up to 256 bytes; none when the input fits one
 * tile (docs/HOW_IT_RUNS.md).
 */
GPUPRIM_API gpuprim_status_t gpuprim_select(gpuprim_context_t context, gpuprim_buffer_t input,
                                            gpuprim_buffer_t values, const gpuprim_predicate_t *predicate,
                                            gpuprim_buffer_t output, gpuprim_buffer_t values_out,
                                            gpuprim_buffer_t positions, uint64_t *count,
                                            gpuprim_buffer_t count_out);

/*
 * Stable two-way split: output holds the kept elements in their order, then
 * the others in their order (values_out alike); count / count_out receive
 * the number kept (the split point). Unlike cub::DevicePartition::If, the
 * others are not reversed. output: input's dtype, at least input's count
 * (the first input-count elements are all written).
 * Errors and workspace: as gpuprim_select().
 */
GPUPRIM_API gpuprim_status_t gpuprim_partition(gpuprim_context_t context, gpuprim_buffer_t input,
                                               gpuprim_buffer_t values, const gpuprim_predicate_t *predicate,
                                               gpuprim_buffer_t output, gpuprim_buffer_t values_out,
                                               uint64_t *count, gpuprim_buffer_t count_out);

/*
 * Remove consecutive duplicates (std::unique, cub::DeviceSelect::Unique,
 * torch.unique_consecutive): keys_out receives the first key of each run of
 * equal consecutive keys, values_out (if given) that key's value
 * (cub::DeviceSelect::UniqueByKey). Keys are equal when their bits are
 * (the sort's equality: -0.0 and +0.0 differ, NaNs with the same bits are
 * equal). keys: any dtype; keys_out: keys' dtype.
 * count / count_out: the number of runs.
 * Errors and workspace: as gpuprim_select().
 */
GPUPRIM_API gpuprim_status_t gpuprim_unique(gpuprim_context_t context, gpuprim_buffer_t keys,
                                            gpuprim_buffer_t values, gpuprim_buffer_t keys_out,
                                            gpuprim_buffer_t values_out, uint64_t *count,
                                            gpuprim_buffer_t count_out);

/* Which runs gpuprim_run_length_encode() reports. */
typedef enum gpuprim_runs {
    GPUPRIM_RUNS_ALL = 0,        /* every run (cub::DeviceRunLengthEncode::Encode) */
    GPUPRIM_RUNS_NON_TRIVIAL = 1 /* runs of 2 or more (NonTrivialRuns) */
} gpuprim_runs_t;

/*
 * Run-length encoding: for each run of equal consecutive elements of input
 * (equal as for gpuprim_unique()), in order: keys_out[r] its element,
 * starts[r] its first position, lengths[r] its length. Any of the three may
 * be NULL, not all. starts, lengths: I32, U32, I64 or U64 (each its own);
 * the input's count must fit them.
 * count / count_out: the number of runs reported.
 * Errors and workspace: as gpuprim_select(); INVALID_ENUM (runs).
 */
GPUPRIM_API gpuprim_status_t gpuprim_run_length_encode(gpuprim_context_t context, gpuprim_buffer_t input,
                                                       gpuprim_runs_t runs, gpuprim_buffer_t keys_out,
                                                       gpuprim_buffer_t starts, gpuprim_buffer_t lengths,
                                                       uint64_t *count, gpuprim_buffer_t count_out);

/*
 * Reduce each run of equal consecutive keys (cub::DeviceReduce::ReduceByKey):
 * for run r of keys (runs as for gpuprim_unique(): keys equal by bits), in
 * order, keys_out[r] is its key, results[r] = op over the run's values in
 * their order, lengths[r] its length. op follows gpuprim_reduce()'s rules
 * (see gpuprim_op_t): integer sums wrap; f16/bf16 sums accumulate in f32 and
 * round once; float sums are deterministic (the same bits on every run of a
 * backend, whatever the thread count; the association may differ between
 * backends); MIN/MAX with the float rules of gpuprim_op_t.
 * keys: any dtype. values: any dtype (not only the keys'), keys' count.
 * keys_out: NULL or keys' dtype. results: values' dtype. lengths: NULL or
 * I32, U32, I64 or U64 (the keys' count must fit).
 * count / count_out: the number of runs (the rules at gpuprim_select()).
 * Errors: as gpuprim_select(); INVALID_ENUM (op).
 * Workspace (CUDA): none when the input fits one tile (4,352 elements for
 * keys and values of 4 bytes or less, 2,304 for wider ones); else 44 bytes
 * per tile, each of its five parts rounded up to 256 bytes
 * (docs/HOW_IT_RUNS.md).
 */
GPUPRIM_API gpuprim_status_t gpuprim_reduce_by_key(gpuprim_context_t context, gpuprim_buffer_t keys,
                                                   gpuprim_buffer_t values, gpuprim_op_t op,
                                                   gpuprim_buffer_t keys_out, gpuprim_buffer_t results,
                                                   gpuprim_buffer_t lengths, uint64_t *count,
                                                   gpuprim_buffer_t count_out);

/*
 * Group by key in one call (SQL GROUP BY, pandas groupby().agg, np.unique):
 * keys in any order. The groups are the distinct keys (distinct by bits, as
 * for gpuprim_unique()) in ascending sort order (gpuprim_sort()'s order,
 * -0.0 before +0.0, NaNs last); for group g: keys_out[g] its key,
 * counts[g] its number of elements, results[g] = op over its values taken
 * in input order (gpuprim_reduce_by_key()'s rules), and for every input
 * element i, inverse[i] = the group of keys[i] (np.unique's
 * return_inverse). values and results: both NULL (no aggregate) or both
 * given (results: values' dtype, at least as many elements as keys).
 * keys_out, counts, inverse: each NULL or given; counts and inverse of I32,
 * U32, I64 or U64 (the keys' count must fit); inverse holds the keys'
 * count. At least one output. count / count_out: the number of groups.
 * Errors: as gpuprim_reduce_by_key().
 * Workspace (CUDA): the output of a stable sort of the keys, per element
 * the key's bytes, plus the values' bytes (they are sorted with the keys)
 * or, with inverse, 4 (8 past 2^32 elements) for the permutation of an
 * argsort (the values are then read through it, not gathered); plus that
 * of gpuprim_sort() for the sort and of gpuprim_reduce_by_key() (see
 * docs/HOW_IT_RUNS.md).
 */
GPUPRIM_API gpuprim_status_t gpuprim_group_by(gpuprim_context_t context, gpuprim_buffer_t keys,
                                              gpuprim_buffer_t values, gpuprim_op_t op,
                                              gpuprim_buffer_t keys_out, gpuprim_buffer_t counts,
                                              gpuprim_buffer_t results, gpuprim_buffer_t inverse,
                                              uint64_t *count, gpuprim_buffer_t count_out);

/* ------------------------------------------------------------------------ */
/* Argsort                                                                   */
/* ------------------------------------------------------------------------ */

/*
 * The stable permutation that sorts keys_in: indices[j] is the input position
 * of the key that a stable gpuprim_sort_with_options() with the same options
 * would put at position j (the order, the float order and the bit range are
 * those of the sort; equal keys keep their input order, so the indices of
 * equal keys increase). The library makes the indices itself: there is no
 * index input to fill. Stream-ordered.
 * keys_in: any dtype. keys_out: NULL, or a buffer of keys_in's dtype and
 *   count that receives the sorted keys; it may be keys_in (in place).
 * indices: I32, U32, I64 or U64 with keys_in's count; the largest index,
 *   count - 1, must fit its dtype (I32: count <= 2^31). It must not overlap
 *   keys_in or keys_out.
 * options: as for gpuprim_sort_with_options() (NULL: ascending, whole key).
 * Errors: NULL_POINTER, INVALID_HANDLE, CONTEXT_MISMATCH, INVALID_ENUM,
 * DTYPE_MISMATCH (keys_out's dtype; indices not an index dtype),
 * SIZE_MISMATCH, INVALID_ARGUMENT (options as for the sort; overlapping
 * buffers; count - 1 past what the indices' dtype holds), DEVICE,
 * OUT_OF_MEMORY.
 * Workspace: as gpuprim_sort() with values of the indices' width, plus one
 * copy of the keys when keys_out is NULL.
 */
GPUPRIM_API gpuprim_status_t gpuprim_argsort(gpuprim_context_t context, gpuprim_buffer_t keys_in,
                                             gpuprim_buffer_t keys_out, gpuprim_buffer_t indices,
                                             const gpuprim_sort_options_t *options);

/* ------------------------------------------------------------------------ */
/* Segments: per-row and per-group primitives                                */
/* ------------------------------------------------------------------------ */

/*
 * How a data buffer of n elements divides into segments, in one of two ways:
 * - Uniform rows (offsets NULL): row_count rows of row_length consecutive
 *   elements, a contiguous row-major 2-D array; row_count * row_length must
 *   equal n. Row r is elements [r * row_length, (r + 1) * row_length).
 * - CSR offsets: a buffer of segment_count + 1 integers (I32, U32, I64 or
 *   U64, on the context); segment s is elements [offsets[s], offsets[s+1]).
 *   Offsets must not decrease and must lie in [0, n]; segments may be empty.
 *   Elements before offsets[0] or from offsets[segment_count] on belong to no
 *   segment: their values do not matter, and their outputs are left as they
 *   are. A call reads, writes and sizes its workspace by the elements its
 *   segments cover, offsets[0] to offsets[segment_count], not by the
 *   buffers' count (on CUDA a segmented scan or reduce of at most 65,536
 *   elements on fewer than 1,024 segments may read, never write, the
 *   others).
 *   A bad offset is INVALID_ARGUMENT with a message naming the first bad
 *   index; it is found before anything is written (on CUDA by a check on the
 *   device, whose result the call waits for: calls with offsets block until
 *   that check has run, calls with uniform rows do not; the experimental
 *   gpuprim_context_set_offsets_check defers that result instead).
 *   max_segment_length (experimental; 0: none) promises that no segment is
 *   longer: a longer one is reported as a bad offset is. Calls then pick
 *   their path, workspace and CUDA graph capture by the promise instead of
 *   by n, which matters to deferred checks (see there).
 * Fill with gpuprim_segments_init_rows() or gpuprim_segments_init_offsets()
 * (each writes this version's whole struct, as gpuprim_context_options_init()
 * does); struct_size follows the rules of gpuprim_context_options_t.
 */
typedef struct gpuprim_segments {
    uint64_t struct_size;     /* sizeof(gpuprim_segments_t) */
    gpuprim_buffer_t offsets; /* CSR offsets, or NULL for uniform rows */
    uint64_t row_count;       /* uniform rows only (ignored with offsets) */
    uint64_t row_length;      /* uniform rows only (ignored with offsets) */
    uint64_t max_segment_length; /* (Experimental.) offsets only: the most
                                    elements a segment has; 0 (the init
                                    functions' value): not promised. A 0.3.0
                                    struct (struct_size 32) reads as 0. */
} gpuprim_segments_t;

/* Uniform rows. Does nothing if segments is NULL. */
GPUPRIM_API void gpuprim_segments_init_rows(gpuprim_segments_t *segments, uint64_t row_count,
                                            uint64_t row_length);
/* CSR offsets (offsets' count - 1 segments). Does nothing if segments is NULL.
 * NULL offsets leave segments that every call refuses with NULL_POINTER
 * naming segments->offsets (uniform rows come from
 * gpuprim_segments_init_rows()): offsets NULL and row_count, row_length and
 * max_segment_length all UINT64_MAX. */
GPUPRIM_API void gpuprim_segments_init_offsets(gpuprim_segments_t *segments, gpuprim_buffer_t offsets);

/*
 * Sorts every segment on its own, exactly as gpuprim_sort_with_options()
 * would sort that segment's keys and values (stable; the same order rules,
 * options and aliasing rules). Keys and values outside every segment are left
 * as they are (offsets only). Stream-ordered (with offsets: see
 * gpuprim_segments_t).
 * Errors: as gpuprim_sort_with_options(), plus NULL_POINTER (segments),
 * SIZE_MISMATCH (rows that do not cover the keys), INVALID_ARGUMENT
 * (segments->struct_size, a bad offset), DTYPE_MISMATCH (offsets not an
 * index dtype).
 * Workspace (CUDA): up to 44 bytes per segment of up to 4096 keys
 * (offsets); for the keys of longer segments, a copy of their keys and
 * values plus 0.13 bytes a key (for 1- and 2-byte keys: 12 bytes a key plus
 * a copy), and 12 KiB per longer segment (8-byte keys: 24 KiB). An argsort
 * without keys_out adds a copy of the keys.
 */
GPUPRIM_API gpuprim_status_t gpuprim_segmented_sort(gpuprim_context_t context,
                                                    const gpuprim_segments_t *segments,
                                                    gpuprim_buffer_t keys_in, gpuprim_buffer_t values_in,
                                                    gpuprim_buffer_t keys_out, gpuprim_buffer_t values_out,
                                                    const gpuprim_sort_options_t *options);

/*
 * gpuprim_argsort() of every segment: indices[i] for a position i of segment
 * s is a position within s (0 at its first element, like numpy's and torch's
 * argsort along the last axis). indices: I32, U32, I64 or U64 with keys_in's
 * count; the longest segment's length - 1 must fit its dtype. keys_out: NULL
 * or the sorted keys, as gpuprim_argsort(). Outside every segment (offsets
 * only) nothing is written.
 * Errors: as gpuprim_argsort() and gpuprim_segmented_sort().
 */
GPUPRIM_API gpuprim_status_t gpuprim_segmented_argsort(gpuprim_context_t context,
                                                       const gpuprim_segments_t *segments,
                                                       gpuprim_buffer_t keys_in, gpuprim_buffer_t keys_out,
                                                       gpuprim_buffer_t indices,
                                                       const gpuprim_sort_options_t *options);

/*
 * Reduces every segment of input with op into one element of output:
 * output[s] = op over segment s, with the rules of gpuprim_reduce() (integer
 * sums wrap; float sums deterministic run to run, NaN rules, f16/bf16
 * accumulate in f32). An empty segment yields the identity (SUM 0, MIN the
 * largest value, MAX the smallest, +inf / -inf for floats), as a reduce of no
 * elements does. output: input's dtype, one element per segment (row_count,
 * or offsets' count - 1); it must not overlap input. Stream-ordered.
 * Errors: NULL_POINTER, INVALID_HANDLE, CONTEXT_MISMATCH, INVALID_ENUM,
 * DTYPE_MISMATCH, SIZE_MISMATCH, INVALID_ARGUMENT (segments, overlap),
 * DEVICE, OUT_OF_MEMORY.
 */
GPUPRIM_API gpuprim_status_t gpuprim_segmented_reduce(gpuprim_context_t context, gpuprim_op_t op,
                                                      const gpuprim_segments_t *segments,
                                                      gpuprim_buffer_t input, gpuprim_buffer_t output);

/*
 * Scans every segment on its own (the scan restarts at each segment's first
 * element, which an exclusive scan sets to the identity), with the rules of
 * gpuprim_scan(). output: input's dtype and count, input itself (in place) or
 * memory apart from it. Outside every segment (offsets only) output is left
 * as it is. Stream-ordered.
 * Errors: as gpuprim_scan(), plus those of the segments (see
 * gpuprim_segmented_reduce()).
 */
GPUPRIM_API gpuprim_status_t gpuprim_segmented_scan(gpuprim_context_t context, gpuprim_op_t op,
                                                    gpuprim_scan_kind_t kind,
                                                    const gpuprim_segments_t *segments,
                                                    gpuprim_buffer_t input, gpuprim_buffer_t output);

/* ------------------------------------------------------------------------ */
/* Top-k                                                                     */
/* ------------------------------------------------------------------------ */

/*
 * The k largest (order DESCENDING) or k smallest (order ASCENDING) keys, with
 * their positions: exactly the first k keys, and the first k indices, that a
 * stable gpuprim_argsort() with that order would give. So:
 * - the result is sorted (largest first for DESCENDING, smallest first for
 *   ASCENDING);
 * - equal keys are taken and listed lower position first (which of several
 *   equal keys at the k-th place make the cut is decided by position too);
 * - floats follow the sort's order (see gpuprim_sort()): -0.0 ranks below
 *   +0.0, and NaN ranks above +inf, so the k largest hold the NaNs first
 *   (as torch.topk does) and the k smallest take NaNs only when fewer than k
 *   other keys exist.
 * Stream-ordered (docs/HOW_IT_RUNS.md: how many times the keys are read).
 * keys_in: any dtype, n elements.
 * k: 0 to n; a k past n is INVALID_ARGUMENT. k = 0 writes nothing.
 * keys_out: NULL, or keys_in's dtype with exactly k elements.
 * indices: NULL, or I32, U32, I64 or U64 with exactly k elements; the
 *   largest position, n - 1, must fit its dtype (I32: n <= 2^31).
 * At least one of keys_out and indices must be given. Neither may overlap
 * keys_in or the other.
 * Errors: NULL_POINTER (keys_in; both outputs NULL), INVALID_HANDLE,
 * CONTEXT_MISMATCH, INVALID_ENUM (order), DTYPE_MISMATCH (keys_out's dtype;
 * indices not an index dtype), SIZE_MISMATCH (an output's count is not k),
 * INVALID_ARGUMENT (k > n; overlapping buffers; n - 1 past what the indices'
 * dtype holds), DEVICE, OUT_OF_MEMORY.
 * Workspace (CUDA, from the context's cached workspace): none up to 8192
 * keys, and none up to 65,536 keys with k up to 4096 where one block reads
 * them (its 96-144 KiB of shared memory fit the device: H100, A100).
 * Else 1 byte a key for 4-byte keys (1.5 for 8-byte keys, 2 past 2^32
 * keys), 16 KiB, and 8 to 16 bytes per chosen key; for k past 4096, that
 * of gpuprim_sort() for k pairs on top.
 */
GPUPRIM_API gpuprim_status_t gpuprim_topk(gpuprim_context_t context, gpuprim_buffer_t keys_in, uint64_t k,
                                          gpuprim_order_t order, gpuprim_buffer_t keys_out,
                                          gpuprim_buffer_t indices);

/*
 * gpuprim_topk() of every segment: segment s's results go to elements
 * [s * k, s * k + m) of keys_out and indices, where m = min(k, length of s),
 * and its indices are positions within s (0 at its first element, as
 * torch.topk(dim=-1) gives them). Outputs have segment_count * k elements.
 * - Uniform rows: k must not exceed row_length (INVALID_ARGUMENT), so every
 *   row fills its k slots.
 * - CSR offsets: a segment shorter than k (an empty one included) gives all
 *   of its elements, sorted, and its remaining slots are left as they are;
 *   the caller knows m from the offsets. The longest segment's length - 1
 *   must fit the indices' dtype.
 * Errors: as gpuprim_topk(), plus those of the segments (see
 * gpuprim_segmented_reduce()); SIZE_MISMATCH also when segment_count * k
 * overflows 64 bits.
 * Workspace (CUDA): none when every segment has at most 8192 keys, nor
 * when every one has at most 65,536, k is at most 4096 and each segment has
 * a block of its own at once (at most one segment a multiprocessor, short
 * ones counted; the shared memory as for gpuprim_topk()); else that of
 * gpuprim_topk() over the elements the segments cover, plus a few hundred
 * bytes per segment past 8192 keys. With offsets and segments past 8192
 * keys (other than in that one-block case), the call also waits for the
 * list of those segments (besides the offsets check).
 */
GPUPRIM_API gpuprim_status_t gpuprim_segmented_topk(gpuprim_context_t context, const gpuprim_segments_t *segments,
                                                    gpuprim_buffer_t keys_in, uint64_t k, gpuprim_order_t order,
                                                    gpuprim_buffer_t keys_out, gpuprim_buffer_t indices);

/* ------------------------------------------------------------------------ */
/* Distributed calls: one context per rank, the caller's communicator         */
/* ------------------------------------------------------------------------ */

/*
 * The communicators a context can borrow. The library never creates,
 * initializes or destroys one: the caller's launcher (mpirun, Slurm,
 * torchrun) starts one process per GPU or CPU rank and the caller bootstraps
 * the communicator (ncclCommInitRank, MPI_Init). Foreign handles travel as
 * `void *`, so this header includes neither nccl.h nor mpi.h:
 * - GPUPRIM_COMM_NCCL: communicator is an ncclComm_t (itself a pointer), for
 *   a CUDA context whose device is the communicator's device. Needs a
 *   libgpuprim built with NCCL (GPUPRIM_WITH_NCCL).
 * - GPUPRIM_COMM_MPI: communicator points to an MPI_Comm (MPI_Comm is a
 *   pointer in Open MPI and an int in MPICH, so its address is what
 *   travels: `MPI_Comm comm = MPI_COMM_WORLD; ...(&comm)`), for a CPU
 *   context. The MPI_Comm is read when attached and kept by value; an
 *   intracommunicator (an intercommunicator is INVALID_ARGUMENT). MPI must
 *   be initialized, with MPI_THREAD_SERIALIZED or more when several threads
 *   make distributed calls one at a time, and MPI_THREAD_MULTIPLE when
 *   threads make them at the same time on different contexts (calls on
 *   one context are serialized; calls on different contexts are not). The
 *   calls use the communicator as it is (collectives, and point-to-point
 *   messages of tag 0x6770 for blocks past 2^31 bytes): give them a
 *   communicator of their own (MPI_Comm_dup) where the program may have a
 *   receive of any source or tag pending on it during a call. Needs a
 *   libgpuprim built with MPI (GPUPRIM_WITH_MPI).
 */
typedef enum gpuprim_comm_kind {
    GPUPRIM_COMM_NCCL = 1,
    GPUPRIM_COMM_MPI = 2
} gpuprim_comm_kind_t;

/*
 * Borrow a communicator for the distributed calls of this context. One
 * context is one rank; a process may drive several GPUs with one context and
 * one communicator each (e.g. from ncclCommInitAll), calling each context
 * from its own thread, since every distributed call blocks until all ranks
 * have made it. The communicator must stay valid until it is detached or the
 * context destroyed; the library never destroys it. Local: no communication.
 * Attaching replaces a communicator attached before (a failed attach keeps
 * it). For testing, the MPI engine reads GPUPRIM_MPI_LARGEST_MESSAGE at
 * attach: the most bytes one of its messages carries (1 to 2^30, default
 * 2^30; the same on every rank; any other value is INVALID_ARGUMENT).
 * Errors: NULL_POINTER (communicator), INVALID_HANDLE, INVALID_ENUM (kind),
 * BACKEND_UNAVAILABLE (libgpuprim built without that engine), INVALID_ARGUMENT
 * (NCCL with a CPU context or MPI with a CUDA context; an NCCL communicator
 * of another device than the context's; one the engine reports as invalid),
 * DEVICE.
 */
GPUPRIM_API gpuprim_status_t gpuprim_context_attach_communicator(gpuprim_context_t context,
                                                                 gpuprim_comm_kind_t kind,
                                                                 void *communicator);

/* Forget the attached communicator (none attached: nothing to do). */
GPUPRIM_API gpuprim_status_t gpuprim_context_detach_communicator(gpuprim_context_t context);

/*
 * This context's rank and the number of ranks of its communicator.
 * Errors: NULL_POINTER, INVALID_HANDLE, INVALID_ARGUMENT (no communicator).
 */
GPUPRIM_API gpuprim_status_t gpuprim_context_get_rank(gpuprim_context_t context, int32_t *rank,
                                                      int32_t *rank_count);

/*
 * Rules of every gpuprim_distributed_*() call:
 * - Collective: every rank of the communicator calls it, in the same order
 *   as its other distributed calls, with the same op, kind, order, options,
 *   k and dtypes, and its own local buffers. Ranks may hold different counts
 *   (zero included). The data are the concatenation of the ranks' inputs in
 *   rank order: element j of rank r is global position offset_r + j, where
 *   offset_r is the sum of the counts of the ranks before r.
 * - Blocking: the call returns when its outputs are complete.
 * - Arguments are checked on each rank before any data moves, then the ranks
 *   agree: when a rank finds a bad argument (or cannot get its workspace or
 *   host memory), every rank fails and changes nothing. That rank reports
 *   its own status and message; the others report the same status, with a
 *   message naming the rank that refused and why. Arguments that must
 *   agree across ranks and do not (a dtype, an order, k) are
 *   INVALID_ARGUMENT on every rank.
 *   A rank whose context handle is bad, whose context has no communicator
 *   attached, or (CUDA) whose stream is being captured into a graph (its
 *   collectives would be recorded, not run) cannot reach the others: it
 *   returns at once, and the other ranks wait for it as in any collective.
 *   A workspace query open on a rank is a bad argument like the others:
 *   every rank fails (since 0.4.0; before, that rank returned alone).
 * - A failure of the device or of the communicator after the ranks agreed
 *   (DEVICE, or INTERNAL naming the engine's error) may leave outputs
 *   partly written, and the communicator unusable, as NCCL and MPI say.
 * - The global count (the sum over ranks) must fit 64 bits (OVERFLOW).
 * - Workspace: a few KiB, plus per call what is said below; on CUDA from
 *   the context's cached workspace like every other call.
 * Errors of every call: NULL_POINTER, INVALID_HANDLE, CONTEXT_MISMATCH,
 * INVALID_ARGUMENT (no communicator; a disagreement across ranks), OVERFLOW,
 * DEVICE, OUT_OF_MEMORY, INTERNAL (the communication engine failed), and
 * those of the matching one-rank call.
 */

/*
 * gpuprim_reduce() of the global data; every rank receives the result (host
 * memory at result). Each rank reduces its own elements as gpuprim_reduce()
 * does, then the ranks' results are combined in rank order: floats are
 * deterministic run to run for a given layout of the data over the ranks,
 * and f16/bf16 results combine the ranks' results rounded to the dtype.
 */
GPUPRIM_API gpuprim_status_t gpuprim_distributed_reduce(gpuprim_context_t context, gpuprim_op_t op,
                                                        gpuprim_buffer_t input, void *result);

/*
 * gpuprim_scan() of the global data: each rank's output holds its part of
 * the scan of the concatenation (an exclusive scan's first element on rank r
 * is the op of every element on ranks before r; the identity on rank 0).
 * Each rank's scan starts from the rank-ordered combination of the totals
 * of the ranks before it, so float sums are deterministic run to run for a
 * given layout. Those totals are gpuprim_reduce() results, so a rank after
 * one whose elements are all -0.0 starts from +0.0 (a run of -0.0 across
 * ranks scans to +0.0 past rank 0, where gpuprim_scan() keeps -0.0), and
 * f16/bf16 totals are rounded to the dtype before they combine.
 * output as for gpuprim_scan() (in place allowed).
 */
GPUPRIM_API gpuprim_status_t gpuprim_distributed_scan(gpuprim_context_t context, gpuprim_op_t op,
                                                      gpuprim_scan_kind_t kind, gpuprim_buffer_t input,
                                                      gpuprim_buffer_t output);

/*
 * Stable sort of the global data, keys or (keys, values), with the options
 * of gpuprim_sort_with_options() (order, bit range): afterwards the
 * concatenation of the ranks' keys_out in rank order is the stable sort of
 * the concatenation of their keys_in (equal keys keep their global order:
 * rank, then position), and every rank holds exactly as many elements as it
 * gave, so outputs have the inputs' counts and in place works. Arguments as
 * for gpuprim_sort_with_options().
 * When the ranks' keys already follow each other in rank order (presorted
 * data, all keys equal, all keys on one rank), only the local sorts run.
 * Workspace: two copies of the local keys and values (the runs received
 * from the ranks, and the spare their merge into keys_out and values_out
 * works through), plus that of gpuprim_sort() of the local keys and values
 * (the merge needs less: on CUDA, 8 bytes per 2048 local keys and 40 bytes
 * per rank).
 */
GPUPRIM_API gpuprim_status_t gpuprim_distributed_sort(gpuprim_context_t context, gpuprim_buffer_t keys_in,
                                                      gpuprim_buffer_t values_in, gpuprim_buffer_t keys_out,
                                                      gpuprim_buffer_t values_out,
                                                      const gpuprim_sort_options_t *options);

/*
 * gpuprim_argsort() of the global data: indices (I64 or U64, keys_in's local
 * count) receive global positions, in the order of gpuprim_distributed_sort()
 * (rank r's indices are the positions that land at its part of the sorted
 * data). keys_out: NULL or the sorted keys, as for gpuprim_argsort().
 * Workspace: two copies of the local keys and indices (three of the keys
 * when keys_out is NULL), plus that of gpuprim_sort() of the local keys
 * with 8-byte values.
 */
GPUPRIM_API gpuprim_status_t gpuprim_distributed_argsort(gpuprim_context_t context, gpuprim_buffer_t keys_in,
                                                         gpuprim_buffer_t keys_out, gpuprim_buffer_t indices,
                                                         const gpuprim_sort_options_t *options);

/*
 * gpuprim_topk() of the global data, the same definition (ties to the lower
 * global position): every rank receives the global k in keys_out and/or
 * indices (global positions; the largest global position must fit the
 * indices' dtype). k: 0 to the global count (INVALID_ARGUMENT past it, on
 * every rank). Outputs as for gpuprim_topk(), with exactly k elements.
 * Workspace: that of gpuprim_topk() of the local keys, plus k keys and k
 * indices per rank.
 */
GPUPRIM_API gpuprim_status_t gpuprim_distributed_topk(gpuprim_context_t context, gpuprim_buffer_t keys_in,
                                                      uint64_t k, gpuprim_order_t order,
                                                      gpuprim_buffer_t keys_out, gpuprim_buffer_t indices);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GPUPRIM_EXPERIMENTAL_API */
