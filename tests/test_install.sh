#!/usr/bin/env bash
# ctest install_consumers: installs a build into a temporary prefix, then builds the C program
# of tests/consumer against the installed tree three ways and runs each:
#   1. CMake: find_package(akx CONFIG), akx::akx and akx::akx_static;
#   2. pkg-config akx (shared), with -Wl,-rpath to the installed libdir;
#   3. pkg-config akx-static: libakx.a in a plain C link with the .pc's flags and nothing else.
# Checks the installed files, the SONAME chain, which binaries need libakx.so, and each
# program's line of output. Usage (cmake: $CMAKE, else the one on PATH):
#   tests/test_install.sh BUILD_DIR SOURCE_DIR C_COMPILER GENERATOR VERSION
set -euo pipefail
build=$1 src=$2 cc=$3 generator=$4 version=$5
major=${version%%.*}
cmake=${CMAKE:-cmake}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/akx-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
consumer=$src/tests/consumer
t0=$(date +%s)

step() { echo "--- $*"; }
fail() { echo "FAIL: $*"; exit 1; }

step "cmake --install $build --prefix $prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "install"; }
(cd "$prefix" && find . -type f -o -type l | sed 's|^\./||' | sort) >"$tmp/files"
sed 's/^/    /' "$tmp/files"

libdir=$(cd "$prefix" && dirname "$(find . -name "libakx.so.$version" | head -n 1)")
libdir=${libdir#./}
[ -n "$libdir" ] || fail "no libakx.so.$version installed"
bench=; [ -x "$build/bench/akx-bench" ] && bench=bin/akx-bench  # AKX_BENCH=OFF: none
for f in include/akx.h include/akx_layer.h include/akx_sim.h include/akx_dlpack.h $bench \
         "$libdir/libakx.a" "$libdir/libakx.so" "$libdir/libakx.so.$major" "$libdir/libakx.so.$version" \
         "$libdir/cmake/akx/akxConfig.cmake" "$libdir/cmake/akx/akxConfigVersion.cmake" \
         "$libdir/cmake/akx/akxTargets.cmake" "$libdir/pkgconfig/akx.pc" \
         "$libdir/pkgconfig/akx-static.pc"; do
  grep -qx -- "$f" "$tmp/files" || fail "$f was not installed"
done
[ "$(readlink "$prefix/$libdir/libakx.so")" = "libakx.so.$major" ] || fail "libakx.so -> $(readlink "$prefix/$libdir/libakx.so")"
[ "$(readlink "$prefix/$libdir/libakx.so.$major")" = "libakx.so.$version" ] || fail "libakx.so.$major -> ?"
objdump -p "$prefix/$libdir/libakx.so.$version" | grep -q "SONAME *libakx.so.$major\$" || fail "SONAME"

# The line every build of the consumer must print (the backend AUTO picks gives the same sums).
expect="akx $version: sum -3, dlpack view sum 0, xor of float32 AKX_ERROR_UNSUPPORTED"
run() {  # run NAME BINARY SHOULD_NEED_LIBAKX(yes|no)
  local name=$1 bin=$2 needs=$3 out
  out=$("$bin") || fail "$name: the program failed (exit $?)"
  [ "$out" = "$expect" ] || fail "$name printed '$out', expected '$expect'"
  if readelf -d "$bin" | grep -q "NEEDED.*libakx\.so"; then
    [ "$needs" = yes ] || fail "$name needs libakx.so but should hold libakx.a"
  else
    [ "$needs" = no ] || fail "$name does not need libakx.so.$major"
  fi
  echo "$name: $out"
}

step "1. CMake find_package(akx CONFIG)"
"$cmake" -S "$consumer" -B "$tmp/cmake" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/cmake.log" 2>&1 ||
  { cat "$tmp/cmake.log"; fail "configuring the consumer"; }
grep "akx .* from" "$tmp/cmake.log" || true
"$cmake" --build "$tmp/cmake" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "building the consumer"; }
run "cmake akx::akx" "$tmp/cmake/consumer_shared" yes
run "cmake akx::akx_static" "$tmp/cmake/consumer_static" no

export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
unset PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR || true
[ "$(pkg-config --modversion akx)" = "$version" ] || fail "pkg-config --modversion akx"
step "2. pkg-config akx: $(pkg-config --cflags --libs akx)"
# shellcheck disable=SC2046
"$cc" "$consumer/consumer.c" $(pkg-config --cflags --libs akx) \
      -Wl,-rpath,"$(pkg-config --variable=libdir akx)" -o "$tmp/pc_shared"
run "pkg-config akx" "$tmp/pc_shared" yes

step "3. pkg-config akx-static: $(pkg-config --cflags --libs akx-static)"
# shellcheck disable=SC2046
"$cc" "$consumer/consumer.c" $(pkg-config --cflags --libs akx-static) -o "$tmp/pc_static"
run "pkg-config akx-static" "$tmp/pc_static" no

# include/akx.cuh needs its kernel headers (include/akx/) and nothing of the source tree: a
# C++ program of it, built by the host compiler for the sim against the installed tree only.
cxx=${CXX_FOR_CUH:-c++}
step "4. include/akx.cuh with $cxx (the sim), libakx.a"
for f in include/akx.cuh include/akx/device.cuh include/akx/sim_device.hpp include/akx/plan.h \
         include/akx/dtype_list.h include/akx/kernel_resources.inc include/akx/fail.h; do
  grep -qx -- "$f" "$tmp/files" || fail "$f was not installed"
done
# shellcheck disable=SC2046
"$cxx" -std=c++20 -O1 "$consumer/consumer_cuh.cpp" -I"$prefix/include" \
       $(pkg-config --libs akx-static) -o "$tmp/cuh_static" || fail "building consumer_cuh.cpp"
out=$("$tmp/cuh_static") || fail "consumer_cuh failed (exit $?): $out"
case $out in "akx.cuh: max "*", scan of 1000 ok") echo "$out" ;; *) fail "consumer_cuh printed '$out'" ;; esac

echo "install_consumers: OK in $(( $(date +%s) - t0 )) s"
