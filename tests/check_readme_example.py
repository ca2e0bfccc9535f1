#!/usr/bin/env python3
"""The README's C example is examples/minimal.c, verbatim (so the example
users read is the one the test suite compiles and runs)."""
import sys

readme, example = (open(p).read() for p in sys.argv[1:3])
block = "```c\n" + example + "```"
if block not in readme:
    print("README.md does not contain examples/minimal.c verbatim in a ```c block")
    sys.exit(1)
print("README example matches examples/minimal.c")
