/*
 * shmt.h -- the shared state of live logs: memtables in memory that every process
 * using the engine shares (DESIGN.md, "Shared memtables").
 *
 * Without it each process that reads a store keeps its own memtables of the
 * store's live logs, rebuilt from the logs: memory times processes, and every
 * record applied once per process.  With a region (wc_shared_memtable_create,
 * wc.h; in PostgreSQL shared memory set aside at start), a live log of a store
 * has one shared state, a slot, found by (the store's identity in its shared
 * page, the log's number): the memtables of its families, whose nodes live in
 * the slot's arena (fixed-size chunks of the region), and which of its records
 * some process has already applied.  A process reads the records some process
 * has not done yet itself, for what it keeps of its own (which transactions it
 * saw commit, the truncate point, the records still in progress, ingested
 * files), but adds a record's entries only when nobody has: under the slot's
 * lock, once.  For the records done it takes the slot's summary of them
 * (wc_shlog_summarise) where that tells all it would learn.
 *
 * The region must be mapped at the same address in every process (PostgreSQL's
 * shared memory is, in the backends the postmaster forks): the skiplists link
 * their nodes by address.  Values that stay in the log are kept as offsets into
 * the log, and each process reads them in its own mapping of the log.
 *
 * A record's entries are added under the slot's lock; readers walk the
 * skiplists without it (nodes are published by release stores).  A slot a
 * process died holding (a robust mutex: EOWNERDEAD) stays usable: its record
 * was not marked applied, and the next process adds it again, skipping what is
 * already there (adds to a shared memtable are idempotent).  When the region has
 * no room for a record, the slot is marked failed and every process that uses
 * it goes on with a private copy of its memtables (memtable.c).
 *
 * A slot lives while a process references it (each memtable and each process's
 * view of the log holds a reference) and, once unreferenced, until its log is
 * flushed (the slot is then marked dead and freed) or its room is needed by
 * another log (least recently used first).
 */
#ifndef WC_SHMT_H
#define WC_SHMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct wc_shlog wc_shlog;

/* Bytes of one arena chunk; a memtable node must fit in one (else: failed). */
#define WC_SHMT_CHUNK		(128u << 10)

/* True when this process has a region. */
bool		wc_shmt_enabled(void);

/*
 * The slot of log number of the store whose shared page carries store_id, found
 * or made, referenced; NULL without a region, when every slot is referenced, or
 * when the slot is dead, failed or was made by a process whose log mapping was
 * longer than map_len (values are kept as offsets into the first map_len bytes).
 * log_size is the log file's size now: an unreferenced slot that indexed records
 * beyond it indexed another log of that number (one cut or restored while the
 * store was closed) and is made new.
 */
wc_shlog   *wc_shlog_get(uint64_t store_id, uint64_t number, size_t map_len,
						 uint64_t log_size);
void		wc_shlog_ref(wc_shlog *s);
/* Drops a reference; with dead, the log is flushed: the slot is freed when the
 * last reference goes (not kept for a later process). */
void		wc_shlog_unref(wc_shlog *s, bool dead);

/* The lock of a slot: held to add entries (wc_memtable_add) and families. */
void		wc_shlog_lock(wc_shlog *s);
void		wc_shlog_unlock(wc_shlog *s);

/* Marked failed (the region had no room for a record): use a private copy. */
bool		wc_shlog_failed(const wc_shlog *s);
void		wc_shlog_set_failed(wc_shlog *s);
/* The mapping length values are offsets within. */
size_t		wc_shlog_map_len(const wc_shlog *s);

/* Under the lock: n bytes of the slot's arena, 8-aligned; NULL when the region has
 * no chunk left (or n is larger than a chunk). */
void	   *wc_shlog_alloc(wc_shlog *s, size_t n);

/*
 * Under the lock: whether the record ending at offset end was applied (or found
 * aborted) by some process, and the marking of one (it starts at start).  Records
 * are known by a frontier, below which every record is done, and a few done
 * beyond it; a record done but not remembered is applied again (idempotent).
 */
bool		wc_shlog_done(const wc_shlog *s, uint64_t end);

/*
 * What a process reading a record learns besides its entries, for those that
 * will not read it (wc_shlog_summary): its transaction's tag (0: none), its seqs
 * (seq_lo > seq_hi: none), the highest seq of a truncate among its entries (0:
 * none), whether it was aborted, whether it is an ingest record (whose files
 * every process opens itself); known false: none of it is known, and every
 * process must read the records from there.
 */
typedef struct wc_shlog_facts
{
	uint64_t	tag;
	uint64_t	seq_lo;
	uint64_t	seq_hi;
	uint64_t	trunc;
	bool		aborted;
	bool		ingest;
	bool		known;
} wc_shlog_facts;

/* Under the lock: marks the record at start..end done, with what it told (NULL:
 * not known). */
void		wc_shlog_mark_done(wc_shlog *s, uint64_t start, uint64_t end,
							   const wc_shlog_facts *facts);

/*
 * Without the lock: true if the record ending at end lies below the frontier,
 * done, and what its process added (before it moved the frontier) is visible
 * to this one.  False says nothing: ask wc_shlog_done under the lock.  The
 * frontier only grows while the slot is referenced.
 */
bool		wc_shlog_done_below(const wc_shlog *s, uint64_t end);

/*
 * Without the lock: true if the record ending at end lies below the frontier and
 * was done as committed (indexed), not aborted: then its transaction's outcome
 * need not be asked (a process opening a store read every record of its live
 * logs, and asking PostgreSQL's commit log for each was a quarter of a new
 * session's first read of a table with 3.7 MB of log).  The aborted ones done
 * are remembered up to a number; beyond it false says nothing, as does any
 * false: ask the resolver.
 */
bool		wc_shlog_committed_below(const wc_shlog *s, uint64_t end);

/* Committed records below the frontier whose tags a summary keeps: the latest. */
#define WC_SHLOG_RECENT		64
/* Ingest records below the frontier a summary names; beyond, it is not known. */
#define WC_SHLOG_INGEST		8

typedef struct wc_shlog_recent
{
	uint64_t	tag;
	uint64_t	seq_lo;
	uint64_t	seq_hi;
} wc_shlog_recent;

/*
 * What reading every record below the frontier tells a process, so that a
 * process opening the log need not read them (a new PostgreSQL session read
 * the whole active log: with 3.8 MB of log 8.6 ms a connection against 3.8 ms
 * for an ordinary table): the highest seq of any record, of a committed one and
 * of a truncate in a committed one; the committed records with a tag, the
 * latest WC_SHLOG_RECENT in log order, and the highest tag of the others; and
 * where the committed ingest records lie, whose files a process opens itself.
 */
typedef struct wc_shlog_summary
{
	uint64_t	frontier;
	uint64_t	max_seq;
	uint64_t	applied_seq;
	uint64_t	trunc;
	uint64_t	dropped_tag;
	uint32_t	nrecent;
	wc_shlog_recent recent[WC_SHLOG_RECENT];
	uint32_t	ningest;		/* the committed ingest records, in log order: */
	uint64_t	ingest_start[WC_SHLOG_INGEST];	/* where each record starts */
	uint64_t	ingest_end[WC_SHLOG_INGEST];	/* and ends */
} wc_shlog_summary;

/* Under the lock: the summary of the records below the frontier; false when a
 * record there must be read by every process (its facts were not known, or more
 * than WC_SHLOG_INGEST ingest records). */
bool		wc_shlog_summarise(const wc_shlog *s, wc_shlog_summary *out);

/* A family's shared memtable (memtable.c's core), published once made. */
typedef struct wc_shfam
{
	struct wc_shfam *next;
	void	   *core;
	char		name[];
} wc_shfam;

/* The families of the slot, first made first; read without the lock. */
const wc_shfam *wc_shlog_families(const wc_shlog *s);
/* Under the lock: publishes family name's core (allocated in the slot's arena);
 * WC_NOMEM when the region has no room. */
int			wc_shlog_add_family(wc_shlog *s, const char *name, void *core);

#endif
