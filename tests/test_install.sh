#!/usr/bin/env bash
# ctest install_consumers: installs a build into a temporary prefix, then builds the C program
# of tests/consumer against the installed tree three ways and runs each:
#   1. CMake: find_package(akx CONFIG), akx::akx and akx::akx_static;
#   2. pkg-config akx (shared), with -Wl,-rpath to the installed libdir;
#   3. pkg-config akx-static: libakx.a in a plain C link with the .pc's flags and nothing else.
#   4. include/akx.cuh with the host compiler (the sim), libakx.a;
#   5. include/akx.cuh with nvcc for sm_90, linked to libakx.so: every akx symbol the object
#      needs (nm -u) is one libakx.so exports (nm -D), then the link itself; run only where a
#      GPU is usable. Skipped, saying so, only where no nvcc is found (NVCC, PATH,
#      /usr/local/cuda/bin).
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
# grep reads all of its input here (not -q): -q stops at the first match, the writer then dies
# of SIGPIPE, and pipefail turns that into a failure (seen under load).
objdump -p "$prefix/$libdir/libakx.so.$version" | grep "SONAME *libakx.so.$major\$" >/dev/null || fail "SONAME"

# The line every build of the consumer must print (the backend AUTO picks gives the same sums).
expect="akx $version: sum -3, dlpack view sum 0, xor of float32 AKX_ERROR_UNSUPPORTED"
run() {  # run NAME BINARY SHOULD_NEED_LIBAKX(yes|no)
  local name=$1 bin=$2 needs=$3 out
  out=$("$bin") || fail "$name: the program failed (exit $?)"
  [ "$out" = "$expect" ] || fail "$name printed '$out', expected '$expect'"
  if readelf -d "$bin" | grep "NEEDED.*libakx\.so" >/dev/null; then
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

# include/akx.cuh needs its kernel headers (kernels/akx/, installed beside it) and nothing of
# the source tree: a C++ program of it, built by the host compiler for the sim against the
# installed tree only.
cxx=${CXX_FOR_CUH:-c++}
step "4. include/akx.cuh with $cxx (the sim), libakx.a"
for f in include/akx.cuh include/akx/device.cuh include/akx/sim_device.hpp include/akx/plan.h \
         include/akx/dtype_list.h include/akx/fail.h; do
  grep -qx -- "$f" "$tmp/files" || fail "$f was not installed"
done
# shellcheck disable=SC2046
"$cxx" -std=c++20 -O1 "$consumer/consumer_cuh.cpp" -I"$prefix/include" \
       $(pkg-config --libs akx-static) -o "$tmp/cuh_static" || fail "building consumer_cuh.cpp"
out=$("$tmp/cuh_static") || fail "consumer_cuh failed (exit $?): $out"
case $out in "akx.cuh: max "*", scan of 1000 ok") echo "$out" ;; *) fail "consumer_cuh printed '$out'" ;; esac

# A program compiled by nvcc from the installed headers calls what their inline code calls
# (akx.cuh's templates, the kernel headers' launchers) in libakx.so: each must be exported.
# The list comes from the object, not from a hand list, so a new call cannot be forgotten.
nvcc=${NVCC:-$(command -v nvcc || true)}
[ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
if [ -z "$nvcc" ]; then
  step "5. SKIPPED: no nvcc (NVCC, PATH or /usr/local/cuda/bin): akx.cuh built for a GPU against libakx.so is not checked"
else
  step "5. include/akx.cuh with $nvcc for sm_90, linked to libakx.so"
  cat >"$tmp/cuh_cuda.cu" <<'PROGRAM'
// A functor scan and reduce of include/akx.cuh on the CUDA backend (exit 77: no usable GPU).
#include <stdio.h>
#include "akx.cuh"
struct max_i32 {
  AKX_HD int32_t operator()(int32_t a, int32_t b) const { return b > a ? b : a; }
};
int main() {
  akx_context *ctx = nullptr;
  if (akx_context_create(&ctx, AKX_BACKEND_CUDA, 0) != AKX_SUCCESS) return 77;
  enum { n = 1000 };
  int32_t host[n], scanned[n], best = 0, running = 0;
  for (int i = 0; i < n; ++i) host[i] = (int32_t)((i * 7919) % 1009) - 500;
  void *src = nullptr, *dst = nullptr;
  if (akx_malloc(ctx, &src, sizeof host) || akx_malloc(ctx, &dst, sizeof host) ||
      akx_memcpy(ctx, src, host, sizeof host, AKX_COPY_HOST_TO_DEVICE) ||
      akx::scan_inclusive(ctx, (int32_t *)dst, (const int32_t *)src, n, max_i32{}) ||
      akx::reduce(ctx, (const int32_t *)src, n, &best, max_i32{}) ||
      akx_memcpy(ctx, scanned, dst, sizeof scanned, AKX_COPY_DEVICE_TO_HOST)) {
    printf("akx.cuh failed: %s\n", akx_last_error());
    return 1;
  }
  for (int i = 0; i < n; ++i) {
    running = i == 0 || host[i] > running ? host[i] : running;
    if (scanned[i] != running) return 2;
  }
  printf("akx.cuh on CUDA: max %d, scan of %d ok\n", (int)best, n);
  akx_context_destroy(ctx);
  return best == running ? 0 : 3;
}
PROGRAM
  "$nvcc" -std=c++17 -arch=sm_90 -cudart shared -I"$prefix/include" -c "$tmp/cuh_cuda.cu" \
          -o "$tmp/cuh_cuda.o" >"$tmp/nvcc.log" 2>&1 || { cat "$tmp/nvcc.log"; fail "nvcc of akx.cuh"; }
  needed=$(nm -u "$tmp/cuh_cuda.o" | awk '{ print $NF }' | grep -E '^akx' | sort -u || true)
  [ -n "$needed" ] || fail "nm -u found no akx symbol in the object: the check would pass for nothing"
  exported=$(nm -D --defined-only "$prefix/$libdir/libakx.so.$version" | awk 'NF >= 3 { print $3 }' |
             sed 's/@.*//' | sort -u)
  missing=$(comm -23 <(echo "$needed") <(echo "$exported"))
  echo "the object needs from libakx: $(echo $needed)"
  [ -z "$missing" ] || fail "the installed headers call what libakx.so does not export: $(echo $missing)"
  # shellcheck disable=SC2046
  "$nvcc" -arch=sm_90 -cudart shared "$tmp/cuh_cuda.o" $(pkg-config --libs akx) \
          -Xlinker -rpath,"$prefix/$libdir" -o "$tmp/cuh_cuda" >"$tmp/nvcc_link.log" 2>&1 ||
    { cat "$tmp/nvcc_link.log"; fail "linking akx.cuh's nvcc object to libakx.so"; }
  readelf -d "$tmp/cuh_cuda" | grep "NEEDED.*libakx\.so\.$major" >/dev/null || fail "cuh_cuda does not need libakx.so.$major"
  set +e
  out=$("$tmp/cuh_cuda" 2>&1)
  rc=$?
  set -e
  case $rc:$out in
    77:*) echo "cuh_cuda: built and linked; not run (no usable GPU)" ;;
    "0:akx.cuh on CUDA: max "*", scan of 1000 ok") echo "$out" ;;
    *) fail "cuh_cuda (exit $rc) printed '$out'" ;;
  esac
fi

echo "install_consumers: OK in $(( $(date +%s) - t0 )) s"
