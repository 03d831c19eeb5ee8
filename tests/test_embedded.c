/* The kernel headers libakx embeds (src/jit/embedded.h) are the tree's, byte for byte: every
 * file of include/akx/ and include/akx.h, each found by name, nothing else, in strcmp order. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/jit/embedded.h"

static char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *size = (size_t)n;
  return buf;
}

static void check_same(const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/include/%s", AKX_SOURCE_DIR, name);
  const akx__embedded_file *e = akx__embedded_find(name);
  cr_assert_not_null(e, "%s is not embedded", name);
  size_t size;
  char *text = read_file(path, &size);
  cr_assert_eq(e->size, size, "%s: %zu bytes embedded, %zu in the tree", name, e->size, size);
  cr_assert(memcmp(e->text, text, size) == 0, "%s differs from the tree's", name);
  cr_assert_eq(e->text[size], '\0', "%s is not NUL-terminated", name);
  free(text);
}

Test(embedded, every_kernel_header_is_the_trees) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/include/akx", AKX_SOURCE_DIR);
  DIR *d = opendir(dir);
  cr_assert_not_null(d, "cannot open %s", dir);
  int files = 0;
  for (struct dirent *ent; (ent = readdir(d));) {
    if (ent->d_name[0] == '.') continue;
    char name[512];
    snprintf(name, sizeof name, "akx/%s", ent->d_name);
    check_same(name);
    ++files;
  }
  closedir(d);
  check_same("akx.h");
  cr_assert_gt(files, 20, "only %d files in include/akx", files);
  cr_assert_eq(akx__embedded_file_count, files + 1, "%d embedded, %d in the tree",
               akx__embedded_file_count, files + 1);
}

Test(embedded, sorted_and_found_by_name_only) {
  for (int i = 1; i < akx__embedded_file_count; ++i)
    cr_assert_lt(strcmp(akx__embedded_files[i - 1].name, akx__embedded_files[i].name), 0);
  for (int i = 0; i < akx__embedded_file_count; ++i)
    cr_assert_eq(akx__embedded_find(akx__embedded_files[i].name), &akx__embedded_files[i]);
  cr_assert_null(akx__embedded_find("akx/no_such.cuh"));
  cr_assert_null(akx__embedded_find("device.cuh"));
  cr_assert_null(akx__embedded_find(""));
  cr_assert_null(akx__embedded_find(NULL));
}
