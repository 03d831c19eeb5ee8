/* Strings in an ELF image's string tables (tests/support/elf_strtab.h). */
#include "elf_strtab.h"

#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int akx_test_elf_strtab_has(const unsigned char *image, size_t size, const char *want) {
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)image;
  if (size < sizeof *eh || eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr)) return 0;
  if (eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > size) return 0;
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(image + eh->e_shoff);
  size_t want_len = strlen(want) + 1;
  for (int i = 0; i < eh->e_shnum; i++) {
    if (sh[i].sh_type != SHT_STRTAB || sh[i].sh_offset + sh[i].sh_size > size) continue;
    const char *tab = (const char *)image + sh[i].sh_offset;
    for (size_t at = 0; at + want_len <= sh[i].sh_size; at += strlen(tab + at) + 1)
      if (memcmp(tab + at, want, want_len) == 0) return 1;
  }
  return 0;
}

int akx_test_cuda_image_holds(const unsigned char *image, size_t size, int n, char *const *lowered,
                              char *const *exprs, char *why, size_t len) {
  if (size <= sizeof(Elf64_Ehdr) || memcmp(image, "\x7f" "ELF", 4) != 0) {
    snprintf(why, len, "not an ELF image (%zu bytes)", size);
    return 0;
  }
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)image;
  if (image[EI_CLASS] != ELFCLASS64 || eh->e_machine != EM_CUDA) {
    snprintf(why, len, "ELF class %d, machine %d: not a 64-bit EM_CUDA image", image[EI_CLASS], eh->e_machine);
    return 0;
  }
  for (int i = 0; i < n; i++) {
    if (strncmp(lowered[i], "_Z", 2) != 0) {
      snprintf(why, len, "%s lowered to '%s', no mangled name", exprs[i], lowered[i]);
      return 0;
    }
    if (!akx_test_elf_strtab_has(image, size, lowered[i])) {
      snprintf(why, len, "%s ('%s') is in no string table", exprs[i], lowered[i]);
      return 0;
    }
  }
  return 1;
}
