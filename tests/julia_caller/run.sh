#!/usr/bin/env sh
# ctest julia_caller: runs julia_caller.py against a libakx.so with a Python 3 that has numpy.
# Debian's /usr/bin/python3 first (python3-numpy), then python3 on PATH; exit 77 (ctest SKIP)
# with a sentence when none has numpy. Usage: tests/julia_caller/run.sh path/to/libakx.so
here=$(dirname "$0")
for py in /usr/bin/python3 python3; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import numpy' >/dev/null 2>&1; then
    echo "$py: $("$py" -c 'import sys, numpy; print(sys.version.split()[0], "numpy", numpy.__version__)')"
    exec "$py" "$here/julia_caller.py" "$1"
  fi
done
echo "SKIP: no python3 with numpy found (/usr/bin/python3, python3 on PATH); on Debian: apt-get install python3-numpy"
exit 77
