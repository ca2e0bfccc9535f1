/* kp-bench's shared parts: options, device state, timing, the copy
 * reference and results. kp-bench.c holds the harness and the table of
 * element-wise cases, bench_rotation.c the buffer copies measurements rotate
 * through; each module with cases of its own shapes and buffers has a small
 * file of its own (bench_quantized.c) exposing a bench_table. */
#ifndef KP_BENCH_H
#define KP_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kernelpack/kernelpack.h>

#define INPUT_SETS 2          /* inputs alternate between this many buffer sets */
#define DT(dtype) (1u << (dtype))
#define MAX_COPY_SIZES 128    /* copy reference times kept for reuse */
#define ROTATE_BYTES (512ull << 20)  /* well above any current GPU's L2 */
#define MAX_ROTATION 64       /* copies a measurement rotates through, at most */

struct options {
    const char *ops;          /* --ops as given (comma-separated op names); NULL: all */
    unsigned dtypes;          /* DT() bits */
    uint64_t elements;
    int iters, warmup;
    bool json;
};

/* Device state and scratch shared by every measurement. */
struct bench {
    const struct options *opt;
    kp_device *dev;
    kp_stream *stream;
    kp_event **start, **end;  /* one pair per timed run */
    float *ms;
    void *chunk;              /* host staging for random data */
    size_t chunk_bytes;
    uint64_t rng;
    int copies;               /* copy reference times measured so far */
    uint64_t copy_bytes[MAX_COPY_SIZES];
    double copy_ms[MAX_COPY_SIZES];
};

/* One row of the report. */
struct result {
    const char *op;           /* the name --ops selects */
    char variant[32];
    const char *format;       /* quantized cases: the format's name; else NULL */
    kp_dtype dtype, out_dtype;
    uint64_t elements;        /* the elements column */
    uint64_t bytes;           /* bytes counted for GB/s and the copy reference */
    uint64_t total_bytes;     /* every byte read + written, where that differs (else 0) */
    double flops;             /* compute-bound cases: operations per run, shown as GFLOP/s (else 0) */
    double ms, copy_ms;
    int sets;                 /* input buffer sets the runs went through */
    kp_status status;
    char error[256];
};

/* Something to time: run number i of a measurement. */
typedef kp_status (*timed_fn)(void *ctx, int i);

uint64_t next_random(struct bench *b);
/* Copies the staging chunk over buf, as many times as it takes to cover
 * it, and waits: buf then repeats the chunk. */
kp_status upload_chunk(struct bench *b, kp_buffer *buf);
/* Fills a buffer with random non-zero elements of `dtype`. */
kp_status fill_random(struct bench *b, kp_buffer *buf, kp_dtype dtype);
/* Median milliseconds of opt->iters runs of fn after opt->warmup untimed ones. */
kp_status time_runs(struct bench *b, timed_fn fn, void *ctx, double *median_ms);
/* Copies of `bytes` that span ROTATE_BYTES, at least INPUT_SETS; no more
 * than the runs of one measurement (each is then read once) nor
 * MAX_ROTATION. */
int rotation_copies(const struct bench *b, uint64_t bytes);
/* Fills a new buffer with random contents (of `dtype`, where it matters). */
typedef kp_status (*fill_fn)(struct bench *b, kp_buffer *buf, kp_dtype dtype);
/* Allocates `want` (at most MAX_ROTATION) sets of `bytes`: a source in
 * srcs[k] and, unless dsts is NULL, a destination in dsts[k]. The first
 * source gets fill(b, srcs[0], dtype), the others device copies of it.
 * Running out of device memory after the first set leaves fewer; *sets
 * counts the complete ones, on failure too. The arrays come in all NULL;
 * the caller destroys every entry, whatever this returns. */
kp_status alloc_rotation(struct bench *b, int want, size_t bytes, fill_fn fill, kp_dtype dtype,
                         kp_buffer **srcs, kp_buffer **dsts, int *sets);
/* Milliseconds kp_memcpy_d2d takes to move `bytes` (half read, half
 * written), from memory: its sources and destinations rotate through
 * rotation_copies() pairs, so no run finds its data in the GPU's cache. */
kp_status measure_copy(struct bench *b, uint64_t bytes, double *ms);
/* Records st, with `what` and the library's last message, as r's error. */
void result_fail(struct result *r, const char *what, kp_status st);

/* A module's cases: fixed shapes and buffers of their own. Case i has one
 * op name, variant and dtype (what --ops, --list and --dtypes see); run
 * fills *r (op, variant and dtype included), on failure with status and
 * error set. */
struct bench_entry {
    const char *op;
    char variant[32];
    kp_dtype dtype;
};

struct bench_table {
    size_t (*count)(void);
    void (*describe)(size_t i, struct bench_entry *e);
    void (*run)(struct bench *b, size_t i, struct result *r);
};

/* What the module tables share (bench_util.c). */
/* The float dtypes most module tables run: f32, f16, bf16. */
extern const kp_dtype float_dtypes[3];
#define N_FLOAT_DTYPES (sizeof(float_dtypes) / sizeof(float_dtypes[0]))
/* Clears *r and names it after e; sets elements and bytes (dtype and
 * out_dtype: e's) and measures the copy reference for those bytes. False,
 * with r's error set, when that measurement failed. */
bool result_begin(struct bench *b, const struct bench_entry *e, uint64_t elements, uint64_t bytes,
                  struct result *r);
/* *t = a contiguous tensor of `rank` dims over buf. */
kp_status view_contiguous(kp_buffer *buf, kp_dtype dtype, int rank, const int64_t *shape, kp_tensor *t);
/* Allocates `count` buffers of `bytes`, uploads host into the first and
 * copies it to the others (sets of ids that rotate with their sources).
 * The caller destroys every entry of bufs (which come in NULL). */
kp_status upload_copies(struct bench *b, const void *host, size_t bytes, int count, kp_buffer **bufs);
/* The end of a case's run: times fn into r->ms if its setup succeeded, else
 * records the setup's failure ("allocating"). */
void time_case(struct bench *b, kp_status setup, timed_fn fn, void *ctx, struct result *r);
/* Destroys the MAX_ROTATION entries of bufs (NULL ones are skipped). */
void destroy_rotation(kp_buffer **bufs);

extern const struct bench_table bench_quantized_table;
extern const struct bench_table bench_conv_table;
extern const struct bench_table bench_spatial_table;
extern const struct bench_table bench_rows_table;
extern const struct bench_table bench_sort_table;
extern const struct bench_table bench_indexing_table;
extern const struct bench_table bench_rope_table;
extern const struct bench_table bench_layout_table;
extern const struct bench_table bench_reduce_table;

#endif
