#!/usr/bin/env python3
"""akx-bench as a user meets it (issue 19), on the sim:

1. arguments are checked before anything runs: an unwritable --plot, --csv or --json path and a
   missing gnuplot stop the run at once with status 2 and no row;
2. --help names every environment variable the library and the bench read (getenv in src/ and
   bench/);
3. every suite (--quick) with --csv, --json and --plot: rows of every suite, every one passed,
   valid JSON Lines matching the CSV, the model and copy columns present, a PNG;
4. a run stopped by SIGINT keeps the rows of the cases that finished (and plots them); one
   killed by SIGKILL keeps them too, every JSON line whole;
5. the seeds' column (bench/seeds.c) on the rtx5080 profile, the seeds' device: the dims rows
   a seed measured show its time and the ratio to it, the other rows none; the default profile
   (h200) shows no seed column (3.).

Speed is the bench's business, not this test's: no timing is asserted here.

usage: test_bench_cli.py AKX_BENCH SOURCE_DIR
"""
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SUITES = {"scan", "findall", "reduce", "dims", "segmented", "select"}

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def run(cmd, env=None, timeout=300):
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


def csv_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def json_lines(path):
    """Every line of a JSON Lines file parsed; an unparsable line is a failure."""
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                check(False, f"{path} line {n} is valid JSON ({e})")
    return rows


def wait_rows(path, count, proc, limit_s):
    """Waits until the CSV at path holds `count` data rows (or the process ends)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and proc.poll() is None:
        if os.path.exists(path):
            with open(path) as f:
                if sum(1 for _ in f) - 1 >= count:
                    return True
        time.sleep(0.2)
    return False


def main():
    bench, src = sys.argv[1], sys.argv[2]
    env = dict(os.environ)
    env["AKX_BACKEND"] = "sim"  # the CLI's behaviour on the sim; the GPU has bench/gpu_check.sh
    tmp = tempfile.mkdtemp(prefix="akx-bench-cli-")

    # 1. checks before running
    for flag, path in (("--plot", "/nonexistent-dir/b.png"), ("--csv", "/nonexistent-dir/b.csv"),
                       ("--json", "/nonexistent-dir/b.json")):
        r = run([bench, flag, path], env)
        check(r.returncode == 2 and "cannot write" in r.stderr and "case 1/" not in r.stderr,
              f"{flag} into a missing folder: status 2 before any case (got {r.returncode})")
    no_gnuplot = dict(env, PATH=os.path.join(tmp, "empty"))
    r = run([os.path.abspath(bench), "--plot", os.path.join(tmp, "x.png")], no_gnuplot)
    check(r.returncode == 2 and "gnuplot" in r.stderr and "case 1/" not in r.stderr,
          f"--plot without gnuplot on PATH: status 2 before any case (got {r.returncode})")
    r = run([bench, "--profile", "a100"], env)
    check(r.returncode == 2, "--profile a100 is refused")

    # 2. --help names every variable read
    r = run([bench, "--help"], env)
    names = set()
    for root in ("src", "bench"):
        for d, _, files in os.walk(os.path.join(src, root)):
            for name in files:
                if name.endswith((".c", ".cpp", ".cu", ".h", ".hpp")):
                    with open(os.path.join(d, name), errors="replace") as f:
                        names |= set(re.findall(r'getenv\("([A-Z_0-9]+)"\)', f.read()))
                        f.seek(0)
                        # settings.c and backend_sim.cpp read through helpers given the name
                        names |= set(re.findall(r'(?:pick|read_switch|number)\("(AKX_[A-Z_0-9]+)"', f.read()))
    missing = sorted(n for n in names if n not in r.stdout)
    check(r.returncode == 0 and not missing and len(names) >= 10,
          f"--help names the {len(names)} variables read (missing: {missing})")

    # 3. every suite with every output, on --quick's sizes: the files do not depend on the sizes,
    # and the default's (a minute or two here, 10^8 where the sim is fast enough) are CI's
    # bench-default stage (.ci/run), which also checks that the default reaches 10^8
    out = {k: os.path.join(tmp, "bench." + k) for k in ("csv", "json", "png")}
    r = run([bench, "--quick", "--csv", out["csv"], "--json", out["json"], "--plot", out["png"]], env,
            timeout=600)
    check(r.returncode == 0, f"every suite on --quick exits 0 (got {r.returncode})")
    if r.returncode:
        print(r.stderr[-2000:])
    check(re.search(r"case 1/\d+ .*elapsed .*ETA", r.stderr) is not None,
          "progress reads 'case i/N ... elapsed ... ETA'")
    check("CUB columns need a GPU" in r.stdout and "--backend cuda" in r.stdout,
          "the sim's header says CUB needs a GPU")
    check("seed" not in r.stdout.lower(), "no 'seed' in the output")
    rows = csv_rows(out["csv"]) if os.path.exists(out["csv"]) else []
    check({row["suite"] for row in rows} == SUITES, f"CSV rows of every suite ({len(rows)} rows)")
    check(rows and all(row["state"] == "ok" for row in rows), "every CSV row passed")
    check(rows and all(row["sim_model_us"] and row["sim_copy_model_us"] and row["sim_peak_gbs"]
                       for row in rows), "every CSV row has the model, copy and peak columns")
    lines = json_lines(out["json"]) if os.path.exists(out["json"]) else []
    check(len(lines) == len(rows) and all(l.get("suite") in SUITES for l in lines),
          f"JSON Lines: one object per CSV row ({len(lines)} vs {len(rows)})")
    with open(out["png"], "rb") if os.path.exists(out["png"]) else open(os.devnull, "rb") as f:
        check(f.read(8) == PNG_MAGIC, "the plot is a PNG")

    # 4. interrupted runs keep their rows
    for sig in (signal.SIGINT, signal.SIGKILL):
        stem = os.path.join(tmp, "stopped-" + signal.Signals(sig).name)
        paths = {k: f"{stem}.{k}" for k in ("csv", "json", "png")}
        proc = subprocess.Popen([bench, "--csv", paths["csv"], "--json", paths["json"], "--plot",
                                 paths["png"]], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        got = wait_rows(paths["csv"], 3, proc, 240)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=240)
        name = signal.Signals(sig).name
        check(got, f"{name}: 3 rows written before the signal")
        rows = csv_rows(paths["csv"])
        lines = json_lines(paths["json"])
        check(len(rows) >= 3 and len(lines) == len(rows),
              f"{name}: the rows so far kept, CSV and JSON alike ({len(rows)}, {len(lines)})")
        if sig == signal.SIGINT:
            check(proc.returncode == 128 + signal.SIGINT and "stopped by signal" in err,
                  f"SIGINT: stops after the case running, status 130 (got {proc.returncode})")
            with open(paths["png"], "rb") as f:
                check(f.read(8) == PNG_MAGIC, "SIGINT: the rows so far are plotted")

    # 5. the seeds' column on the rtx5080 profile: the default dims rows among reduce-dims-shapes'
    # five (sum(x; dims=2), RTX 5080, after the change)
    path = os.path.join(tmp, "seeds.csv")
    r = run([bench, "dims", "--profile", "rtx5080", "--csv", path], env)
    check(r.returncode == 0 and "seed µs" in r.stdout, f"dims on rtx5080: a seed column (status {r.returncode})")
    rows = csv_rows(path) if os.path.exists(path) else []
    seeds = {(row["dtype"], row["shape"]): row for row in rows if row["seed_us"]}
    table = {("bfloat16", "768x1024x8"): 19.6, ("float32", "768x1024x8"): 33.3, ("float32", "64x4096x32"): 41.0,
             ("bfloat16", "3072x2048"): 16.9, ("float32", "8192x8192"): 295.0}
    want = {(row["dtype"], row["shape"]): table[(row["dtype"], row["shape"])] for row in rows
            if row["case"] == "sum dims=2" and (row["dtype"], row["shape"]) in table}
    check(len(want) >= 3 and {k: float(v["seed_us"]) for k, v in seeds.items()} == want,
          f"the seed's rows and times: {sorted((k, v['seed_us']) for k, v in seeds.items())}, want {want}")
    check(all(abs(float(v["akx_over_seed"]) - float(v["sim_model_us"]) / float(v["seed_us"])) < 1e-3 * float(
        v["akx_over_seed"]) for v in seeds.values()), "akx_over_seed is the model's time over the seed's")
    check(len(rows) > len(seeds) and all(not row["akx_over_seed"] for row in rows if not row["seed_us"]),
          "rows no seed measured have no seed figures")
    with open(out["csv"]) as f:
        default_rows = list(csv.DictReader(f))
    check(default_rows and all(not row["seed_us"] for row in default_rows), "the default profile shows no seed")

    if failures:
        print(f"{len(failures)} check(s) failed; files in {tmp}")
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
