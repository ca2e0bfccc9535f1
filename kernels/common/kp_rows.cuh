// Row access for the row ops (softmax, norms): a group of threads (a block,
// or a segment of <= 32 lanes) per row, reading the row in slots of
// group-size x N elements (N = 16 bytes' worth). With VEC, lane l holds
// elements [(k*G + l)*N, +N) of slot k, read with one 16-byte load;
// otherwise it holds elements (k*N + i)*G + l, read one by one at any
// stride (still coalesced across the group). Rows that fit are read once
// into registers (`cached` slots per thread); longer rows are streamed from
// memory once per pass.
//
// Speed: these kernels run at memory speed only if the work per element is
// a handful of instructions, so in-row positions of cached rows are 32-bit
// (a cached row has at most KP_ROWS_MAX_BLOCK x KP_ROW_MAX_SLOTS x 16 elements),
// and rows are padded with a value the algorithm ignores instead of
// testing every element.
#pragma once
#include "kp_reduce.cuh"
#include "kp_elementwise.cuh"

// Blocks per multiprocessor the exact-fit row kernels are bounded for: two
// (64 registers a thread at 512 threads) where they fit in that without
// spilling; one on NVIDIA sm_100+, whose compiler needs more registers for
// the same code and spilled up to 288 bytes a thread under the bound of two.
#if !KP_HIP && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
#define KP_ROWS_EXACT_MIN_BLOCKS 1
#else
#define KP_ROWS_EXACT_MIN_BLOCKS 2
#endif

static_assert((long long)KP_ROWS_MAX_BLOCK * KP_ROW_MAX_SLOTS * 16 < (1ll << 31),
              "in-row positions of cached rows fit 32 bits");
static_assert(KP_ROW_MAX_SLOTS == 4, "kp_rows instantiates 1..4 cached slots");

// What a row knows of its end (kp_row's FULL): KP_ROW_EXACT, every slot a
// thread visits lies inside the row (the host found an exact fit), so loads
// and stores are straight-line code the compiler can schedule together;
// KP_ROW_WHOLE_SLOTS, each slot lies wholly inside or wholly past the end
// (VEC, the row a whole number of slots), a check a slot; KP_ROW_CHECKED, a
// check an element of a slot that passes the end.
#define KP_ROW_CHECKED 0
#define KP_ROW_EXACT 1
#define KP_ROW_WHOLE_SLOTS 2

// One row as seen by one thread. I is the type of in-row positions; FULL
// says what the row knows of its end (above).
template <typename T, bool VEC, typename I, int FULL = KP_ROW_CHECKED> struct kp_row {
    static_assert(VEC || FULL != KP_ROW_WHOLE_SLOTS, "whole slots are 16-byte vectors");
    typedef typename kp_compute<T>::type C;
    static constexpr int N = 16 / sizeof(T);
    const T *x;
    T *y;
    const T *w;
    const T *b;
    I cols;       // unless exact, 0 for a group without a row: nothing is read
    bool active;  // the group has a row: stores happen
    kp_idx xs, ys, ws, bs;
    unsigned G, lane;
    T pad;  // what x reads past the row's end

    KP_DEVICE I elem(I k, int i) const {
        return VEC ? (k * G + lane) * N + i : (k * N + i) * G + lane;
    }
    KP_DEVICE bool valid(I k, int i) const {
        return FULL == KP_ROW_EXACT || (FULL == KP_ROW_WHOLE_SLOTS ? full(k) : elem(k, i) < cols);
    }
    // Every element of slot k is in the row.
    KP_DEVICE bool full(I k) const {
        return FULL == KP_ROW_EXACT || (VEC ? (k * G + lane) * N + N <= cols : elem(k, N - 1) < cols);
    }

    // Slot k of p (stride: element stride when !VEC) in storage form; fill
    // where the slot passes the row's end.
    KP_DEVICE void load(const T *p, kp_idx stride, I k, kp_vec<T, N> &q, T fill) const {
        if constexpr (FULL == KP_ROW_WHOLE_SLOTS && sizeof(T) == 2) {
            // The slot or the fill, chosen as four 32-bit words: chosen as
            // elements, 16-bit ones cost two byte permutes a word (H200,
            // layernorm_f16 over rows of 1000: 144 of 927 instructions; 16-
            // bit layernorm of 33554 such rows 80 / 74 -> 85 / 81 % of copy,
            // and layernorm_bf16 stopped spilling 44 bytes).
#pragma unroll
            for (int i = 0; i < N; i++)
                q.v[i] = fill;
            uint4 words;
            memcpy(&words, &q, sizeof(words));
            if (full(k))
                words = *reinterpret_cast<const uint4 *>(p + elem(k, 0));
            memcpy(&q, &words, sizeof(words));
            return;
        }
        if (VEC && full(k)) {
            q = *reinterpret_cast<const kp_vec<T, N> *>(p + elem(k, 0));
            return;
        }
        if constexpr (FULL == KP_ROW_WHOLE_SLOTS) {
#pragma unroll
            for (int i = 0; i < N; i++)
                q.v[i] = fill;
            return;
        }
        // VEC: one address for the slot, its elements at constant offsets
        // (an address each cost layernorm_f16 spills under 64 registers)
        const T *s = VEC ? p + (kp_idx)elem(k, 0) : p;
#pragma unroll
        for (int i = 0; i < N; i++)
            q.v[i] = valid(k, i) ? s[VEC ? (kp_idx)i : (kp_idx)elem(k, i) * stride] : fill;
    }
    static KP_DEVICE void widen(const kp_vec<T, N> &q, C (&v)[N]) {
#pragma unroll
        for (int i = 0; i < N; i++)
            v[i] = kp_load(q.v[i]);
    }
    KP_DEVICE void load_x(I k, kp_vec<T, N> &q) const { load(x, xs, k, q, pad); }
    KP_DEVICE void load_w(I k, C (&v)[N]) const {
        kp_vec<T, N> q;
        load(w, ws, k, q, kp_store<T>(C(1)));
        widen(q, v);
    }
    KP_DEVICE void load_b(I k, C (&v)[N]) const {
        kp_vec<T, N> q;
        load(b, bs, k, q, kp_store<T>(C(0)));
        widen(q, v);
    }

    KP_DEVICE void store(I k, const C (&v)[N]) const {
        if (!active)
            return;
        if (VEC && full(k)) {
            kp_vec<T, N> q;
#pragma unroll
            for (int i = 0; i < N; i++)
                q.v[i] = kp_store<T>(v[i]);
            *reinterpret_cast<kp_vec<T, N> *>(y + elem(k, 0)) = q;
            return;
        }
        if constexpr (FULL == KP_ROW_WHOLE_SLOTS)
            return;
        T *s = VEC ? y + (kp_idx)elem(k, 0) : y;
#pragma unroll
        for (int i = 0; i < N; i++) {
            if (valid(k, i))
                s[VEC ? (kp_idx)i : (kp_idx)elem(k, i) * ys] = kp_store<T>(v[i]);
        }
    }
};

// Hides q's value from the optimiser, which then cannot reuse what it
// derived from q before this point: a 16-bit row is widened again on each
// pass instead of being kept widened, in twice the registers.
template <typename T, int N> KP_DEVICE void kp_opaque(kp_vec<T, N> &q) {
    static_assert(sizeof(q) % 4 == 0, "a slot is whole 32-bit words");
    uint32_t w[sizeof(q) / 4];
    memcpy(w, &q, sizeof(q));
#pragma unroll
    for (unsigned i = 0; i < sizeof(q) / 4; i++)
#if KP_HIP
        asm volatile("" : "+v"(w[i]));
#else
        asm volatile("" : "+r"(w[i]));
#endif
    memcpy(&q, w, sizeof(q));
}

// The row kept in registers in its storage type (16-bit values two to a
// register). each(f) visits the slots in order, widened to the compute
// type; where that is the storage type (f32, f64) what f leaves in the slot
// is kept, so an algorithm can keep a value it computed (keeps_values).
template <typename T, bool VEC, int FULL, int V> struct kp_row_cached {
    typedef kp_row<T, VEC, unsigned, FULL> row;
    typedef typename row::C C;
    static constexpr int N = row::N;
    static constexpr bool keeps_values = sizeof(T) == sizeof(C);
    static constexpr bool streamed = false;
    kp_vec<T, N> raw[V];
    KP_DEVICE explicit kp_row_cached(const row &r) {
#pragma unroll
        for (int k = 0; k < V; k++)
            r.load_x((unsigned)k, raw[k]);
    }
    template <typename F> KP_DEVICE void each(F f) {
#pragma unroll
        for (int k = 0; k < V; k++) {
            C v[N];
            if (!keeps_values)
                kp_opaque(raw[k]);
            row::widen(raw[k], v);
            f((unsigned)k, v);
            if (keeps_values) {
#pragma unroll
                for (int i = 0; i < N; i++)
                    raw[k].v[i] = kp_store<T>(v[i]);
            }
        }
    }
};

// The row read from memory on every pass, U slots' loads issued together
// (U > 1 in the kernels that only stream: in the others it cost 7
// registers, and softmax of 1000-wide rows 9 points of copy bandwidth).
template <typename T, bool VEC, int U = 1> struct kp_row_streamed {
    typedef kp_row<T, VEC, kp_idx> row;
    typedef typename row::C C;
    static constexpr int N = row::N;
    static constexpr bool keeps_values = false;
    static constexpr bool streamed = true;  // each pass reads the row again
    const row &r;
    kp_idx slots;
    template <typename F> KP_DEVICE void each(F f) {
        for (kp_idx k = 0; k < slots; k += U) {
            kp_vec<T, N> q[U];
#pragma unroll
            for (int u = 0; u < U; u++)
                if (u == 0 || k + u < slots)
                    r.load_x(k + u, q[u]);
#pragma unroll
            for (int u = 0; u < U; u++) {
                if (u > 0 && k + u >= slots)
                    break;
                C v[N];
                row::widen(q[u], v);
                f(k + u, v);
            }
        }
    }
};

// A chunk of a row staged in shared memory (kp_rows_cluster): slot k of
// this thread is stage[k * G + lane], copied there by this same thread, so
// reading it needs no barrier. each(f) visits only the slots inside the
// chunk; where the compute type is the storage type, what f leaves in a
// slot is written back (keeps_values), as kp_row_cached does.
template <typename T> struct kp_row_staged {
    typedef kp_row<T, true, unsigned, KP_ROW_WHOLE_SLOTS> row;
    typedef typename row::C C;
    static constexpr int N = row::N;
    static constexpr bool keeps_values = sizeof(T) == sizeof(C);
    static constexpr bool streamed = false;
    const row &r;
    kp_vec<T, N> *stage;
    template <typename F> KP_DEVICE void each(F f) {
        for (unsigned k = 0, s = r.lane; s * N < r.cols; k++, s += r.G) {
            C v[N];
            row::widen(stage[s], v);
            f(k, v);
            if (keeps_values) {
#pragma unroll
                for (int i = 0; i < N; i++)
                    stage[s].v[i] = kp_store<T>(v[i]);
            }
        }
    }
};

// Slots a thread of the stream-only row kernels loads at once: 2 for 16-
// and 32-bit rows, whose kernels then fit two blocks a multiprocessor (H200:
// 16-bit rows of 32000-151936 went from 37-45 % of copy with 4 slots and
// one block to 52-65 %, f32 ones of 128256 and more from 54-58 to 61-62).
// A row source's slots read at once: > 1 only for kp_row_streamed in the
// stream kernels (kp_rows_stream_unroll), 0 for cached rows.
template <typename Src> struct kp_src_unroll {
    static constexpr int value = 0;
};
template <typename T, bool VEC, int U> struct kp_src_unroll<kp_row_streamed<T, VEC, U>> {
    static constexpr int value = U;
};

// The slots a row source caches in registers (0 for the others).
template <typename Src> struct kp_src_cached_slots {
    static constexpr int value = 0;
};
template <typename T, bool VEC, int FULL, int V>
struct kp_src_cached_slots<kp_row_cached<T, VEC, FULL, V>> {
    static constexpr int value = V;
};

template <typename T> struct kp_rows_stream_unroll {
    static constexpr int value = sizeof(T) == 8 ? 4 : 2;
};

// Row `row` of the launch as seen by this thread. A group past the last
// row reads row 0 (exact: every slot is read) or nothing, and stores nothing.
template <typename T, bool VEC, typename I, int FULL>
KP_DEVICE kp_row<T, VEC, I, FULL> kp_row_at(const kp_rows_args &A, const kp_group &g, kp_idx row,
                                            const T *x, T *y, const T *w, const T *b, T pad) {
    kp_row<T, VEC, I, FULL> r;
    r.x = x;
    r.y = y;
    r.w = w;
    r.b = b;
    r.active = row < (kp_idx)A.rows;
    r.cols = FULL == KP_ROW_EXACT || r.active ? (I)A.cols : 0;
    r.xs = (kp_idx)A.x_inner;
    r.ys = (kp_idx)A.y_inner;
    r.ws = (kp_idx)A.w_stride;
    r.bs = (kp_idx)A.b_stride;
    r.G = g.size;
    r.lane = g.lane;
    r.pad = pad;
    if (r.active) {
        kp_idx xo, yo;
        kp_offsets2(A.outer_rank, A.outer_shape, A.x_outer, A.y_outer, row, xo, yo);
        r.x = x + xo;
        r.y = y + yo;
    }
    return r;
}

// Runs algo on the row with V cached slots if the arguments ask for V.
template <int V, int FULL, typename T, bool VEC, typename Algo>
KP_DEVICE bool kp_row_try_cached(const kp_rows_args &A, const kp_group &g, kp_idx row, const T *x,
                                 T *y, const T *w, const T *b, T pad, const Algo &algo) {
    if (A.cached != V)
        return false;
    const kp_row<T, VEC, unsigned, FULL> r =
        kp_row_at<T, VEC, unsigned, FULL>(A, g, row, x, y, w, b, pad);
    kp_row_cached<T, VEC, FULL, V> src(r);
    algo(r, g, src, A.flags);
    return true;
}

// Runs algo on the row streamed from memory on every pass, U slots at once
// (rows too long to cache).
template <bool VEC, int U, typename T, typename Algo>
KP_DEVICE void kp_row_stream(const kp_rows_args &A, const kp_group &g, kp_idx row, const T *x, T *y,
                             const T *w, const T *b, T pad, const Algo &algo) {
    constexpr int N = 16 / sizeof(T);
    const kp_row<T, VEC, kp_idx> r = kp_row_at<T, VEC, kp_idx, KP_ROW_CHECKED>(A, g, row, x, y, w, b, pad);
    kp_row_streamed<T, VEC, U> src{r, ((kp_idx)A.cols + (kp_idx)g.size * N - 1) / ((kp_idx)g.size * N)};
    algo(r, g, src, A.flags);
}

// Chunk `at`..`at + chunk` of row `row` (contiguous, 16-byte aligned) as a
// row of its own for this thread: none of it past the row's end (FULL:
// what the caller knows of that end, as kp_row's).
template <typename T, typename Algo, typename I = unsigned, int FULL = KP_ROW_CHECKED>
KP_DEVICE kp_row<T, true, I, FULL> kp_chunk_row(const kp_rows_args &A, const kp_group &g, kp_idx row,
                                                kp_idx at, kp_idx chunk, const T *x, T *y, const T *w,
                                                const T *b) {
    typedef typename kp_compute<T>::type C;
    kp_row<T, true, I, FULL> r =
        kp_row_at<T, true, I, FULL>(A, g, row, x, y, w, b, kp_store<T>(Algo::template pad<C>()));
    const kp_idx cols = (kp_idx)A.cols;
    r.x += at;
    r.y += at;
    r.w = w ? w + at : w;
    r.b = b ? b + at : b;
    r.cols = !r.active || at >= cols ? I(0) : (I)(cols - at < chunk ? cols - at : chunk);
    return r;
}

// Every group of the grid takes rows in turn; the loop is uniform per block
// and the path taken the same for every group, so every thread reaches the
// group reductions inside algo. EXACT: the host found an exact fit (cols =
// group x cached x N, so every slot is full) and each thread caches 1 to
// KP_ROW_MAX_SLOTS slots. Otherwise rows that fit KP_ROW_MAX_SLOTS slots
// per thread are cached: contiguous ones (VEC) a whole number of slots
// long (the host sends rows whose last slot is cut to the strided
// kernels), a check a slot, which took 16-bit layernorm over rows of 1000
// from spilling under two blocks a multiprocessor at 62 % of copy to 91-96
// % (H100); strided ones with checks at the row's end. Longer rows are
// streamed by the strided kernels (!VEC), by the STREAM kernels for VEC.
// The exact and stream paths are kernels of their own: registers are
// allocated for a kernel's largest path, and the others would cost it
// occupancy.
// STREAM: the host found the rows too long to cache (A.cached == 0,
// contiguous rows): the kernel streams them only, kp_rows_stream_unroll
// slots at once.
template <bool VEC, bool EXACT, bool STREAM, typename T, typename Algo>
KP_DEVICE void kp_rows(const kp_rows_args &A, const T *x, T *y, const T *w, const T *b,
                       const Algo &algo) {
    typedef typename kp_compute<T>::type C;
    const kp_group g = kp_group_of((unsigned)A.group);
    const kp_idx rows = (kp_idx)A.rows;
    const T pad = kp_store<T>(Algo::template pad<C>());
    for (kp_idx base = (kp_idx)blockIdx.x * g.per_block; base < rows;
         base += (kp_idx)gridDim.x * g.per_block) {
        const kp_idx row = base + g.index;
        if constexpr (EXACT) {
            kp_row_try_cached<1, KP_ROW_EXACT, T, VEC>(A, g, row, x, y, w, b, pad, algo) ||
                kp_row_try_cached<2, KP_ROW_EXACT, T, VEC>(A, g, row, x, y, w, b, pad, algo) ||
                kp_row_try_cached<3, KP_ROW_EXACT, T, VEC>(A, g, row, x, y, w, b, pad, algo) ||
                kp_row_try_cached<4, KP_ROW_EXACT, T, VEC>(A, g, row, x, y, w, b, pad, algo);
        } else if constexpr (STREAM) {
            static_assert(VEC, "the stream kernels take contiguous rows");
            kp_row_stream<VEC, kp_rows_stream_unroll<T>::value>(A, g, row, x, y, w, b, pad, algo);
        } else if constexpr (VEC) {
            kp_row_try_cached<KP_ROW_MAX_SLOTS, KP_ROW_WHOLE_SLOTS, T, VEC>(A, g, row, x, y, w, b, pad, algo);
        } else {
            if (!kp_row_try_cached<KP_ROW_MAX_SLOTS, KP_ROW_CHECKED, T, VEC>(A, g, row, x, y, w, b, pad, algo))
                kp_row_stream<VEC, 1>(A, g, row, x, y, w, b, pad, algo);
        }
    }
}
