/* SHA-256 (FIPS 180-4), for the run-time kernel cache's keys and its files' checksums
 * (src/jit/cache.h). Streaming: init, any number of updates of any length, final. */
#ifndef AKX_JIT_SHA256_H
#define AKX_JIT_SHA256_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  uint32_t state[8];
  uint64_t length;          /* bytes hashed so far */
  unsigned char block[64];  /* the partial block not yet compressed */
  size_t fill;              /* bytes of `block` in use, < 64 */
} akx__sha256;

void akx__sha256_init(akx__sha256 *s);
void akx__sha256_update(akx__sha256 *s, const void *data, size_t n);
/* Writes the digest; s must be initialised again before another use. */
void akx__sha256_final(akx__sha256 *s, unsigned char digest[32]);
/* The digest of n bytes in one call. */
void akx__sha256_of(const void *data, size_t n, unsigned char digest[32]);

#ifdef __cplusplus
}
#endif
#endif
