#!/usr/bin/env bash
# The shared library's ABI surface (ctest: symbols): run as
#   tests/test_symbols.sh path/to/libakx.so path/to/include MAJOR
# - its SONAME is libakx.so.MAJOR;
# - every symbol it exports (nm -D --defined-only) is an akx_* function declared in a public
#   header (include/*.h), or an akx__* function that the installed headers' inline code calls
#   (include/akx.cuh and the kernel headers, compiled into a user's program: declared there):
#   no other internal helper, no C++ symbol (mangled names, typeinfo, vtables, template
#   instances), nothing from the libraries linked in. That the second kind is complete is
#   tests/test_install.sh's check (a program of akx.cuh built by nvcc links);
# - every function the public headers declare is exported (cmake/akx.map forgot none).
set -euo pipefail
lib=$1 include=$2 major=$3
fail=0

soname=$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2 }')
if [ "$soname" != "libakx.so.$major" ]; then
  echo "FAIL: SONAME of $lib is '$soname', expected libakx.so.$major"
  fail=1
fi

# Declarations: a line starting with a type (not a comment, a directive or an indented
# continuation) whose first akx_ name is followed by '('.
# akx_dist.h declares libakx_dist.so's functions, not libakx.so's.
headers=$(find "$include" -maxdepth 1 -name '*.h' ! -name akx_dist.h | sort)
declared=$(grep -h -E '^[A-Za-z_].*\bakx_[a-z0-9_]+\(' $headers |
           grep -o -E '\bakx_[a-z0-9_]+\(' | tr -d '(' | sort -u || true)
[ -n "$declared" ] || { echo "FAIL: no function declarations found in $include/*.h"; exit 1; }

# The akx__* functions the installed headers declare for their inline code: include/ and the
# kernel headers (the akx/ folder of an install, or kernels/ beside include/ in the source tree).
header_dirs=$include
[ -d "$include/../kernels" ] && header_dirs="$header_dirs $include/../kernels"
# shellcheck disable=SC2086
for_inline=$(find $header_dirs -type f \( -name '*.h' -o -name '*.cuh' \) ! -name akx_dist.h -print0 |
             xargs -0 grep -h -E '^[A-Za-z_].*\bakx__[a-z0-9_]+\(' |
             grep -o -E '\bakx__[a-z0-9_]+\(' | tr -d '(' | sort -u || true)

# Exported: defined dynamic symbols, without a version suffix (name@VERSION).
exported=$(nm -D --defined-only "$lib" | awk 'NF >= 3 { print $3 }' | sed 's/@.*//' | sort -u)
[ -n "$exported" ] || { echo "FAIL: nm -D found no defined symbol in $lib"; exit 1; }

while read -r sym; do
  if ! grep -qx -- "$sym" <<<"$declared" && ! grep -qx -- "$sym" <<<"$for_inline"; then
    echo "FAIL: $lib exports '$sym', neither a function of the public headers nor one their inline code calls"
    fail=1
  fi
done <<<"$exported"
while read -r fn; do
  if ! grep -qx -- "$fn" <<<"$exported"; then
    echo "FAIL: '$fn' is declared in $include but $lib does not export it"
    fail=1
  fi
done <<<"$declared"

echo "$(wc -l <<<"$exported") exported symbols, $(wc -l <<<"$declared") declared functions, SONAME $soname"
[ "$fail" -eq 0 ] && echo "symbols: OK"
exit "$fail"
