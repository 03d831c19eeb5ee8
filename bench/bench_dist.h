/* akx-bench's dist suite (bench/bench_dist.c), run under mpirun: `akx-bench dist ...`. */
#ifndef AKX_BENCH_DIST_H
#define AKX_BENCH_DIST_H
int akx_bench_dist(int argc, char **argv);
#endif
