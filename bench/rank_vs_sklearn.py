#!/usr/bin/python3
"""dime rank against scikit-learn's mutual_info_regression on screening tables.

A benchmark script, not a test (Debian: apt-get install python3-sklearn).
For each size it writes a table with `dime gen --kind screen` (a target y,
40 candidates, six of them dependent on y, strongest first as gen prints
them), ranks the candidates with both tools, and prints the CPU seconds of
each (user + system: sklearn's in this process, dime's of the child), their
ratio, and which candidates each puts in its top six (dime: also q <= 0.01).

    /usr/bin/python3 bench/rank_vs_sklearn.py --dime ./dime --rows 10000,100000 --seed 7
"""
import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.feature_selection import mutual_info_regression


def cpu_self():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dime", default="dime")
    ap.add_argument("--rows", default="10000")
    ap.add_argument("--seed", default="7")
    ap.add_argument("--candidates", type=int, default=40)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(v) for v in args.rows.split(",")]:
            path = os.path.join(tmp, f"screen{n}.csv")
            g = subprocess.run([args.dime, "gen", "--kind", "screen", "--rows", str(n), "--dim", str(args.candidates),
                                "--seed", args.seed, "--out", path], capture_output=True, text=True, check=True)
            truth = re.search(r"strongest first: \[([^\]]*)\]", g.stderr).group(1).split()
            data = np.loadtxt(path, delimiter=",", skiprows=1)
            with open(path) as f:
                names = f.readline().strip().split(",")
            y, X = data[:, 0], data[:, 1:]
            c0, w0 = cpu_self(), time.time()
            mi = mutual_info_regression(X, y, random_state=0)
            sk_cpu, sk_wall = cpu_self() - c0, time.time() - w0
            sk_top = [names[1 + i] for i in np.argsort(-mi)[:6]]
            c0, w0 = cpu_children(), time.time()
            out = subprocess.run([args.dime, "rank", path, "--y", "y", "--x", "x*", "--json"], capture_output=True, text=True, check=True)
            d_cpu, d_wall = cpu_children() - c0, time.time() - w0
            r = json.loads(out.stdout)
            d_top = [c["name"] for c in r["candidates"][:6]]
            d_sig = sorted(c["name"] for c in r["candidates"] if c["q_value"] is not None and c["q_value"] <= 0.01)
            print(f"rows {n}: sklearn {sk_cpu:.2f} CPU-s ({sk_wall:.2f} s wall), dime rank {d_cpu:.2f} CPU-s ({d_wall:.2f} s wall), "
                  f"ratio sklearn/dime {sk_cpu / d_cpu:.2f}")
            print(f"  truth (strongest first) {truth}")
            print(f"  sklearn top 6 {sk_top}  same set: {sorted(sk_top) == sorted(truth)}, same order: {sk_top == truth}")
            print(f"  dime    top 6 {d_top}  same set: {sorted(d_top) == sorted(truth)}, same order: {d_top == truth}; q <= 0.01: {d_sig}")
            print(f"  load {os.getloadavg()[0]:.1f}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
