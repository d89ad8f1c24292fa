/*
 * memtable.c -- the in-memory sorted table of one family: a skiplist in an arena.
 *
 * Why a skiplist: inserts cost O(log n) without rebalancing, and a node never
 * moves once it is linked, so an iterator (a node pointer) survives later
 * inserts.  Why an arena: a process replays whole logs into memtables at open,
 * so an insert must not cost a malloc; nodes and their bytes are carved out of
 * large chunks, and the table is freed by walking its chunks once.
 *
 * The skiplist orders columns, (rowkey, family scope, qualifier), and a
 * column's node holds its entries (versions and tombstones) in a list, in the
 * order of wc_cell_cmp within a column: newest first.  A version chain, as
 * Kudu's in-memory rows keep their mutations: a column updated a thousand
 * times since the last flush is one node of the skiplist, which a search
 * passes in one step and a scan leaves in one (a seek to the column's end),
 * where a node per version had a reader step over every version or search
 * the skiplist from its head again (an 8-client update run of YCSB spent 9%
 * of its time there).  Both are arena allocations kept compact, because a
 * search is bound by cache misses:
 *   node: first entry | row_len | qual_len | family scope | height
 *         | next[height] | row bytes | qual bytes
 *   entry: ts | seq | older | val_len | type | shared | val bytes
 * or, when the value stays in the memtable's mapping (a log's pages, shared by
 * every process: wc_memtable_set_mapping), shared = 1 and the entry ends with
 * the value's offset in the mapping.  The key bytes are in the node: a search
 * compares them, the value is only read once found.  A wc_cell view of an
 * entry is built in the iterator for cell().
 *
 * The skiplist itself (mt_core: head, height, statistics) lives in the arena,
 * which is this process's memory, or a shared log's (shmt.h): then processes
 * share it, one adding entries at a time under the log's lock while the others
 * read.  So links (of the skiplist and of the entry lists) are published by
 * release stores and read by acquire loads (plain moves on x86), a node or an
 * entry is complete before it is linked, and a shared value is an offset, read
 * in each process's own mapping of the log.
 *
 * Beside the skiplist, a row index: a hash table of the rows, each to its first
 * node.  A point read (scan.c) asks it, not the skiplist, where its row starts,
 * and leaves the memtable out when the row is not there: a search from the head
 * is a cache miss a level or more, in memory another process just wrote, where
 * the index costs a bucket and an entry (YCSB's workload B with 8 clients spent
 * 5.7% of a backend's time in the memtable's seeks).  Its entries are linked as
 * the skiplist's nodes are, complete before they are reachable; it grows by a
 * new table of new entries, the old one left as it was for readers still in it.
 * What a reader can miss there (a row or a first node added after it looked) was
 * added after its version was built: entries it does not see.  A shared memtable
 * has one from the start; one of this process gets it at its first point read.
 */
#include "memtable.h"

#include <pthread.h>

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bloom.h"
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

/* One entry of a column: a version or a tombstone. */
typedef struct mt_ver
{
	int64_t		ts;
	uint64_t	seq;
	struct mt_ver *older;		/* the column's next entry in order, or NULL */
	uint32_t	val_len;
	uint8_t		type;
	uint8_t		shared;			/* the value is in the mapping, pointed to */
	uint8_t		run;			/* a DEL_COLUMN with the end of its run (below) */
	/* then the value's bytes, or its offset in the mapping, or the run's end
	 * followed by the value's bytes (a bounded DEL_COLUMN's bound, cell.h) */
} mt_ver;

/*
 * A column deleted and written again a thousand times (a wide row's DELETE and
 * INSERT, as sysbench's oltp_read_write makes them) holds a thousand DEL_COLUMN
 * entries, which sort before its versions, newest first.  Each keeps the last
 * DEL_COLUMN of the run of them it begins (set when it is added: the run's end
 * of the entry after it, or itself), and every entry from it to there is a
 * DEL_COLUMN, since entries are never removed and only a DEL_COLUMN sorts
 * among them.  So whatever seeks the column's versions (an add of a version,
 * a reader past the tombstones: scan.c) jumps the run in one step.  Bounded
 * DEL_COLUMN entries (cell.h: a row deleted and written again by transactions
 * that delete what their snapshot saw) are in runs too; their bound follows
 * the run's end.
 */
static inline mt_ver *
tomb_run_end(const mt_ver *v)
{
	mt_ver	   *e;

	memcpy(&e, (const uint8_t *) (v + 1), sizeof(mt_ver *));
	return e;
}

/* A column in the skiplist: (row, family scope, qualifier) and its entries. */
typedef struct mt_node
{
	struct mt_ver *first;		/* never NULL once linked */
	uint32_t	row_len;
	uint32_t	qual_len;
	uint8_t		fam_scope;		/* 0: the row's DEL_FAMILY entries */
	uint8_t		height;
	struct mt_node *next[];		/* height entries, level 0 first */
	/* then row bytes, qual bytes */
} mt_node;

/* A row of the row index, and its first node. */
typedef struct mt_rowent
{
	struct mt_rowent *next;		/* in its bucket; set before it is linked */
	mt_node    *first;			/* changes as columns that sort first arrive */
	uint32_t	hash;
} mt_rowent;

/* The row index's table: a power of two of buckets, each a chain of rows. */
typedef struct mt_rowidx
{
	uint32_t	nbuckets;
	uint32_t	nrows;			/* written by the one process adding */
	mt_rowent  *buckets[];
} mt_rowidx;

/*
 * Tables grow fourfold while rows outnumber twice their buckets, up to a shared
 * memtable's chunk (8,192 buckets: 64 KiB) or 1M buckets in this process's arena.
 */
#define MT_ROWIDX_MIN		64
#define MT_ROWIDX_MAX_SHARED 8192
#define MT_ROWIDX_MAX		(1 << 20)

/* The skiplist, in the arena (shared with other processes for a shared log). */
typedef struct mt_core
{
	mt_node    *head;			/* MT_MAX_HEIGHT levels, no cell */
	int			height;			/* levels in use, >= 1 */
	uint64_t	rng;			/* xorshift state: deterministic heights */

	/*
	 * The node of the last insert and the predecessors a column right after
	 * it would have at each level.  Entries often arrive in key order (a bulk
	 * load, a sorted batch), and then an insert costs two comparisons, not a
	 * search; another version of that column costs one.
	 */
	mt_node    *last;
	mt_node    *last_prev[MT_MAX_HEIGHT];

	mt_rowidx  *rowidx;			/* the row index (published by release stores) */

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
	mt_ver	   *ver;			/* node's entry the iterator is on */
	wc_cell		cell;			/* view of it */
	bool		confined;		/* to one row (wc_memtable_iter_confine) */
	mt_node    *row;			/* ... the row's first node; NULL: mt holds nothing of it */
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

static inline mt_ver *
first_of(const mt_node *n)
{
	return __atomic_load_n(&n->first, __ATOMIC_ACQUIRE);
}

static inline mt_ver *
older_of(const mt_ver *v)
{
	return __atomic_load_n(&v->older, __ATOMIC_ACQUIRE);
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

static inline const uint8_t *
node_key(const mt_node *n)
{
	return (const uint8_t *) &n->next[n->height];
}

/* Fills *c with a view of entry v of node n of mt. */
static inline void
entry_cell(const wc_memtable *mt, const mt_node *n, const mt_ver *v, wc_cell *c)
{
	const uint8_t *k = node_key(n);
	const uint8_t *p = (const uint8_t *) (v + 1);

	c->row = k;
	c->row_len = n->row_len;
	c->qual = k + n->row_len;
	c->qual_len = n->qual_len;
	c->ts = v->ts;
	c->seq = v->seq;
	c->type = v->type;
	if (v->shared)
	{
		uint64_t	off;

		memcpy(&off, p, sizeof(off));
		c->val = mt->map->addr + off;
	}
	else
		c->val = v->run ? p + sizeof(mt_ver *) : p;
	c->val_len = v->val_len;
}

/* The order of node n's column and key's (wc_cell_cmp up to the qualifier). */
static inline int
col_cmp(const mt_node *n, const wc_cell *key)
{
	const uint8_t *k = node_key(n);
	int			r = wc_row_cmp(k, n->row_len, key->row, key->row_len);

	if (r != 0)
		return r;
	r = (int) n->fam_scope - wc_cell_fam_scope(key);
	if (r != 0)
		return r;
	return wc_row_cmp(k + n->row_len, n->qual_len, key->qual, key->qual_len);
}

/* The order of entry v and key, of the same column (wc_cell_cmp from there). */
static inline int
ver_cmp(const mt_ver *v, const wc_cell *key)
{
	int			r = (v->type == WC_TYPE_DEL_COLUMN ? 0 : 1) - wc_cell_col_scope(key);

	if (r != 0)
		return r;
	if (v->ts != key->ts)
		return v->ts > key->ts ? -1 : 1;
	if (v->seq != key->seq)
		return v->seq > key->seq ? -1 : 1;
	return 0;
}

/*
 * True if key lies after every entry of its column: (ts INT64_MIN, seq 0), the
 * target of a seek past a column (seq 0 is never given out).
 */
static inline bool
past_column(const wc_cell *key)
{
	return key->ts == INT64_MIN && key->seq == 0 && wc_cell_col_scope(key) == 1;
}

/* The first entry at or after key from v on (v and key of one column), or NULL. */
static inline mt_ver *
ver_ge(mt_ver *v, const wc_cell *key)
{
	if (past_column(key))
		return NULL;
	while (v != NULL && ver_cmp(v, key) < 0)
	{
		/* a version's position: every DEL_COLUMN lies before it */
		if (v->run && wc_cell_col_scope(key) == 1)
			v = tomb_run_end(v);
		v = older_of(v);
	}
	return v;
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
 * The first node whose column is >= key's, or NULL.  With prev, also fills
 * prev[level] with the last node of a column < key's at every level in use.
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

		if (next != NULL && next != known_ge && col_cmp(next, key) < 0)
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

/* ---------------------------------------------------------------- row index */

static inline uint32_t
row_hash(const uint8_t *row, size_t len)
{
	return (uint32_t) wc_bloom_hash(row, len);
}

/* True if node n's rowkey is row. */
static inline bool
node_in_row(const mt_node *n, const uint8_t *row, size_t len)
{
	return n->row_len == len && (len == 0 || memcmp(node_key(n), row, len) == 0);
}

static inline mt_rowidx *
rowidx_of(const mt_core *k)
{
	return __atomic_load_n(&k->rowidx, __ATOMIC_ACQUIRE);
}

/* An empty table of nbuckets buckets; NULL when out of memory. */
static mt_rowidx *
rowidx_new(wc_memtable *mt, uint32_t nbuckets)
{
	mt_rowidx  *x = mt_alloc(mt, offsetof(mt_rowidx, buckets) + nbuckets * sizeof(mt_rowent *));

	if (x == NULL)
		return NULL;
	x->nbuckets = nbuckets;
	x->nrows = 0;
	memset(x->buckets, 0, nbuckets * sizeof(mt_rowent *));
	return x;
}

/* row's entry in table x, or NULL. */
static mt_rowent *
rowidx_find(const mt_rowidx *x, uint32_t hash, const uint8_t *row, size_t len)
{
	for (mt_rowent *e = __atomic_load_n(&x->buckets[hash & (x->nbuckets - 1)], __ATOMIC_ACQUIRE);
		 e != NULL; e = e->next)
	{
		if (e->hash == hash && node_in_row(__atomic_load_n(&e->first, __ATOMIC_ACQUIRE), row, len))
			return e;
	}
	return NULL;
}

/* Links e, complete, into table x. */
static void
rowidx_link(mt_rowidx *x, mt_rowent *e)
{
	mt_rowent **b = &x->buckets[e->hash & (x->nbuckets - 1)];

	e->next = *b;
	__atomic_store_n(b, e, __ATOMIC_RELEASE);
	x->nrows++;
}

/*
 * A table four times as large, of copies of x's entries, published in place of x
 * (which readers may still be in: it is left as it is).  Nothing changes when
 * there is no room: x just fills up.
 */
static void
rowidx_grow(wc_memtable *mt, mt_rowidx *x)
{
	uint32_t	max = mt->shl != NULL ? MT_ROWIDX_MAX_SHARED : MT_ROWIDX_MAX;
	uint32_t	n = x->nbuckets * 4 < max ? x->nbuckets * 4 : max;
	mt_rowidx  *y;

	if (n <= x->nbuckets || (y = rowidx_new(mt, n)) == NULL)
		return;
	for (uint32_t b = 0; b < x->nbuckets; b++)
		for (mt_rowent *e = x->buckets[b]; e != NULL; e = e->next)
		{
			mt_rowent  *copy = mt_alloc(mt, sizeof(mt_rowent));

			if (copy == NULL)
				return;			/* y is left unreachable in the arena */
			copy->first = e->first;
			copy->hash = e->hash;
			rowidx_link(y, copy);
		}
	__atomic_store_n(&mt->core->rowidx, y, __ATOMIC_RELEASE);
}

/*
 * The node of c's column found through its row's entry in the index (an update
 * of a column already there, as most are, costs no search), or NULL: the row or
 * the column is not there, or lies too far into the row.  For the one adding.
 */
static mt_node *
column_by_index(const wc_memtable *mt, const wc_cell *c)
{
	const mt_rowidx *x = mt->core->rowidx;
	mt_rowent  *e;
	mt_node    *n;

	if (x == NULL || (e = rowidx_find(x, row_hash(c->row, c->row_len), c->row, c->row_len)) == NULL)
		return NULL;
	n = e->first;
	for (int i = 0; i < 16 && n != NULL && node_in_row(n, c->row, c->row_len); i++)
	{
		int			r = col_cmp(n, c);

		if (r >= 0)
			return r == 0 ? n : NULL;
		n = n->next[0];
	}
	return NULL;
}

/*
 * The row index of a memtable of this process, made when a point read first
 * asks for a row: a replayed log's memtables that nobody reads by rowkey, and a
 * flush's, never have one.  Left without one when out of memory.
 */
static void
rowidx_build(wc_memtable *mt)
{
	mt_core    *k = mt->core;
	uint32_t	n = MT_ROWIDX_MIN;
	mt_rowidx  *x;
	mt_node    *prev = NULL;

	while (n < MT_ROWIDX_MAX && n * 2 < k->count)
		n *= 4;
	if ((x = rowidx_new(mt, n < MT_ROWIDX_MAX ? n : MT_ROWIDX_MAX)) == NULL)
		return;
	for (mt_node *node = k->head->next[0]; node != NULL; prev = node, node = node->next[0])
	{
		mt_rowent  *e;

		if (prev != NULL && node_in_row(prev, node_key(node), node->row_len))
			continue;
		if ((e = mt_alloc(mt, sizeof(mt_rowent))) == NULL)
			return;				/* x is left unreachable in the arena */
		e->first = node;
		e->hash = row_hash(node_key(node), node->row_len);
		rowidx_link(x, e);
	}
	k->rowidx = x;
}

/*
 * The first node of row, or NULL when mt holds nothing of it.  Without the
 * index (no room for it when the memtable was made), by a search.
 */
static mt_node *
row_first(const wc_memtable *mt, const uint8_t *row, size_t len)
{
	const mt_rowidx *x = rowidx_of(mt->core);
	mt_rowent  *e;
	mt_node    *n;
	wc_cell		start;

	if (x != NULL)
	{
		e = rowidx_find(x, row_hash(row, len), row, len);
		return e != NULL ? __atomic_load_n(&e->first, __ATOMIC_ACQUIRE) : NULL;
	}
	wc_cell_row_start(&start, row, len);
	n = find_ge(mt, &start, NULL);
	return n != NULL && node_in_row(n, row, len) ? n : NULL;
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
	/* a shared one's now (without room for it, rows are found by searches:
	 * row_first); this process's when a point read first asks (rowidx_build) */
	if (mt->shl != NULL)
		k->rowidx = rowidx_new(mt, MT_ROWIDX_MIN);
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
		for (mt_ver *v = first_of(n); v != NULL; v = older_of(v))
		{
			wc_cell		c;

			entry_cell(src, n, v, &c);
			if (wc_memtable_add(mt, &c, err) != WC_OK)
			{
				wc_memtable_unref(mt);
				return NULL;
			}
		}
	}
	return mt;
}

/* A new entry of mt holding c's version and value; NULL when out of memory. */
static mt_ver *
ver_new(wc_memtable *mt, const wc_cell *c, size_t *size)
{
	bool		shared = mt->map != NULL && c->val_len >= WC_MEMTABLE_SHARED_MIN &&
		wc_mapping_holds(mt->map, c->val, c->val_len) &&
		(size_t) (c->val - mt->map->addr) + c->val_len <= mt->map_limit;
	bool		run = c->type == WC_TYPE_DEL_COLUMN && !shared;
	mt_ver	   *v;

	*size = sizeof(mt_ver) +
		(shared ? sizeof(uint64_t) : (run ? sizeof(mt_ver *) : 0) + c->val_len);
	if ((v = mt_alloc(mt, *size)) == NULL)
		return NULL;
	v->ts = c->ts;
	v->seq = c->seq;
	v->older = NULL;
	v->val_len = c->val_len;
	v->type = c->type;
	v->shared = shared;
	v->run = run;
	if (run)					/* a run of one; add_version may find a longer one */
		memcpy((uint8_t *) (v + 1), &v, sizeof(mt_ver *));
	if (shared)
	{
		uint64_t	off = (uint64_t) (c->val - mt->map->addr);

		memcpy(v + 1, &off, sizeof(off));
	}
	else if (c->val_len > 0)
		memcpy((uint8_t *) (v + 1) + (run ? sizeof(mt_ver *) : 0), c->val, c->val_len);
	return v;
}

/*
 * Adds c to the entries of node, its column, in order; WC_OK, or WC_NOMEM.
 * An idempotent memtable skips an entry equal to one there.
 */
static int
add_version(wc_memtable *mt, mt_node *node, const wc_cell *c, size_t *size, wc_err *err)
{
	mt_ver	  **link = &node->first;
	mt_ver	   *v,
			   *at;
	int			r = 1;

	/* the one process adding reads links plainly */
	while ((at = *link) != NULL && (r = ver_cmp(at, c)) < 0)
	{
		if (at->run && c->type != WC_TYPE_DEL_COLUMN)
			at = tomb_run_end(at);	/* a version goes after every DEL_COLUMN */
		link = &at->older;
	}
	if (mt->idempotent && at != NULL && r == 0)
	{
		*size = 0;
		return WC_OK;			/* added before (by another process, or before a copy) */
	}
	if ((v = ver_new(mt, c, size)) == NULL)
		return wc_err_set(err, WC_NOMEM, "out of memory for a memtable entry of %zu bytes",
						  sizeof(mt_ver) + c->val_len);
	v->older = at;
	if (v->run)
	{
		mt_ver	   *end = at == NULL || at->type != WC_TYPE_DEL_COLUMN ? v :
			at->run ? tomb_run_end(at) : at;

		memcpy((uint8_t *) (v + 1), &end, sizeof(mt_ver *));
	}
	/* complete before it is reachable: readers of other processes follow links */
	__atomic_store_n(link, v, __ATOMIC_RELEASE);
	return WC_OK;
}

int
wc_memtable_add(wc_memtable *mt, const wc_cell *c, wc_err *err)
{
	mt_core    *k = mt->core;
	mt_node    *prev[MT_MAX_HEIGHT];
	mt_node    *node = NULL;
	mt_ver	   *v;
	uint8_t    *p;
	int			h,
				r,
				height = k->height;
	size_t		size,
				ver_size;

	if (k->last != NULL && (r = col_cmp(k->last, c)) <= 0 &&
		(r == 0 || k->last->next[0] == NULL || col_cmp(k->last->next[0], c) > 0))
	{
		if (r == 0)
			node = k->last;		/* another entry of the last column */
		else					/* a column right after it: its predecessors are ours */
			memcpy(prev, k->last_prev, sizeof(prev[0]) * height);
	}
	else if ((node = column_by_index(mt, c)) != NULL)
	{
		/* another entry of a column there: k->last and its predecessors stay
		 * right, as no node was linked since they were set */
	}
	else if ((node = find_ge(mt, c, prev)) != NULL && col_cmp(node, c) == 0)
	{
		/* a column right after this one would have these predecessors */
		for (int i = 0; i < node->height; i++)
			prev[i] = node;
		memcpy(k->last_prev, prev, sizeof(prev[0]) * height);
		k->last = node;
	}
	else
		node = NULL;

	if (node != NULL)
	{
		if (add_version(mt, node, c, &size, err) != WC_OK)
			return WC_NOMEM;
		if (size == 0)
			return WC_OK;
	}
	else
	{
		mt_rowidx  *x = k->rowidx;
		mt_rowent  *row_ent = NULL,
				   *fresh = NULL;
		uint32_t	hash = 0;

		if ((v = ver_new(mt, c, &ver_size)) == NULL)
			return wc_err_set(err, WC_NOMEM, "out of memory for a memtable entry of %zu bytes",
							  sizeof(mt_ver) + c->val_len);
		h = random_height(k);
		size = offsetof(mt_node, next) + (size_t) h * sizeof(mt_node *) + c->row_len + c->qual_len;
		if ((node = mt_alloc(mt, size)) == NULL)
			return wc_err_set(err, WC_NOMEM, "out of memory for a memtable entry of %zu bytes", size);
		size += ver_size;
		node->first = v;
		node->row_len = c->row_len;
		node->qual_len = c->qual_len;
		node->fam_scope = (uint8_t) wc_cell_fam_scope(c);
		node->height = (uint8_t) h;
		p = (uint8_t *) &node->next[h];
		if (c->row_len > 0)
			memcpy(p, c->row, c->row_len);
		if (c->qual_len > 0)
			memcpy(p + c->row_len, c->qual, c->qual_len);

		for (int i = height; i < h; i++)
			prev[i] = k->head;

		/*
		 * The first node of its row: the row's entry in the index moves to it, or
		 * the row gets one (allocated before anything is linked: a failure leaves
		 * the memtable as it was)
		 */
		if (x != NULL && (prev[0] == k->head || !node_in_row(prev[0], c->row, c->row_len)))
		{
			mt_node    *succ = prev[0]->next[0];

			hash = row_hash(c->row, c->row_len);
			if (succ == NULL || !node_in_row(succ, c->row, c->row_len) ||
				(row_ent = rowidx_find(x, hash, c->row, c->row_len)) == NULL)
			{
				if ((fresh = mt_alloc(mt, sizeof(mt_rowent))) == NULL)
					return wc_err_set(err, WC_NOMEM, "out of memory for a memtable's row index");
				fresh->first = node;
				fresh->hash = hash;
			}
		}

		/* complete before it is reachable: readers of other processes follow links */
		for (int i = 0; i < h; i++)
			node->next[i] = prev[i]->next[i];
		for (int i = 0; i < h; i++)
			__atomic_store_n(&prev[i]->next[i], node, __ATOMIC_RELEASE);
		if (h > height)
			__atomic_store_n(&k->height, h, __ATOMIC_RELEASE);
		if (row_ent != NULL)
			__atomic_store_n(&row_ent->first, node, __ATOMIC_RELEASE);
		else if (fresh != NULL)
		{
			rowidx_link(x, fresh);
			if (x->nrows > 2 * x->nbuckets)
				rowidx_grow(mt, x);
		}

		/* a column right after this node has it as predecessor below its height */
		k->last = node;
		for (int i = 0; i < h; i++)
			k->last_prev[i] = node;
		for (int i = h; i < k->height; i++)
			k->last_prev[i] = prev[i];
	}

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

/*
 * On the first entry of node n: ask for what the step to the next column will
 * read, the node after n's successor and the successor's first entry.  The
 * successor itself was asked for one column ago (its line has arrived by now,
 * or this load waits for what the step would have waited for anyway), so
 * each column's node and entry are asked for a column ahead.  A point read of
 * a popular row walks columns that other processes wrote: each node and entry
 * was a cache miss, one after the other (perf: mt_iter_set, reading them,
 * was the largest part of such a read).
 */
static inline void
prefetch_ahead(const mt_iter *mi, const mt_node *n)
{
	const mt_node *next = next_of(n, 0);

	if (next == NULL ||
		(mi->confined && !node_in_row(next, node_key(mi->row), mi->row->row_len)))
		return;
	__builtin_prefetch(first_of(next));
	__builtin_prefetch(next_of(next, 0));
}

/* Puts mi on entry v of node n (v NULL: n's first), or at the end (n NULL). */
static inline void
mt_iter_set(mt_iter *mi, mt_node *n, mt_ver *v)
{
	mi->node = n;
	if (n == NULL)
		return;
	if (v == NULL)
	{
		v = first_of(n);
		prefetch_ahead(mi, n);
	}
	mi->ver = v;
	entry_cell(mi->mt, n, mi->ver, &mi->cell);
}

/* Out of the row a confined iterator keeps to: at the end. */
static inline void
confine_check(mt_iter *mi)
{
	if (mi->node != NULL && !node_in_row(mi->node, node_key(mi->row), mi->row->row_len))
		mi->node = NULL;
}

static void
mt_iter_seek_first(wc_iter *it)
{
	mt_iter    *mi = (mt_iter *) it;

	mt_iter_set(mi, mi->confined ? mi->row : next_of(mi->mt->core->head, 0), NULL);
}

/* Puts mi on the first entry >= target of node n, whose column is >= target's. */
static void
mt_iter_set_ge(mt_iter *mi, mt_node *n, const wc_cell *target)
{
	mt_ver	   *v = NULL;

	if (n != NULL && col_cmp(n, target) == 0 && (v = ver_ge(first_of(n), target)) == NULL)
		n = next_of(n, 0);		/* every entry of the column is below target */
	mt_iter_set(mi, n, v);
}

/*
 * The first node whose column is >= target's, from n, whose column is below it:
 * a few steps, then a search.
 */
static mt_node *
walk_ge(const wc_memtable *mt, mt_node *n, const wc_cell *target)
{
	for (int i = 0; i < 16; i++)
	{
		mt_node    *next = next_of(n, 0);

		if (next == NULL || col_cmp(next, target) >= 0)
			return next;
		n = next;
	}
	return find_ge(mt, target, NULL);
}

/*
 * A seek forward from the current entry stays in its column, or goes to the
 * next one, without a search when it can: the seek past a column that a scan
 * makes after the versions it wants (scan.c) costs a step, whatever the number
 * of versions it leaves behind.  Else a search from the head, or with from (a
 * node whose column is below target's) a walk from there.
 */
static void
seek_near(mt_iter *mi, const wc_cell *target, mt_node *from)
{
	mt_node    *n = mi->node;
	int			r;

	if (n != NULL && (r = col_cmp(n, target)) <= 0)
	{
		if (r == 0 && ver_cmp(mi->ver, target) <= 0)
		{
			mt_ver	   *v = ver_ge(mi->ver, target);

			mt_iter_set(mi, v != NULL ? n : next_of(n, 0), v);
			return;
		}
		if (r < 0)
		{
			mt_node    *next = next_of(n, 0);

			if (next == NULL || col_cmp(next, target) >= 0)
			{
				mt_iter_set_ge(mi, next, target);
				return;
			}
		}
	}
	mt_iter_set_ge(mi, from != NULL ? walk_ge(mi->mt, from, target) :
				   find_ge(mi->mt, target, NULL), target);
}

static void
mt_iter_seek(wc_iter *it, const wc_cell *target)
{
	mt_iter    *mi = (mt_iter *) it;
	mt_node    *f = mi->row;
	int			r;

	if (!mi->confined)
	{
		seek_near(mi, target, NULL);
		return;
	}
	/* confined: before the row, its first entry; after it, the end */
	if (f == NULL ||
		(r = wc_row_cmp(node_key(f), f->row_len, target->row, target->row_len)) < 0)
	{
		mi->node = NULL;
		return;
	}
	if (r > 0 || col_cmp(f, target) >= 0)
		mt_iter_set_ge(mi, f, target);
	else
		seek_near(mi, target, mi->node != NULL && col_cmp(mi->node, target) < 0 ? mi->node : f);
	confine_check(mi);
}

/* The last entry < target (the last entry when target is NULL), by find_ge's
 * descent, then the first entry of its row by another. */
static void
mt_iter_seek_row_before(wc_iter *it, const wc_cell *target)
{
	mt_iter    *mi = (mt_iter *) it;
	mt_node    *x = mi->mt->core->head;
	wc_cell		start;

	if (target != NULL)
	{
		mt_node    *prev[MT_MAX_HEIGHT];
		mt_node    *n = find_ge(mi->mt, target, prev);

		/* target's column may hold entries below it */
		x = n != NULL && col_cmp(n, target) == 0 && ver_cmp(first_of(n), target) < 0 ?
			n : prev[0];
	}
	else
	{
		for (int level = height_of(mi->mt->core) - 1; level >= 0; level--)
			while (next_of(x, level) != NULL)
				x = next_of(x, level);
	}
	if (x == mi->mt->core->head)
	{
		mt_iter_set(mi, NULL, NULL);
		return;
	}
	/* the row's bytes live in the node, which stays */
	wc_cell_row_start(&start, node_key(x), x->row_len);
	mt_iter_set(mi, find_ge(mi->mt, &start, NULL), NULL);
	if (mi->confined)
	{
		if (mi->row == NULL)
			mi->node = NULL;
		else
			confine_check(mi);
	}
}

static void
mt_iter_next(wc_iter *it)
{
	mt_iter    *mi = (mt_iter *) it;
	mt_ver	   *v;

	if (mi->node == NULL)
		return;
	if ((v = older_of(mi->ver)) != NULL)
		mt_iter_set(mi, mi->node, v);
	else
	{
		mt_node    *next = next_of(mi->node, 0);

		/* a confined iterator ends with its row (before the next entry is read) */
		if (next != NULL && mi->confined &&
			!node_in_row(next, node_key(mi->row), mi->row->row_len))
			next = NULL;
		mt_iter_set(mi, next, NULL);
	}
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
	mi->confined = false;
	mi->row = NULL;
	wc_memtable_ref(mt);
	return &mi->base;
}

bool
wc_memtable_iter_confine(wc_iter *it, const uint8_t *row, size_t row_len)
{
	mt_iter    *mi = (mt_iter *) it;

	mi->node = NULL;
	mi->confined = row != NULL;
	if (row != NULL && mi->mt->shl == NULL && mi->mt->core->rowidx == NULL)
		rowidx_build(mi->mt);
	mi->row = row != NULL ? row_first(mi->mt, row, row_len) : NULL;
	return row == NULL || mi->row != NULL;
}
