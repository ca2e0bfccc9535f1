// rows: softmax and log_softmax, rmsnorm and layernorm over the last
// dimension, and rotary embeddings. A module of its own, apart from the
// reductions, so each loads (and compiles) in half the time. Floats
// accumulate in f32 (f64 for f64).
#include "kp_reduce.cuh"
#include "kp_elementwise.cuh"
#include "kp_rows.cuh"
#include "kp_async.cuh"

// ------------------------------------------------------------- helpers

KP_DEVICE float kp_exp(float x) { return expf(x); }
KP_DEVICE double kp_exp(double x) { return exp(x); }
KP_DEVICE float kp_log(float x) { return logf(x); }
KP_DEVICE double kp_log(double x) { return log(x); }
KP_DEVICE float kp_sqrt(float x) { return sqrtf(x); }
KP_DEVICE double kp_sqrt(double x) { return sqrt(x); }

// ------------------------------------------------------------- row ops
// The row access is in kp_rows.cuh; below are the algorithms. Each one
// names the value rows are padded with (pad) and does its passes over the
// row with src.each; a slot that is not full (the row's last) is the only
// one that tests its elements.

// exp(d), as softmax computes it for T: the accurate exp for f32 and f64,
// the hardware exp2 for 16-bit rows (see below).
template <typename T> struct kp_softmax_exp {
    typedef typename kp_compute<T>::type C;
    KP_DEVICE C operator()(C d) const {
        if constexpr (sizeof(T) == 2)
            return kp_fast_exp2(d * 1.44269504f);
        else
            return kp_exp(d);
    }
};

// A partial softmax sum s of some elements whose max is m (the sum of
// exp(x - m), or of exp(x) where m is -inf) as a sum of exp(x - M) for a
// larger max M, M = -inf read as 0 as well: exp(m - M) is 0 for m = -inf
// and never exp(-inf + inf). A NaN in s stays NaN.
template <typename C, typename Ex> KP_DEVICE C kp_softmax_rescale(C m, C s, C M, const Ex &ex) {
    return s * ex(m - (M == kp_limits<C>::lowest() ? C(0) : M));
}

// softmax: exp(x - max) / sum(exp(x - max)); log_softmax: (x - max) - log(sum).
// A NaN or +inf in a row makes the whole row NaN, as the formula does: the
// max ignores NaN (fmax), but exp(NaN - max) and exp(inf - inf) put a NaN
// in the sum. Padding is -inf, which adds exp(-inf) = 0 to the sum.
//
// f32 and f64 use the accurate exp, once per element where the row is
// cached (the slots keep it); a streamed row takes its max and sum in one
// pass (N + 1 exps a slot) and exp again for the output, so it is read
// twice instead of three times. 16-bit rows keep their storage form, so
// exp is computed twice, with
// the hardware exp2 (a few f32 ulp against a 16-bit ulp of 2^-8 or 2^-11):
// the output is 2^((x - max) log2(e) - log2(sum)), one fused multiply-add
// and one exp2 instead of a division; results below 2^-126 (bf16
// subnormals) flush to 0.
struct kp_softmax_algo {
    template <typename C> static KP_DEVICE C pad() { return kp_limits<C>::lowest(); }

    // The group's max of what src holds of the row.
    template <typename C, typename I, int N, typename Src>
    static KP_DEVICE C max_of(const kp_group &g, Src &src) {
        C m = pad<C>();
        src.each([&](I, C (&v)[N]) {
#pragma unroll
            for (int i = 0; i < N; i++)
                m = fmax(m, v[i]);
        });
        return kp_group_reduce(g, m, kp_op_max<C>());
    }
    // The group's sum of exp(x - shift) over what src holds; KEEP: the
    // slots keep exp(x - shift).
    template <bool KEEP, typename T, typename I, int N, typename Src, typename C>
    static KP_DEVICE C sum_exp(const kp_group &g, Src &src, C shift) {
        const kp_softmax_exp<T> ex;
        C s = 0;
        src.each([&](I, C (&v)[N]) {
#pragma unroll
            for (int i = 0; i < N; i++) {
                const C e = ex(v[i] - shift);
                s += e;
                if (KEEP)
                    v[i] = e;
            }
        });
        return kp_group_reduce(g, s, kp_op_sum<C>());
    }

    // The output pass, given the row's max m and sum s; KEPT: the slots
    // hold exp(x - m) already.
    template <bool LOG, bool KEPT, typename T, bool VEC, typename I, int FULL, typename Src,
              typename C = typename kp_compute<T>::type>
    static KP_DEVICE void write(const kp_row<T, VEC, I, FULL> &r, Src &src, C m, C s) {
        constexpr int N = kp_row<T, VEC, I, FULL>::N;
        constexpr bool lowp = sizeof(T) == 2;
        constexpr float log2e = 1.44269504f;
        const C log_s = kp_log(s), inv_s = C(1) / s;
        src.each([&](I k, C (&v)[N]) {
            C out[N];
#pragma unroll
            for (int i = 0; i < N; i++) {
                if constexpr (LOG)
                    out[i] = (v[i] - m) - log_s;
                else if constexpr (lowp)
                    out[i] = kp_fast_exp2(fmaf(v[i] - m, log2e, -log_s * log2e));
                else
                    out[i] = (KEPT ? v[i] : kp_exp(v[i] - m)) * inv_s;
            }
            r.store(k, out);
        });
    }

    template <bool LOG, typename T, bool VEC, typename I, int FULL, typename Src>
    KP_DEVICE void run(const kp_row<T, VEC, I, FULL> &r, const kp_group &g, Src &src) const {
        typedef typename kp_compute<T>::type C;
        constexpr int N = kp_row<T, VEC, I, FULL>::N;
        // softmax keeps exp(x - max) in the cached slots where they hold C
        constexpr bool keep_exp = !LOG && Src::keeps_values;
        const kp_softmax_exp<T> ex;
        C m = pad<C>(), s = 0;
        if constexpr (Src::streamed) {
            // A row read from memory on each pass: the max and the sum in one
            // pass (online softmax), the sum so far rescaled where a slot
            // raises the max, as kp_softmax_rescale says. (Rescaling every
            // slot put an exp in the loop's dependency chain: f32 rows of
            // 32000 lost 3 points of copy bandwidth to the three-pass form.)
            src.each([&](I, C (&v)[N]) {
                C sm = m, t = 0;
#pragma unroll
                for (int i = 0; i < N; i++)
                    sm = fmax(sm, v[i]);
                const C shift = sm == pad<C>() ? C(0) : sm;
#pragma unroll
                for (int i = 0; i < N; i++)
                    t += ex(v[i] - shift);
                if (sm != m)
                    s *= ex(m - shift);
                s += t;
                m = sm;
            });
            const C M = kp_group_reduce(g, m, kp_op_max<C>());
            s = kp_group_reduce(g, kp_softmax_rescale(m, s, M, ex), kp_op_sum<C>());
            m = M;
        } else {
            m = max_of<C, I, N>(g, src);
            s = sum_exp<keep_exp, T, I, N>(g, src, m);
        }
        write<LOG, keep_exp>(r, src, m, s);
    }

    template <typename T, bool VEC, typename I, int FULL, typename Src>
    KP_DEVICE void operator()(const kp_row<T, VEC, I, FULL> &r, const kp_group &g, Src &src, int flags) const {
        if (flags & KP_ROWS_LOG)
            run<true>(r, g, src);
        else
            run<false>(r, g, src);
    }

    // Split rows (kp_rows_split): a chunk's max m and sum of exp(x - m).
    // A chunk whose max is -inf sums exp(x) (0, or NaN from a NaN), so that
    // it adds nothing to a row with a finite max and its NaN still spreads;
    // a row of -inf is NaN, as in the one-block kernels.
    static constexpr int parts = KP_ROWS_SOFTMAX_PARTS;
    template <typename T, bool VEC, typename I, int FULL, typename Src, typename C>
    KP_DEVICE void chunk_partial(const kp_row<T, VEC, I, FULL> &, const kp_group &g, Src &src,
                                 C (&p)[parts]) const {
        constexpr int N = kp_row<T, VEC, I, FULL>::N;
        p[0] = max_of<C, I, N>(g, src);
        p[1] = sum_exp<false, T, I, N>(g, src, p[0] == pad<C>() ? C(0) : p[0]);
    }
    // The row's max and sum from its chunks' partials, on every lane of a wave.
    template <typename C> struct stats { C m, s; };
    template <typename T, typename C>
    KP_DEVICE stats<C> combine(const C *part, kp_idx chunks, unsigned lane, kp_idx) const {
        const kp_softmax_exp<T> ex;
        C m = pad<C>(), s = 0;
        for (kp_idx j = lane; j < chunks; j += KP_WAVE_SIZE)
            m = fmax(m, part[parts * j]);
        m = kp_segment_reduce(m, kp_op_max<C>(), KP_WAVE_SIZE);
        for (kp_idx j = lane; j < chunks; j += KP_WAVE_SIZE)
            s += kp_softmax_rescale(part[parts * j], part[parts * j + 1], m, ex);
        return {m, kp_segment_reduce(s, kp_op_sum<C>(), KP_WAVE_SIZE)};
    }
    template <typename T, bool VEC, typename I, int FULL, typename Src, typename C>
    KP_DEVICE void write_chunk(const kp_row<T, VEC, I, FULL> &r, Src &src, const stats<C> &st,
                               int flags) const {
        if (flags & KP_ROWS_LOG)
            write<true, false>(r, src, st.m, st.s);
        else
            write<false, false>(r, src, st.m, st.s);
    }
};

// rmsnorm: x / sqrt(mean(x^2) + eps) * w. Padding is 0.
struct kp_rmsnorm_algo {
    float eps;
    template <typename C> static KP_DEVICE C pad() { return C(0); }

    // The sum of squares of what src holds of the row, over the group.
    template <typename C, typename I, int N, typename Src>
    static KP_DEVICE C sum_sq(const kp_group &g, Src &src) {
        C ss = 0;
        src.each([&](I, C (&v)[N]) {
#pragma unroll
            for (int i = 0; i < N; i++)
                ss += v[i] * v[i];
        });
        return kp_group_reduce(g, ss, kp_op_sum<C>());
    }
    // 1 / rms of a row of n elements whose squares sum to ss.
    template <typename C> KP_DEVICE C inv_rms(C ss, C n) const { return C(1) / kp_sqrt(ss / n + (C)eps); }
    template <typename T, bool VEC, typename I, int FULL, typename Src, typename C>
    static KP_DEVICE void write(const kp_row<T, VEC, I, FULL> &r, Src &src, C inv, int flags) {
        constexpr int N = kp_row<T, VEC, I, FULL>::N;
        const bool weighted = flags & KP_ROWS_WEIGHT;
        src.each([&](I k, C (&v)[N]) {
            C w[N], out[N];
            if (weighted)
                r.load_w(k, w);
#pragma unroll
            for (int i = 0; i < N; i++)
                out[i] = weighted ? v[i] * inv * w[i] : v[i] * inv;
            r.store(k, out);
        });
    }

    template <typename T, bool VEC, typename I, int FULL, typename Src>
    KP_DEVICE void operator()(const kp_row<T, VEC, I, FULL> &r, const kp_group &g, Src &src, int flags) const {
        typedef typename kp_compute<T>::type C;
        const C ss = sum_sq<C, I, kp_row<T, VEC, I, FULL>::N>(g, src);
        write(r, src, inv_rms(ss, (C)r.cols), flags);
    }

    // Split rows (kp_rows_split): a chunk's sum of squares.
    static constexpr int parts = KP_ROWS_RMSNORM_PARTS;
    template <typename T, bool VEC, typename I, int FULL, typename Src, typename C>
    KP_DEVICE void chunk_partial(const kp_row<T, VEC, I, FULL> &, const kp_group &g, Src &src,
                                 C (&p)[parts]) const {
        p[0] = sum_sq<C, I, kp_row<T, VEC, I, FULL>::N>(g, src);
    }
    template <typename C> struct stats { C inv; };
    template <typename T, typename C>
    KP_DEVICE stats<C> combine(const C *part, kp_idx chunks, unsigned lane, kp_idx cols) const {
        C ss = 0;
        for (kp_idx j = lane; j < chunks; j += KP_WAVE_SIZE)
            ss += part[j];
        return {inv_rms(kp_segment_reduce(ss, kp_op_sum<C>(), KP_WAVE_SIZE), (C)cols)};
    }
    template <typename T, bool VEC, typename I, int FULL, typename Src, typename C>
    KP_DEVICE void write_chunk(const kp_row<T, VEC, I, FULL> &r, Src &src, const stats<C> &st,
                               int flags) const {
        write(r, src, st.inv, flags);
    }
};

// The count n, mean and M2 (sum of squared deviations from the mean) of
// some elements of a row.
template <typename C> struct kp_moments {
    C n, mean, m2;
};

template <typename C> KP_DEVICE kp_moments<C> kp_shfl_xor(kp_moments<C> a, int lane_mask, int width) {
    return {kp_shfl_xor(a.n, lane_mask, width), kp_shfl_xor(a.mean, lane_mask, width),
            kp_shfl_xor(a.m2, lane_mask, width)};
}

// Moments of two disjoint sets of elements combined by Chan, Golub and
// LeVeque's parallel formula: M2 = M2a + M2b + d^2 na nb / n with d the
// difference of the means, a sum of non-negative terms (no cancellation,
// unlike sum(x^2) - n mean^2).
template <typename C> struct kp_op_moments {
    typedef kp_moments<C> acc;
    KP_DEVICE acc identity() const { return {C(0), C(0), C(0)}; }
    KP_DEVICE acc operator()(const acc &a, const acc &b) const {
        if (b.n == C(0))
            return a;
        if (a.n == C(0))
            return b;
        const C n = a.n + b.n, d = b.mean - a.mean, fb = b.n / n;
        return {n, a.mean + d * fb, a.m2 + b.m2 + d * d * a.n * fb};
    }
};

// layernorm: (x - mean) / sqrt(var + eps) * w + b, with the variance taken
// around the mean (no cancellation from E[x^2] - E[x]^2): in a second pass
// over a cached row, around each slot's mean for a streamed one (see
// moments). Padding is 0, which the mean ignores; the variance skips it.
struct kp_layernorm_algo {
    float eps;
    template <typename C> static KP_DEVICE C pad() { return C(0); }

    // The moments of what src holds of r's elements, over the group: the
    // mean, then M2 around it. A row of the stream kernels (kp_src_unroll >
    // 1) is read once for both: each slot's moments are merged into the
    // thread's by kp_op_moments, so the row is read twice in all, not three
    // times (H100, f32 rows of 32000-151936 over many rows: 47-58 -> 58-61 %
    // of copy, 16-bit 42-57 -> 47-62). Not in the strided kernels' streamed
    // fallback: registers go to a kernel's largest path, and they spilled.
    // Cached exact rows keep two group reductions (the sum, then M2): each
    // thread's own mean and M2 merged in one reduction of the pairs spilled
    // the 16-bit kernels and lost (H200, rows of 4096: f32 98.8 -> 97.2 %,
    // f16 94.4 -> 87.4, bf16 87.6 -> 82.6).
    template <typename T, bool VEC, typename I, int FULL, typename Src,
              typename C = typename kp_compute<T>::type>
    static KP_DEVICE kp_moments<C> moments(const kp_row<T, VEC, I, FULL> &r, const kp_group &g, Src &src) {
        constexpr int N = kp_row<T, VEC, I, FULL>::N;
        if constexpr (VEC && kp_src_unroll<Src>::value > 1) {
            const kp_op_moments<C> op;
            kp_moments<C> mo = op.identity();
            src.each([&](I k, C (&v)[N]) { mo = op(mo, slot_moments(r, k, v)); });
            mo = kp_group_reduce(g, mo, op);
            return {(C)r.cols, mo.mean, mo.m2};
        }
        const kp_op_sum<C> sum_op;
        C sum = 0;
        src.each([&](I, C (&v)[N]) {
#pragma unroll
            for (int i = 0; i < N; i++)
                sum += v[i];
        });
        const C mean = kp_group_reduce(g, sum, sum_op) / (C)r.cols;
        C sq = 0;
        src.each([&](I k, C (&v)[N]) {
            const bool full = r.full(k);
#pragma unroll
            for (int i = 0; i < N; i++) {
                const C d = v[i] - mean;
                if (full || r.valid(k, i))
                    sq += d * d;
            }
        });
        return {(C)r.cols, mean, kp_group_reduce(g, sq, sum_op)};
    }
    // The moments of slot k's elements in the row (n = 0 past its end).
    template <typename T, bool VEC, typename I, int FULL, typename C, int N>
    static KP_DEVICE kp_moments<C> slot_moments(const kp_row<T, VEC, I, FULL> &r, I k, const C (&v)[N]) {
        const bool full = r.full(k);
        C n = C(N), sum = 0;
        if (!full) {
            n = 0;
#pragma unroll
            for (int i = 0; i < N; i++)
                n += r.valid(k, i) ? C(1) : C(0);
        }
#pragma unroll
        for (int i = 0; i < N; i++)
            sum += v[i];  // padding is 0
        const C mean = full ? sum * (C(1) / C(N)) : sum / n;
        C m2 = 0;
        // A full slot takes no test an element: tested as full || valid,
        // every element paid a 64-bit compare and a select.
        if (full) {
#pragma unroll
            for (int i = 0; i < N; i++) {
                const C d = v[i] - mean;
                m2 += d * d;
            }
            return {n, mean, m2};
        }
#pragma unroll
        for (int i = 0; i < N; i++) {
            const C d = v[i] - mean;
            if (r.valid(k, i))
                m2 += d * d;
        }
        return {n, mean, m2};
    }
    // 1 / sqrt(var + eps) of a row of n elements whose M2 is m2.
    template <typename C> KP_DEVICE C inv_std(C m2, C n) const { return C(1) / kp_sqrt(m2 / n + (C)eps); }
    // The output pass with a weight (W) and a bias (B) or without: (x -
    // mean) * (inv w) + b, a subtraction, a multiply and a multiply-add an
    // element, compiled apart for each case; testing the flags an element
    // cost a predicated multiply and add. H200, % of copy, 16-bit rows,
    // with kp_row's word selection before -> after: rows of 4096 94 / 87
    // -> 97 / 95 (f16 / bf16), 33554 of 1000 85 / 81 -> 92 / 89, 6553 of
    // 5120 91 / 85 -> 95 / 94, 261 of 128256 56 / 56 -> 65 / 63; f32 level.
    // The stream kernels' pass is not waiting on w and b: loading them with
    // x's slot (a slot at a time; two spilled) measured level (H100, 1048
    // rows of 32000, f16 / bf16 66.0 / 64.8 -> 66.3 / 66.1 % of copy,
    // rmsnorm 78.8 -> 78.4), as did __restrict__ on w and b of the stream,
    // staged, cluster and whole-row kernels and an approximate division in
    // the streamed moments' merge.
    template <bool W, bool B, typename T, bool VEC, typename I, int FULL, typename Src, typename C>
    static KP_DEVICE void write_as(const kp_row<T, VEC, I, FULL> &r, Src &src, C mean, C inv) {
        constexpr int N = kp_row<T, VEC, I, FULL>::N;
        src.each([&](I k, C (&v)[N]) {
            C w[N], b[N], out[N];
            if constexpr (W)
                r.load_w(k, w);
            if constexpr (B)
                r.load_b(k, b);
#pragma unroll
            for (int i = 0; i < N; i++) {
                const C d = v[i] - mean;
                const C scale = W ? inv * w[i] : inv;
                if constexpr (B)
                    out[i] = d * scale + b[i];
                else
                    out[i] = d * scale;
            }
            r.store(k, out);
        });
    }
    template <typename T, bool VEC, typename I, int FULL, typename Src, typename C>
    static KP_DEVICE void write_flagged(const kp_row<T, VEC, I, FULL> &r, Src &src, C mean, C inv,
                                        bool weighted, bool biased) {
        constexpr int N = kp_row<T, VEC, I, FULL>::N;
        src.each([&](I k, C (&v)[N]) {
            C w[N], b[N], out[N];
            if (weighted)
                r.load_w(k, w);
            if (biased)
                r.load_b(k, b);
#pragma unroll
            for (int i = 0; i < N; i++) {
                C t = (v[i] - mean) * inv;
                if (weighted)
                    t *= w[i];
                if (biased)
                    t += b[i];
                out[i] = t;
            }
            r.store(k, out);
        });
    }
    // Strided rows (!VEC) and the cluster kernels' register chunks keep one
    // flagged pass: four copies spilled them (sm_90: layernorm_strided_f32
    // 240 bytes, layernorm_cluster_f32 8).
    template <typename T, bool VEC, typename I, int FULL, typename Src, typename C>
    static KP_DEVICE void write(const kp_row<T, VEC, I, FULL> &r, Src &src, C mean, C inv, int flags) {
        const bool weighted = flags & KP_ROWS_WEIGHT, biased = flags & KP_ROWS_BIAS;
        if (!VEC || kp_src_cached_slots<Src>::value > KP_ROW_MAX_SLOTS)
            write_flagged(r, src, mean, inv, weighted, biased);
        else if (weighted && biased)
            write_as<true, true>(r, src, mean, inv);
        else if (weighted)
            write_as<true, false>(r, src, mean, inv);
        else if (biased)
            write_as<false, true>(r, src, mean, inv);
        else
            write_as<false, false>(r, src, mean, inv);
    }

    template <typename T, bool VEC, typename I, int FULL, typename Src>
    KP_DEVICE void operator()(const kp_row<T, VEC, I, FULL> &r, const kp_group &g, Src &src, int flags) const {
        const auto mo = moments(r, g, src);
        write(r, src, mo.mean, inv_std(mo.m2, mo.n), flags);
    }

    // Split rows (kp_rows_split): a chunk's moments, combined by
    // kp_op_moments (each lane folds a few chunks, then the wave).
    static constexpr int parts = KP_ROWS_LAYERNORM_PARTS;
    template <typename T, bool VEC, typename I, int FULL, typename Src, typename C>
    KP_DEVICE void chunk_partial(const kp_row<T, VEC, I, FULL> &r, const kp_group &g, Src &src,
                                 C (&p)[parts]) const {
        const kp_moments<C> mo = moments(r, g, src);
        p[0] = mo.n;
        p[1] = mo.mean;
        p[2] = mo.m2;
    }
    template <typename C> struct stats { C mean, inv; };
    template <typename T, typename C>
    KP_DEVICE stats<C> combine(const C *part, kp_idx chunks, unsigned lane, kp_idx cols) const {
        const kp_op_moments<C> op;
        kp_moments<C> mo = op.identity();
        for (kp_idx j = lane; j < chunks; j += KP_WAVE_SIZE)
            mo = op(mo, {part[parts * j], part[parts * j + 1], part[parts * j + 2]});
        mo = kp_segment_reduce(mo, op, KP_WAVE_SIZE);
        return {mo.mean, inv_std(mo.m2, (C)cols)};
    }
    template <typename T, bool VEC, typename I, int FULL, typename Src, typename C>
    KP_DEVICE void write_chunk(const kp_row<T, VEC, I, FULL> &r, Src &src, const stats<C> &st,
                               int flags) const {
        write(r, src, st.mean, st.inv, flags);
    }
};

// Row kernels per op and dtype: <op>_exact_<dt> (contiguous rows of an
// exact fit), <op>_<dt> (other contiguous rows) and <op>_strided_<dt> (any
// strides). The exact kernels are bounded to 64 registers on NVIDIA up to
// sm_90 (two blocks of KP_ROWS_MAX_BLOCK threads per multiprocessor), which
// they fit without spilling: a row of 4096 then has four blocks' loads in
// flight per multiprocessor (KP_ROWS_EXACT_MIN_BLOCKS says why sm_100+ has
// one). AMD reads the second bound as waves per execution unit, where 2
// constrains nothing. <op>_<dt> and <op>_stream_<dt> take the same bound
// where they fit it (f64: one block; sm_90 spilled softmax_f64 8 bytes,
// softmax_stream_f64 476): <op>_<dt> then runs 16-bit rows of 1000 (a wave
// a row) four blocks of 256 a multiprocessor, not two.
#define KP_ROWS_MIN_BLOCKS(T) (sizeof(T) == 8 ? 1 : KP_ROWS_EXACT_MIN_BLOCKS)
#define KP_ROW_KERNEL(OP, NAME, T, VEC, EXACT, STREAM, MIN_BLOCKS, PARAMS, ...)              \
    KP_KERNEL void __launch_bounds__(KP_ROWS_MAX_BLOCK, MIN_BLOCKS) OP##NAME PARAMS {         \
        kp_rows<VEC, EXACT, STREAM>(__VA_ARGS__);                                             \
    }

#define KP_ROW_OP(OP, NAME, T, MIN_BLOCKS, PARAMS, ...)                                      \
    KP_ROW_KERNEL(OP, _exact_##NAME, T, true, true, false, KP_ROWS_EXACT_MIN_BLOCKS, PARAMS,  \
                  __VA_ARGS__)                                                                \
    KP_ROW_KERNEL(OP, _##NAME, T, true, false, false, MIN_BLOCKS, PARAMS, __VA_ARGS__)        \
    KP_ROW_KERNEL(OP, _strided_##NAME, T, false, false, false, 1, PARAMS, __VA_ARGS__)

// <op>_stream_<dt> takes contiguous rows too long to cache, bounded for
// two blocks a multiprocessor (KP_ROWS_MIN_BLOCKS).
// H200, many rows of 32000-151936, % of copy before -> after: softmax f32
// 29-52 -> 61-65, 16-bit 33-41 -> 52-64; rmsnorm f32 44-54 -> 60-65, bf16
// 34-44 -> 51-64; layernorm f32 32-45 -> 43-54, bf16 25-32 -> 36-44.
// layernorm_<dt> of bf16 rows keeps two blocks a multiprocessor on
// sm_75..sm_90, where it once spilled 36-52 bytes and was still faster for
// it (H100, rows of 1000, 91 % of copy against 79 % under one block); it
// fits since kp_row selects 16-bit slots as 32-bit words.
#define KP_ROW_KERNELS(NAME, T)                                                               \
    KP_ROW_OP(softmax, NAME, T, KP_ROWS_MIN_BLOCKS(T), (kp_rows_args a, const T *x, T *y), a, \
              x, y, (const T *)0, (const T *)0, kp_softmax_algo())                            \
    KP_ROW_KERNEL(softmax, _stream_##NAME, T, true, false, true, KP_ROWS_MIN_BLOCKS(T),        \
                  (kp_rows_args a, const T *x, T *y), a, x, y, (const T *)0, (const T *)0,    \
                  kp_softmax_algo())                                                          \
    KP_ROW_OP(rmsnorm, NAME, T, KP_ROWS_MIN_BLOCKS(T), (kp_rows_args a, const T *x, T *y,     \
              const T *w), a, x, y, w, (const T *)0, kp_rmsnorm_algo{a.eps})                  \
    KP_ROW_KERNEL(rmsnorm, _stream_##NAME, T, true, false, true, KP_ROWS_MIN_BLOCKS(T),        \
                  (kp_rows_args a, const T *x, T *y, const T *w), a, x, y, w, (const T *)0, \
                  kp_rmsnorm_algo{a.eps})                                                     \
    KP_ROW_KERNEL(layernorm, _stream_##NAME, T, true, false, true, KP_ROWS_MIN_BLOCKS(T),      \
                  (kp_rows_args a, const T *x, T *y, const T *w, const T *b), a, x, y, w, b, \
                  kp_layernorm_algo{a.eps})                                                   \
    KP_ROW_OP(layernorm, NAME, T, KP_ROWS_MIN_BLOCKS(T),                                      \
              (kp_rows_args a, const T *x, T *y, const T *w, const T *b), a, x, y, w, b,      \
              kp_layernorm_algo{a.eps})

KP_FOR_EACH_FLOAT(KP_ROW_KERNELS)

// ---------------------------------------------------------- wide rows
// Rows longer than a block's cached slots (vocabulary-size logits), with
// unit inner strides and 16-byte alignment, are cut into chunks of one
// block's slots (group x KP_ROW_MAX_SLOTS x 16 bytes, the host choosing
// the group so that a few rows still fill the device), a block each, and
// each block reads its chunk once a launch instead of once a pass. Launch 1
// writes each chunk's partial (Algo::parts values of the compute type:
// softmax its max and sum, rmsnorm its sum of squares, layernorm its
// moments) to part; launch 2 (KP_ROWS_SPLIT_FINAL) loads its chunk again
// (from the cache where the tensor fits it), then waits for launch 1, which
// it may overlap (KP_LAUNCH_OVERLAP_PRIOR: launch 1 does not write x),
// combines the partials of its row (Algo::combine, each wave on its own)
// and writes its chunk (Algo::write_chunk). A block writes only the chunk
// it read, so dst may be src.
template <typename T, typename Algo>
KP_DEVICE void kp_rows_split(const kp_rows_args &A, const T *x, T *y, const T *w, const T *b,
                             void *part_v, const Algo &algo) {
    typedef typename kp_compute<T>::type C;
    constexpr int N = 16 / sizeof(T), V = KP_ROW_MAX_SLOTS, P = Algo::parts;
    const kp_group g = kp_group_of((unsigned)A.group);  // the whole block
    const kp_idx chunk = (kp_idx)A.group * V * N, cols = (kp_idx)A.cols;
    const kp_idx chunks = (cols + chunk - 1) / chunk, blocks = (kp_idx)A.rows * chunks;
    const bool final = A.flags & KP_ROWS_SPLIT_FINAL;
    C *part = (C *)part_v;
    if (!final)
        kp_allow_dependent_grids();
    for (kp_idx blk = blockIdx.x; blk < blocks; blk += gridDim.x) {
        const kp_idx row = blk / chunks, c = blk - row * chunks;
        const auto r = kp_chunk_row<T, Algo>(A, g, row, c * chunk, chunk, x, y, w, b);
        kp_row_cached<T, true, KP_ROW_CHECKED, V> src(r);
        if (!final) {
            C p[P];
            algo.chunk_partial(r, g, src, p);
            if (threadIdx.x == 0) {
#pragma unroll
                for (int i = 0; i < P; i++)
                    part[P * blk + i] = p[i];
            }
            continue;
        }
        kp_wait_prior_grids();
        const auto st = algo.template combine<T>(part + P * row * chunks, chunks,
                                                 threadIdx.x % KP_WAVE_SIZE, cols);
        algo.write_chunk(r, src, st, A.flags);
    }
}

#define KP_ROWS_SPLIT_KERNEL(OP, NAME, T, ALGO)                                             \
    KP_KERNEL void __launch_bounds__(KP_ROWS_SPLIT_MAX_BLOCK, 1) OP##_split_##NAME(         \
        kp_rows_args a, const T *x, T *y, const T *w, const T *b, void *part) {             \
        kp_rows_split(a, x, y, w, b, part, ALGO);                                           \
    }

#define KP_ROWS_SPLIT_KERNELS(NAME, T)                                                      \
    KP_ROWS_SPLIT_KERNEL(softmax, NAME, T, kp_softmax_algo())                               \
    KP_ROWS_SPLIT_KERNEL(rmsnorm, NAME, T, kp_rmsnorm_algo{a.eps})                          \
    KP_ROWS_SPLIT_KERNEL(layernorm, NAME, T, kp_layernorm_algo{a.eps})

KP_FOR_EACH_FLOAT(KP_ROWS_SPLIT_KERNELS)

// ------------------------------------------------------- clustered rows
// Many rows too long for one block's slots (vocabulary-wide logits of a
// prompt's tokens), where the GPU has thread block clusters: a row per
// cluster of KP_ROWS_CLUSTER blocks, each block holding an equal chunk of it
// (whole 16-byte slots), so that the row is read from memory once
// (<op>_stream reads it twice, the split kernels' second read misses the
// cache when the rows are many). Each block leaves its chunk's partial (as
// kp_rows_split's) in its shared memory; after a cluster barrier every
// block reads all of them from its peers, combines them (Algo::combine) and
// writes its chunk. The partials alternate between two buffers, so one
// barrier a row suffices: a block rewrites a buffer two rows later, after a
// barrier its peers reach only once they have read it. A block writes only
// the chunk it read, so dst may be src. The host sends only rows of whole
// slots.
// <op>_cluster_f32 keeps its chunk in registers (at most group x
// KP_ROWS_CLUSTER_SLOTS slots: a check a slot, not an element, keeps the
// registers within the bound). H100, 1048 rows of 32000, % of copy, stream
// -> cluster: softmax 68 -> 79, rmsnorm 67 -> 84, layernorm 60 -> 71; the
// 16-bit kernels (6 slots) measured 8-10 points below the stream kernels on
// rows of 32000, bf16 spilled, and wider rows that fit 9 or 10 slots under
// one block a multiprocessor lost up to 20.
// <op>_staged_<dtype> (STAGED) copies its chunk into dynamic shared memory
// (ceil(cols / N / KP_ROWS_CLUSTER) slots, which the host checks the device
// has), each thread the slots it reads again, so no block barrier guards
// them: rows of any length that memory holds, with blocks small enough for
// several a multiprocessor. H100, 261 rows of 128256 / 220 of 151936, % of
// copy, stream -> staged: f32 softmax 66 / 64 -> 75 / 78, rmsnorm 66 / 64 ->
// 71 / 71, layernorm 60 / 58 -> 75 / 69; bf16 softmax 62 / 58 -> 82 / 80,
// rmsnorm 61 / 57 -> 73 / 68, layernorm 51 / 47 -> 66 / 60. On 1048 rows
// of 32000 it beat the register kernel in f32 layernorm only (71 -> 81;
// rmsnorm 85 -> 76, softmax level) and lost to the stream kernels in 16-bit
// (78 -> 66), whose second read comes from the cache there; the host
// chooses accordingly (cluster_rows). Fewer slots a thread (bigger
// blocks, fewer a multiprocessor) lost up to 37 points; a persistent grid
// (a cluster walking rows, the next row's copies in flight in a second
// stage while it reduces the current one) 5-50.
// Built without clusters, the kernels stream each row in the first block of
// its group of KP_ROWS_CLUSTER, as <op>_stream does; the host never picks
// them there (it asks the loaded kernel for its cluster size).
// This thread's slots of chunk r copied into stage (dynamic shared memory),
// waited for: the chunk as a kp_row_staged source.
template <typename T, typename R> KP_DEVICE kp_row_staged<T> kp_stage_chunk(const R &r, uint4 *stage_v) {
    constexpr int N = 16 / sizeof(T);
    kp_vec<T, N> *stage = reinterpret_cast<kp_vec<T, N> *>(stage_v);
    for (unsigned s = r.lane; s * N < r.cols; s += r.G)
        kp_async_copy16(stage + s, r.x + s * N);
    kp_async_commit();
    kp_async_wait<0>();
    return kp_row_staged<T>{r, stage};
}

template <bool STAGED, typename T, typename Algo>
KP_DEVICE void kp_rows_cluster(const kp_rows_args &A, const T *x, T *y, const T *w, const T *b,
                               const Algo &algo) {
    typedef typename kp_compute<T>::type C;
    constexpr int K = KP_ROWS_CLUSTER;
    const kp_group g = kp_group_of((unsigned)A.group);  // the whole block
    const kp_idx rows = (kp_idx)A.rows, step = gridDim.x / K;
#if KP_HAS_CLUSTERS
    constexpr int N = 16 / sizeof(T), P = Algo::parts;
    extern __shared__ uint4 kp_rows_stage[];
    __shared__ C part[2][P], all[K * P];
    const kp_idx cols = (kp_idx)A.cols, slots = cols / N;
    const kp_idx chunk = (slots + K - 1) / K * N;  // elements; what the host sized the chunks for
    const kp_idx chunks = (cols + chunk - 1) / chunk;
    int buf = 0;
    for (kp_idx row = blockIdx.x / K; row < rows; row += step, buf ^= 1) {
        const kp_idx at = kp_cluster_rank() * chunk;
        const auto r = kp_chunk_row<T, Algo, unsigned, KP_ROW_WHOLE_SLOTS>(A, g, row, at, chunk, x, y, w, b);
        C p[P];
        const auto reduce_and_write = [&](auto &src) {
            algo.chunk_partial(r, g, src, p);
            if (threadIdx.x == 0) {
#pragma unroll
                for (int i = 0; i < P; i++)
                    part[buf][i] = p[i];
            }
            kp_cluster_sync();
            if (threadIdx.x < K * P)
                all[threadIdx.x] = kp_cluster_map(&part[buf][0], threadIdx.x / P)[threadIdx.x % P];
            __syncthreads();
            const auto st = algo.template combine<T>(all, chunks, threadIdx.x % KP_WAVE_SIZE, cols);
            algo.write_chunk(r, src, st, A.flags);
        };
        if constexpr (STAGED) {
            kp_row_staged<T> src = kp_stage_chunk<T>(r, kp_rows_stage);
            reduce_and_write(src);
        } else {
            kp_row_cached<T, true, KP_ROW_WHOLE_SLOTS, KP_ROWS_CLUSTER_SLOTS> src(r);
            reduce_and_write(src);
        }
    }
    kp_cluster_sync();  // no block leaves while a peer may still read its partials
#else
    if (blockIdx.x % K != 0)
        return;
    const T pad = kp_store<T>(Algo::template pad<C>());
    for (kp_idx row = blockIdx.x / K; row < rows; row += step)
        kp_row_stream<true, kp_rows_stream_unroll<T>::value>(A, g, row, x, y, w, b, pad, algo);
#endif
}

#define KP_ROWS_CLUSTER_KERNEL(OP, KIND, STAGED, NAME, T, ALGO)                                  \
    KP_KERNEL void __launch_bounds__(KP_ROWS_CLUSTER_MAX_BLOCK, KP_ROWS_MIN_BLOCKS(T))          \
        KP_CLUSTER_DIMS(KP_ROWS_CLUSTER)                                                         \
        OP##_##KIND##_##NAME(kp_rows_args a, const T *x, T *y, const T *w, const T *b) {         \
        kp_rows_cluster<STAGED>(a, x, y, w, b, ALGO);                                            \
    }

#define KP_ROWS_CLUSTER_KERNELS(KIND, STAGED, NAME, T)                                      \
    KP_ROWS_CLUSTER_KERNEL(softmax, KIND, STAGED, NAME, T, kp_softmax_algo())               \
    KP_ROWS_CLUSTER_KERNEL(rmsnorm, KIND, STAGED, NAME, T, kp_rmsnorm_algo{a.eps})          \
    KP_ROWS_CLUSTER_KERNEL(layernorm, KIND, STAGED, NAME, T, kp_layernorm_algo{a.eps})

KP_ROWS_CLUSTER_KERNELS(cluster, false, f32, float)
KP_ROWS_CLUSTER_KERNELS(staged, true, f32, float)
KP_ROWS_CLUSTER_KERNELS(staged, true, f16, kp_f16)
KP_ROWS_CLUSTER_KERNELS(staged, true, bf16, kp_bf16)

// ---------------------------------------------------------- whole rows
// Many rows too long for a block's cached slots, short enough for a row to
// sit in one block's shared memory (16-bit logits of 32000; f32 rows of up
// to 128 KB where a block may take that much): a row per block, copied
// whole into dynamic shared memory (each thread the slots it reads again,
// as <op>_staged_<dtype> does), so it is read from memory once and no
// barrier joins the blocks of a row. Built for softmax (f32, f16, bf16) and
// rmsnorm (f16, bf16), where it measured faster; the host's whole_rows says
// how much. Rows of whole slots, 16-byte aligned, as the cluster kernels
// take.
template <typename T, typename Algo>
KP_DEVICE void kp_rows_whole(const kp_rows_args &A, const T *x, T *y, const T *w, const T *b,
                             const Algo &algo) {
    typedef typename kp_compute<T>::type C;
    constexpr int P = Algo::parts;
    extern __shared__ uint4 kp_rows_stage[];
    const kp_group g = kp_group_of((unsigned)A.group);  // the whole block
    const kp_idx cols = (kp_idx)A.cols;
    for (kp_idx row = blockIdx.x; row < (kp_idx)A.rows; row += gridDim.x) {
        const auto r = kp_chunk_row<T, Algo, unsigned, KP_ROW_WHOLE_SLOTS>(A, g, row, 0, cols, x, y, w, b);
        kp_row_staged<T> src = kp_stage_chunk<T>(r, kp_rows_stage);
        C p[P];
        algo.chunk_partial(r, g, src, p);  // the row's partial, on every thread
        const auto st = algo.template combine<T>(p, 1, threadIdx.x % KP_WAVE_SIZE, cols);
        algo.write_chunk(r, src, st, A.flags);
    }
}

#define KP_ROWS_WHOLE_KERNEL(OP, NAME, T, ALGO)                                                   \
    KP_KERNEL void __launch_bounds__(KP_ROWS_CLUSTER_MAX_BLOCK, KP_ROWS_MIN_BLOCKS(T))          \
        OP##_whole_##NAME(kp_rows_args a, const T *x, T *y, const T *w, const T *b) {           \
        kp_rows_whole(a, x, y, w, b, ALGO);                                                      \
    }

KP_ROWS_WHOLE_KERNEL(softmax, f32, float, kp_softmax_algo())
KP_ROWS_WHOLE_KERNEL(softmax, f16, kp_f16, kp_softmax_algo())
KP_ROWS_WHOLE_KERNEL(softmax, bf16, kp_bf16, kp_softmax_algo())
KP_ROWS_WHOLE_KERNEL(rmsnorm, f16, kp_f16, kp_rmsnorm_algo{a.eps})
KP_ROWS_WHOLE_KERNEL(rmsnorm, bf16, kp_bf16, kp_rmsnorm_algo{a.eps})

// ----------------------------------------------------------------- rope
// Groups of `group` threads per row (b, h, t); lanes walk the d/2 pairs,
// A.pairs at a time: one, or as vectors where the host found every row of
// x, y and the tables contiguous and aligned (interleaved: 16 bytes of x
// and 8 of each table a step; half: 16 bytes of each half and of each
// table). No reduction, so rows need not be uniform per block. Each pair is
// read and written by one thread, so dst may be src itself.

// The pointers of row `row` of x, y and the tables.
template <typename T> struct kp_rope_row {
    const T *x, *c, *s;
    T *y;
};
template <typename T, typename I>
KP_DEVICE kp_rope_row<T> kp_rope_row_at(const kp_rope_args &A, const T *x, const T *cs, const T *sn, T *y,
                                        I row) {
    I rest, ti, hi, bi;
    if constexpr (sizeof(I) == 4) {  // row < 2^31: the host's magic numbers
        rest = kp_div_by_magic(row, A.div_mul[0], A.div_shift[0]);
        bi = kp_div_by_magic(rest, A.div_mul[1], A.div_shift[1]);
    } else {
        rest = row / (I)A.t;
        bi = rest / (I)A.h;
    }
    ti = row - rest * (I)A.t;
    hi = rest - bi * (I)A.h;
    return {x + (kp_idx)bi * A.x_stride[0] + (kp_idx)hi * A.x_stride[1] + (kp_idx)ti * A.x_stride[2],
            cs + (kp_idx)bi * A.cos_stride[0] + (kp_idx)ti * A.cos_stride[1],
            sn + (kp_idx)bi * A.sin_stride[0] + (kp_idx)ti * A.sin_stride[1],
            y + (kp_idx)bi * A.y_stride[0] + (kp_idx)hi * A.y_stride[1] + (kp_idx)ti * A.y_stride[2]};
}

// Rotates pair k of a vector step: x1, x2 -> (x1 c - x2 s, x1 s + x2 c).
template <typename T> KP_DEVICE void kp_rope_rotate(T x1, T x2, T c, T s, T *o1, T *o2) {
    typedef typename kp_compute<T>::type C;
    const C a = kp_load(x1), b = kp_load(x2), ck = kp_load(c), sk = kp_load(s);
    *o1 = kp_store<T>(a * ck - b * sk);
    *o2 = kp_store<T>(a * sk + b * ck);
}

// One step of P pairs from pair j (P = 1: any strides).
template <typename T, int P>
KP_DEVICE void kp_rope_pairs(const kp_rope_args &A, const kp_rope_row<T> &r, kp_idx j) {
    const kp_idx half = (kp_idx)A.half;
    if constexpr (P == 1) {
        const kp_idx e1 = A.interleaved ? 2 * j : j;
        const kp_idx e2 = A.interleaved ? 2 * j + 1 : j + half;
        kp_rope_rotate(r.x[e1 * A.x_stride[3]], r.x[e2 * A.x_stride[3]], r.c[j * A.cos_stride[2]],
                       r.s[j * A.sin_stride[2]], &r.y[e1 * A.y_stride[3]], &r.y[e2 * A.y_stride[3]]);
    } else {
        const kp_vec<T, P> c = *(const kp_vec<T, P> *)(r.c + j), s = *(const kp_vec<T, P> *)(r.s + j);
        if (A.interleaved) {
            const kp_vec<T, 2 * P> x = *(const kp_vec<T, 2 * P> *)(r.x + 2 * j);
            kp_vec<T, 2 * P> o;
#pragma unroll
            for (int k = 0; k < P; k++)
                kp_rope_rotate(x.v[2 * k], x.v[2 * k + 1], c.v[k], s.v[k], &o.v[2 * k], &o.v[2 * k + 1]);
            *(kp_vec<T, 2 * P> *)(r.y + 2 * j) = o;
        } else {
            const kp_vec<T, P> a = *(const kp_vec<T, P> *)(r.x + j);
            const kp_vec<T, P> b = *(const kp_vec<T, P> *)(r.x + j + half);
            kp_vec<T, P> o1, o2;
#pragma unroll
            for (int k = 0; k < P; k++)
                kp_rope_rotate(a.v[k], b.v[k], c.v[k], s.v[k], &o1.v[k], &o2.v[k]);
            *(kp_vec<T, P> *)(r.y + j) = o1;
            *(kp_vec<T, P> *)(r.y + j + half) = o2;
        }
    }
}

// KP_ROPE_STEPS vector steps of a row, the lane's pairs j, j + stride, ...
// (IL: interleaved): every load first, then the rotations and stores (a
// thread's steps touch disjoint pairs, so this order is right for dst =
// src too), so that one row's index arithmetic serves more bytes in flight.
template <typename T, int P, bool IL>
KP_DEVICE void kp_rope_steps(const kp_rope_args &A, const kp_rope_row<T> &r, int j, int stride) {
    constexpr int U = KP_ROPE_STEPS, W = IL ? 2 * P : P;  // elements of x a load
    const int half = (int)A.half;
    kp_vec<T, P> c[U], s[U];
    kp_vec<T, W> a[U], b[U];  // half: the pairs' first and second elements; interleaved: a
#pragma unroll
    for (int u = 0; u < U; u++) {
        const int ju = j + u * stride;
        c[u] = *(const kp_vec<T, P> *)(r.c + ju);
        s[u] = *(const kp_vec<T, P> *)(r.s + ju);
        if constexpr (IL) {
            a[u] = *(const kp_vec<T, W> *)(r.x + 2 * ju);
        } else {
            a[u] = *(const kp_vec<T, W> *)(r.x + ju);
            b[u] = *(const kp_vec<T, W> *)(r.x + ju + half);
        }
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
        const int ju = j + u * stride;
        if constexpr (IL) {
            kp_vec<T, W> o;
#pragma unroll
            for (int k = 0; k < P; k++)
                kp_rope_rotate(a[u].v[2 * k], a[u].v[2 * k + 1], c[u].v[k], s[u].v[k], &o.v[2 * k],
                               &o.v[2 * k + 1]);
            *(kp_vec<T, W> *)(r.y + 2 * ju) = o;
        } else {
            kp_vec<T, W> o1, o2;
#pragma unroll
            for (int k = 0; k < P; k++)
                kp_rope_rotate(a[u].v[k], b[u].v[k], c[u].v[k], s[u].v[k], &o1.v[k], &o2.v[k]);
            *(kp_vec<T, W> *)(r.y + ju) = o1;
            *(kp_vec<T, W> *)(r.y + ju + half) = o2;
        }
    }
}

// The lane's pairs of a row from j on: KP_ROPE_STEPS vector steps at a time
// while they fit, then one at a time.
template <typename T, int P, bool IL>
KP_DEVICE void kp_rope_lane(const kp_rope_args &A, const kp_rope_row<T> &r, int j, int stride) {
    const int half = (int)A.half;  // pair indices in 32 bits: registers for the steps
    for (; j + (KP_ROPE_STEPS - 1) * stride < half; j += KP_ROPE_STEPS * stride)
        kp_rope_steps<T, P, IL>(A, r, j, stride);
    for (; j < half; j += stride)
        kp_rope_pairs<T, P>(A, r, j);
}

template <typename T, int P, typename I>
KP_DEVICE void kp_rope_rows(const kp_rope_args &A, const T *x, const T *cs, const T *sn, T *y) {
    const kp_group g = kp_group_of((unsigned)A.group);
    const I rows = (I)A.rows, step = (I)gridDim.x * (I)g.per_block;
    const int stride = (int)g.size * P, j = (int)g.lane * P;
    for (I row = (I)blockIdx.x * (I)g.per_block + (I)g.index; row < rows; row += step) {
        const kp_rope_row<T> r = kp_rope_row_at<T, I>(A, x, cs, sn, y, row);
        // f64's vector steps (2 pairs, half layouts) go one at a time:
        // batched, that code spilled 4 bytes on sm_100 and sm_120.
        if constexpr (P > 1 && sizeof(T) < 8) {
            if (A.interleaved)
                kp_rope_lane<T, P, true>(A, r, j, stride);
            else
                kp_rope_lane<T, P, false>(A, r, j, stride);
        } else {
            for (kp_idx k = j; k < (kp_idx)A.half; k += stride)
                kp_rope_pairs<T, P>(A, r, k);
        }
    }
}

// Vector steps: interleaved 16 bytes of x (8 of each table), half 16 bytes
// of each half and of each table; 32-bit row indices where the host found
// them enough.
template <typename T, typename I>
KP_DEVICE void kp_rope_walk(const kp_rope_args &A, const T *x, const T *cs, const T *sn, T *y) {
    constexpr int N = (int)(16 / sizeof(T));
    if (A.pairs == N / 2 && N / 2 > 1)
        kp_rope_rows<T, (N / 2 > 1 ? N / 2 : 1), I>(A, x, cs, sn, y);
    else if (A.pairs == N && N > 1)
        kp_rope_rows<T, (N > 1 ? N : 1), I>(A, x, cs, sn, y);
    else
        kp_rope_rows<T, 1, I>(A, x, cs, sn, y);
}
template <typename T>
KP_DEVICE void kp_rope(const kp_rope_args &A, const T *x, const T *cs, const T *sn, T *y) {
    if (A.small)
        kp_rope_walk<T, uint32_t>(A, x, cs, sn, y);
    else
        kp_rope_walk<T, kp_idx>(A, x, cs, sn, y);
}

#define KP_ROPE_KERNEL(NAME, T)                                                             \
    KP_KERNEL void __launch_bounds__(KP_ROPE_BLOCK)                                         \
        rope_##NAME(kp_rope_args a, const T *x, const T *cos, const T *sin, T *y) {         \
        kp_rope(a, x, cos, sin, y);                                                         \
    }

KP_FOR_EACH_FLOAT(KP_ROPE_KERNEL)
