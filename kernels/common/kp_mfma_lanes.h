/* The lanes of AMD's wave64 16 x 16 integer matrix products (kp_mfma_s8_k16
 * and kp_mfma_s8_k32 in kp_mma.cuh), as the mat-mat uses them. Plain C, so
 * the unit test that checks this layout against the instructions'
 * definition (tests/unit/test_mfma_lanes.c) reads the same macros as the
 * kernels.
 *
 * A product multiplies a 16 x 32 block A (16 rows of one 32-element item)
 * by a 32 x 16 block B (16 columns of the same item) as two halves of 16
 * bytes. Lane l supplies word KP_MFMA_WORD(l) (bytes 4w .. 4w + 3) of each
 * half of A's row KP_MFMA_IN(l) and of B's column KP_MFMA_IN(l), and
 * receives the results of rows KP_MFMA_OUT_ROW(l, r), r = 0..3, in column
 * KP_MFMA_OUT_COL(l). */
#ifndef KP_MFMA_LANES_H
#define KP_MFMA_LANES_H

#define KP_MFMA_WAVE 64
#define KP_MFMA_IN(l) ((l) % 16)
#define KP_MFMA_WORD(l) ((l) / 16)
#define KP_MFMA_OUT_ROW(l, r) (4 * ((l) / 16) + (r))
#define KP_MFMA_OUT_COL(l) ((l) % 16)

#endif
