#define _XOPEN_SOURCE 700 /* nftw */
#include "tree.h"

#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

void tfx_remove_tree(const char *dir) { nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS); }
