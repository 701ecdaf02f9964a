"""The exporter's speed target (make bench-export): ResNet-50's training
step (batch 32, Adam) exported in at most 60 s, timed as a whole process
(Python start and `import torch` included), best of --runs."""

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model", default="resnet50")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--limit", type=float, default=60.0, help="seconds")
    a = p.parse_args()
    times = []
    with tempfile.TemporaryDirectory() as d:
        for _ in range(a.runs):
            start = time.monotonic()
            subprocess.run([sys.executable, os.path.join(HERE, "torchexport.py"), "--model", a.model,
                            "-o", os.path.join(d, a.model + ".json")], check=True, stdout=subprocess.DEVNULL)
            times.append(time.monotonic() - start)
    times.sort()
    print("export %s: best %.2f s, median %.2f s over %d runs (limit %.0f s)" % (
        a.model, times[0], times[len(times) // 2], len(times), a.limit))
    return 0 if times[len(times) // 2] <= a.limit else 1


if __name__ == "__main__":
    sys.exit(main())
