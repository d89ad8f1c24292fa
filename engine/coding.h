/*
 * coding.h -- little-endian fixed-width and varint encodings used by every
 * on-disk structure (FORMAT.md, "Primitive encodings").
 *
 * The decoders take the end of the readable buffer and never read past it; they
 * return NULL when the input is truncated or malformed.
 */
#ifndef WC_CODING_H
#define WC_CODING_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void
wc_put_fixed32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
	p[2] = (uint8_t) (v >> 16);
	p[3] = (uint8_t) (v >> 24);
}

static inline void
wc_put_fixed64(uint8_t *p, uint64_t v)
{
	wc_put_fixed32(p, (uint32_t) v);
	wc_put_fixed32(p + 4, (uint32_t) (v >> 32));
}

static inline uint32_t
wc_get_fixed32(const uint8_t *p)
{
	return (uint32_t) p[0] | ((uint32_t) p[1] << 8) |
		((uint32_t) p[2] << 16) | ((uint32_t) p[3] << 24);
}

static inline uint64_t
wc_get_fixed64(const uint8_t *p)
{
	return (uint64_t) wc_get_fixed32(p) | ((uint64_t) wc_get_fixed32(p + 4) << 32);
}

/* Writes v as a varint (7 bits a byte, low first); returns the byte after it.
 * p must have room for 10 bytes. */
static inline uint8_t *
wc_put_varint64(uint8_t *p, uint64_t v)
{
	while (v >= 0x80)
	{
		*p++ = (uint8_t) (v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t) v;
	return p;
}

static inline int
wc_varint_len(uint64_t v)
{
	int			n = 1;

	while (v >= 0x80)
	{
		v >>= 7;
		n++;
	}
	return n;
}

static inline const uint8_t *
wc_get_varint64(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t	result = 0;
	int			shift;

	for (shift = 0; shift <= 63 && p < end; shift += 7)
	{
		uint64_t	byte = *p++;

		if (shift == 63 && byte > 1)
			return NULL;
		result |= (byte & 0x7f) << shift;
		if ((byte & 0x80) == 0)
		{
			*v = result;
			return p;
		}
	}
	return NULL;
}

static inline const uint8_t *
wc_get_varint32(const uint8_t *p, const uint8_t *end, uint32_t *v)
{
	uint64_t	v64;

	p = wc_get_varint64(p, end, &v64);
	if (p == NULL || v64 > UINT32_MAX)
		return NULL;
	*v = (uint32_t) v64;
	return p;
}

/* Writes len as a varint followed by data[0..len-1] (a length-prefixed byte
 * string); returns the byte after it.  p must have room for 10 + len bytes. */
static inline uint8_t *
wc_put_bytes(uint8_t *p, const void *data, size_t len)
{
	p = wc_put_varint64(p, len);
	if (len > 0)
		memcpy(p, data, len);
	return p + len;
}

/* Zig-zag keeps small negative timestamps small; ts are stored fixed, but
 * deltas may use this. */
static inline uint64_t
wc_zigzag(int64_t v)
{
	return ((uint64_t) v << 1) ^ (uint64_t) (v >> 63);
}

static inline int64_t
wc_unzigzag(uint64_t v)
{
	return (int64_t) (v >> 1) ^ -(int64_t) (v & 1);
}

/*
 * The first 8 bytes of p[0..n-1] as a big-endian number, zero-padded on the
 * right: a < b as numbers implies a < b as byte strings (equal numbers say
 * nothing).  Sorted files' index search arrays (FORMAT.md, "Index block").
 */
static inline uint64_t
wc_prefix64(const uint8_t *p, size_t n)
{
	uint64_t	v = 0;

	for (size_t i = 0; i < 8; i++)
		v = (v << 8) | (i < n ? p[i] : 0);
	return v;
}

/* The length of the longest common prefix of a[0..alen-1] and b[0..blen-1]. */
static inline size_t
wc_common_prefix(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	size_t		n = alen < blen ? alen : blen;
	size_t		i = 0;

	while (i + 8 <= n)
	{
		uint64_t	x,
					y;

		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			break;
		i += 8;
	}
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

#endif
