/* SHA-256 as FIPS 180-4 sections 4.1.2, 4.2.2, 5.1.1, 5.3.3 and 6.2 write it: big-endian
 * words, 64 rounds per 64-byte block, the message padded with 0x80, zeros and its length in
 * bits. Checked against the NIST vectors in tests/test_jit_cache.c. */
#include <string.h>
#include "sha256.h"

static const uint32_t round_constants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void compress(uint32_t state[8], const unsigned char block[64]) {
  uint32_t w[64];
  for (int t = 0; t < 16; ++t)
    w[t] = (uint32_t)block[4 * t] << 24 | (uint32_t)block[4 * t + 1] << 16 |
           (uint32_t)block[4 * t + 2] << 8 | (uint32_t)block[4 * t + 3];
  for (int t = 16; t < 64; ++t) {
    const uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
  for (int t = 0; t < 64; ++t) {
    const uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) +
                        round_constants[t] + w[t];
    const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
  state[5] += f;
  state[6] += g;
  state[7] += h;
}

void akx__sha256_init(akx__sha256 *s) {
  static const uint32_t initial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                      0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(s->state, initial, sizeof initial);
  s->length = 0;
  s->fill = 0;
}

void akx__sha256_update(akx__sha256 *s, const void *data, size_t n) {
  if (n == 0) return; /* data may then be NULL, which memcpy may not be given */
  const unsigned char *p = data;
  s->length += n;
  if (s->fill) {
    const size_t take = n < 64 - s->fill ? n : 64 - s->fill;
    memcpy(s->block + s->fill, p, take);
    s->fill += take;
    p += take;
    n -= take;
    if (s->fill < 64) return;
    compress(s->state, s->block);
    s->fill = 0;
  }
  for (; n >= 64; p += 64, n -= 64) compress(s->state, p);
  if (n) memcpy(s->block, p, n);
  s->fill = n;
}

void akx__sha256_final(akx__sha256 *s, unsigned char digest[32]) {
  const uint64_t bits = s->length * 8;
  s->block[s->fill++] = 0x80;
  if (s->fill > 56) { /* no room for the length: it goes in one more block */
    memset(s->block + s->fill, 0, 64 - s->fill);
    compress(s->state, s->block);
    s->fill = 0;
  }
  memset(s->block + s->fill, 0, 56 - s->fill);
  for (int i = 0; i < 8; ++i) s->block[56 + i] = (unsigned char)(bits >> (56 - 8 * i));
  compress(s->state, s->block);
  for (int i = 0; i < 8; ++i) {
    digest[4 * i] = (unsigned char)(s->state[i] >> 24);
    digest[4 * i + 1] = (unsigned char)(s->state[i] >> 16);
    digest[4 * i + 2] = (unsigned char)(s->state[i] >> 8);
    digest[4 * i + 3] = (unsigned char)s->state[i];
  }
}

void akx__sha256_of(const void *data, size_t n, unsigned char digest[32]) {
  akx__sha256 s;
  akx__sha256_init(&s);
  akx__sha256_update(&s, data, n);
  akx__sha256_final(&s, digest);
}
