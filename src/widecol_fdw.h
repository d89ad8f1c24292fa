/*-------------------------------------------------------------------------
 *
 * widecol_fdw.h
 *		  Declarations shared by the files of the widecol foreign data wrapper
 *
 * The FDW maps a foreign table onto one widecol store (engine/wc.h).  Each
 * SQL row is one cell version (rowkey, family, qualifier, ts) -> value.
 *
 *		widecol_fdw.c	module load, handler, planner callbacks
 *		option.c		validator, table and per-family options, GUCs
 *		optparse.c		option values checked without PostgreSQL (optparse.h)
 *		convert.c		columns of a table, Datum <-> cell bytes
 *		wide.c			wide tables: columns mapped to cells (option cell),
 *						rows assembled from cells, rows as cells
 *		pushdown.c		quals the engine can use (planning)
 *		keys.c			those quals evaluated -> ranges, families, qualifiers, time
 *		scan.c			executor scan callbacks, EXPLAIN, ANALYZE sampling
 *		modify.c		INSERT/UPDATE/DELETE/COPY/TRUNCATE callbacks
 *		direct.c		DELETE of whole rows or families by direct
 *						modification: one bounded marker per family
 *		store.c			per-backend cache of open stores and their pending
 *						writes; the transaction callbacks that write them at
 *						commit or discard them, and remove store directories
 *		resolve.c		the engine's callbacks: a transaction's fate, interrupts
 *		wal.c			logged tables: store changes in PostgreSQL's WAL, redo
 *		ddl.c			DROP hook (store removed at commit), column checks
 *		functions.c		widecol_flush/compact/stats
 *		import.c		IMPORT FOREIGN SCHEMA: stores found under a server's
 *						directory
 *		error.c			engine status -> ereport
 *
 * The calls between these files form no cycle.  widecol_fdw.c hands out the
 * callbacks of scan.c, modify.c and ddl.c; it and they, and functions.c
 * (which asks ddl.c too), use store.c and the helpers option.c, convert.c,
 * pushdown.c and keys.c; store.c uses option.c, resolve.c and wal.c; error.c,
 * which most call, calls none.
 *
 *-------------------------------------------------------------------------
 */
#ifndef WIDECOL_FDW_H
#define WIDECOL_FDW_H

#include "postgres.h"

#include "access/attnum.h"
#include "access/xlogdefs.h"
#include "fmgr.h"
#include "commands/explain.h"
#include "foreign/fdwapi.h"
#include "nodes/execnodes.h"
#include "nodes/lockoptions.h"
#include "nodes/pathnodes.h"
#include "storage/lockdefs.h"
#include "utils/relcache.h"
#include <sys/types.h>

#include "../engine/wc.h"

/* ---------------------------------------------------------------- columns */

/* The cell fields a column can map to (by column name). */
typedef enum WcFdwField
{
	WCF_ROWKEY = 0,
	WCF_FAMILY,
	WCF_QUALIFIER,
	WCF_TS,
	WCF_VALUE,
	WCF_NFIELDS
} WcFdwField;

/* How a column's Datum is turned into cell bytes and back. */
typedef enum WcFdwRepr
{
	WCR_NONE = 0,				/* column not declared */
	WCR_TEXT,					/* text, varchar: the bytes, encoding-checked on read */
	WCR_BYTEA,					/* the bytes as they are */
	WCR_INT8,					/* ts as bigint milliseconds */
	WCR_TIMESTAMPTZ,			/* ts as timestamptz (ms precision) */
	WCR_BINARY,					/* value of any other type: send/receive form */
	WCR_INTKEY,					/* rowkey as smallint, int or bigint: big-endian,
								 * sign bit flipped (Phoenix's), so that the
								 * bytes sort as the numbers */
	WCR_UUIDKEY					/* rowkey as uuid: its 16 bytes (uuid's order
								 * is theirs) */
} WcFdwRepr;

typedef struct WcFdwColumn
{
	AttrNumber	attnum;			/* 0 if the table has no such column */
	Oid			typid;
	int32		typmod;
	Oid			collid;
	WcFdwRepr	repr;
	int			keylen;			/* WCR_INTKEY: 2, 4 or 8 bytes; WCR_UUIDKEY 16 */
} WcFdwColumn;

/*
 * A column of a wide table: OPTIONS (cell 'family:qualifier') maps it to the
 * newest visible version of one cell, OPTIONS (cell 'family:*') a jsonb
 * column to every qualifier of a family (wide.c).
 */
typedef struct WcFdwWideColumn
{
	AttrNumber	attnum;
	Oid			typid;
	int32		typmod;
	char	   *name;			/* column name, for messages */
	char	   *spec;			/* the option's text, for messages */
	char	   *family;			/* the declared family name */
	size_t		family_len;
	int			family_index;	/* in the table's (or its store's) families */
	uint8	   *qual;			/* NULL for a whole family */
	size_t		qual_len;
	bool		whole_family;	/* 'family:*', a jsonb column */
	WcFdwRepr	repr;			/* TEXT, BYTEA or BINARY for one cell */
	FmgrInfo	send;			/* WCR_BINARY: filled by wcfdw_converter_init */
	FmgrInfo	recv;
	Oid			ioparam;
} WcFdwWideColumn;

typedef struct WcFdwColumns
{
	WcFdwColumn f[WCF_NFIELDS];
	/* a wide table: only f[WCF_ROWKEY] is set, and these (NULL, 0: tall) */
	WcFdwWideColumn *wide;
	int			nwide;
	/* wide[] and its strings in one allocation of this size (0: not so) */
	Size		wide_bytes;
	/* wide[] in (family, qualifier) order, a whole family first (indexes) */
	int		   *wide_sorted;
} WcFdwColumns;

extern const char *const wcfdw_field_names[WCF_NFIELDS];

/* convert.c */
extern int	wcfdw_field_by_name(const char *name);
extern void wcfdw_get_columns(Relation rel, WcFdwColumns *cols);
extern bool wcfdw_column_is_byte_ordered(const WcFdwColumn *col);

typedef struct WcFdwConverter
{
	WcFdwColumns cols;
	FmgrInfo	send;			/* for WCR_BINARY values */
	FmgrInfo	recv;
	Oid			ioparam;
	const char *relname;
} WcFdwConverter;

extern void wcfdw_converter_init(WcFdwConverter *conv, Relation rel);
extern void wcfdw_converter_copy(const WcFdwConverter *from, WcFdwConverter *to,
								 MemoryContext cxt);
extern int64 wcfdw_int_datum_value(Datum d, int width);
extern size_t wcfdw_intkey_encode(int keylen, int64 v, uint8 *buf);
extern Datum wcfdw_bytes_to_datum(WcFdwConverter *conv, WcFdwField field,
								  const uint8 *data, size_t len);
extern Datum wcfdw_value_from_bytes(WcFdwRepr repr, Oid typid, int32 typmod, FmgrInfo *recv,
									Oid ioparam, const char *relname, const char *colname,
									const uint8 *data, size_t len);
extern void wcfdw_value_to_bytes(WcFdwRepr repr, FmgrInfo *send, Datum d,
								 const uint8 **data, size_t *len);
extern WcFdwRepr wcfdw_value_repr(Oid typid);
extern Datum wcfdw_ts_to_datum(WcFdwConverter *conv, int64 ts);
extern void wcfdw_datum_to_bytes(WcFdwConverter *conv, WcFdwField field, Datum d,
								 const uint8 **data, size_t *len);
extern int64 wcfdw_datum_to_ts(WcFdwConverter *conv, Datum d);
extern int64 wcfdw_now_ms(void);
extern int64 wcfdw_timestamptz_to_ms(TimestampTz t);

/* ---------------------------------------------------------------- options */

typedef struct WcFdwTableOptions
{
	int			nfamilies;
	wc_family_opts *families;	/* names palloc'd in the caller's context */
	char	   *directory;		/* server option, or NULL */
	bool		logged;			/* changes go to PostgreSQL's WAL (wal.c) */
	Oid			store_relid;	/* the table whose store this one shows: itself,
								 * or the one its option store names */
	char	   *store_dir;		/* option store_directory, or NULL */
} WcFdwTableOptions;

extern void wcfdw_get_table_options(Oid relid, WcFdwTableOptions *opts);
extern bool wcfdw_get_cell_specs(Relation rel, char ***specs);
extern bool wcfdw_converter_cached(Relation rel, WcFdwConverter *conv);
extern Oid	wcfdw_store_owner_cached(Oid relid);
extern void wcfdw_converter_remember(Relation rel, const WcFdwConverter *conv);
extern int	wcfdw_family_index(const WcFdwTableOptions *opts, const char *name, size_t len);
extern Oid	wcfdw_store_owner(Oid relid, bool missing_ok);
extern char *wcfdw_store_path(Oid relid, const WcFdwTableOptions *opts);
extern void wcfdw_option_init(void);
extern size_t wcfdw_bulk_write_bytes(void);

/* ---------------------------------------------------------------- errors */

/* Raises the engine error (never returns for ERROR). */
extern void wcfdw_engine_error(int elevel, int rc, const wc_err *err,
							   const char *action, const char *relname);

#define wcfdw_check(rc, err, action, relname) \
	do { \
		int			wcfdw_rc_ = (rc); \
		if (wcfdw_rc_ < 0) \
			wcfdw_engine_error(ERROR, wcfdw_rc_, (err), (action), (relname)); \
	} while (0)

/* In the PG_CATCH of a callback the engine called (resolve.c). */
extern const char *wcfdw_catch_callback_error(MemoryContext oldcxt);

/* resolve.c: the callbacks a store is opened with (wc_open_opts) */
extern int	wcfdw_resolve(void *arg, uint64_t tag, wc_txn_state *state, wc_err *err);
extern int	wcfdw_interrupt(void *arg);
extern uint64_t wcfdw_horizon(void *arg);
extern uint64_t wcfdw_horizon_seen;
extern uint64_t wcfdw_full_xid(TransactionId xid);
extern int	wcfdw_max_remembered_commits;
extern int	wcfdw_session_memory_kb;
extern int	wcfdw_row_cache_kb;
extern int	wcfdw_max_row_locks;

/* A scan's snapshot, for wcfdw_tag_visible (the engine's tag_visible callback). */
typedef struct WcFdwSnapshotArg
{
	Snapshot	snapshot;
	Relation	rel;			/* for serializable transactions' conflicts: */
	Oid			owner;			/* the table that has rel's store (resolve.c) */
	bool		serializable;
	MemoryContext cxt;			/* the statement's, for running */
	uint64	   *running;		/* snapshot's running transactions as tags, */
	int			nrunning;		/* ascending (wcfdw_scan_opts_snapshot), */
	bool		has_running;	/* once made */
} WcFdwSnapshotArg;

extern int	wcfdw_tag_visible(void *arg, uint64_t tag, bool committed, bool *visible,
							  wc_err *err);
extern void wcfdw_ssi_lock(Relation rel, Oid owner, Snapshot snapshot);
extern void wcfdw_ssi_conflict_in(Relation rel, Oid owner);

/* wal.c: logged tables */
extern void wcfdw_wal_init(void);
extern bool wcfdw_wal_available(void);
extern char *wcfdw_wal_path(const char *path);
extern int	wcfdw_wal_change(void *arg, const wc_change *change, wc_err *err);
extern void wcfdw_wal_destroy(const char *path);
extern void wcfdw_wal_log_sync(const char *path, const char *file);
extern XLogRecPtr wcfdw_wal_log_change(const char *path, const wc_change *change);

/* database.c */
extern void wcfdw_database_init(void);
extern void wcfdw_compact_table(Oid relid);

/* cache.c: the block cache in shared memory */
extern int	wcfdw_block_cache_kb;
extern int	wcfdw_shared_memtable_kb;
extern void wcfdw_cache_init(void);

/* sync.c: logged tables' logs made durable by checkpoints */
typedef enum WcFdwLogSync
{
	WCFDW_LOG_SYNC_CHECKPOINT,	/* the syncer, before each checkpoint completes */
	WCFDW_LOG_SYNC_COMMIT		/* every commit fsyncs */
} WcFdwLogSync;

extern int	wcfdw_log_sync;
extern void wcfdw_sync_init(void);
extern void wcfdw_chkpt_change_begin(const char *file);
extern void wcfdw_chkpt_change_end(void *arg);
extern void wcfdw_chkpt_commit_begin(void);
extern bool wcfdw_chkpt_committing(void);
extern bool wcfdw_sync_anchored(const char *path, const char *file);
extern void wcfdw_sync_anchor(const char *path, const char *file, XLogRecPtr end);
extern void wcfdw_sync_unanchor(const char *path);
extern void wcfdw_chkpt_commit_end(void);
extern void wcfdw_chkpt_release_all(void);
extern bool wcfdw_sync_defer(const char *path);
extern int	wcfdw_sync_store(const char *path, bool wal);

/* ---------------------------------------------------------------- stores */

/* A command that wrote into a pending batch, and where its entries begin. */
typedef struct WcFdwPendingCmd
{
	CommandId	cid;
	uint64		seq_lo;			/* every entry it wrote has this pending seq or a
								 * higher one (wc_batch_pending_seq_now) */
} WcFdwPendingCmd;

/*
 * Where the writes of a deeper subtransaction level begin in a batch of an
 * outer one: its rollback rewinds the batch to here.
 */
typedef struct WcFdwPendingMark
{
	int			level;
	int			ncmds;			/* the batch's commands before it */
	wc_batch_mark bm;
} WcFdwPendingMark;

typedef struct WcFdwPendingBatch
{
	wc_batch   *batch;
	int			level;			/* subtransaction nesting level that wrote it */
	bool		truncates;		/* holds a TRUNCATE: flush at commit */
	/* the commands that wrote it, in the order they began; cids increasing */
	WcFdwPendingCmd *cmds;		/* TopMemoryContext */
	int			ncmds;
	int			maxcmds;
	/* the deeper levels that wrote on into it, levels increasing (all above
	 * level); the last one's level, or level, is the one writing now */
	WcFdwPendingMark *marks;	/* TopMemoryContext */
	int			nmarks;
	int			maxmarks;
} WcFdwPendingBatch;

typedef struct WcFdwStore
{
	Oid			relid;			/* hash key */
	wc_db	   *db;				/* NULL until opened */
	char	   *path;			/* TopMemoryContext */
	char	   *relname;		/* for messages */
	wc_family_opts *families;	/* TopMemoryContext, names too */
	int			nfamilies;
	dev_t		dir_dev;		/* identity of the directory we opened */
	ino_t		dir_ino;
	bool		stale;			/* relcache invalidation seen: revalidate */
	bool		failed;			/* engine refused writes: reopen before use */
	bool		doomed;			/* dropped: destroy when the last scan closes */
	int			nscans;			/* open wc_scan handles */
	bool		needs_maintain; /* we committed writes: run wc_db_maintain */
	bool		flush_at_commit;	/* we wrote a TRUNCATE: flush once committed */
	uint64		last_used;		/* wcfdw_xact_count when last used */
	bool		logged;			/* its changes go to the WAL (wal.c) */
	bool		read_only;		/* opened read only: in recovery, or a logged
								 * table without the WAL (no preload) */
	char	   *walpath;		/* the path WAL records name, TopMemoryContext */
	MemoryContext refreshed_cxt;	/* es_query_cxt of the statement that last
									 * refreshed, NULL when it ended */
	bool		wide_known;		/* has_wide is up to date (reset by every */
	bool		has_wide;		/* relcache invalidation): a wide table shows
								 * the store (wcfdw_store_has_wide) */
	/* row locks this transaction took in the store (scan.c): store.c only */
	int64		nrowlocks;
	uint64		rowlocks_xact;	/* the wcfdw_xact_count they were counted in */
	/* pending writes of this transaction, in write order: store.c only */
	WcFdwPendingBatch *pending;
	int			npending;
	int			maxpending;
} WcFdwStore;

extern void wcfdw_store_init(void);
extern WcFdwStore *wcfdw_store_get(Relation rel);
extern void wcfdw_store_begin_statement(WcFdwStore *store, EState *estate);
extern void wcfdw_store_refresh(WcFdwStore *store);
extern void wcfdw_store_scan_opened(WcFdwStore *store);
extern void wcfdw_store_scan_closed(WcFdwStore *store);
extern bool wcfdw_store_has_wide(WcFdwStore *store);
extern bool wcfdw_store_shown_wide(Oid owner);

/* the transaction's writes, committed or discarded by store.c's callbacks */
extern wc_batch *wcfdw_store_write_batch(WcFdwStore *store, CommandId cid, bool alone);
extern int64 wcfdw_store_count_row_lock(WcFdwStore *store);
extern void wcfdw_store_truncate(WcFdwStore *store, CommandId cid);
extern void wcfdw_store_visible_batches(WcFdwStore *store, CommandId curcid, wc_scan_opts *opts);
extern void wcfdw_store_drop_at_commit(Oid relid, const char *path);

/* ---------------------------------------------------------------- pushdown, keys */

/* What a pushed condition does with its expression. */
typedef enum WcFdwCondKind
{
	WCK_EQ = 0,					/* field = expr */
	WCK_IN,						/* field = ANY(array expr) */
	WCK_LT,
	WCK_LE,
	WCK_GT,
	WCK_GE,
	WCK_PREFIX,					/* starts_with(field, expr) */
	WCK_LIKE,					/* field LIKE expr (prefix taken at run time) */
	WCK_LIKE_ANY,				/* field LIKE ANY(array expr) */
	WCK_PREFIX_ANY,				/* field ^@ ANY(array expr) */
	WCK_OR,						/* rowkey: any of args (no expr) */
	WCK_AND						/* rowkey: all of args, inside an OR (no expr) */
} WcFdwCondKind;

/*
 * A pushed condition: a leaf "field kind expr", or (rowkey only) an OR of
 * arms, each a leaf, an AND of leaves and ORs, or an OR.  In a plan the tree
 * is flattened in prefix order (fdw_private WCFDW_PRIV_CONDS, one triple
 * field, kind, nargs per node; fdw_exprs holds the leaves' exprs in order).
 */
typedef struct WcFdwCond
{
	WcFdwField	field;
	WcFdwCondKind kind;
	Expr	   *expr;			/* the side that is not our column; NULL for OR/AND */
	List	   *args;			/* OR, AND: the WcFdwCond arms */
	RestrictInfo *rinfo;		/* planner only */
} WcFdwCond;

extern List *wcfdw_extract_conds(PlannerInfo *root, RelOptInfo *baserel,
								 const WcFdwColumns *cols, List *clauses);
extern bool wcfdw_cond_from_clause(PlannerInfo *root, RelOptInfo *baserel,
								   const WcFdwColumns *cols, RestrictInfo *rinfo,
								   WcFdwCond *cond);
extern bool wcfdw_cell_filter_from_clause(PlannerInfo *root, RelOptInfo *baserel,
										  const WcFdwColumns *cols, Expr *clause,
										  AttrNumber *attnum, Expr **value);

/* The scan parameters computed at execution from the conditions. */
typedef struct WcFdwScanKeys
{
	bool		empty;			/* no row can match */
	wc_key_range *ranges;
	int			nranges;
	wc_slice   *families;
	int			nfamilies;
	wc_slice   *quals;
	int			nquals;
	wc_slice   *qual_prefixes;
	int			nqual_prefixes;
	bool		has_qual_range; /* qual_range narrows the qualifiers */
	wc_key_range qual_range;
	int64		ts_min;
	int64		ts_max;
} WcFdwScanKeys;

/* A condition's node at execution, in the plan's prefix order. */
typedef struct WcFdwCondExec
{
	WcFdwField	field;
	WcFdwCondKind kind;
	int			nargs;			/* OR, AND: the arms that follow (subtrees) */
	Oid			exprtype;
	ExprState  *state;			/* NULL for OR, AND */
} WcFdwCondExec;

extern void wcfdw_compute_keys(WcFdwCondExec *conds, int nconds, ExprContext *econtext,
							   WcFdwConverter *conv, const WcFdwTableOptions *topts,
							   bool rowkey_only, WcFdwScanKeys *keys);
extern char *wcfdw_cond_op_name(WcFdwCondKind kind);
extern void wcfdw_cond_flatten(WcFdwCond *c, List **fdw_exprs, List **condinfo);
extern int	wcfdw_cond_subtree_end(const WcFdwCondExec *conds, int i);

/* ---------------------------------------------------------------- executor */

/* fdw_private of a ForeignScan */
enum WcFdwScanPrivate
{
	WCFDW_PRIV_CONDS = 0,		/* integer list: field, kind, nargs per node of
								 * the conditions' trees, in prefix order */
	WCFDW_PRIV_ATTRS,			/* integer list of attnums the plan needs
								 * (SelfItemPointerAttributeNumber: ctid) */
	WCFDW_PRIV_LOCK,			/* integer list: row lock mode (NoLock = none),
								 * LockWaitPolicy, 1 if the table is the
								 * statement's target (UPDATE, DELETE) */
	WCFDW_PRIV_WIDE,			/* integer list: 1 if a condition needs one of
								 * the needed cell columns non-NULL (wide.c),
								 * then per cell filter its column's attnum
								 * and its value's index in fdw_exprs */
	WCFDW_PRIV_REVERSE,			/* integer list: 1 for a reversed scan (rowkeys
								 * descending) */
	WCFDW_PRIV_CURRENT_OF,		/* UPDATE or DELETE ... WHERE CURRENT OF: the
								 * CurrentOfExpr, else NULL (scan.c) */
	WCFDW_PRIV_DIRECT,			/* a direct DELETE or UPDATE (direct.c) only:
								 * integer list, 1 if it counts in es_processed
								 * (canSetTag) */
	WCFDW_PRIV_SET				/* a direct UPDATE only: integer list of the
								 * attnums it sets, whose expressions end
								 * fdw_exprs */
};

/* wide.c */
extern void wcfdw_wide_parse_spec(const char *spec, char **family, char **qual,
								  bool *whole_family);
extern void wcfdw_wide_get_columns(Relation rel, WcFdwColumns *cols);
extern bool wcfdw_wide_strict(PlannerInfo *root, RelOptInfo *baserel,
							  const WcFdwColumns *cols);

/*
 * Assembles rows of a wide table from a scan's cells (wide.c).  The scan's
 * cells come in (rowkey, family, qualifier, ts DESC) order; a row is the run
 * of cells of one rowkey, and holds at least one cell a column maps.
 */
/*
 * A cell filter of a scan: its rows are those whose column col (of the wide
 * columns) has a newest visible cell of exactly these bytes (scan.c).
 */
typedef struct WcFdwCellFilter
{
	int			col;
	const uint8 *val;
	size_t		len;
} WcFdwCellFilter;

typedef struct WcFdwWideReader
{
	WcFdwConverter *conv;
	const bool *need;			/* per wide column: decode its value */
	wc_scan    *scan;
	bool		done;			/* the scan has ended */
	bool		have_next;		/* next: the first cell of the next row */
	wc_cell_view next;
	uint8	   *nextbuf;		/* holds next's bytes (nextcap of them) */
	size_t		nextcap;
	MemoryContext cxt;			/* of nextbuf */
	uint64		fingerprint;	/* of the cells of the row last returned */
	bool	   *have;			/* per wide column, of the row being read */
	StringInfoData *json;		/* per whole-family column, of that row */
	const WcFdwCellFilter *filters; /* set by the scan (none: NULL, 0) */
	int			nfilters;
} WcFdwWideReader;

extern void wcfdw_wide_reader_init(WcFdwWideReader *r, WcFdwConverter *conv,
								   const bool *need, MemoryContext parent);
extern void wcfdw_wide_reader_reset(WcFdwWideReader *r, wc_scan *scan);
extern int	wcfdw_wide_row_exists(WcFdwWideReader *r, wc_err *err);
#define WCFDW_WIDE_FILTERED	2	/* wcfdw_wide_next_row: a row the filters refused */
extern int	wcfdw_wide_next_row(WcFdwWideReader *r, Datum *values, bool *isnull,
								int natts, const uint8 **row, size_t *row_len, wc_err *err);
extern void wcfdw_check_columns_ddl(Relation rel, bool defining);
extern void wcfdw_wide_scan_cells(const WcFdwColumns *cols, const bool *read,
								  MemoryContext cxt, wc_slice **families, int *nfamilies,
								  wc_slice **quals, int *nquals);
extern void wcfdw_wide_stored_form(const WcFdwConverter *conv, TupleTableSlot *slot);
extern bool wcfdw_wide_row_has_cell(const WcFdwConverter *conv, TupleTableSlot *slot);
extern void wcfdw_wide_put_row(WcFdwConverter *conv, wc_batch *b, TupleTableSlot *slot,
							   const uint8 *row, size_t row_len, int64 ts,
							   const Bitmapset *only);
extern void wcfdw_wide_delete_cells(WcFdwConverter *conv, WcFdwStore *store, CommandId cid,
									wc_batch *b, const uint8 *row, size_t row_len,
									const bool *del);
extern void wcfdw_wide_delete_replaced(WcFdwConverter *conv, WcFdwStore *store, CommandId cid,
									   wc_batch *b, TupleTableSlot *slot,
									   const uint8 *row, size_t row_len, const Bitmapset *only);

/* scan.c */
extern void widecolBeginForeignScan(ForeignScanState *node, int eflags);
extern TupleTableSlot *widecolIterateForeignScan(ForeignScanState *node);
extern void widecolReScanForeignScan(ForeignScanState *node);
extern void widecolEndForeignScan(ForeignScanState *node);
extern void widecolExplainForeignScan(ForeignScanState *node, ExplainState *es);
extern Size widecolEstimateDSMForeignScan(ForeignScanState *node, ParallelContext *pcxt);
extern void widecolInitializeDSMForeignScan(ForeignScanState *node, ParallelContext *pcxt,
											void *coordinate);
extern void widecolReInitializeDSMForeignScan(ForeignScanState *node, ParallelContext *pcxt,
											  void *coordinate);
extern void widecolInitializeWorkerForeignScan(ForeignScanState *node, shm_toc *toc,
											   void *coordinate);
extern bool widecolAnalyzeForeignTable(Relation relation,
									   AcquireSampleRowsFunc *func,
									   BlockNumber *totalpages);
extern bool wcfdw_lock_cell(WcFdwStore *store, Relation rel, const wc_cell_view *c,
							LOCKMODE mode, LockWaitPolicy wait);
extern void wcfdw_row_wait(WcFdwStore *store, const uint8 *row, size_t row_len,
						   const wc_cell_view *cell);
extern bool wcfdw_lock_rowkey(WcFdwStore *store, Relation rel, const uint8 *row, size_t row_len,
							  LOCKMODE mode, LockWaitPolicy wait);
extern WcFdwCondExec *wcfdw_init_conds(ForeignScanState *node, int *nconds);
extern void wcfdw_scan_opts_snapshot(wc_scan_opts *o, WcFdwSnapshotArg *snap);
static inline bool
wcfdw_same_bytes(const void *a, size_t alen, const void *b, size_t blen)
{
	return alen == blen && memcmp(a, b, alen) == 0;
}

/* r: the one rowkey row (a point read), whose bytes it points to */
static inline void
wcfdw_point_range(wc_key_range *r, const uint8 *row, size_t row_len)
{
	r->start = r->stop = row;
	r->start_len = r->stop_len = row_len;
	r->start_bound = r->stop_bound = WC_INCLUSIVE;
}
extern void wcfdw_scan_opts_newest(wc_scan_opts *o);
extern void wcfdw_cell_version_opts(wc_scan_opts *o, wc_key_range *range, wc_slice *fam,
									wc_slice *qual, const wc_cell_view *cell);
extern bool wcfdw_cell_replaced(WcFdwStore *store, const wc_scan_opts *like, const wc_cell_view *cell);
extern void wcfdw_replaced_error(void) pg_attribute_noreturn();
extern wc_scan *wcfdw_open_newest(WcFdwStore *store, const wc_cell_view *cell,
								  const wc_scan_opts *like, wc_cell_view *newest, int *found);
extern void wcfdw_explain_context(ForeignScanState *node, ExplainState *es);
extern char *wcfdw_explain_conds(ForeignScanState *node, ExplainState *es, WcFdwField field);

/* direct.c: DELETE of whole rows or families as one marker each, UPDATE of
 * a wide table's rows by rowkey */
extern bool widecolPlanDirectModify(PlannerInfo *root, ModifyTable *plan,
									Index resultRelation, int subplan_index);
extern void widecolBeginDirectModify(ForeignScanState *node, int eflags);
extern TupleTableSlot *widecolIterateDirectModify(ForeignScanState *node);
extern void widecolEndDirectModify(ForeignScanState *node);
extern void widecolExplainDirectModify(ForeignScanState *node, ExplainState *es);

/* modify.c */
extern int	widecolIsForeignRelUpdatable(Relation rel);
extern void widecolAddForeignUpdateTargets(PlannerInfo *root, Index rtindex,
										   RangeTblEntry *target_rte,
										   Relation target_relation);
extern List *widecolPlanForeignModify(PlannerInfo *root, ModifyTable *plan,
									  Index resultRelation, int subplan_index);
extern void widecolBeginForeignModify(ModifyTableState *mtstate, ResultRelInfo *rinfo,
									  List *fdw_private, int subplan_index, int eflags);
extern TupleTableSlot *widecolExecForeignInsert(EState *estate, ResultRelInfo *rinfo,
												TupleTableSlot *slot,
												TupleTableSlot *planSlot);
extern TupleTableSlot *widecolExecForeignUpdate(EState *estate, ResultRelInfo *rinfo,
												TupleTableSlot *slot,
												TupleTableSlot *planSlot);
extern TupleTableSlot *widecolExecForeignDelete(EState *estate, ResultRelInfo *rinfo,
												TupleTableSlot *slot,
												TupleTableSlot *planSlot);
extern void widecolEndForeignModify(EState *estate, ResultRelInfo *rinfo);
extern void widecolBeginForeignInsert(ModifyTableState *mtstate, ResultRelInfo *rinfo);
extern void widecolEndForeignInsert(EState *estate, ResultRelInfo *rinfo);
extern void widecolExecForeignTruncate(List *rels, DropBehavior behavior, bool restart_seqs);

/* import.c */
extern List *widecolImportForeignSchema(ImportForeignSchemaStmt *stmt, Oid serverOid);

/* ddl.c */
extern void wcfdw_ddl_init(void);
extern bool wcfdw_is_widecol_table(Oid relid);

#endif							/* WIDECOL_FDW_H */
