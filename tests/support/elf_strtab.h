/* Strings in the string tables of an ELF image: a cubin's kernel names (tests/test_nvrtc.c,
 * tests/test_nvrtc_families.c, tests/test_nvrtc_resources.c). */
#ifndef AKX_TEST_ELF_STRTAB_H
#define AKX_TEST_ELF_STRTAB_H
#include <stddef.h>

/* 1 when the NUL-terminated string `want` is one of the strings of some SHT_STRTAB section of
 * the 64-bit ELF image; 0 otherwise, and for an image too short for its own headers. */
int akx_test_elf_strtab_has(const unsigned char *image, size_t size, const char *want);

/* 1 when the image is a 64-bit ELF for EM_CUDA (190) whose string tables hold each of the n
 * lowered names, each a mangled name ("_Z..."); else 0, with a sentence in why[len] naming what
 * is wrong (exprs[i]: the name expression lowered to lowered[i], for the sentence). NVRTC's
 * cubins, as test_nvrtc_families and test_nvrtc_resources check them. */
int akx_test_cuda_image_holds(const unsigned char *image, size_t size, int n, char *const *lowered,
                              char *const *exprs, char *why, size_t len);

#endif
