/*
 * memtable.c -- the in-memory sorted table of one family: a skiplist in an arena.
 *
 * Why a skiplist: inserts cost O(log n) without rebalancing, and a node never
 * moves once it is linked, so an iterator (a node pointer) survives later
 * inserts.  Why an arena: a process replays whole logs into memtables at open,
 * so an insert must not cost a malloc; nodes and their bytes are carved out of
 * large chunks, and the table is freed by walking its chunks once.
 *
 * A node is one arena allocation, kept compact because a search is bound by
 * cache misses (one or two lines a node, where a node holding a full wc_cell
 * would span two or three):
 *   ts | seq | row_len | qual_len | val_len | type | height | shared
 *   | next[height] | row bytes | qual bytes | val bytes
 * or, when the value stays in the memtable's mapping (a log's pages, shared by
 * every process: wc_memtable_set_mapping), shared = 1 and
 *   ... | next[height] | val offset in the mapping | row bytes | qual bytes
 * The key bytes are always in the node: a search compares them, the value is
 * only read once found.  A wc_cell view of a node is built on the stack for
 * each wc_cell_cmp, and in the iterator for cell().
 *
 * The skiplist itself (mt_core: head, height, statistics) lives in the arena,
 * which is this process's memory, or a shared log's (shmt.h): then processes
 * share it, one adding entries at a time under the log's lock while the others
 * read.  So links are published by release stores and read by acquire loads
 * (plain moves on x86), a node is complete before it is linked, and the value
 * of a node is an offset, read in each process's own mapping of the log.
 */
#include "memtable.h"

#include <pthread.h>

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "shmt.h"

/* With branching 4, 12 levels keep searches logarithmic up to ~16M entries. */
#define MT_MAX_HEIGHT		12

/*
 * Chunks start small, because a write batch makes a memtable per family even
 * for a single entry, and double up to MT_CHUNK_MAX, which amortizes malloc
 * over thousands of entries.  An entry bigger than a quarter of a chunk gets a
 * chunk of its own, so big values do not waste the rest of a shared chunk.
 */
#define MT_CHUNK_MIN		(4 * 1024)
#define MT_CHUNK_MAX		(256 * 1024)

typedef struct mt_chunk
{
	struct mt_chunk *next;
	size_t		size;			/* bytes of data[] */
	max_align_t data[];
} mt_chunk;

typedef struct mt_node
{
	int64_t		ts;
	uint64_t	seq;
	uint32_t	row_len;
	uint32_t	qual_len;
	uint32_t	val_len;
	uint8_t		type;
	uint8_t		height;
	uint8_t		shared;			/* the value is in the mapping, pointed to */
	struct mt_node *next[];		/* height entries, level 0 first */
} mt_node;

/* The skiplist, in the arena (shared with other processes for a shared log). */
typedef struct mt_core
{
	mt_node    *head;			/* MT_MAX_HEIGHT levels, no cell */
	int			height;			/* levels in use, >= 1 */
	uint64_t	rng;			/* xorshift state: deterministic heights */

	/*
	 * The last inserted node and the predecessors an entry right after it would
	 * have at each level.  Entries often arrive in key order (a bulk load, a
	 * sorted batch), and then an insert costs two comparisons, not a search.
	 */
	mt_node    *last;
	mt_node    *last_prev[MT_MAX_HEIGHT];

	/* statistics (read by other processes as hints: relaxed atomics) */
	uint64_t	count;
	int64_t		ts_min;
	int64_t		ts_max;
	uint32_t	range_tombstones;
	uint64_t	entry_bytes;	/* of its nodes */
} mt_core;

struct wc_memtable
{
	int			refs;

	wc_mapping *map;			/* values may stay here (referenced); or NULL */
	size_t		map_limit;		/* ... within its first map_limit bytes */
	mt_core    *core;
	wc_shlog   *shl;			/* the arena is this shared log's (referenced), or NULL */
	bool		idempotent;		/* an entry already there is not added again */

	/* this process's arena (when shl is NULL) */
	mt_chunk   *chunks;			/* every chunk, newest first */
	uint8_t    *cur;			/* free space of the current shared chunk */
	size_t		avail;
	size_t		next_chunk;		/* size of the next shared chunk */
	size_t		bytes;			/* malloc'd for chunks, headers included */
};

typedef struct mt_iter
{
	wc_iter		base;
	wc_memtable *mt;
	mt_node    *node;			/* NULL: not positioned or at the end */
	wc_cell		cell;			/* view of node */
} mt_iter;

/* ---------------------------------------------------------------- arena */

/*
 * Full-size chunks of freed memtables are kept for the next ones, up to
 * MT_SPARE_MAX of them: a chunk of 256 KiB is above malloc's mmap threshold, and
 * mapping it afresh costs a page fault (and zeroing) per 4 KiB, which on a virtual
 * machine made up a fifth of a bulk load (perf).  Process-wide, under a mutex, as
 * handles may live in different threads.
 */
#define MT_SPARE_MAX		32

static pthread_mutex_t spare_mutex = PTHREAD_MUTEX_INITIALIZER;
static mt_chunk *spare_chunks;
static int	nspare;

static mt_chunk *
spare_get(void)
{
	mt_chunk   *c;

	pthread_mutex_lock(&spare_mutex);
	if ((c = spare_chunks) != NULL)
	{
		spare_chunks = c->next;
		nspare--;
	}
	pthread_mutex_unlock(&spare_mutex);
	return c;
}

/* Keeps c if it is a full-size chunk and there is room; else frees it. */
static void
spare_put(mt_chunk *c)
{
	if (c->size == MT_CHUNK_MAX)
	{
		pthread_mutex_lock(&spare_mutex);
		if (nspare < MT_SPARE_MAX)
		{
			c->next = spare_chunks;
			spare_chunks = c;
			nspare++;
			c = NULL;
		}
		pthread_mutex_unlock(&spare_mutex);
	}
	free(c);
}

static void *
arena_new_chunk(wc_memtable *mt, size_t size)
{
	mt_chunk   *c;

	if (size > SIZE_MAX - sizeof(mt_chunk))
		return NULL;
	c = size == MT_CHUNK_MAX ? spare_get() : NULL;
	if (c == NULL)
		c = malloc(sizeof(mt_chunk) + size);
	if (c == NULL)
		return NULL;
	c->size = size;
	c->next = mt->chunks;
	mt->chunks = c;
	mt->bytes += sizeof(mt_chunk) + size;
	return c->data;
}

/* size bytes aligned for a node, or NULL when out of memory. */
static void *
arena_alloc(wc_memtable *mt, size_t size)
{
	uint8_t    *p;

	if (size > SIZE_MAX - 7)
		return NULL;
	size = (size + 7) & ~(size_t) 7;
	if (size <= mt->avail)
	{
		p = mt->cur;
		mt->cur += size;
		mt->avail -= size;
		return p;
	}
	if (size > MT_CHUNK_MAX / 4)
		return arena_new_chunk(mt, size);	/* the current chunk stays current */

	while (mt->next_chunk < MT_CHUNK_MAX && mt->next_chunk < 4 * size)
		mt->next_chunk *= 2;
	p = arena_new_chunk(mt, mt->next_chunk);
	if (p == NULL)
		return NULL;
	mt->cur = p + size;
	mt->avail = mt->next_chunk - size;
	if (mt->next_chunk < MT_CHUNK_MAX)
		mt->next_chunk *= 2;
	return p;
}

/* ---------------------------------------------------------------- skiplist */

static inline mt_node *
next_of(const mt_node *n, int level)
{
	return __atomic_load_n(&n->next[level], __ATOMIC_ACQUIRE);
}

static inline int
height_of(const mt_core *k)
{
	return __atomic_load_n(&k->height, __ATOMIC_ACQUIRE);
}

/* size bytes for a node of mt, in its arena or its shared log's; NULL: no room */
static void *
mt_alloc(wc_memtable *mt, size_t size)
{
	return mt->shl != NULL ? wc_shlog_alloc(mt->shl, size) : arena_alloc(mt, size);
}

/* Fills *c with a view of node n of mt. */
static inline void
node_cell(const wc_memtable *mt, const mt_node *n, wc_cell *c)
{
	const uint8_t *p = (const uint8_t *) &n->next[n->height];

	if (n->shared)
	{
		uint64_t	off;

		memcpy(&off, p, sizeof(off));
		c->val = mt->map->addr + off;
		p += sizeof(off);
	}
	c->row = p;
	c->row_len = n->row_len;
	c->qual = p + n->row_len;
	c->qual_len = n->qual_len;
	c->ts = n->ts;
	c->seq = n->seq;
	c->type = n->type;
	if (!n->shared)
		c->val = c->qual + n->qual_len;
	c->val_len = n->val_len;
}

static inline int
node_cmp(const wc_memtable *mt, const mt_node *n, const wc_cell *key)
{
	wc_cell		c;

	node_cell(mt, n, &c);
	return wc_cell_cmp(&c, key);
}

static int
random_height(mt_core *k)
{
	uint64_t	x = k->rng;
	int			h = 1;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	k->rng = x;
	/* each level is kept with probability 1/4: two bits a level */
	while (h < MT_MAX_HEIGHT && (x & 3) == 0)
	{
		h++;
		x >>= 2;
	}
	return h;
}

/*
 * The first node >= key, or NULL.  With prev, also fills prev[level] with the
 * last node < key at every level in use.
 */
static mt_node *
find_ge(const wc_memtable *mt, const wc_cell *key, mt_node **prev)
{
	mt_node    *x = mt->core->head;
	mt_node    *known_ge = NULL;	/* a node already compared >= key */
	int			level = height_of(mt->core) - 1;

	for (;;)
	{
		mt_node    *next = next_of(x, level);

		if (next != NULL && next != known_ge && node_cmp(mt, next, key) < 0)
			x = next;
		else
		{
			if (prev != NULL)
				prev[level] = x;
			if (level == 0)
				return next;
			known_ge = next;
			level--;
		}
	}
}

/* Makes mt's skiplist in its arena; false when out of memory. */
static bool
core_make(wc_memtable *mt)
{
	size_t		head_size = offsetof(mt_node, next) + MT_MAX_HEIGHT * sizeof(mt_node *);
	mt_core    *k = mt_alloc(mt, sizeof(mt_core));
	mt_node    *head = k != NULL ? mt_alloc(mt, head_size) : NULL;

	if (head == NULL)
		return false;
	memset(k, 0, sizeof(mt_core));
	memset(head, 0, head_size);
	head->height = MT_MAX_HEIGHT;
	k->head = head;
	k->height = 1;
	k->rng = UINT64_C(0x9e3779b97f4a7c15);
	k->ts_min = INT64_MAX;
	k->ts_max = INT64_MIN;
	for (int i = 0; i < MT_MAX_HEIGHT; i++)
		k->last_prev[i] = head;
	mt->core = k;
	return true;
}

static void
arena_free(wc_memtable *mt)
{
	mt_chunk   *c = mt->chunks;

	while (c != NULL)
	{
		mt_chunk   *next = c->next;

		spare_put(c);
		c = next;
	}
	mt->chunks = NULL;
}

wc_memtable *
wc_memtable_new(void)
{
	wc_memtable *mt = calloc(1, sizeof(wc_memtable));

	if (mt == NULL)
		return NULL;
	mt->refs = 1;
	mt->next_chunk = MT_CHUNK_MIN;
	if (!core_make(mt))
	{
		arena_free(mt);
		free(mt);
		return NULL;
	}
	return mt;
}

/* A handle of this process on shl's memtable core, reading values in map. */
static wc_memtable *
shared_handle(wc_shlog *shl, wc_mapping *map)
{
	wc_memtable *mt = calloc(1, sizeof(wc_memtable));
	size_t		limit = wc_shlog_map_len(shl);

	if (mt == NULL)
		return NULL;
	mt->refs = 1;
	mt->shl = shl;
	wc_shlog_ref(shl);
	mt->idempotent = true;
	if (map != NULL)
	{
		wc_mapping_ref(map);
		mt->map = map;
		mt->map_limit = map->len < limit ? map->len : limit;
	}
	return mt;
}

wc_memtable *
wc_memtable_new_shared(wc_shlog *shl, const char *family, wc_mapping *map, wc_err *err)
{
	wc_memtable *mt = shared_handle(shl, map);

	if (mt == NULL)
	{
		wc_err_set(err, WC_NOMEM, "out of memory");
		return NULL;
	}
	if (!core_make(mt) || wc_shlog_add_family(shl, family, mt->core) != WC_OK)
	{
		/* what was allocated stays in the arena, unreachable */
		wc_memtable_unref(mt);
		wc_err_set(err, WC_NOMEM, "no room left for shared memtables");
		return NULL;
	}
	return mt;
}

wc_memtable *
wc_memtable_attach_shared(wc_shlog *shl, void *core, wc_mapping *map)
{
	wc_memtable *mt = shared_handle(shl, map);

	if (mt != NULL)
		mt->core = core;
	return mt;
}

void
wc_memtable_set_idempotent(wc_memtable *mt)
{
	mt->idempotent = true;
}

void
wc_memtable_ref(wc_memtable *mt)
{
	mt->refs++;
}

void
wc_memtable_unref(wc_memtable *mt)
{
	if (mt == NULL || --mt->refs > 0)
		return;
	arena_free(mt);
	if (mt->shl != NULL)
		wc_shlog_unref(mt->shl, false);
	wc_mapping_unref(mt->map);
	free(mt);
}

void
wc_memtable_set_mapping(wc_memtable *mt, wc_mapping *m)
{
	if (m != NULL)
		wc_mapping_ref(m);
	wc_mapping_unref(mt->map);
	mt->map = m;
	mt->map_limit = m != NULL ? m->len : 0;
}

wc_memtable *
wc_memtable_copy(wc_memtable *src, wc_err *err)
{
	wc_memtable *mt = wc_memtable_new();

	if (mt == NULL)
	{
		wc_err_set(err, WC_NOMEM, "out of memory");
		return NULL;
	}
	wc_memtable_set_mapping(mt, src->map);
	mt->map_limit = src->map_limit;
	wc_memtable_set_idempotent(mt);
	for (mt_node *n = next_of(src->core->head, 0); n != NULL; n = next_of(n, 0))
	{
		wc_cell		c;

		node_cell(src, n, &c);
		if (wc_memtable_add(mt, &c, err) != WC_OK)
		{
			wc_memtable_unref(mt);
			return NULL;
		}
	}
	return mt;
}

int
wc_memtable_add(wc_memtable *mt, const wc_cell *c, wc_err *err)
{
	mt_core    *k = mt->core;
	mt_node    *prev[MT_MAX_HEIGHT];
	mt_node    *node;
	uint8_t    *p;
	int			h,
				height = k->height;
	size_t		links;
	bool		shared = mt->map != NULL && c->val_len >= WC_MEMTABLE_SHARED_MIN &&
		wc_mapping_holds(mt->map, c->val, c->val_len) &&
		(size_t) (c->val - mt->map->addr) + c->val_len <= mt->map_limit;
	size_t		size;

	if (k->last != NULL && node_cmp(mt, k->last, c) < 0 &&
		(k->last->next[0] == NULL || node_cmp(mt, k->last->next[0], c) > 0))
	{
		/* right after the last insert: its recorded predecessors are ours */
		memcpy(prev, k->last_prev, sizeof(prev[0]) * height);
	}
	else
	{
		node = find_ge(mt, c, prev);
		if (mt->idempotent && node != NULL && node_cmp(mt, node, c) == 0)
			return WC_OK;		/* added before (by another process, or before a copy) */
	}

	h = random_height(k);
	links = offsetof(mt_node, next) + (size_t) h * sizeof(mt_node *);
	size = links + (size_t) c->row_len + c->qual_len + (shared ? sizeof(uint64_t) : c->val_len);
	node = mt_alloc(mt, size);
	if (node == NULL)
		return wc_err_set(err, WC_NOMEM, "out of memory for a memtable entry of %zu bytes", size);

	node->ts = c->ts;
	node->seq = c->seq;
	node->row_len = c->row_len;
	node->qual_len = c->qual_len;
	node->val_len = c->val_len;
	node->type = c->type;
	node->height = (uint8_t) h;
	node->shared = shared;
	p = (uint8_t *) node + links;
	if (shared)
	{
		uint64_t	off = (uint64_t) (c->val - mt->map->addr);

		memcpy(p, &off, sizeof(off));
		p += sizeof(off);
	}
	if (c->row_len > 0)
		memcpy(p, c->row, c->row_len);
	p += c->row_len;
	if (c->qual_len > 0)
		memcpy(p, c->qual, c->qual_len);
	p += c->qual_len;
	if (!shared && c->val_len > 0)
		memcpy(p, c->val, c->val_len);

	for (int i = height; i < h; i++)
		prev[i] = k->head;

	/* complete before it is reachable: readers of other processes follow links */
	for (int i = 0; i < h; i++)
		node->next[i] = prev[i]->next[i];
	for (int i = 0; i < h; i++)
		__atomic_store_n(&prev[i]->next[i], node, __ATOMIC_RELEASE);
	if (h > height)
		__atomic_store_n(&k->height, h, __ATOMIC_RELEASE);

	/* an entry right after this node has it as predecessor below its height */
	k->last = node;
	for (int i = 0; i < h; i++)
		k->last_prev[i] = node;
	for (int i = h; i < k->height; i++)
		k->last_prev[i] = prev[i];

	__atomic_store_n(&k->count, k->count + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&k->entry_bytes, k->entry_bytes + size, __ATOMIC_RELAXED);
	if (c->type == WC_TYPE_PUT || c->type == WC_TYPE_DEL_VERSION)
	{
		if (c->ts < k->ts_min)
			__atomic_store_n(&k->ts_min, c->ts, __ATOMIC_RELAXED);
		if (c->ts > k->ts_max)
			__atomic_store_n(&k->ts_max, c->ts, __ATOMIC_RELAXED);
	}
	else if (c->type == WC_TYPE_DEL_COLUMN || c->type == WC_TYPE_DEL_FAMILY)
		__atomic_store_n(&k->range_tombstones, 1, __ATOMIC_RELAXED);
	return WC_OK;
}

uint64_t
wc_memtable_count(const wc_memtable *mt)
{
	return __atomic_load_n(&mt->core->count, __ATOMIC_RELAXED);
}

size_t
wc_memtable_bytes(const wc_memtable *mt)
{
	return mt->bytes;
}

size_t
wc_memtable_size(const wc_memtable *mt)
{
	return mt->shl != NULL ? (size_t) __atomic_load_n(&mt->core->entry_bytes, __ATOMIC_RELAXED) :
		mt->bytes;
}

int64_t
wc_memtable_ts_min(const wc_memtable *mt)
{
	return __atomic_load_n(&mt->core->ts_min, __ATOMIC_RELAXED);
}

int64_t
wc_memtable_ts_max(const wc_memtable *mt)
{
	return __atomic_load_n(&mt->core->ts_max, __ATOMIC_RELAXED);
}

bool
wc_memtable_has_range_tombstones(const wc_memtable *mt)
{
	return __atomic_load_n(&mt->core->range_tombstones, __ATOMIC_RELAXED) != 0;
}

/* ---------------------------------------------------------------- iterator */

static inline void
mt_iter_set(mt_iter *mi, mt_node *node)
{
	mi->node = node;
	if (node != NULL)
		node_cell(mi->mt, node, &mi->cell);
}

static void
mt_iter_seek_first(wc_iter *it)
{
	mt_iter    *mi = (mt_iter *) it;

	mt_iter_set(mi, next_of(mi->mt->core->head, 0));
}

static void
mt_iter_seek(wc_iter *it, const wc_cell *target)
{
	mt_iter    *mi = (mt_iter *) it;

	mt_iter_set(mi, find_ge(mi->mt, target, NULL));
}

/* The last node < target (the last node when target is NULL), by find_ge's
 * descent, then the first node of its row by another. */
static void
mt_iter_seek_row_before(wc_iter *it, const wc_cell *target)
{
	mt_iter    *mi = (mt_iter *) it;
	mt_node    *x = mi->mt->core->head;
	wc_cell		start;

	if (target != NULL)
	{
		mt_node    *prev[MT_MAX_HEIGHT];

		find_ge(mi->mt, target, prev);
		x = prev[0];
	}
	else
	{
		for (int level = height_of(mi->mt->core) - 1; level >= 0; level--)
			while (next_of(x, level) != NULL)
				x = next_of(x, level);
	}
	if (x == mi->mt->core->head)
	{
		mt_iter_set(mi, NULL);
		return;
	}
	mt_iter_set(mi, x);
	/* the row's bytes live in the node, which stays */
	wc_cell_row_start(&start, mi->cell.row, mi->cell.row_len);
	mt_iter_set(mi, find_ge(mi->mt, &start, NULL));
}

static void
mt_iter_next(wc_iter *it)
{
	mt_iter    *mi = (mt_iter *) it;

	if (mi->node != NULL)
		mt_iter_set(mi, next_of(mi->node, 0));
}

static bool
mt_iter_valid(const wc_iter *it)
{
	return ((const mt_iter *) it)->node != NULL;
}

static const wc_cell *
mt_iter_cell(const wc_iter *it)
{
	return &((const mt_iter *) it)->cell;
}

static int
mt_iter_status(const wc_iter *it, wc_err *err)
{
	return WC_OK;
}

static void
mt_iter_close(wc_iter *it)
{
	mt_iter    *mi = (mt_iter *) it;

	wc_memtable_unref(mi->mt);
	free(mi);
}

static const wc_iter_ops mt_iter_ops = {
	mt_iter_seek_first,
	mt_iter_seek,
	mt_iter_next,
	mt_iter_valid,
	mt_iter_cell,
	mt_iter_status,
	mt_iter_close,
	mt_iter_seek_row_before
};

wc_iter *
wc_memtable_iter_new(wc_memtable *mt)
{
	mt_iter    *mi = malloc(sizeof(mt_iter));

	if (mi == NULL)
		return NULL;
	mi->base.ops = &mt_iter_ops;
	mi->mt = mt;
	mi->node = NULL;
	wc_memtable_ref(mt);
	return &mi->base;
}
