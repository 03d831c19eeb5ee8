/* akx-bench --plot: GB/s versus the least bytes moved, one panel per suite, written as gnuplot
 * data and a script beside the PNG and drawn by gnuplot. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "akx_bench.h"

static int gnuplot_found(void) { return system("command -v gnuplot >/dev/null 2>&1") == 0; }

/* Whether path can be written, without leaving a file behind that was not there. */
static int writable(const char *path) {
  int existed = access(path, F_OK) == 0;
  FILE *f = fopen(path, "a");
  if (!f) {
    fprintf(stderr, "akx-bench: cannot write %s: %s\n", path, strerror(errno));
    return 0;
  }
  fclose(f);
  if (!existed) unlink(path);
  return 1;
}

/* Checked before anything runs: a plot that cannot be drawn is said at once, not after the run. */
int plot_check(const char *png) {
  if (!gnuplot_found()) {
    fprintf(stderr, "akx-bench: --plot needs gnuplot, which is not on PATH (Debian: apt-get "
                    "install gnuplot-nox); nothing was run\n");
    return -1;
  }
  char data[4096], script[4096];
  snprintf(data, sizeof data, "%s.dat", png);
  snprintf(script, sizeof script, "%s.gp", png);
  return writable(png) && writable(data) && writable(script) ? 0 : -1;
}

static double plot_y(const record *r, int cub) {
  if (r->state != ROW_OK) return NAN;
  if (on_sim) return cub || !r->counted ? NAN : gbs(r->bytes_min, r->model_us);
  const timing *t = cub ? &r->cub : &r->akx;
  return t->ran ? gbs(r->bytes_min, t->median_us) : NAN;
}

typedef struct {
  double x, y;
} point;

/* gnuplot's filled point types (circle, square, triangles, diamond, pentagon); one less is the
 * same shape open, for CUB. Distinct shapes, drawn smaller for each later series, keep series
 * that coincide (the reduce variants share one model time) visible. */
static const int filled_point[6] = {7, 5, 9, 11, 13, 15};

static int by_x(const void *a, const void *b) {
  double d = ((const point *)a)->x - ((const point *)b)->x;
  return d < 0 ? -1 : d > 0;
}

/* GB/s versus the least bytes moved, log-log, one panel per suite with rows: a line per series
 * (akx; on CUDA also CUB, dashed), the device copy of the same bytes (measured on CUDA, the
 * model's on the sim) and the peak bandwidth. Bytes rather than elements on x, so that the copy
 * and the series of every dtype share one axis. */
int write_plot(const char *png) {
  char data[4096], script[4096];
  snprintf(data, sizeof data, "%s.dat", png);
  snprintf(script, sizeof script, "%s.gp", png);
  FILE *d = fopen(data, "w"), *g = fopen(script, "w");
  if (!d || !g) {
    fprintf(stderr, "akx-bench: cannot write %s / %s: %s\n", data, script, strerror(errno));
    if (d) fclose(d);
    if (g) fclose(g);
    return -1;
  }
  const double peak = dev.bandwidth_gbs;
  double ymin = peak;
  int panels = 0, block = 0;
  static char plots[NSUITES][8192]; /* each panel's plot command */
  const char *panel_title[NSUITES];
  static point pts[MAX_RECORDS];
  for (int s = 0; s < NSUITES; ++s) {
    const char *suite = suites[s].name;
    int dims = strcmp(suite, "dims") == 0; /* shapes, not a sweep: points only */
    char *cmd = plots[panels];
    size_t used = 0;
    double xmin = INFINITY, xmax = 0;
    const char *series[MAX_RECORDS];
    int nseries = 0;
    for (int i = 0; i < nrecords; ++i) {
      const record *r = &records[i];
      if (strcmp(r->suite, suite) != 0) continue;
      int seen = 0;
      for (int k = 0; k < nseries; ++k) seen |= strcmp(series[k], r->series) == 0;
      if (!seen) series[nseries++] = r->series;
    }
    for (int k = 0; k < nseries; ++k) {
      for (int cub = 0; cub < (on_sim ? 1 : 2); ++cub) {
        int n = 0;
        for (int i = 0; i < nrecords; ++i) {
          const record *r = &records[i];
          double y = plot_y(r, cub);
          if (strcmp(r->suite, suite) != 0 || strcmp(r->series, series[k]) != 0 || isnan(y) || y <= 0)
            continue;
          pts[n++] = (point){r->bytes_min, y};
        }
        if (!n) continue;
        qsort(pts, (size_t)n, sizeof pts[0], by_x);
        fprintf(d, "# %s: %s%s\n# bytes GB/s\n", suite, series[k], cub ? " CUB" : "");
        for (int i = 0; i < n; ++i) {
          fprintf(d, "%.0f %.4g\n", pts[i].x, pts[i].y);
          xmin = fmin(xmin, pts[i].x);
          xmax = fmax(xmax, pts[i].x);
          ymin = fmin(ymin, pts[i].y);
        }
        fprintf(d, "\n\n");
        used += (size_t)snprintf(cmd + used, sizeof plots[0] - used,
                                 "%s'%s' index %d using 1:2 with %s lc %d pt %d ps %.1f%s title '%s%s'",
                                 used ? ", " : "plot ", data, block++,
                                 dims ? "points" : "linespoints", k + 1, filled_point[k % 6] - cub,
                                 fmax(0.7, 1.6 - 0.4 * k),
                                 cub ? " dt 2" : "", series[k], cub ? " (CUB)" : "");
      }
    }
    if (!used) continue; /* nothing of this suite ran, or nothing to draw */
    /* the copy: on the sim, the model's copy along the panel's x range; on CUDA the measured
     * copy of each case */
    int n = 0;
    if (on_sim) {
      for (double x = xmin / 2; x <= xmax * 2 && n < 64; x *= 1.5) {
        double us = model_copy_us(x);
        if (!isnan(us)) pts[n++] = (point){x, gbs(x, us)};
      }
    } else {
      for (int i = 0; i < nrecords; ++i)
        if (strcmp(records[i].suite, suite) == 0 && records[i].copy.ran)
          pts[n++] = (point){records[i].bytes_min, gbs(records[i].bytes_min, records[i].copy.median_us)};
      qsort(pts, (size_t)n, sizeof pts[0], by_x);
    }
    if (n) {
      fprintf(d, "# %s: device copy of the same bytes%s\n# bytes GB/s\n", suite, on_sim ? " (model)" : "");
      for (int i = 0; i < n; ++i) {
        fprintf(d, "%.0f %.4g\n", pts[i].x, pts[i].y);
        ymin = fmin(ymin, pts[i].y);
      }
      fprintf(d, "\n\n");
      used += (size_t)snprintf(cmd + used, sizeof plots[0] - used,
                               ", '%s' index %d using 1:2 with lines dt 2 lw 2 lc rgb 'black' "
                               "title 'device copy%s'", data, block++, on_sim ? " (model)" : "");
    }
    snprintf(cmd + used, sizeof plots[0] - used,
             ", %g with lines dt 3 lw 2 lc rgb '#c00000' title 'peak %.0f GB/s'", peak, peak);
    panel_title[panels++] = suites[s].heading;
  }
  fclose(d);
  if (!panels) {
    fclose(g);
    fprintf(stderr, "akx-bench: --plot: no row of this run has a time to plot\n");
    return -1;
  }
  int ncols = panels < 2 ? 1 : 2, nrows = (panels + ncols - 1) / ncols;
  /* one panel alone is wider than one of two, for the run's title */
  fprintf(g, "set terminal pngcairo size %d,%d font ',10' noenhanced\n", ncols > 1 ? 760 * ncols : 1100,
          520 * nrows + 50);
  fprintf(g, "set output '%s'\n", png);
  if (on_sim)
    fprintf(g, "set multiplot layout %d,%d title 'akx-bench on the sim, %s profile: GB/s = least "
               "bytes / the model time (an estimate, not a measurement)' font ',13'\n",
            nrows, ncols, dev.sim_profile);
  else
    fprintf(g, "set multiplot layout %d,%d title 'akx-bench on %s: GB/s = least bytes / median "
               "time of %d runs' font ',13'\n", nrows, ncols, dev.device_name, opt.runs);
  fprintf(g, "set logscale xy\nset format x '%%.0s %%cB'\nset format y '%%g'\nset grid\n"
             "set key bottom right font ',9' spacing 0.9\nset xlabel 'least bytes moved (src read "
             "once + dst written once)'\nset ylabel 'GB/s'\nset yrange [%g:%g]\n",
          pow(10, floor(log10(ymin > 0 ? ymin : 1))), peak * 2.5);
  for (int p = 0; p < panels; ++p) {
    fprintf(g, "set title '");
    for (const char *c = panel_title[p]; *c; ++c) fputs(*c == '\'' ? "''" : (char[]){*c, 0}, g);
    fprintf(g, "'\n%s\n", plots[p]);
  }
  fprintf(g, "unset multiplot\n");
  fclose(g);
  char cmd[8400];
  snprintf(cmd, sizeof cmd, "gnuplot '%s'", script);
  if (system(cmd) != 0) {
    fprintf(stderr, "akx-bench: gnuplot failed on %s\n", script);
    return -1;
  }
  fprintf(stderr, "akx-bench: plot in %s (data %s, script %s)\n", png, data, script);
  return 0;
}
