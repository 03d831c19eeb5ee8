/* Strings in the string tables of an ELF image: a cubin's kernel names (tests/test_nvrtc.c,
 * tests/test_nvrtc_families.c). */
#ifndef AKX_TEST_ELF_STRTAB_H
#define AKX_TEST_ELF_STRTAB_H
#include <stddef.h>

/* 1 when the NUL-terminated string `want` is one of the strings of some SHT_STRTAB section of
 * the 64-bit ELF image; 0 otherwise, and for an image too short for its own headers. */
int akx_test_elf_strtab_has(const unsigned char *image, size_t size, const char *want);

#endif
