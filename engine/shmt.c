/*
 * shmt.c -- the region of shared memtables (shmt.h; DESIGN.md, "Shared memtables").
 *
 * Layout of the region (mapped at the same address in every process):
 *
 *   header | slots[nslots] | chunks[nchunks] of WC_SHMT_CHUNK bytes
 *
 * The header's mutex (process-shared, robust) guards the free chunks, the slots'
 * keys, states and reference counts; a slot's own mutex guards its arena, its
 * record marks and its families.  Order: a slot's mutex, then the header's.
 * Neither is held across a call out of the engine.
 *
 * A slot's arena is a list of chunks, the newest first, of which the newest is
 * being filled: an allocation is one store of its `used` (a process that dies
 * in the middle leaves at most a hole).  A chunk's first bytes link it.
 */
#include "shmt.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "log.h"
#include "wc.h"

#define SHMT_MAGIC		0x57435354u	/* "WCST" */
#define SHMT_AFTER		32			/* records done beyond the frontier, remembered */
#define SHMT_ABORTED	64			/* records done as aborted, remembered */
#define MIN_CHUNKS		4

enum
{
	SLOT_FREE = 0,
	SLOT_LIVE = 1,				/* a live log's state */
	SLOT_DEAD = 2				/* its log was flushed: freed at the last reference */
};

typedef struct shmt_chunk
{
	struct shmt_chunk *next;
	uint64_t	pad;
	/* the arena's bytes follow, to WC_SHMT_CHUNK */
} shmt_chunk;

#define CHUNK_DATA		sizeof(shmt_chunk)

typedef struct shmt_done
{
	uint64_t	start;
	uint64_t	end;
	wc_shlog_facts facts;
} shmt_done;

struct wc_shlog
{
	/* under the header's mutex */
	uint32_t	state;
	uint32_t	refs;
	uint64_t	store_id;
	uint64_t	number;
	uint64_t	map_len;
	uint64_t	last_use;		/* the header's clock when last referenced */
	uint64_t	nchunks;

	/* under this mutex */
	pthread_mutex_t mutex;
	shmt_chunk *chunks;			/* newest first; the newest is being filled */
	uint64_t	used;			/* bytes of the newest chunk handed out */
	uint64_t	frontier;		/* every record ending at or below it is done
								 * (stored by release: wc_shlog_done_below) */
	int			nafter;
	shmt_done	after[SHMT_AFTER];
	/*
	 * Which of the records done were aborted (wc_shlog_committed_below): the ends
	 * of the first SHMT_ABORTED, and the lowest end of those beyond, from which
	 * on a done record may be either (UINT64_MAX: none).  Both are written before
	 * the frontier passes the record, and naborted after its entry.
	 */
	uint32_t	naborted;
	uint64_t	aborted_from;
	uint64_t	aborted[SHMT_ABORTED];
	/*
	 * The summary of the records below the frontier (wc_shlog_summarise):
	 * unknown once a record whose facts were not known passed; the recent
	 * committed records a ring, recent_next the next place in it.
	 */
	bool		sum_unknown;
	uint64_t	sum_max_seq;
	uint64_t	sum_applied_seq;
	uint64_t	sum_trunc;
	uint64_t	sum_dropped_tag;
	uint32_t	nrecent;
	uint32_t	recent_next;
	wc_shlog_recent recent[WC_SHLOG_RECENT];
	uint32_t	ningest;
	uint64_t	ingest_start[WC_SHLOG_INGEST];
	uint64_t	ingest_end[WC_SHLOG_INGEST];
	wc_shfam   *fams;			/* read without the mutex: published by release */
	wc_shfam   *fams_last;
	uint32_t	failed;			/* read without the mutex */
};

typedef struct shmt_header
{
	uint32_t	magic;
	uint32_t	nslots;
	uint64_t	nchunks;
	pthread_mutex_t mutex;
	shmt_chunk *free_chunks;
	uint64_t	nfree;
	uint64_t	clock;
	uint64_t	evictions;
	wc_shlog   *slots;
} shmt_header;

static shmt_header *region;

static void lock_mutex(pthread_mutex_t *m);
static void slot_clear(wc_shlog *s);
static void summary_clear(wc_shlog *s);

/*
 * The references this process holds, per slot: what wc_shared_memtable_release
 * gives back at exit for handles a process could not close (PostgreSQL leaves a
 * store open when a scan is still open as the backend exits).  Allocated at the
 * first reference, for the process that allocated it (a process forked from one
 * holding references starts its own count at its first reference).
 */
static uint32_t *my_refs;
static uint32_t my_nslots;
static pid_t my_pid;			/* the process my_refs counts for */

/* Does my_refs count for this process (not one inherited by fork)? */
static bool
my_refs_mine(void)
{
	return my_refs != NULL && my_pid == getpid();
}

static bool
my_refs_ready(void)
{
	if (my_refs_mine() && my_nslots == region->nslots)
		return true;
	free(my_refs);				/* another region's, or inherited by fork */
	my_nslots = 0;
	if ((my_refs = calloc(region->nslots, sizeof(uint32_t))) == NULL)
		return false;
	my_nslots = region->nslots;
	my_pid = getpid();
	return true;
}

static size_t
align64(size_t n)
{
	return (n + 63) & ~(size_t) 63;
}

static size_t
slots_bytes(uint32_t nslots)
{
	return align64((size_t) nslots * sizeof(wc_shlog));
}

/* A slot per 2 chunks: most logs of a busy server are small (a slot takes one at least). */
static uint32_t
slots_for(uint64_t nchunks)
{
	uint64_t	n = nchunks / 2;

	return n < 16 ? 16 : n > 65536 ? 65536 : (uint32_t) n;
}

size_t
wc_shared_memtable_region_size(size_t bytes)
{
	uint64_t	n = bytes / WC_SHMT_CHUNK;

	if (n < MIN_CHUNKS)
		return 0;
	return align64(sizeof(shmt_header)) + slots_bytes(slots_for(n)) + n * WC_SHMT_CHUNK;
}

static int
init_mutex(pthread_mutex_t *m)
{
	pthread_mutexattr_t attr;
	int			e;

	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	e = pthread_mutex_init(m, &attr);
	pthread_mutexattr_destroy(&attr);
	return e;
}

int
wc_shared_memtable_create(void *addr, size_t size, wc_err *err)
{
	shmt_header *h = addr;
	uint64_t	n;
	uint8_t    *chunks;
	int			e;

	if (addr == NULL || ((uintptr_t) addr & 63) != 0)
		return wc_err_set(err, WC_INVALID, "the shared memtables' region must be aligned to 64 bytes");
	n = size / WC_SHMT_CHUNK;
	while (n >= MIN_CHUNKS &&
		   align64(sizeof(shmt_header)) + slots_bytes(slots_for(n)) + n * WC_SHMT_CHUNK > size)
		n--;
	if (n < MIN_CHUNKS)
		return wc_err_set(err, WC_INVALID, "a region of %zu bytes is too small for shared memtables (at least %zu)",
						  size, wc_shared_memtable_region_size((size_t) MIN_CHUNKS * WC_SHMT_CHUNK));
	memset(h, 0, sizeof(*h));
	h->nchunks = n;
	h->nslots = slots_for(n);
	h->slots = (wc_shlog *) ((uint8_t *) addr + align64(sizeof(shmt_header)));
	memset(h->slots, 0, (size_t) h->nslots * sizeof(wc_shlog));
	chunks = (uint8_t *) h->slots + slots_bytes(h->nslots);
	for (uint64_t i = n; i-- > 0;)
	{
		shmt_chunk *c = (shmt_chunk *) (chunks + i * WC_SHMT_CHUNK);

		c->next = h->free_chunks;
		h->free_chunks = c;
	}
	h->nfree = n;
	if ((e = init_mutex(&h->mutex)) != 0)
	{
		errno = e;
		return wc_err_sys(err, "could not initialise the shared memtables' mutex");
	}
	for (uint32_t i = 0; i < h->nslots; i++)
		if ((e = init_mutex(&h->slots[i].mutex)) != 0)
		{
			errno = e;
			return wc_err_sys(err, "could not initialise a shared memtable's mutex");
		}
	h->magic = SHMT_MAGIC;
	region = h;
	return WC_OK;
}

void
wc_shared_memtable_detach(void)
{
	region = NULL;
	free(my_refs);
	my_refs = NULL;
	my_nslots = 0;
}

/* Gives back n of s's references (region's mutex held); an unreferenced slot
 * of a flushed or failed log is freed. */
static void
slot_unref_locked(wc_shlog *s, uint32_t n)
{
	s->refs -= n < s->refs ? n : s->refs;
	if (s->refs == 0 && (s->state == SLOT_DEAD || __atomic_load_n(&s->failed, __ATOMIC_RELAXED)))
		slot_clear(s);
}

void
wc_shared_memtable_release(void)
{
	if (region == NULL)
		return;
	lock_mutex(&region->mutex);
	for (uint32_t i = 0; my_refs_mine() && i < my_nslots; i++)
		if (my_refs[i] > 0)
			slot_unref_locked(&region->slots[i], my_refs[i]);
	pthread_mutex_unlock(&region->mutex);
	wc_shared_memtable_detach();
}

bool
wc_shmt_enabled(void)
{
	return region != NULL;
}

/* ---------------------------------------------------------------- mutexes */

/*
 * A mutex whose holder died is taken over: what it guards stays usable (see the
 * file's comment and shmt.h), at worst with a hole or a lost chunk.
 */
static void
lock_mutex(pthread_mutex_t *m)
{
	if (pthread_mutex_lock(m) == EOWNERDEAD)
		pthread_mutex_consistent(m);
}

void
wc_shlog_lock(wc_shlog *s)
{
	lock_mutex(&s->mutex);
}

void
wc_shlog_unlock(wc_shlog *s)
{
	pthread_mutex_unlock(&s->mutex);
}

/* ---------------------------------------------------------------- slots */

/* Gives s's chunks back (header's mutex held; s unreferenced). */
static void
slot_clear(wc_shlog *s)
{
	shmt_chunk *c = s->chunks;

	while (c != NULL)
	{
		shmt_chunk *next = c->next;

		c->next = region->free_chunks;
		region->free_chunks = c;
		region->nfree++;
		c = next;
	}
	s->chunks = NULL;
	s->nchunks = 0;
	s->used = 0;
	s->frontier = 0;
	s->nafter = 0;
	summary_clear(s);
	__atomic_store_n(&s->naborted, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->aborted_from, UINT64_MAX, __ATOMIC_RELAXED);
	__atomic_store_n(&s->fams, NULL, __ATOMIC_RELEASE);
	s->fams_last = NULL;
	__atomic_store_n(&s->failed, 0, __ATOMIC_RELAXED);
	s->state = SLOT_FREE;
	s->store_id = 0;
	s->number = 0;
}

/* The unreferenced live slot used least recently, or NULL (header's mutex held). */
static wc_shlog *
slot_victim(void)
{
	wc_shlog   *victim = NULL;

	for (uint32_t i = 0; i < region->nslots; i++)
	{
		wc_shlog   *s = &region->slots[i];

		if (s->state != SLOT_FREE && s->refs == 0 &&
			(victim == NULL || s->last_use < victim->last_use))
			victim = s;
	}
	return victim;
}

/*
 * Does unreferenced slot s index more of its log than the log's size holds?  A
 * store keeps its identity while no handle has it open (lock.c), and nothing
 * changes a log then; but a log cut or replaced behind the store's back (a copy
 * restored over it) must not be read from what was indexed of the old one.  Logs
 * only grow, so a slot of a log that still holds every record it indexed indexes
 * that log's records.
 */
static bool
slot_beyond(const wc_shlog *s, uint64_t log_size)
{
	if (s->frontier > log_size)
		return true;
	for (int i = 0; i < s->nafter; i++)
		if (s->after[i].end > log_size)
			return true;
	return false;
}

wc_shlog *
wc_shlog_get(uint64_t store_id, uint64_t number, size_t map_len, uint64_t log_size)
{
	wc_shlog   *found = NULL,
			   *free_slot = NULL;

	if (region == NULL || !my_refs_ready())
		return NULL;
	lock_mutex(&region->mutex);
	for (uint32_t i = 0; i < region->nslots; i++)
	{
		wc_shlog   *s = &region->slots[i];

		if (s->state == SLOT_FREE)
		{
			if (free_slot == NULL)
				free_slot = s;
		}
		else if (s->store_id == store_id && s->number == number)
		{
			found = s;
			break;
		}
	}
	if (found != NULL && found->refs == 0 && slot_beyond(found, log_size))
	{
		slot_clear(found);		/* indexed another log of that number: forget it */
		free_slot = found;
		found = NULL;
	}
	if (found != NULL)
	{
		if (found->state != SLOT_LIVE || __atomic_load_n(&found->failed, __ATOMIC_RELAXED) ||
			found->map_len > map_len)
			found = NULL;
	}
	else
	{
		if (free_slot == NULL && (free_slot = slot_victim()) != NULL)
		{
			slot_clear(free_slot);
			region->evictions++;
		}
		if ((found = free_slot) != NULL)
		{
			found->state = SLOT_LIVE;
			found->store_id = store_id;
			found->number = number;
			found->map_len = map_len;
			found->frontier = WC_LOG_HEADER_SIZE;	/* before the first record */
			summary_clear(found);
			found->naborted = 0;
			found->aborted_from = UINT64_MAX;
		}
	}
	if (found != NULL)
	{
		found->refs++;
		my_refs[found - region->slots]++;
		found->last_use = ++region->clock;
	}
	pthread_mutex_unlock(&region->mutex);
	return found;
}

void
wc_shlog_ref(wc_shlog *s)
{
	lock_mutex(&region->mutex);
	s->refs++;
	if (my_refs_ready())
		my_refs[s - region->slots]++;
	pthread_mutex_unlock(&region->mutex);
}

void
wc_shlog_unref(wc_shlog *s, bool dead)
{
	if (s == NULL || region == NULL)
		return;					/* released already (wc_shared_memtable_release) */
	lock_mutex(&region->mutex);
	if (dead && s->state == SLOT_LIVE)
		s->state = SLOT_DEAD;
	if (my_refs_mine() && my_refs[s - region->slots] > 0)
		my_refs[s - region->slots]--;
	slot_unref_locked(s, 1);
	pthread_mutex_unlock(&region->mutex);
}

bool
wc_shlog_failed(const wc_shlog *s)
{
	return __atomic_load_n(&s->failed, __ATOMIC_ACQUIRE) != 0;
}

void
wc_shlog_set_failed(wc_shlog *s)
{
	__atomic_store_n(&s->failed, 1, __ATOMIC_RELEASE);
}

size_t
wc_shlog_map_len(const wc_shlog *s)
{
	return (size_t) s->map_len;
}

/* ---------------------------------------------------------------- arena */

/* A free chunk, evicting an unreferenced slot's when there is none; NULL when
 * every chunk belongs to a referenced slot. */
static shmt_chunk *
chunk_get(wc_shlog *self)
{
	shmt_chunk *c;

	lock_mutex(&region->mutex);
	while ((c = region->free_chunks) == NULL)
	{
		wc_shlog   *victim = slot_victim();

		if (victim == NULL || victim == self)
			break;
		/* unreferenced: nobody holds its mutex, nobody will before it is free */
		slot_clear(victim);
		region->evictions++;
	}
	if (c != NULL)
	{
		region->free_chunks = c->next;
		region->nfree--;
		self->nchunks++;
	}
	pthread_mutex_unlock(&region->mutex);
	return c;
}

void *
wc_shlog_alloc(wc_shlog *s, size_t n)
{
	shmt_chunk *c;
	uint8_t    *p;

	if (n > WC_SHMT_CHUNK - CHUNK_DATA)
		return NULL;
	n = (n + 7) & ~(size_t) 7;
	if (s->chunks != NULL && s->used + n <= WC_SHMT_CHUNK - CHUNK_DATA)
	{
		p = (uint8_t *) s->chunks + CHUNK_DATA + s->used;
		s->used += n;
		return p;
	}
	if ((c = chunk_get(s)) == NULL)
		return NULL;
	c->next = s->chunks;
	s->chunks = c;
	s->used = n;
	return (uint8_t *) c + CHUNK_DATA;
}

/* ---------------------------------------------------------------- records done */

bool
wc_shlog_done(const wc_shlog *s, uint64_t end)
{
	if (end <= s->frontier)
		return true;
	for (int i = 0; i < s->nafter; i++)
		if (s->after[i].end == end)
			return true;
	return false;
}

bool
wc_shlog_done_below(const wc_shlog *s, uint64_t end)
{
	return end <= __atomic_load_n(&s->frontier, __ATOMIC_ACQUIRE);
}

bool
wc_shlog_committed_below(const wc_shlog *s, uint64_t end)
{
	uint32_t	n;

	if (end > __atomic_load_n(&s->frontier, __ATOMIC_ACQUIRE) ||
		end >= __atomic_load_n(&s->aborted_from, __ATOMIC_RELAXED))
		return false;
	n = __atomic_load_n(&s->naborted, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++)
		if (s->aborted[i] == end)
			return false;
	return true;
}

/* Under the lock: the record ending at end is done as aborted. */
static void
note_aborted(wc_shlog *s, uint64_t end)
{
	uint32_t	n = s->naborted;

	if (n < SHMT_ABORTED)
	{
		s->aborted[n] = end;
		__atomic_store_n(&s->naborted, n + 1, __ATOMIC_RELEASE);
	}
	else if (end < s->aborted_from)
		__atomic_store_n(&s->aborted_from, end, __ATOMIC_RELAXED);
}

/* Under the lock: the frontier passes the record at start..end, which told
 * facts (NULL: unknown). */
static void
pass(wc_shlog *s, uint64_t start, uint64_t end, const wc_shlog_facts *f)
{
	if (f == NULL || !f->known || (f->ingest && !f->aborted && s->ningest == WC_SHLOG_INGEST))
	{
		s->sum_unknown = true;
		return;
	}
	if (f->ingest && !f->aborted)
	{
		s->ingest_start[s->ningest] = start;
		s->ingest_end[s->ningest] = end;
		s->ningest++;
	}
	if (f->seq_lo <= f->seq_hi && f->seq_hi > s->sum_max_seq)
		s->sum_max_seq = f->seq_hi;
	if (f->aborted)
		return;
	if (f->seq_lo <= f->seq_hi && f->seq_hi > s->sum_applied_seq)
		s->sum_applied_seq = f->seq_hi;
	if (f->trunc > s->sum_trunc)
		s->sum_trunc = f->trunc;
	if (f->tag == 0 || f->seq_lo > f->seq_hi)
		return;
	if (s->nrecent == WC_SHLOG_RECENT)
	{
		/* the oldest gives its place */
		if (s->recent[s->recent_next].tag > s->sum_dropped_tag)
			s->sum_dropped_tag = s->recent[s->recent_next].tag;
	}
	else
		s->nrecent++;
	s->recent[s->recent_next].tag = f->tag;
	s->recent[s->recent_next].seq_lo = f->seq_lo;
	s->recent[s->recent_next].seq_hi = f->seq_hi;
	s->recent_next = (s->recent_next + 1) % WC_SHLOG_RECENT;
}

static void
summary_clear(wc_shlog *s)
{
	s->sum_unknown = false;
	s->sum_max_seq = 0;
	s->sum_applied_seq = 0;
	s->sum_trunc = 0;
	s->sum_dropped_tag = 0;
	s->nrecent = 0;
	s->recent_next = 0;
	s->ningest = 0;
}

void
wc_shlog_mark_done(wc_shlog *s, uint64_t start, uint64_t end, const wc_shlog_facts *facts)
{
	bool		aborted = facts != NULL && facts->aborted;

	if (end <= s->frontier)
		return;
	if (start != s->frontier)
	{
		if (s->nafter < SHMT_AFTER && !wc_shlog_done(s, end))
		{
			if (aborted)
				note_aborted(s, end);
			s->after[s->nafter].start = start;
			s->after[s->nafter].end = end;
			if (facts != NULL)
				s->after[s->nafter].facts = *facts;
			else
				memset(&s->after[s->nafter].facts, 0, sizeof(wc_shlog_facts));
			s->nafter++;
		}
		return;
	}
	if (aborted)
		note_aborted(s, end);	/* before the frontier passes it */
	/* the record at the frontier: move it, over those done after */
	pass(s, start, end, facts);
	__atomic_store_n(&s->frontier, end, __ATOMIC_RELEASE);
	for (int i = 0; i < s->nafter;)
	{
		if (s->after[i].end <= s->frontier)
			s->after[i] = s->after[--s->nafter];
		else if (s->after[i].start == s->frontier)
		{
			pass(s, s->after[i].start, s->after[i].end, &s->after[i].facts);
			__atomic_store_n(&s->frontier, s->after[i].end, __ATOMIC_RELEASE);
			s->after[i] = s->after[--s->nafter];
			i = 0;
		}
		else
			i++;
	}
}

bool
wc_shlog_summarise(const wc_shlog *s, wc_shlog_summary *out)
{
	uint32_t	first;

	if (s->sum_unknown)
		return false;
	out->frontier = s->frontier;
	out->max_seq = s->sum_max_seq;
	out->applied_seq = s->sum_applied_seq;
	out->trunc = s->sum_trunc;
	out->dropped_tag = s->sum_dropped_tag;
	out->nrecent = s->nrecent;
	/* oldest first: the order a reader of the log meets them */
	first = s->nrecent == WC_SHLOG_RECENT ? s->recent_next : 0;
	for (uint32_t i = 0; i < s->nrecent; i++)
		out->recent[i] = s->recent[(first + i) % WC_SHLOG_RECENT];
	out->ningest = s->ningest;
	for (uint32_t i = 0; i < s->ningest; i++)
	{
		out->ingest_start[i] = s->ingest_start[i];
		out->ingest_end[i] = s->ingest_end[i];
	}
	return true;
}

/* ---------------------------------------------------------------- families */

const wc_shfam *
wc_shlog_families(const wc_shlog *s)
{
	return __atomic_load_n(&s->fams, __ATOMIC_ACQUIRE);
}

int
wc_shlog_add_family(wc_shlog *s, const char *name, void *core)
{
	size_t		len = strlen(name);
	wc_shfam   *f = wc_shlog_alloc(s, sizeof(wc_shfam) + len + 1);

	if (f == NULL)
		return WC_NOMEM;
	f->next = NULL;
	f->core = core;
	memcpy(f->name, name, len + 1);
	if (s->fams_last == NULL)
		__atomic_store_n(&s->fams, f, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&s->fams_last->next, f, __ATOMIC_RELEASE);
	s->fams_last = f;
	return WC_OK;
}

/* ---------------------------------------------------------------- statistics */

void
wc_shared_memtable_get_stats(wc_shared_memtable_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (region == NULL)
		return;
	lock_mutex(&region->mutex);
	st->chunks = region->nchunks;
	st->chunk_bytes = WC_SHMT_CHUNK;
	st->chunks_free = region->nfree;
	st->evictions = region->evictions;
	for (uint32_t i = 0; i < region->nslots; i++)
	{
		const wc_shlog *s = &region->slots[i];

		if (s->state == SLOT_FREE)
			continue;
		st->logs++;
		if (s->refs == 0)
			st->logs_unused++;
		if (__atomic_load_n(&s->failed, __ATOMIC_RELAXED))
			st->logs_failed++;
	}
	pthread_mutex_unlock(&region->mutex);
}
