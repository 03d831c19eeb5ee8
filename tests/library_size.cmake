# cmake -DFILE=PATH -DMOST=BYTES -P library_size.cmake: fails when FILE is larger than MOST bytes
# (the library_size ctest, tests/CMakeLists.txt), printing its size either way.
file(SIZE "${FILE}" bytes)
math(EXPR mb_tenths "${bytes} / 100000")
message(STATUS "${FILE}: ${bytes} bytes (${mb_tenths} x 0.1 MB), at most ${MOST}")
if(bytes GREATER MOST)
  message(FATAL_ERROR "${FILE} is ${bytes} bytes, above ${MOST}: a kernel set or a table grew into the library")
endif()
