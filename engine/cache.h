/*
 * cache.h -- the block cache: decompressed data blocks of sorted files, in memory
 * that every process using the engine shares (DESIGN.md, "The block cache").
 *
 * The region is the caller's (in PostgreSQL: shared memory set aside at start,
 * mapped at the same address in every backend); wc_block_cache_create (wc.h)
 * lays it out and makes it this process's cache, and processes forked after that
 * inherit it.  Entries are fixed-size slots holding one block each, found through
 * a hash table whose buckets are guarded by a few spinlocks; a slot in use is
 * pinned and never evicted, and eviction is a clock sweep over the slots.
 *
 * A block is known by its file's identity and its offset (wc_cache_key).  The
 * identity, taken when a process opens the file, is its inode number and a hash
 * of its device, its size, its footer and its meta blocks' checksums, and the
 * inode's generation.  Inode numbers are used again once a file is gone, its
 * blocks perhaps still cached; the file system gives a new inode another
 * generation (ext4 and xfs a random one, btrfs a counter), so a new file does
 * not take the old one's slots.  Where the file system does not tell the
 * generation (tmpfs), the key also holds the block's stored checksum, read from
 * the file at each lookup: a stale slot is then never returned (it ages out).
 */
#ifndef WC_CACHE_H
#define WC_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest block a slot holds: a 4 KiB block (the default) and the cell that
 * closed it.  Larger blocks are read as without a cache. */
#define WC_CACHE_SLOT_BYTES	(5u << 10)

/* Blocks in a row an iterator reads through the cache (64 KiB of a large range:
 * a point read or a join reads one or two); it reads the rest of the run as a
 * scan of every row does, without the cache. */
#define WC_CACHE_FILL_RUN	16

typedef struct wc_cache_key
{
	uint64_t	file1;			/* the inode number */
	uint64_t	file2;			/* hash of device, size, footer and meta checksums */
	uint64_t	off;			/* the block's offset in the file */
	uint64_t	crc;			/* its stored checksum, or 0 (see above) */
} wc_cache_key;

/* Files opened while this is set are keyed with block checksums whatever their
 * file system (tests). */
extern bool wc_cache_verify_forced;

/* True when this process has a block cache. */
bool		wc_cache_enabled(void);

/*
 * Looks key up: on a hit pins its slot and returns its bytes (*len of them) and
 * the slot's number in *slot; NULL on a miss.
 */
const uint8_t *wc_cache_get(const wc_cache_key *key, int32_t *slot, uint32_t *len);

/*
 * Takes a slot to fill with a block of at most WC_CACHE_SLOT_BYTES: its memory,
 * and its number in *slot; NULL when every slot is pinned or being filled.  Then
 * exactly one of wc_cache_put and wc_cache_abandon.
 */
uint8_t    *wc_cache_take(int32_t *slot);

/*
 * Publishes the filled slot (len bytes) under key, pinned.  When another process
 * published the same block meanwhile, slot is given back and theirs is pinned
 * instead: *slot and the return value then name it.
 */
const uint8_t *wc_cache_put(const wc_cache_key *key, uint32_t len, int32_t *slot);

/* Gives back a slot taken and not published (its filling failed). */
void		wc_cache_abandon(int32_t slot);

/* Unpins a slot of wc_cache_get or wc_cache_put. */
void		wc_cache_unpin(int32_t slot);

#endif
