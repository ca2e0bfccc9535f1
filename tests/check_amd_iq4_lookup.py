#!/usr/bin/env python3
"""Proves, without an AMD GPU, that the IQ4 table lookup of the AMD code
(kp_qiq4_lookup in kp_quant.cuh: v_perm_b32 byte selects) returns GGUF's
table entries. A kernel compares the lookup of words holding every index in
every byte, low and high nibble, with the table (KP_IQ4NL_VALUES); hipcc
folds the whole comparison to the one constant the kernel stores, so the
compiler's own model of the instructions gives the verdict: 1 passes, 0
fails, anything else means it did not fold and proves nothing (a failure).

Usage: check_amd_iq4_lookup.py HIPCC TARGET INCLUDE_DIR"""

import os
import re
import subprocess
import sys
import tempfile

SOURCE = r"""
#include "kp_quant.cuh"

// Byte k of word j: low nibble (j + k) % 16, high nibble (j + 5 + 3k) % 16.
extern "C" __global__ void kp_check_iq4_lookup(int *verdict) {
    const int table[16] = KP_IQ4NL_VALUES;
    bool good = true;
#pragma unroll
    for (uint32_t j = 0; j < 16; j++) {
        uint32_t v = 0;
#pragma unroll
        for (uint32_t k = 0; k < 4; k++) v |= ((j + k) % 16 | (j + 5 + 3 * k) % 16 << 4) << (8 * k);
        int lo, hi;
        kp_qiq4_lookup(v, &lo, &hi);
#pragma unroll
        for (int k = 0; k < 4; k++) {
            good = good && (int8_t)(lo >> (8 * k)) == table[(v >> (8 * k)) & 15u];
            good = good && (int8_t)(hi >> (8 * k)) == table[(v >> (8 * k + 4)) & 15u];
        }
    }
    *verdict = good ? 1 : 0;
}
"""


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    hipcc, target, include = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, "iq4_lookup.hip"), os.path.join(tmp, "iq4_lookup.ll")
        with open(src, "w") as f:
            f.write(SOURCE)
        cmd = [hipcc, "--cuda-device-only", "--offload-arch=" + target, "-O3", "-std=c++17", "-S",
               "-emit-llvm", "-I" + include, src, "-o", out]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, env=dict(os.environ, HIP_PLATFORM="amd"))
        if proc.returncode != 0:
            sys.exit("check_amd_iq4_lookup: hipcc failed:\n" + proc.stdout)
        with open(out) as f:
            ir = f.read()
    m = re.search(r"define [^\n]*@kp_check_iq4_lookup\(.*?\n}\n", ir, re.S)
    if not m:
        sys.exit("check_amd_iq4_lookup: the check kernel is missing from hipcc's output")
    stores = re.findall(r"store i32 (\S+),", m.group(0))
    if stores == ["1"]:
        print("IQ4 lookup on %s: all 128 entries match the table" % target)
        return
    if stores == ["0"]:
        sys.exit("check_amd_iq4_lookup: on %s the lookup returns entries other than the table's" % target)
    sys.exit("check_amd_iq4_lookup: hipcc did not fold the comparison on %s, so it proves nothing; "
             "the kernel stores %s:\n%s" % (target, stores, m.group(0)))


if __name__ == "__main__":
    main()
