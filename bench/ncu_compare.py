#!/usr/bin/env python3
"""Nsight Compute's figures beside the sim's, per call and kernel (bench/gpu_check.sh).

    ncu_compare.py NCU_CSV SIM_KERNELS_CSV KERNELS_DIR

NCU_CSV: `ncu --csv --page raw --kernel-name-base function` of `akx-bench all --quick --once
--backend cuda` (each akx call once, in the bench's order). SIM_KERNELS_CSV: `akx-bench all
--quick --backend sim --kernels-csv` (the same calls, each kernel's counters). KERNELS_DIR: the
kernels' sources, for the registers each kernel_info declares to the sim.

The launches of the CUDA run are paired with the sim's calls in order: a call of the sim that
launched L kernels takes the next L launches, which must be the same kernels (scans: the sim's
padded run, the default layout). Where the sequences part, the pairing stops there and only the
per-kernel totals follow. Prints one table per call and kernel, and one per kernel: registers
(ptxas via ncu / declared), shared wavefronts per request (loads + stores), global load and
store sectors per request, and time (ncu's gpu__time_duration / the sim's model). Only the
standard library: it runs on the GPU machine's python3.
"""
import csv
import glob
import os
import re
import sys
from collections import OrderedDict, defaultdict


def read_ncu(path):
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        sys.exit("ncu_compare: no ncu CSV header in %s" % path)
    rows = list(csv.reader(lines[start:]))
    header, body = rows[0], rows[2:]  # rows[1]: units
    launches = []
    for r in body:
        if len(r) != len(header):
            continue
        d = dict(zip(header, r))
        launches.append(d)
    return launches


def num(d, key):
    v = d.get(key, "").replace(",", "")
    try:
        return float(v)
    except ValueError:
        return float("nan")


def read_sim(path):
    calls = OrderedDict()
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["layout"] not in ("", "padded"):
                continue
            key = (r["suite"], r["case"], r["dtype"], r["shape"], r["variant"])
            calls.setdefault(key, []).append(r)
    return calls


def declared_registers(kdir):
    regs = {}
    pat = re.compile(r'kernel_info\s+\w+\s*\{\s*"([^"]+)"\s*,\s*(\d+)\s*,\s*(\d+)')
    for p in glob.glob(os.path.join(kdir, "*.cuh")) + glob.glob(os.path.join(kdir, "*.inl")):
        with open(p) as f:
            for m in pat.finditer(f.read()):
                regs[m.group(1)] = int(m.group(3))
    return regs


def ratio(units, requests):
    return units / requests if requests else float("nan")


def fmt(x, digits=2):
    return "-" if x != x else "%.*f" % (digits, x)


class Acc:
    """Sums of one kernel's counters over launches (ncu) or calls (sim)."""

    def __init__(self):
        self.v = defaultdict(float)
        self.regs = set()

    def add(self, **kw):
        for k, x in kw.items():
            if x == x:
                self.v[k] += x


def ncu_acc(acc, d):
    acc.add(smem_wf=num(d, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
            + num(d, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"),
            smem_req=num(d, "smsp__inst_executed_op_shared_ld.sum")
            + num(d, "smsp__inst_executed_op_shared_st.sum"),
            gld_sect=num(d, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
            gld_req=num(d, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
            gst_sect=num(d, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
            gst_req=num(d, "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
            launches=1.0)
    t = num(d, "gpu__time_duration.sum")  # ns
    acc.add(time_us=t / 1e3)
    r = num(d, "launch__registers_per_thread")
    if r == r:
        acc.regs.add(int(r))


def sim_acc(acc, r):
    f = lambda k: float(r[k])
    acc.add(smem_wf=f("shared_load_units") + f("shared_store_units"),
            smem_req=f("shared_load_requests") + f("shared_store_requests"),
            smem_ideal=f("shared_load_ideal") + f("shared_store_ideal"),
            gld_sect=f("global_load_units"), gld_req=f("global_load_requests"),
            gst_sect=f("global_store_units"), gst_req=f("global_store_requests"),
            launches=f("launches"), time_us=f("model_us"))


HEADER = ("%-60s %-28s %5s %11s %15s %15s %15s %19s" %
          ("call", "kernel", "lnch", "regs n/decl", "smem wf/req n/s", "gld sect/req n/s",
           "gst sect/req n/s", "µs ncu / model"))


def line(label, kernel, n, s, declared):
    regs = "/".join(str(x) for x in sorted(n.regs)) or "-"
    return ("%-60s %-28s %5d %11s %15s %15s %15s %19s" % (
        label[:60], kernel[:28], int(n.v["launches"]), "%s/%s" % (regs, declared.get(kernel, "-")),
        "%s/%s" % (fmt(ratio(n.v["smem_wf"], n.v["smem_req"])), fmt(ratio(s.v["smem_wf"], s.v["smem_req"]))),
        "%s/%s" % (fmt(ratio(n.v["gld_sect"], n.v["gld_req"])), fmt(ratio(s.v["gld_sect"], s.v["gld_req"]))),
        "%s/%s" % (fmt(ratio(n.v["gst_sect"], n.v["gst_req"])), fmt(ratio(s.v["gst_sect"], s.v["gst_req"]))),
        "%s / %s" % (fmt(n.v["time_us"]), fmt(s.v["time_us"]))))


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    launches = read_ncu(sys.argv[1])
    calls = read_sim(sys.argv[2])
    declared = declared_registers(sys.argv[3])
    name_key = "Kernel Name"
    print("Nsight Compute (n) beside the sim (s): %d launches, %d calls of the sim" %
          (len(launches), len(calls)))
    print("smem: shared wavefronts per request, loads + stores; gld/gst: 32-byte sectors per "
          "global load/store request; regs: ptxas (ncu) / kernel_info's declaration")
    print(HEADER)
    per_kernel_n, per_kernel_s = defaultdict(Acc), defaultdict(Acc)
    i, paired = 0, True
    for key, rows in calls.items():
        for r in rows:
            sim_acc(per_kernel_s[r["kernel"]], r)
        if not paired:
            continue
        want = sorted(r["kernel"] for r in rows for _ in range(int(r["launches"])))
        got = launches[i:i + len(want)]
        if sorted(d.get(name_key, "") for d in got) != want:
            print("-- pairing stops at %s: the sim launched %s, CUDA %s" %
                  (" ".join(key), want, [d.get(name_key, "") for d in got]))
            paired = False
            continue
        i += len(want)
        for r in rows:
            n, s = Acc(), Acc()
            for d in got:
                if d.get(name_key) == r["kernel"]:
                    ncu_acc(n, d)
                    ncu_acc(per_kernel_n[r["kernel"]], d)
            sim_acc(s, r)
            print(line("%s %s %s %s %s" % key, r["kernel"], n, s, declared))
    if not paired:  # the totals of CUDA from every launch, then
        per_kernel_n = defaultdict(Acc)
        for d in launches:
            ncu_acc(per_kernel_n[d.get(name_key, "")], d)
    print("\nPer kernel, over all calls (%s):" % ("paired" if paired else "not paired"))
    print(HEADER)
    for k in sorted(set(per_kernel_n) | set(per_kernel_s)):
        print(line("all", k, per_kernel_n[k], per_kernel_s[k], declared))


if __name__ == "__main__":
    main()
