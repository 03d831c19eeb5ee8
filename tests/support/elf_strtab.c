/* Strings in an ELF image's string tables (tests/support/elf_strtab.h). */
#include "elf_strtab.h"

#include <elf.h>
#include <stdint.h>
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
