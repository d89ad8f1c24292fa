/*
 * bloom.c -- the rowkey bloom filter (layout and hash in bloom.h).
 */
#include "bloom.h"

#include <stdlib.h>
#include <string.h>

#include "env.h"

/* XXH64 constants: part of the format through wc_bloom_hash. */
#define P1	UINT64_C(0x9E3779B185EBCA87)
#define P2	UINT64_C(0xC2B2AE3D27D4EB4F)
#define P3	UINT64_C(0x165667B19E3779F9)
#define P4	UINT64_C(0x85EBCA77C2B2AE63)
#define P5	UINT64_C(0x27D4EB2F165667C5)

static inline uint64_t
rotl64(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/* Little-endian loads regardless of the host's byte order. */
static inline uint64_t
load64(const uint8_t *p)
{
	return (uint64_t) p[0] | ((uint64_t) p[1] << 8) | ((uint64_t) p[2] << 16) |
		((uint64_t) p[3] << 24) | ((uint64_t) p[4] << 32) | ((uint64_t) p[5] << 40) |
		((uint64_t) p[6] << 48) | ((uint64_t) p[7] << 56);
}

static inline uint32_t
load32(const uint8_t *p)
{
	return (uint32_t) p[0] | ((uint32_t) p[1] << 8) | ((uint32_t) p[2] << 16) |
		((uint32_t) p[3] << 24);
}

static inline uint64_t
xxh_round(uint64_t acc, uint64_t input)
{
	acc += input * P2;
	acc = rotl64(acc, 31);
	return acc * P1;
}

static inline uint64_t
xxh_merge(uint64_t acc, uint64_t v)
{
	acc ^= xxh_round(0, v);
	return acc * P1 + P4;
}

uint64_t
wc_bloom_hash(const void *key, size_t len)
{
	const uint8_t *p = key;
	const uint8_t *end = p + len;
	uint64_t	h;

	if (len >= 32)
	{
		uint64_t	v1 = P1 + P2,
					v2 = P2,
					v3 = 0,
					v4 = (uint64_t) 0 - P1;

		do
		{
			v1 = xxh_round(v1, load64(p));
			v2 = xxh_round(v2, load64(p + 8));
			v3 = xxh_round(v3, load64(p + 16));
			v4 = xxh_round(v4, load64(p + 24));
			p += 32;
		} while (end - p >= 32);
		h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
		h = xxh_merge(h, v1);
		h = xxh_merge(h, v2);
		h = xxh_merge(h, v3);
		h = xxh_merge(h, v4);
	}
	else
		h = P5;
	h += (uint64_t) len;
	while (end - p >= 8)
	{
		h ^= xxh_round(0, load64(p));
		h = rotl64(h, 27) * P1 + P4;
		p += 8;
	}
	if (end - p >= 4)
	{
		h ^= (uint64_t) load32(p) * P1;
		h = rotl64(h, 23) * P2 + P3;
		p += 4;
	}
	while (p < end)
	{
		h ^= (uint64_t) (*p) * P5;
		h = rotl64(h, 11) * P1;
		p++;
	}
	h ^= h >> 33;
	h *= P2;
	h ^= h >> 29;
	h *= P3;
	h ^= h >> 32;
	return h;
}

void
wc_bloom_builder_init(wc_bloom_builder *b, int bits_per_key)
{
	memset(b, 0, sizeof(*b));
	b->bits_per_key = bits_per_key > 0 ? bits_per_key : 10;
}

void
wc_bloom_builder_free(wc_bloom_builder *b)
{
	free(b->hashes);
	memset(b, 0, sizeof(*b));
}

int
wc_bloom_builder_add(wc_bloom_builder *b, uint64_t hash)
{
	if (b->n == b->cap &&
		!wc_array_reserve(&b->hashes, &b->cap, b->n + 1, sizeof(*b->hashes)))
		return WC_NOMEM;
	b->hashes[b->n++] = hash;
	return WC_OK;
}

int
wc_bloom_builder_finish(const wc_bloom_builder *b, uint8_t **out, size_t *len)
{
	/* round(bits_per_key * ln 2): fewer probes than optimal is cheaper to check */
	int			k = (int) (b->bits_per_key * 69 + 50) / 100;
	uint64_t	bits = (uint64_t) b->n * (uint64_t) b->bits_per_key;
	size_t		bytes;
	uint8_t    *f;

	if (k < 1)
		k = 1;
	if (k > 30)
		k = 30;
	/* tiny filters have a high false positive rate; 64 bits is the floor */
	if (bits < 64)
		bits = 64;
	bytes = (size_t) ((bits + 7) / 8);
	bits = (uint64_t) bytes * 8;
	if ((f = calloc(bytes + 1, 1)) == NULL)
		return WC_NOMEM;
	for (size_t i = 0; i < b->n; i++)
	{
		uint32_t	h1 = (uint32_t) b->hashes[i];
		uint32_t	h2 = (uint32_t) (b->hashes[i] >> 32);
		uint64_t	pos = h1;

		for (int j = 0; j < k; j++)
		{
			uint64_t	bit = pos % bits;

			f[bit >> 3] |= (uint8_t) (1u << (bit & 7));
			pos += h2;
		}
	}
	f[bytes] = (uint8_t) k;
	*out = f;
	*len = bytes + 1;
	return WC_OK;
}

bool
wc_bloom_valid(const uint8_t *filter, size_t len)
{
	return len >= 2 && filter[len - 1] >= 1 && filter[len - 1] <= 30;
}

bool
wc_bloom_may_contain(const uint8_t *filter, size_t len, uint64_t hash)
{
	uint64_t	bits;
	uint32_t	h2 = (uint32_t) (hash >> 32);
	uint64_t	pos = (uint32_t) hash;
	int			k;

	if (!wc_bloom_valid(filter, len))
		return true;
	k = filter[len - 1];
	bits = (uint64_t) (len - 1) * 8;
	for (int j = 0; j < k; j++)
	{
		uint64_t	bit = pos % bits;

		if ((filter[bit >> 3] & (1u << (bit & 7))) == 0)
			return false;
		pos += h2;
	}
	return true;
}
