/*
 * crc32c.h -- CRC-32C (Castagnoli), the checksum of every on-disk record and block.
 * Uses SSE4.2 when the CPU has it, a table otherwise; both give the same values.
 */
#ifndef WC_CRC32C_H
#define WC_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Extends crc (0 to start) over data[0..n-1]. */
uint32_t	wc_crc32c_extend(uint32_t crc, const void *data, size_t n);

static inline uint32_t
wc_crc32c(const void *data, size_t n)
{
	return wc_crc32c_extend(0, data, n);
}

#endif
