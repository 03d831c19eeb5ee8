/* The table of run-time entries (src/jit/entries.h): open addressing with linear probing under
 * one mutex, doubled at half load. A program calls a few dozen combinations, so the table stays
 * small and a lookup is a hash and one or two compares. */
#include "entries.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"

typedef struct {
  akx__entry_key key;
  void *entry; /* NULL: an empty slot */
} slot;

static struct {
  pthread_mutex_t lock;
  slot *slots;
  size_t cap, used; /* cap: 0 or a power of two */
} table = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* FNV-1a over the key's six fields. */
static size_t hash(const akx__entry_key *k) {
  const int32_t f[6] = {k->target, k->family, k->src, k->dst, k->acc, k->op};
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < 6; ++i)
    for (int b = 0; b < 4; ++b) {
      h ^= (uint8_t)((uint32_t)f[i] >> (8 * b));
      h *= 1099511628211ull;
    }
  return (size_t)(h ^ (h >> 29));
}

static int same(const akx__entry_key *a, const akx__entry_key *b) {
  return a->target == b->target && a->family == b->family && a->src == b->src && a->dst == b->dst &&
         a->acc == b->acc && a->op == b->op;
}

/* The slot of *k, or the empty one where it would go; the lock held, cap > 0. */
static slot *probe(slot *slots, size_t cap, const akx__entry_key *k) {
  for (size_t i = hash(k) & (cap - 1);; i = (i + 1) & (cap - 1))
    if (!slots[i].entry || same(&slots[i].key, k)) return &slots[i];
}

void *akx__entry_find(const akx__entry_key *k) {
  void *e = NULL;
  pthread_mutex_lock(&table.lock);
  if (table.cap) e = probe(table.slots, table.cap, k)->entry;
  pthread_mutex_unlock(&table.lock);
  if (e) akx__jit_cache_count_memory_hit();
  return e;
}

void *akx__entry_put(const akx__entry_key *k, void *entry) {
  if (!entry) return NULL;
  pthread_mutex_lock(&table.lock);
  if (2 * (table.used + 1) > table.cap) {
    const size_t cap = table.cap ? 2 * table.cap : 64;
    slot *grown = calloc(cap, sizeof *grown);
    if (!grown) {
      pthread_mutex_unlock(&table.lock);
      return entry;
    }
    for (size_t i = 0; i < table.cap; ++i)
      if (table.slots[i].entry) *probe(grown, cap, &table.slots[i].key) = table.slots[i];
    free(table.slots);
    table.slots = grown;
    table.cap = cap;
  }
  slot *s = probe(table.slots, table.cap, k);
  if (!s->entry) {
    s->key = *k;
    s->entry = entry;
    table.used++;
  }
  void *held = s->entry;
  pthread_mutex_unlock(&table.lock);
  return held;
}

void akx__entry_reset(void) {
  pthread_mutex_lock(&table.lock);
  free(table.slots);
  table.slots = NULL;
  table.cap = table.used = 0;
  pthread_mutex_unlock(&table.lock);
}
