/*
 * bloom.h -- the bloom filter of a sorted file, over its rowkeys.
 *
 * One filter per file.  A key is hashed once with wc_bloom_hash (XXH64, seed 0);
 * the k probes are h1 + i * h2 (i = 0..k-1) modulo the number of bits, where h1
 * and h2 are the low and high 32 bits of the hash (Kirsch-Mitzenmacher double
 * hashing).  k = round(bits_per_key * ln 2), clamped to [1, 30], as LevelDB's.
 * Layout (FORMAT.md, "Sorted files", "Filter block"):
 *
 *   filter := bits: bytes[m] | k: u8        (bit j is bits[j / 8] >> (j % 8) & 1)
 *
 * The hash, the probe sequence and the layout are part of the format.
 */
#ifndef WC_BLOOM_H
#define WC_BLOOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* XXH64 of key[0..len-1] with seed 0. */
uint64_t	wc_bloom_hash(const void *key, size_t len);

/* Collects key hashes; the filter is sized at finish. */
typedef struct wc_bloom_builder
{
	uint64_t   *hashes;
	size_t		n;
	size_t		cap;
	int			bits_per_key;
} wc_bloom_builder;

/* bits_per_key <= 0 means 10. */
void		wc_bloom_builder_init(wc_bloom_builder *b, int bits_per_key);
void		wc_bloom_builder_free(wc_bloom_builder *b);

/* Adds one key by its wc_bloom_hash.  WC_OK or WC_NOMEM. */
int			wc_bloom_builder_add(wc_bloom_builder *b, uint64_t hash);

/*
 * Builds the filter into a malloc'd buffer (*out, *len; the caller frees it).
 * WC_OK or WC_NOMEM.  An empty builder gives a filter that matches nothing.
 */
int			wc_bloom_builder_finish(const wc_bloom_builder *b, uint8_t **out, size_t *len);

/* Whether filter[0..len-1] is well formed (at least one byte of bits, k in 1..30). */
bool		wc_bloom_valid(const uint8_t *filter, size_t len);

/* False only if the key with this hash was certainly not added. */
bool		wc_bloom_may_contain(const uint8_t *filter, size_t len, uint64_t hash);

#endif
