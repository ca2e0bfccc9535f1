#!/usr/bin/env python3
"""Print, one per line, the gfx targets that this hipcc can compile for.

Usage: probe_amdgpu_targets.py HIPCC TARGET...
Each target is tried once on an empty translation unit (in parallel); the
build host's GPUs are never probed.
"""

import concurrent.futures
import os
import subprocess
import sys


def works(hipcc, target):
    env = dict(os.environ, HIP_PLATFORM="amd")
    proc = subprocess.run([hipcc, "--genco", "--offload-arch=" + target, "-x", "hip",
                           os.devnull, "-o", os.devnull], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc.returncode == 0


def main():
    hipcc, targets = sys.argv[1], sys.argv[2:]
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        ok = list(pool.map(lambda t: works(hipcc, t), targets))
    for target, good in zip(targets, ok):
        if good:
            print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
