#!/usr/bin/env python3
"""Writes tests/sim_test_kernels/used.h, the tests' kernel plugin's list: the combinations of the
tests' set that the suite calls (src/launch/instance_table.inl builds the plugin's instances of
those alone; any other compiles at run time on first use, as outside the set).

Record a run of the suite, then write the list from the record:

    rm -f /tmp/akx-used.txt
    AKX_SIM_TEST_KERNELS_RECORD=/tmp/akx-used.txt ctest --preset default
    python3 tests/sim_test_kernels/record_used.py /tmp/akx-used.txt > tests/sim_test_kernels/used.h

A record line is "family src dst acc op" (src/jit/test_kernels.c, record): names, "-" for a
field the combination leaves unset. A reduction's instance serves every dst, so its rows keep
none (-1). The rows come sorted and once each, so that a new record changes the list by the
combinations that changed.

usage: record_used.py RECORD [RECORD ...]
"""
import sys

# Families whose instances serve every dst (src/core/families.h: the REDUCE kind).
REDUCTIONS = {"reduce_whole", "reduce_dims", "segmented_reduce"}
DTYPES = {"bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16",
          "bfloat16", "float32", "float64", "complex64", "complex128"}
OPS = {"ADD", "MUL", "MIN", "MAX", "AND", "OR", "XOR"}
FAMILIES = REDUCTIONS | {"scan", "findall", "segmented_scan"}


def dtype(name, line):
    if name == "-":
        return "-1"
    if name not in DTYPES:
        sys.exit(f"record_used.py: '{name}' is no dtype in: {line}")
    return "AKX_" + name.upper()


def main(paths):
    rows = set()
    for path in paths:
        with open(path) as f:
            for line in f:
                fields = line.split()
                if not fields:
                    continue
                if len(fields) != 5 or fields[0] not in FAMILIES or fields[4] not in OPS:
                    sys.exit(f"record_used.py: {path}: not a record line: {line.rstrip()}")
                family, src, dst, acc, op = fields
                if family in REDUCTIONS:
                    dst = "-"
                rows.add((family.upper(), dtype(src, line), dtype(dst, line), dtype(acc, line), "AKX_OP_" + op))
    if not rows:
        sys.exit("record_used.py: no record lines (was AKX_SIM_TEST_KERNELS_RECORD set for the run?)")
    out = [
        "// The tests' kernel plugin's list: the combinations of the tests' set (kernels/akx/dtypes.cuh,",
        "// prebuilt_for_tests) that the suite calls, one row each as (family, source, dst, accumulator,",
        "// op); dst -1 for a reduction, whose instance serves every dst. The plugin holds these alone",
        "// (src/launch/instance_table.inl); any other combination compiles at run time on first use.",
        "// Written by tests/sim_test_kernels/record_used.py from a run of the suite with",
        "// AKX_SIM_TEST_KERNELS_RECORD (its docstring says how); do not edit by hand.",
        "#pragma once",
        "#define AKX_TEST_KERNELS_USED(X) \\",
    ]
    for r in sorted(rows):
        out.append("  X(%s, %s, %s, %s, %s) \\" % r)
    out.append("  /* end */")
    print("\n".join(out))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
