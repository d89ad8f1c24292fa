/*
 * cache.c -- the block cache in shared memory (cache.h; DESIGN.md, "The block cache").
 *
 * Layout of the region, all of it addressed by offsets from its start (every
 * process may map it elsewhere):
 *
 *   header | locks[NLOCKS] | buckets[nbuckets] | slots[nslots] | data[nslots]
 *
 * A bucket names its chain's first slot (its number + 1; 0: empty) with that
 * slot's fingerprint (32 bits of the key's hash) beside it, so that a lookup
 * that misses, the common case of a scan reading new blocks, touches one cache
 * line, not the slot too.  Bucket b is guarded by lock b % NLOCKS, which guards
 * its chain and the key, link and state of every slot on it.  A slot is FREE (on no chain), BUSY (taken by one process
 * to be filled, or being unlinked) or VALID (on its key's chain).  Its pins count
 * the processes reading its bytes: they are added only under its bucket's lock,
 * by a lookup that found it, so an evictor that sees none under that lock knows
 * that nobody reads the slot nor can start to before it is unlinked.  Pins are
 * dropped without the lock.
 *
 * Eviction is PostgreSQL's clock sweep: a shared hand moves over the slots; a hit
 * raises a slot's usage count (up to USAGE_MAX), the hand lowers it, and a VALID
 * slot with neither pins nor usage is taken.  A process that dies holding a pin
 * leaves that slot pinned (PostgreSQL reinitialises its shared memory after a
 * backend dies abnormally); one that dies holding a lock leaves the lock held,
 * for the same reason acceptable there.  Locks are held for a chain walk only.
 */
#include "cache.h"

#include <sched.h>
#include <string.h>

#include "bloom.h"
#include "err.h"
#include "wc.h"

#define CACHE_MAGIC		0x57434243u	/* "WCBC" */
#define NLOCKS			64
#define USAGE_MAX		3
#define MIN_SLOTS		16

enum
{
	SLOT_FREE = 0,
	SLOT_BUSY = 1,
	SLOT_VALID = 2
};

typedef struct cache_lock
{
	uint32_t	held;
	char		pad[60];		/* one cache line each */
} cache_lock;

typedef struct cache_slot
{
	wc_cache_key key;
	uint32_t	len;			/* of its block */
	uint32_t	fp;				/* its key's fingerprint */
	int32_t		next;			/* on its chain; -1 at the end */
	uint32_t	state;
	uint32_t	pins;
	uint32_t	usage;
} cache_slot;

typedef struct cache_header
{
	uint32_t	magic;
	uint32_t	nslots;
	uint32_t	nbuckets;
	uint32_t	pad;
	uint64_t	hand;			/* the clock hand, ever increasing */
	uint64_t	locks_off;
	uint64_t	buckets_off;
	uint64_t	slots_off;
	uint64_t	data_off;
} cache_header;

bool		wc_cache_verify_forced = false;

/* This process's cache (inherited by the processes it forks), or NULL. */
static cache_header *cache;
static cache_lock *locks;
static uint64_t *buckets;		/* fingerprint << 32 | (first slot + 1) */
static cache_slot *slots;
static uint8_t *data;

static size_t
align64(size_t n)
{
	return (n + 63) & ~(size_t) 63;
}

/* Offsets of the layout for nslots slots; returns the total size. */
static size_t
layout(uint32_t nslots, uint32_t *nbuckets, uint64_t *locks_off, uint64_t *buckets_off,
	   uint64_t *slots_off, uint64_t *data_off)
{
	size_t		off = align64(sizeof(cache_header));

	*nbuckets = nslots * 2;
	*locks_off = off;
	off = align64(off + NLOCKS * sizeof(cache_lock));
	*buckets_off = off;
	off = align64(off + (size_t) *nbuckets * sizeof(uint64_t));
	*slots_off = off;
	off = align64(off + (size_t) nslots * sizeof(cache_slot));
	*data_off = off;
	return off + (size_t) nslots * WC_CACHE_SLOT_BYTES;
}

size_t
wc_block_cache_region_size(size_t bytes)
{
	uint32_t	nb;
	uint64_t	a,
				b,
				c,
				d;
	size_t		n = bytes / WC_CACHE_SLOT_BYTES;

	if (n < MIN_SLOTS || n > INT32_MAX / 2)
		return 0;
	return layout((uint32_t) n, &nb, &a, &b, &c, &d);
}

static void
attach(void *region)
{
	cache = region;
	locks = (cache_lock *) ((uint8_t *) region + cache->locks_off);
	buckets = (uint64_t *) ((uint8_t *) region + cache->buckets_off);
	slots = (cache_slot *) ((uint8_t *) region + cache->slots_off);
	data = (uint8_t *) region + cache->data_off;
}

int
wc_block_cache_create(void *region, size_t size, wc_err *err)
{
	cache_header *h = region;
	uint32_t	n,
				nb;
	uint64_t	lo,
				bo,
				so,
				dof;

	if (region == NULL || ((uintptr_t) region & 63) != 0)
		return wc_err_set(err, WC_INVALID, "the block cache's region must be aligned to 64 bytes");
	/* the most slots that fit */
	n = (uint32_t) (size / (WC_CACHE_SLOT_BYTES + 2 * sizeof(uint64_t) + sizeof(cache_slot)));
	while (n >= MIN_SLOTS && layout(n, &nb, &lo, &bo, &so, &dof) > size)
		n--;
	if (n < MIN_SLOTS)
		return wc_err_set(err, WC_INVALID, "a block cache of %zu bytes is too small (at least %zu)",
						  size, wc_block_cache_region_size((size_t) MIN_SLOTS * WC_CACHE_SLOT_BYTES));
	memset(h, 0, sizeof(*h));
	h->nslots = n;
	h->nbuckets = nb;
	h->locks_off = lo;
	h->buckets_off = bo;
	h->slots_off = so;
	h->data_off = dof;
	memset((uint8_t *) region + lo, 0, NLOCKS * sizeof(cache_lock));
	memset((uint8_t *) region + bo, 0, (size_t) nb * sizeof(uint64_t));
	memset((uint8_t *) region + so, 0, (size_t) n * sizeof(cache_slot));
	h->magic = CACHE_MAGIC;
	attach(region);
	return WC_OK;
}

void
wc_block_cache_detach(void)
{
	cache = NULL;
}

bool
wc_cache_enabled(void)
{
	return cache != NULL;
}

void
wc_block_cache_get_stats(wc_block_cache_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (cache == NULL)
		return;
	st->slots = cache->nslots;
	st->slot_bytes = WC_CACHE_SLOT_BYTES;
	for (uint32_t i = 0; i < cache->nslots; i++)
	{
		uint32_t	state = __atomic_load_n(&slots[i].state, __ATOMIC_RELAXED);

		if (state == SLOT_VALID)
		{
			st->used++;
			st->used_bytes += slots[i].len;
		}
		if (__atomic_load_n(&slots[i].pins, __ATOMIC_RELAXED) > 0)
			st->pinned++;
	}
}

/* ---------------------------------------------------------------- locks, hashing */

static inline void
cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static void
lock(uint32_t b)
{
	uint32_t   *l = &locks[b % NLOCKS].held;
	int			spins = 0;

	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE) != 0)
	{
		while (__atomic_load_n(l, __ATOMIC_RELAXED) != 0)
		{
			if (++spins < 100)
				cpu_relax();
			else
			{
				sched_yield();	/* the holder may be descheduled */
				spins = 0;
			}
		}
	}
}

static void
unlock(uint32_t b)
{
	__atomic_store_n(&locks[b % NLOCKS].held, 0, __ATOMIC_RELEASE);
}

/* The key's hash: its bucket, and its fingerprint in *fp (never 0). */
static uint32_t
bucket_of(const wc_cache_key *k, uint32_t *fp)
{
	uint64_t	h = k->file2 ^ (k->file1 * 0x9E3779B97F4A7C15ull) ^
		(k->off * 0xC2B2AE3D27D4EB4Full) ^ (k->crc * 0x165667B19E3779F9ull);

	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ull;
	h ^= h >> 32;
	*fp = (uint32_t) (h >> 32) | 1;
	return (uint32_t) (h % cache->nbuckets);
}

/* A bucket value naming slot i first. */
static uint64_t
head_of(int32_t i)
{
	return i < 0 ? 0 : (uint64_t) slots[i].fp << 32 | (uint32_t) (i + 1);
}

static bool
key_eq(const wc_cache_key *a, const wc_cache_key *b)
{
	return a->file1 == b->file1 && a->file2 == b->file2 && a->off == b->off &&
		a->crc == b->crc;
}

/* The slot holding key (fingerprint fp) on chain b (its lock held), or -1. */
static int32_t
chain_find(uint32_t b, const wc_cache_key *k, uint32_t fp)
{
	uint64_t	head = buckets[b];
	int32_t		i;

	if (head == 0)
		return -1;
	i = (int32_t) (uint32_t) head - 1;
	if ((uint32_t) (head >> 32) == fp && key_eq(&slots[i].key, k))
		return i;
	for (i = slots[i].next; i >= 0; i = slots[i].next)
		if (slots[i].fp == fp && key_eq(&slots[i].key, k))
			return i;
	return -1;
}

/* Pins slot i (its bucket's lock held) as a hit. */
static const uint8_t *
pin(int32_t i)
{
	__atomic_add_fetch(&slots[i].pins, 1, __ATOMIC_ACQUIRE);
	if (slots[i].usage < USAGE_MAX)
		slots[i].usage++;
	return data + (size_t) i * WC_CACHE_SLOT_BYTES;
}

/* ---------------------------------------------------------------- the operations */

const uint8_t *
wc_cache_get(const wc_cache_key *key, int32_t *slot, uint32_t *len)
{
	uint32_t	fp,
				b = bucket_of(key, &fp);
	const uint8_t *p = NULL;
	int32_t		i;

	lock(b);
	if ((i = chain_find(b, key, fp)) >= 0)
	{
		p = pin(i);
		*len = slots[i].len;
	}
	unlock(b);
	*slot = i;
	return p;
}

/* Takes VALID slot i for reuse if nobody pins or recently used it. */
static bool
evict(int32_t i)
{
	cache_slot *s = &slots[i];
	uint32_t	b,
				fp;
	bool		taken = false;

	if (__atomic_load_n(&s->pins, __ATOMIC_RELAXED) > 0)
		return false;
	if (s->usage > 0)
	{
		/* a racy decrement: the count is a hint */
		s->usage--;
		return false;
	}
	b = bucket_of(&s->key, &fp);
	lock(b);

	/*
	 * Read without the lock, the key may have been changing: the slot is ours
	 * only if it is on this chain (linked under this lock), unpinned and unused
	 */
	if (__atomic_load_n(&s->state, __ATOMIC_RELAXED) == SLOT_VALID &&
		__atomic_load_n(&s->pins, __ATOMIC_ACQUIRE) == 0 && s->usage == 0 && buckets[b] != 0)
	{
		int32_t		head = (int32_t) (uint32_t) buckets[b] - 1;

		if (head == i)
		{
			buckets[b] = head_of(s->next);
			taken = true;
		}
		else
		{
			for (int32_t j = head; slots[j].next >= 0; j = slots[j].next)
				if (slots[j].next == i)
				{
					slots[j].next = s->next;
					taken = true;
					break;
				}
		}
		if (taken)
		{
			s->next = -1;
			__atomic_store_n(&s->state, SLOT_BUSY, __ATOMIC_RELAXED);
		}
	}
	unlock(b);
	return taken;
}

uint8_t *
wc_cache_take(int32_t *slot)
{
	uint32_t	n = cache->nslots;

	for (uint32_t tries = 0; tries < 4 * n; tries++)
	{
		int32_t		i = (int32_t) (__atomic_fetch_add(&cache->hand, 1, __ATOMIC_RELAXED) % n);
		uint32_t	state = __atomic_load_n(&slots[i].state, __ATOMIC_ACQUIRE);
		uint32_t	expected = SLOT_FREE;

		if ((state == SLOT_FREE &&
			 __atomic_compare_exchange_n(&slots[i].state, &expected, SLOT_BUSY, false,
										 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) ||
			(state == SLOT_VALID && evict(i)))
		{
			*slot = i;
			return data + (size_t) i * WC_CACHE_SLOT_BYTES;
		}
	}
	*slot = -1;
	return NULL;
}

const uint8_t *
wc_cache_put(const wc_cache_key *key, uint32_t len, int32_t *slot)
{
	uint32_t	fp,
				b = bucket_of(key, &fp);
	int32_t		mine = *slot,
				i;
	const uint8_t *p;

	lock(b);
	if ((i = chain_find(b, key, fp)) >= 0)
	{
		/* someone else read the same block meanwhile: theirs, ours back */
		p = pin(i);
		unlock(b);
		wc_cache_abandon(mine);
		*slot = i;
		return p;
	}
	slots[mine].key = *key;
	slots[mine].len = len;
	slots[mine].fp = fp;
	slots[mine].usage = 1;
	__atomic_store_n(&slots[mine].pins, 1, __ATOMIC_RELAXED);
	slots[mine].next = buckets[b] == 0 ? -1 : (int32_t) (uint32_t) buckets[b] - 1;
	buckets[b] = head_of(mine);
	/* the bytes were written before: whoever finds the slot takes this lock first */
	__atomic_store_n(&slots[mine].state, SLOT_VALID, __ATOMIC_RELEASE);
	unlock(b);
	return data + (size_t) mine * WC_CACHE_SLOT_BYTES;
}

void
wc_cache_abandon(int32_t slot)
{
	__atomic_store_n(&slots[slot].state, SLOT_FREE, __ATOMIC_RELEASE);
}

void
wc_cache_unpin(int32_t slot)
{
	__atomic_sub_fetch(&slots[slot].pins, 1, __ATOMIC_RELEASE);
}
