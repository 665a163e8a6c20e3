#!/usr/bin/env python3
"""Runs the core benchmark suite once and prints the markdown tables of docs/benchmarks.md ("Core").

    python3 bench/core_report.py --build build [--filter REGEX] [--repetitions 3]

Standard library only (any python3). Medians over the repetitions; pairs/s counts kernel evaluations
(marginal: K per sample pair; bandwidth selection: one per candidate h); peak memory is the largest
heap use above the start of each benchmark's timing loop (operator new tracked by bench/heap_tracker.cpp).
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import tempfile
import time


def run(binary, flt, repetitions):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as out:
        path = out.name
    cmd = [binary, f"--benchmark_filter={flt}", f"--benchmark_repetitions={repetitions}",
           "--benchmark_report_aggregates_only=false", f"--benchmark_out={path}", "--benchmark_out_format=json"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(path) as f:
        data = json.load(f)
    os.unlink(path)
    return data


def medians(data):
    """run_name -> dict(time_ms, pairs_per_s, peak_mb), medians over repetitions."""
    runs = {}
    for b in data["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        r = runs.setdefault(b["run_name"], {"t": [], "p": [], "m": []})
        scale = {"ms": 1.0, "us": 1e-3, "ns": 1e-6, "s": 1e3}[b["time_unit"]]
        r["t"].append(b["real_time"] * scale)
        r["p"].append(b.get("pairs_per_s", float("nan")))
        if "peak_heap_bytes" in b:
            r["m"].append(b["peak_heap_bytes"] / 2**20)
    return {k: {"time_ms": statistics.median(v["t"]), "pairs_per_s": statistics.median(v["p"]),
                "peak_mb": statistics.median(v["m"]) if v["m"] else float("nan")} for k, v in runs.items()}


def table(results, prefix, title):
    rows = []
    for name, r in results.items():
        if not name.startswith(prefix + "/"):
            continue
        n, k, threads = name[len(prefix) + 1:].split("/")[:3]
        rows.append((int(n), int(k), int(threads), r))
    if not rows:
        return ""
    lines = [f"**{title}**", "", "| n | K | threads | median time | pairs / s | peak heap |", "|---:|---:|---:|---:|---:|---:|"]
    for n, k, t, r in sorted(rows):
        lines.append(f"| {n:,} | {k} | {t} | {r['time_ms']:.1f} ms | {r['pairs_per_s'] / 1e9:.3f} G | {r['peak_mb']:.1f} MB |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--filter", default=".")
    ap.add_argument("--repetitions", type=int, default=3)
    args = ap.parse_args()
    binary = os.path.join(args.build, "bench", "ecekde_bench")
    load = os.getloadavg()
    results = medians(run(binary, args.filter, args.repetitions))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; ecekde {commit}; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average before the run "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; medians of {args.repetitions} repetitions\n")
    for prefix, title in [("BM_Estimate/target", "Headline: canonical, K = 10, n = 8,000, double"),
                          ("BM_Estimate/canonical", "Canonical (Dirichlet kernel)"),
                          ("BM_Estimate/marginal", "Marginal (K one-dimensional problems; pairs counted per class)"),
                          ("BM_Estimate/top_label", "Top-label"),
                          ("BM_Bandwidth", "Automatic bandwidth, canonical (grid + refinement; pairs counted per candidate h and per row the criterion averages over, at most max_rows = 20,000)"),
                          ("BM_Gradient/canonical", "Estimate + analytic gradient, canonical"),
                          ("BM_Gradient/marginal", "Estimate + analytic gradient, marginal (K one-dimensional problems; pairs counted per class)")]:
        print(table(results, prefix, title))
    base = results.get("BM_Estimate/resampling_base/10000/10/2/real_time")
    rows = [("one estimate", base)] + [(label, results.get(f"{name}/10000/10/2/real_time"))
                                      for label, name in [("bootstrap, B = 100", "BM_Bootstrap"),
                                                          ("calibration test, B = 100", "BM_CalibrationTest")]]
    if base:
        print("**Bootstrap and calibration test, canonical, K = 10, n = 10,000, 2 threads**\n")
        print("| computation | median time | multiple of one estimate | peak heap |\n|---|---:|---:|---:|")
        for label, r in rows:
            if r:
                print(f"| {label} | {r['time_ms']:.0f} ms | {r['time_ms'] / base['time_ms']:.2f} | {r['peak_mb']:.1f} MB |")
        print()
    g, e = results.get("BM_Gradient/canonical/8000/10/2/real_time"), results.get("BM_Estimate/target/8000/10/2/real_time")
    if g and e:
        print(f"Estimate + gradient / estimate alone (n = 8,000, K = 10, 2 threads): {g['time_ms'] / e['time_ms']:.2f}\n")


if __name__ == "__main__":
    main()
