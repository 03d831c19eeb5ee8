/* The kernel headers libakx embeds (src/jit/embedded.h) are the tree's, byte for byte: every
 * file of kernels/akx/, include/akx.h and the sim's module prelude, each found by name, nothing
 * else, in strcmp order; and they are self-contained, so that the run-time kernels' cache key
 * (their bytes) does not move with anything outside them, such as the sim's register table. */
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

/* Where the tree holds the file an #include names. */
static void tree_path(const char *name, char *path, size_t cap) {
  if (strncmp(name, "akx/", 4) == 0)
    snprintf(path, cap, "%s/kernels/%s", AKX_SOURCE_DIR, name);
  else if (strcmp(name, "sim_module.inl") == 0)
    snprintf(path, cap, "%s/src/jit/%s", AKX_SOURCE_DIR, name);
  else
    snprintf(path, cap, "%s/include/%s", AKX_SOURCE_DIR, name);
}

static void check_same(const char *name) {
  char path[4096];
  tree_path(name, path, sizeof path);
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
  snprintf(dir, sizeof dir, "%s/kernels/akx", AKX_SOURCE_DIR);
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
  check_same("sim_module.inl");
  cr_assert_gt(files, 20, "only %d files in kernels/akx", files);
  cr_assert_eq(akx__embedded_file_count, files + 2, "%d embedded, %d in the tree",
               akx__embedded_file_count, files + 2);
}

/* Every quoted #include of an embedded file names an embedded file (or is a system header in
 * <>): a run-time compile sees only these bytes, and the cache key is their hash. The build-only
 * instance ladders (src/launch/*_instances.inl) are not among them. */
Test(embedded, self_contained_and_without_build_only_files) {
  int includes = 0;
  for (int i = 0; i < akx__embedded_file_count; ++i) {
    const akx__embedded_file *f = &akx__embedded_files[i];
    cr_assert_null(strstr(f->name, "_instances.inl"), "%s (build-only) is embedded", f->name);
    for (const char *p = f->text; (p = strstr(p, "#include \"")); ++p) {
      const char *name = p + strlen("#include \"");
      const char *end = strchr(name, '"');
      cr_assert_not_null(end);
      char inc[256];
      snprintf(inc, sizeof inc, "%.*s", (int)(end - name), name);
      cr_assert_not_null(akx__embedded_find(inc), "%s includes \"%s\", which is not embedded", f->name, inc);
      ++includes;
    }
  }
  cr_assert_gt(includes, 30, "only %d includes read", includes);
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
