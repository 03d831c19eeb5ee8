/* akx-bench's output: the preamble, the table, and the files --csv, --json (JSON Lines) and
 * --kernels-csv, each written a row at a time as its case finishes. The plot is plot.c's. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akx_bench.h"

static const char *const state_name[] = {"ok", "n/a", "FAIL"};

static FILE *kernels_file, *csv_file, *json_file;

static void csv_field(FILE *f, const char *s, int last) {
  if (strpbrk(s, ",\"\n")) {
    fputc('"', f);
    for (; *s; ++s) {
      if (*s == '"') fputc('"', f);
      fputc(*s, f);
    }
    fputc('"', f);
  } else {
    fputs(s, f);
  }
  fputc(last ? '\n' : ',', f);
}

/* --kernels-csv: one line per kernel of the call, for bench/gpu_check.sh's comparison. */
void write_kernel_rows(const record *r, const sim_counts *c, const char *layout) {
  if (!kernels_file) return;
  for (int32_t i = 0; i < c->count; ++i) {
    const akx_sim_kernel_counters *k = &c->k[i];
    const char *f[] = {r->suite, r->name, r->dtype, r->shape, r->variant, layout, k->kernel};
    for (int j = 0; j < 7; ++j) csv_field(kernels_file, f[j], 0);
    fprintf(kernels_file, "%" PRIu64 ",%u,%u,%.4f", k->launches, k->last_grid, k->last_block, k->waves);
    const akx_sim_traffic *t[] = {&k->shared_load, &k->shared_store, &k->global_load, &k->global_store};
    for (int j = 0; j < 4; ++j)
      fprintf(kernels_file, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, t[j]->requests,
              t[j]->units, t[j]->ideal, t[j]->bytes);
    fprintf(kernels_file, ",%.3f\n", k->model_us);
  }
}

/* ---- output: the table ------------------------------------------------------------------- */

int table_on(void) {
  return !(opt.csv && strcmp(opt.csv, "-") == 0) && !(opt.json && strcmp(opt.json, "-") == 0);
}

/* The seeds' columns (seeds.c) where the run shows them: the seed's µs and this row's time
 * over it, "-" where no seed row matches. */
static void seed_columns(char *buf, size_t size, const record *r) {
  buf[0] = '\0';
  if (!seeds_shown()) return;
  const seed_row *s = seed_for(r);
  const double ratio = seed_ratio(r, s);
  char us[16] = "-", over[16] = "-";
  if (s) snprintf(us, sizeof us, "%.1f", s->us);
  if (ratio > 0) snprintf(over, sizeof over, "%.2f", ratio);
  snprintf(buf, size, " %8s %6s", us, over);
}

void print_header(void) {
  /* µ is two bytes in UTF-8: those headers are one byte wider to line up with the rows. */
  char seeds[32] = "";
  if (seeds_shown()) snprintf(seeds, sizeof seeds, " %9s %6s", "seed µs", "/seed");
  if (!on_sim) {
    printf("%-24s %-9s %-16s %-30s %18s %8s %18s %8s %18s %8s %7s %8s%s  %s\n", "case", "dtype",
           "shape", "akx call", "akx µs med/min", "akx GB/s", "CUB µs med/min", "CUB GB/s",
           "copy µs med/min", "cp GB/s", "akx/CUB", "akx/copy", seeds, "check");
  } else {
    printf("%-22s %-9s %-12s %-29s %-10s %5s %12s %11s %5s %9s %8s %6s %6s %5s%s  %s\n", "case",
           "dtype", "shape", "akx call", "grid", "waves", "gld sect/req", "smem wf/req", "bytes",
           "model µs", "copy µs", "/copy", "GB/s", "%peak", seeds, "kernels; check");
  }
}

static void fmt_timing(char *buf, size_t size, const timing *t) {
  if (t->ran) snprintf(buf, size, "%.2f/%.2f", t->median_us, t->min_us);
  else snprintf(buf, size, "-");
}

double gbs(double bytes, double us) { return us > 0 ? bytes / (us * 1e3) : 0.0; }

static void print_record(const record *r) {
  char note[640];
  if (r->state == ROW_OK) snprintf(note, sizeof note, "PASS");
  else snprintf(note, sizeof note, "%s%s%s", r->state == ROW_FAIL ? "FAIL: " : "",
                r->state == ROW_NA ? "n/a (unsupported: " : "", r->note);
  if (r->state == ROW_NA) strncat(note, ")", sizeof note - strlen(note) - 1);
  if (!on_sim) {
    char a[32], c[32], m[32];
    fmt_timing(a, sizeof a, &r->akx);
    fmt_timing(c, sizeof c, &r->cub);
    fmt_timing(m, sizeof m, &r->copy);
    char ag[16] = "-", cg[16] = "-", mg[16] = "-", rc[16] = "-", rm[16] = "-";
    if (r->akx.ran) snprintf(ag, sizeof ag, "%.0f", gbs(r->bytes_min, r->akx.median_us));
    if (r->cub.ran) snprintf(cg, sizeof cg, "%.0f", gbs(r->bytes_min, r->cub.median_us));
    if (r->copy.ran) snprintf(mg, sizeof mg, "%.0f", gbs(r->bytes_min, r->copy.median_us));
    if (r->akx.ran && r->cub.ran) snprintf(rc, sizeof rc, "%.3f", r->akx.median_us / r->cub.median_us);
    if (r->akx.ran && r->copy.ran) snprintf(rm, sizeof rm, "%.3f", r->akx.median_us / r->copy.median_us);
    char seeds[32];
    seed_columns(seeds, sizeof seeds, r);
    printf("%-24s %-9s %-16s %-30s %17s %8s %17s %8s %17s %8s %7s %8s%s  %s\n", r->name, r->dtype,
           r->shape, r->variant, a, ag, c, cg, m, mg, rc, rm, seeds, note);
    return;
  }
  if (r->state == ROW_NA || !r->counted) {
    const char *why = r->state == ROW_OK ? "PASS; no model (counters off: AKX_SIM_COUNTERS=0)" : note;
    printf("%-22s %-9s %-12s %-29s  %s\n", r->name, r->dtype, r->shape, r->variant, why);
    return;
  }
  char gld[32], smem[32], layouts[128] = "";
  snprintf(gld, sizeof gld, "%.2f (%.2f)", r->gld, r->gld_ideal);
  if (r->smem_ideal > 0) snprintf(smem, sizeof smem, "%.2f (%.2f)", r->smem, r->smem_ideal);
  else snprintf(smem, sizeof smem, "-");
  if (r->have_layouts)
    snprintf(layouts, sizeof layouts, "; dense layout %.2f wf/req %.1f µs, odd stride %.2f wf/req %.1f µs",
             r->smem_dense, r->model_dense, r->smem_odd, r->model_odd);
  double g = gbs(r->bytes_min, r->model_us);
  char seeds[32];
  seed_columns(seeds, sizeof seeds, r);
  printf("%-22s %-9s %-12s %-29s %-10s %5.2f %12s %11s %5.2f %8.1f %7.1f %6.2f %6.0f %4.0f%%%s  %s; %s%s%s\n",
         r->name, r->dtype, r->shape, r->variant, r->grid, r->waves, gld, smem,
         r->bytes_min > 0 ? r->bytes_moved / r->bytes_min : 0.0, r->model_us, r->copy_model_us,
         r->model_us / r->copy_model_us, g, 100.0 * g / dev.bandwidth_gbs, seeds, r->kernels, note,
         layouts, r->fits_l2 ? "; fits L2" : "");
}

/* ---- files: CSV and JSON Lines, a row at a time ------------------------------------------ */

static FILE *open_out(const char *path) {
  if (strcmp(path, "-") == 0) return stdout;
  FILE *f = fopen(path, "w");
  if (!f) fprintf(stderr, "akx-bench: cannot write %s: %s\n", path, strerror(errno));
  return f;
}

static void close_out(FILE *f) {
  if (f && f != stdout) fclose(f);
}

static const char *const csv_columns =
    "backend,device,suite,case,dtype,shape,variant,elements,bytes_min,state,note,"
    "akx_median_us,akx_min_us,cub_median_us,cub_min_us,copy_median_us,copy_min_us,"
    "akx_gbs,cub_gbs,copy_gbs,akx_over_cub,akx_over_copy,"
    "sim_kernels,sim_grid,sim_waves,sim_gld_sectors_per_req,sim_gld_ideal,"
    "sim_smem_wavefronts_per_req,sim_smem_ideal,sim_bytes_moved,sim_model_us,sim_model_gbs,"
    "sim_fits_l2,sim_wall_s,sim_smem_wavefronts_per_req_dense,sim_model_us_dense,"
    "sim_smem_wavefronts_per_req_odd_stride,sim_model_us_odd_stride,"
    "sim_copy_model_us,sim_model_over_copy,sim_peak_gbs,seed_us,akx_over_seed";

/* The numbers of a row, in csv_columns' order from akx_median_us on; NAN where absent. */
enum { NUMBERS = 30 };
static void row_numbers(const record *r, double v[NUMBERS]) {
  for (int i = 0; i < NUMBERS; ++i) v[i] = NAN;
  const seed_row *s = seeds_shown() ? seed_for(r) : NULL;
  if (s) {
    const double ratio = seed_ratio(r, s);
    v[28] = s->us;
    if (ratio > 0) v[29] = ratio;
  }
  if (!on_sim) {
    const timing *t[] = {&r->akx, &r->cub, &r->copy};
    for (int i = 0; i < 3; ++i)
      if (t[i]->ran) {
        v[2 * i] = t[i]->median_us;
        v[2 * i + 1] = t[i]->min_us;
        v[6 + i] = gbs(r->bytes_min, t[i]->median_us);
      }
    if (r->akx.ran && r->cub.ran) v[9] = r->akx.median_us / r->cub.median_us;
    if (r->akx.ran && r->copy.ran) v[10] = r->akx.median_us / r->copy.median_us;
  } else {
    v[27] = dev.bandwidth_gbs;
    v[25] = r->copy_model_us;
    if (r->state == ROW_OK && r->counted) {
      double s[] = {r->waves, r->gld, r->gld_ideal, r->smem, r->smem_ideal, r->bytes_moved,
                    r->model_us, gbs(r->bytes_min, r->model_us), r->fits_l2, r->wall_s};
      for (int i = 0; i < 10; ++i) v[11 + i] = s[i];
      v[26] = r->model_us / r->copy_model_us;
    }
    if (r->have_layouts) {
      v[21] = r->smem_dense;
      v[22] = r->model_dense;
      v[23] = r->smem_odd;
      v[24] = r->model_odd;
    }
  }
}

/* One CSV line of a row. */
static void csv_row(FILE *f, const record *r) {
  char num[40];
  snprintf(num, sizeof num, "%" PRId64, r->elements);
  const char *text[] = {on_sim ? "sim" : "cuda", dev.device_name, r->suite, r->name, r->dtype,
                        r->shape, r->variant, num};
  for (int j = 0; j < 8; ++j) csv_field(f, text[j], 0);
  fprintf(f, "%.0f,", r->bytes_min);
  csv_field(f, state_name[r->state], 0);
  csv_field(f, r->note, 0);
  double v[NUMBERS];
  row_numbers(r, v);
  for (int j = 0; j < NUMBERS; ++j) {
    if (j == 11) { /* the kernels and grid, between akx_over_copy and the waves */
      csv_field(f, on_sim ? r->kernels : "", 0);
      csv_field(f, on_sim ? r->grid : "", 0);
    }
    if (!isnan(v[j])) fprintf(f, "%.6g", v[j]);
    fputc(j == NUMBERS - 1 ? '\n' : ',', f);
  }
}

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; ++s) {
    if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
    else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
    else fputc(*s, f);
  }
  fputc('"', f);
}

/* One JSON object on one line: the row's text fields, then its numbers under csv_columns'
 * names (absent where the CSV's field is empty). */
static void json_row(FILE *f, const record *r) {
  char names[1400];
  snprintf(names, sizeof names, "%s", csv_columns);
  const char *col[48];
  int ncol = 0;
  for (char *save = NULL, *t = strtok_r(names, ",", &save); t && ncol < 48; t = strtok_r(NULL, ",", &save))
    col[ncol++] = t;
  const char *text[] = {on_sim ? "sim" : "cuda", dev.device_name, r->suite, r->name, r->dtype,
                        r->shape, r->variant};
  for (int j = 0; j < 7; ++j) {
    fprintf(f, "%s\"%s\": ", j ? ", " : "{", col[j]);
    json_string(f, text[j]);
  }
  fprintf(f, ", \"elements\": %" PRId64 ", \"bytes_min\": %.0f, \"state\": ", r->elements, r->bytes_min);
  json_string(f, state_name[r->state]);
  fprintf(f, ", \"note\": ");
  json_string(f, r->note);
  if (on_sim) {
    fprintf(f, ", \"sim_kernels\": ");
    json_string(f, r->kernels);
    fprintf(f, ", \"sim_grid\": ");
    json_string(f, r->grid);
  }
  double v[NUMBERS];
  row_numbers(r, v);
  for (int j = 0; j < NUMBERS; ++j) {
    if (isnan(v[j])) continue;
    int c = 11 + j + (j >= 11 ? 2 : 0);
    fprintf(f, ", \"%s\": %.6g", col[c], v[j]);
  }
  fprintf(f, "}\n");
}

/* Writes the line `format` prints of a row to out in one write and flushes it, so that a row
 * is in the file whole or not at all when the run is stopped (a line under the stdio buffer
 * size reaches the file in one write(2)): the line is printed into a memory stream first. */
static void write_line(FILE *out, const record *r, void (*format)(FILE *, const record *)) {
  char *buf = NULL;
  size_t len = 0;
  FILE *text = open_memstream(&buf, &len);
  if (!text) return;
  format(text, r);
  fclose(text);
  fwrite(buf, 1, len, out);
  fflush(out);
  free(buf);
}

/* A finished row: into the table (when it is shown) and every file asked for. */
void output_row(const record *r) {
  if (table_on()) print_record(r);
  if (csv_file) write_line(csv_file, r, csv_row);
  if (json_file) write_line(json_file, r, json_row);
}

void preamble(akx_context *ctx, double est_s, int full_cases, double full_s) {
  char est[32], full[32];
  fmt_duration(est, sizeof est, est_s);
  fmt_duration(full, sizeof full, full_s);
  if (!table_on()) {
    /* the plan still goes to stderr: it is what a user waits for */
    fprintf(stderr, "akx-bench: %d case%s, about %s (an estimate)\n", nplan, nplan == 1 ? "" : "s", est);
    return;
  }
  if (on_sim) {
    akx_sim_kernel_counters total;
    double l2 = akx_sim_counters_get(ctx, &total, NULL, 0, NULL) == AKX_SUCCESS
                    ? (double)total.l2_bytes / (1024.0 * 1024.0) : 0.0;
    printf("akx-bench on the sim, profile %s (%d SMs, sm_%d%d, peak %.0f GB/s, L2 %.0f MiB).\n"
           "CUB columns need a GPU: akx-bench --backend cuda times each call beside CUB and a\n"
           "device copy. Here each row is one call run on CPU fibers, counted as Nsight Compute\n"
           "would, and priced by the sim's model (src/sim/model.c): an estimate, never a\n"
           "measurement. Columns:\n"
           "  grid          blocks x threads per block of the launch moving the most bytes\n"
           "  waves         blocks / blocks resident at once, summed over the call's launches\n"
           "  gld sect/req  32-byte sectors per global load request (ideal in parentheses)\n"
           "  smem wf/req   shared-memory wavefronts per request, loads and stores (ideal)\n"
           "  bytes         global bytes moved / the least (src read once + dst written once)\n"
           "  model µs      the model's time of the call\n"
           "  copy µs       the model's time of a device copy moving the same least bytes\n"
           "  /copy         model µs / copy µs (1.00: as fast as copying the data)\n"
           "  GB/s, %%peak   least bytes / model time, and that over the peak %.0f GB/s\n"
           "  fits L2       a GPU repeating the call may serve it from L2; the model prices DRAM\n"
           "Input: random nonzero integers in -8..8 (bool: half set); every result is checked.\n",
           dev.sim_profile, dev.sm_count, dev.cc_major, dev.cc_minor, dev.bandwidth_gbs, l2,
           dev.bandwidth_gbs);
    if (seeds_shown())
      printf("  seed µs       the seeds' GPU time of the row on an RTX 5080 (AcceleratedKernels.jl\n"
             "                after the seed's change: bench/seeds.c); /seed: model µs over it. The\n"
             "                seeds timed back to back, so rows that fit L2 may have come from it\n");
    const char *counting = getenv("AKX_SIM_COUNTERS");
    if (counting && strcmp(counting, "0") == 0)
      printf("AKX_SIM_COUNTERS=0: counting is off, there is no model.\n");
    if (opt.full)
      printf("--full: %d cases, about %s on this machine (an estimate); scans run three times, "
             "the\ndense and odd-stride layouts beside the default (at the end of their rows).\n",
             nplan, est);
    else
      printf("%s%d cases, about %s (an estimate). --full runs the complete tables: %d cases, "
             "about %s.\n", opt.quick ? "--quick: " : "", nplan, est, full_cases, full);
  } else {
    printf("akx-bench on CUDA: %s (sm_%d%d, %d SMs, %.0f GB/s peak)%s.\n"
           "µs: median/minimum of %d runs after %d warm-up rounds; a round runs akx, CUB and the\n"
           "copy one after the other (interleaved) on one stream, each after a write of twice the\n"
           "L2 (so inputs come from DRAM) and between its own CUDA events. copy: cudaMemcpyAsync\n"
           "device to device of half the case's least traffic, so it moves (reads + writes) the\n"
           "same bytes: the bandwidth limit. GB/s = least bytes (src once + dst once) / median.\n"
           "akx/CUB, akx/copy: ratios of median times (below 1: akx is faster).\n"
           "seed µs: the seeds' GPU time of the row on an RTX 5080 (AcceleratedKernels.jl after\n"
           "the seed's change: bench/seeds.c); /seed: akx's median over it.\n"
           "Input: random nonzero integers in -8..8 (bool: half set); every result is checked.\n"
           "%d cases, about %s (an estimate).\n",
           dev.device_name, dev.cc_major, dev.cc_minor, dev.sm_count, dev.bandwidth_gbs,
           opt.once ? ", --once (no timing)" : "", opt.runs, WARMUP_RUNS, nplan, est);
  }
}

/* Opens every output before anything runs, so that an unwritable path stops the run at once. */
int open_outputs(void) {
  if (opt.plot && plot_check(opt.plot)) return -1;
  if (opt.csv && !(csv_file = open_out(opt.csv))) return -1;
  if (opt.json && !(json_file = open_out(opt.json))) return -1;
  if (opt.kernels_csv && !(kernels_file = open_out(opt.kernels_csv))) return -1;
  if (csv_file) {
    fprintf(csv_file, "%s\n", csv_columns);
    fflush(csv_file);
  }
  if (kernels_file) {
    fprintf(kernels_file, "suite,case,dtype,shape,variant,layout,kernel,launches,grid,block,waves");
    const char *tr[] = {"shared_load", "shared_store", "global_load", "global_store"};
    for (int i = 0; i < 4; ++i)
      fprintf(kernels_file, ",%s_requests,%s_units,%s_ideal,%s_bytes", tr[i], tr[i], tr[i], tr[i]);
    fprintf(kernels_file, ",model_us\n");
  }
  return 0;
}

void close_outputs(void) {
  close_out(csv_file);
  close_out(json_file);
  close_out(kernels_file);
}
