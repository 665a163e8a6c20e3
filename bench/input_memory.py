"""Peak resident memory of `ecekde estimate` on a large float32 NPY input (issue 14: memory-mapped input).

Writes n x K float32 predictions (default 10^7 x 10: a 400 MB file) and their labels, starts
`ecekde estimate --estimator paper --bandwidth 0.05` on them, lets it run into the O(n^2) sweep (which
would take about a day at n = 10^7), reads the process's peak resident set (VmHWM) and its mapped-file
share (RssFile) from /proc, interrupts it with SIGINT and checks that it ended with exit status 130.
Run: /usr/bin/python3 bench/input_memory.py build/cli/ecekde [n] [k] [seconds]
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np


def status_kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def main():
    cli = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000_000
    k = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 60
    with tempfile.TemporaryDirectory() as tmp:
        probs_path, labels_path = os.path.join(tmp, "probs.npy"), os.path.join(tmp, "labels.npy")
        rng = np.random.default_rng(0)
        probs = np.empty((n, k), dtype=np.float32)
        for start in range(0, n, 1_000_000):  # in chunks, so that this script stays small too
            rows = rng.dirichlet(np.ones(k), size=min(1_000_000, n - start))
            probs[start:start + len(rows)] = rows
        np.save(probs_path, probs)
        np.save(labels_path, rng.integers(0, k, n))
        del probs
        file_mb = os.path.getsize(probs_path) / 2**20
        process = subprocess.Popen([cli, "estimate", "--probs", probs_path, "--labels", labels_path, "--estimator",
                                    "paper", "--bandwidth", "0.05", "--threads", "2", "--progress"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(seconds)
        peak_mb = status_kb(process.pid, "VmHWM") / 1024
        file_backed_mb = status_kb(process.pid, "RssFile") / 1024
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
        print(f"n = {n}, K = {k}: probs file {file_mb:.0f} MB; after {seconds:.0f} s (in the sweep): "
              f"peak resident {peak_mb:.0f} MB, of which mapped file pages {file_backed_mb:.0f} MB now; "
              f"exit status {process.returncode} after SIGINT")
        print("stderr:", err.strip().replace("\n", " | "))
        if process.returncode != 130:
            sys.exit("expected exit status 130 after SIGINT")


if __name__ == "__main__":
    main()
