#!/usr/bin/env python3
"""The bandwidths that bound a run's set-up and output phases, measured on this machine:
host memory (a large copy), the file system (writing and reading back a large file through
the page cache), and, where PyTorch sees a GPU, host to device and device to host copies
from pageable and pinned memory. docs/benchmarks/time-to-solution.md sets each phase beside
bytes over the bandwidth that bounds it."""
import os
import sys
import tempfile
import time

import numpy as np


def best(f, repeat=3):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    size = int(float(sys.argv[1]) * 2**30) if len(sys.argv) > 1 else 2**30
    a = np.ones(size // 8)
    b = np.empty_like(a)
    t = best(lambda: np.copyto(b, a))
    print(f"host memcpy        {2 * size / t / 1e9:7.2f} GB/s (read + write, {size / 2**30:.1f} GiB, one thread)")
    fresh = best(lambda: np.ones(size // 8), repeat=2)
    print(f"fresh pages        {size / fresh / 1e9:7.2f} GB/s (a new array filled: page faults + zeroing)")
    directory = os.environ.get("TTS_WORK", tempfile.gettempdir())
    path = os.path.join(directory, "bandwidth.bin")
    def write():
        with open(path, "wb") as f:
            a.tofile(f)
    t = best(write, repeat=2)
    print(f"file write         {size / t / 1e9:7.2f} GB/s (page cache, {path})")
    def read():
        with open(path, "rb", buffering=0) as f:
            f.readinto(memoryview(b).cast("B"))
    t = best(read, repeat=2)
    print(f"file read          {size / t / 1e9:7.2f} GB/s (page cache, into memory already touched)")
    os.remove(path)
    try:
        import torch
    except ImportError:
        return
    if not torch.cuda.is_available():
        return
    d = torch.empty(size // 8, dtype=torch.float64, device="cuda")
    for name, pinned in (("pageable", False), ("pinned", True)):
        h = torch.ones(size // 8, dtype=torch.float64, pin_memory=pinned)
        def up():
            d.copy_(h)
            torch.cuda.synchronize()
        def down():
            h.copy_(d)
            torch.cuda.synchronize()
        up()
        print(f"host->device {name:8s} {size / best(up) / 1e9:7.2f} GB/s")
        print(f"device->host {name:8s} {size / best(down) / 1e9:7.2f} GB/s")


if __name__ == "__main__":
    main()
