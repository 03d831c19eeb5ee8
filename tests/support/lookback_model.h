/* The order in which kernels/akx/lookback.cuh folds a tile's exclusive prefix (the radix-32
 * Fenwick tree over tiles), for the tests that compute it on the host bit for bit
 * (test_finish_order.c, test_segmented_finish_order.c), written from the kernel's comment,
 * not from its code. */
#ifndef AKX_TEST_LOOKBACK_MODEL_H
#define AKX_TEST_LOOKBACK_MODEL_H
#include <stdint.h>

/* At most the nodes one tile folds: 31 for each of a 64-bit index's 13 base-32 digits. */
enum { TLB_MAX_TERMS = 31 * 13 };

/* The nodes tile t folds, oldest first, each named by the tile that publishes it, into
 * terms[0..m) (m, the sum of t's base-32 digits, is returned): for each digit d_j of t, the
 * highest first, the d_j tiles that end the complete blocks of 32^j tiles below t's prefix of
 * higher digits. *low is how many of the last terms make tile t's own node with its aggregate:
 * 31 x t's level (its trailing digits equal to 31). The kernel's prefix is the fold from the
 * identity of terms[0..m - low) (the older ones, "high"), then o the fold from the identity of
 * terms[m - low..m) ("low"): high o low, or either alone when the other is empty; tile t's node
 * is low o its aggregate (the aggregate alone at level 0). */
int tlb_lookback_terms(uint64_t t, uint64_t terms[TLB_MAX_TERMS], int *low);

#endif
