/*-------------------------------------------------------------------------
 *
 * scan.c
 *		  Executor scan callbacks, EXPLAIN output and ANALYZE sampling
 *
 * The engine scan is opened at the first row (so plain EXPLAIN opens
 * nothing).  Its keys come from the plan's conditions, evaluated now (see
 * pushdown.c); the session's own pending writes of earlier commands are
 * overlaid.  A rescan with new parameter values (the inner side of a nested
 * loop) re-seeks the open scan with wc_scan_reset when only the rowkey
 * conditions can change, else closes it and opens a new one at the next row.
 *
 * The wc_scan is closed by EndForeignScan, or, when the query fails, by a
 * reset callback on the executor's memory context.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/sysattr.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "commands/vacuum.h"
#include "common/hashfn.h"
#include "common/pg_prng.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "port/atomics.h"
#include "storage/lmgr.h"
#include "storage/predicate.h"
#include "tcop/pquery.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/portal.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/sampling.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "widecol_fdw.h"

typedef struct WcFdwScanState
{
	Relation	rel;
	WcFdwStore *store;
	WcFdwConverter conv;
	WcFdwTableOptions topts;
	WcFdwCondExec *conds;
	int			nconds;
	bool		rowkey_only_rescan; /* only rowkey conditions vary */
	bool		ctid_junk;		/* an inherited row mark's ctid: tuples, no tuple id */
	bool		reverse;		/* rowkeys descending (wc_scan_opts.reverse) */
	bool		need[WCF_NFIELDS];	/* fields the plan uses */
	CommandId	curcid;
	WcFdwSnapshotArg snap;		/* the statement's snapshot, for the engine */
	LOCKMODE	lockmode;		/* row lock on each row returned; NoLock = none */
	LockWaitPolicy waitpolicy;
	bool		lock_target;	/* locks for an UPDATE or DELETE of the table,
								 * not a FOR UPDATE/SHARE */

	/* a wide table (wide.c): per cell column */
	bool	   *wneed;			/* the plan uses its value */
	bool	   *wread;			/* the scan reads its cells */
	WcFdwWideReader reader;
	int			nfilters;		/* cell filters: their columns (of the wide */
	WcFdwCellFilter *filters;	/* ones), and their bytes per (re)scan, in */
	ExprState **filter_state;	/* keycxt, from these expressions */

	wc_scan    *scan;
	wc_scan_opts opts;
	WcFdwScanKeys keys;
	bool		started;		/* keys computed for this (re)scan */
	bool		empty;			/* no row can match */

	MemoryContext keycxt;		/* keys and opts of the open scan */
	MemoryContext rangecxt[2];	/* rowkey ranges of re-seeks, alternating */
	int			range_in_use;	/* -1: ranges live in keycxt */
	MemoryContext tuplecxt;		/* values of the current row */

	/* a parallel scan (see "Parallel scans"); pstate NULL otherwise */
	struct WcFdwParallel *pstate;	/* in the DSM */
	bool		leader_only;	/* pstate->leader_only, as this process sees it */
	wc_slice   *chunk_bounds;	/* pstate's bounds, pointing into the DSM */
	int			nchunk_bounds;
	char	   *dsm_image;		/* leader: the DSM contents, from Estimate */
	Size		dsm_size;

	/*
	 * The key of the row returned last, for an UPDATE or DELETE ... WHERE
	 * CURRENT OF a cursor over this scan: a wide row's rowkey (in tuplecxt,
	 * as the row), a tall row's cell version (copied into cur_buf).
	 */
	wc_cell_view cur;			/* its row, family, qual, ts (row NULL: none) */
	uint8	   *cur_buf;
	size_t		cur_cap;
	bool		note_cells;		/* keep cur_*: a tall scan of a cursor's */
	CurrentOfExpr *current_of;	/* this scan is of WHERE CURRENT OF */

	wc_scan_stats stats;		/* of scans already closed */
	uint64		nopens;
	uint64		nrescans;
	MemoryContextCallback cb;
} WcFdwScanState;

/*
 * Parallel scans.
 *
 * The leader cuts the key space into chunks at rowkeys that end data blocks
 * of the sorted files (wc_db_block_bounds, as ANALYZE does): chunk 0 is
 * (-inf, b[0]], chunk j is (b[j-1], b[j]], the last (b[n-1], +inf).  All
 * cells of a rowkey fall in one chunk, so a row is neither lost nor read
 * twice, whatever files the workers see: the bounds are only where to cut.
 * Each process (workers and the leader) claims the next chunk with an atomic
 * counter in the DSM and scans the intersection of the chunk with the
 * scan's own rowkey ranges, re-seeking its open scan (wc_scan_reset) from
 * chunk to chunk; the chunks it claims come in key order.
 *
 * A worker opens the store itself and reads it under the leader's snapshot
 * (es_snapshot; resolve.c asks the commit log, which is shared), so it sees
 * the same committed rows, from the files and the logs.  The transaction's
 * own pending writes it cannot see: no parallel scan is planned for a table
 * that has some (widecol_fdw.c), and if a plan made before them runs, the
 * leader scans the whole table alone and the workers return nothing.
 */
#define WCFDW_PARALLEL_MAX_CHUNKS 1024

typedef struct WcFdwParallel
{
	pg_atomic_uint32 next;		/* the next chunk to claim */
	bool		leader_only;	/* the leader overlays pending writes */
	uint32		nbounds;
	/* nbounds times: uint32 length, then the bytes */
	char		data[FLEXIBLE_ARRAY_MEMBER];
} WcFdwParallel;

static void
wcfdw_add_stats(wc_scan_stats *to, const wc_scan_stats *s)
{
	to->files_total += s->files_total;
	to->files_read += s->files_read;
	to->files_skipped_key += s->files_skipped_key;
	to->files_skipped_time += s->files_skipped_time;
	to->files_skipped_bloom += s->files_skipped_bloom;
	to->blocks_read += s->blocks_read;
	to->blocks_cached += s->blocks_cached;
	to->cells_scanned += s->cells_scanned;
	to->cells_returned += s->cells_returned;
	to->seeks += s->seeks;
	to->rows_cached += s->rows_cached;
}

/*
 * wcfdw_cell_to_values
 *		values[] and isnull[] (natts of each) of the row a cell is: the fields
 *		in need, or every declared field when need is NULL; the rest NULL
 */
static void
wcfdw_cell_to_values(WcFdwConverter *conv, const bool *need, const wc_cell_view *cell,
					 Datum *values, bool *isnull, int natts)
{
	int			f;

	memset(isnull, true, sizeof(bool) * natts);
	for (f = 0; f < WCF_NFIELDS; f++)
	{
		AttrNumber	a = conv->cols.f[f].attnum;

		if (a == 0 || (need != NULL && !need[f]))
			continue;
		switch (f)
		{
			case WCF_ROWKEY:
				values[a - 1] = wcfdw_bytes_to_datum(conv, f, cell->row, cell->row_len);
				break;
			case WCF_FAMILY:
				values[a - 1] = wcfdw_bytes_to_datum(conv, f, (const uint8 *) cell->family,
													 cell->family_len);
				break;
			case WCF_QUALIFIER:
				values[a - 1] = wcfdw_bytes_to_datum(conv, f, cell->qual, cell->qual_len);
				break;
			case WCF_TS:
				values[a - 1] = wcfdw_ts_to_datum(conv, cell->ts);
				break;
			case WCF_VALUE:
				values[a - 1] = wcfdw_bytes_to_datum(conv, f, cell->val, cell->val_len);
				break;
		}
		isnull[a - 1] = false;
	}
}

/* Opens the engine scan with ss->opts as they stand. */
static void
wcfdw_scan_open(WcFdwScanState *ss)
{
	wc_err		err;
	int			rc;

	wc_err_clear(&err);
	rc = wc_scan_open(ss->store->db, &ss->opts, &ss->scan, &err);
	if (rc < 0)
	{
		ss->scan = NULL;
		wcfdw_engine_error(ERROR, rc, &err, "scan", ss->store->relname);
	}
	wcfdw_store_scan_opened(ss->store);
	ss->nopens++;
}

static void
wcfdw_scan_close(WcFdwScanState *ss)
{
	if (ss->scan)
	{
		wc_scan_stats st;

		wc_scan_get_stats(ss->scan, &st);
		wcfdw_add_stats(&ss->stats, &st);
		wc_scan_close(ss->scan);
		ss->scan = NULL;
		wcfdw_store_scan_closed(ss->store);
	}
}

/* executor memory is going away (normal end or error) */
static void
wcfdw_scan_cleanup(void *arg)
{
	wcfdw_scan_close((WcFdwScanState *) arg);
}

/*
 * wcfdw_init_conds
 *		The scan's pushed conditions (fdw_private WCFDW_PRIV_CONDS, in prefix
 *		order; a leaf takes the next of fdw_exprs), ready to evaluate
 */
WcFdwCondExec *
wcfdw_init_conds(ForeignScanState *node, int *nconds)
{
	ForeignScan *plan = (ForeignScan *) node->ss.ps.plan;
	List	   *condinfo = list_nth(plan->fdw_private, WCFDW_PRIV_CONDS);
	ListCell   *lc = list_head(plan->fdw_exprs);
	WcFdwCondExec *conds;
	int			i;

	*nconds = list_length(condinfo) / 3;
	conds = palloc0(sizeof(WcFdwCondExec) * Max(*nconds, 1));
	for (i = 0; i < *nconds; i++)
	{
		WcFdwCondExec *c = &conds[i];
		Expr	   *e;

		c->field = list_nth_int(condinfo, 3 * i);
		c->kind = list_nth_int(condinfo, 3 * i + 1);
		c->nargs = list_nth_int(condinfo, 3 * i + 2);
		if (c->kind == WCK_OR || c->kind == WCK_AND)
			continue;
		e = lfirst(lc);
		lc = lnext(plan->fdw_exprs, lc);
		c->exprtype = exprType((Node *) e);
		c->state = ExecInitExpr(e, (PlanState *) node);
	}
	return conds;
}

static int
wcfdw_u64_cmp(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a,
				y = *(const uint64 *) b;

	return x < y ? -1 : x > y;
}

/*
 * wcfdw_scan_opts_snapshot
 *		Makes a scan read what snap's snapshot sees (doc/SQL.md,
 *		"Transactions"), and, in a serializable transaction, take the
 *		relation's predicate lock
 */
void
wcfdw_scan_opts_snapshot(wc_scan_opts *o, WcFdwSnapshotArg *snap)
{
	Snapshot	s = snap->snapshot;

	if (s == NULL || !IsMVCCSnapshot(s))
		return;
	o->tag_visible = wcfdw_tag_visible;
	o->tag_visible_arg = snap;
	o->snapshot_min = wcfdw_full_xid(s->xmin);

	/*
	 * The snapshot as sets (wc.h): the engine decides about each remembered
	 * write as XidInMVCCSnapshot would, without a call.  Tags are top-level
	 * xids, which a snapshot taken outside recovery lists in xip whether or
	 * not its subtransactions overflowed.  A snapshot taken during recovery
	 * (xids in subxip) or a historic one is asked about each, as before.
	 */
	if (snap->serializable)
		wcfdw_ssi_lock(snap->rel, snap->owner, s);
	if (s->snapshot_type != SNAPSHOT_MVCC || s->takenDuringRecovery)
		return;
	if (!snap->has_running)
	{
		int			n = 0;

		snap->running = MemoryContextAlloc(snap->cxt, sizeof(uint64) * Max(s->xcnt, 1));
		for (uint32 i = 0; i < s->xcnt; i++)
			if (TransactionIdIsNormal(s->xip[i]))
				snap->running[n++] = wcfdw_full_xid(s->xip[i]);
		qsort(snap->running, n, sizeof(uint64), wcfdw_u64_cmp);
		snap->nrunning = n;
		snap->has_running = true;
	}
	o->snapshot_sets = true;
	o->snapshot_max = wcfdw_full_xid(s->xmax);
	o->running = snap->running;
	o->nrunning = snap->nrunning;
	o->ask_unseen = snap->serializable;
}

/*
 * wcfdw_scan_opts_newest
 *		Undoes wcfdw_scan_opts_snapshot: the scan reads the newest committed
 *		versions (and the transaction's own pending ones, which o keeps), as
 *		a writer that locked a row must look at it
 */
void
wcfdw_scan_opts_newest(wc_scan_opts *o)
{
	o->tag_visible = NULL;
	o->tag_visible_arg = NULL;
	o->snapshot_min = 0;
	o->snapshot_sets = false;
	o->running = NULL;
	o->nrunning = 0;
}

/*
 * wcfdw_cell_version_opts
 *		Makes o a point read of the one cell version cell (its rowkey,
 *		family, qualifier and ts), in range, fam and qual, which point to
 *		cell's bytes
 */
void
wcfdw_cell_version_opts(wc_scan_opts *o, wc_key_range *range, wc_slice *fam, wc_slice *qual,
						const wc_cell_view *cell)
{
	wcfdw_point_range(range, cell->row, cell->row_len);
	fam->data = (const uint8_t *) cell->family;
	fam->len = cell->family_len;
	qual->data = cell->qual;
	qual->len = cell->qual_len;
	o->ranges = range;
	o->nranges = 1;
	o->families = fam;
	o->nfamilies = 1;
	o->quals = qual;
	o->nquals = 1;
	o->ts_min = o->ts_max = cell->ts;
}

/*
 * wcfdw_cell_replaced
 *		Whether a version of cell's rowkey, family and qualifier, of any
 *		timestamp, is committed that the snapshot of like does not see
 *
 * Asked once the version a statement waited for is found gone: then a
 * concurrent transaction replaced it (an UPDATE of its ts is a delete and a
 * put) rather than deleted it.  An ordinary table's UPDATE follows its row to
 * the new version; a store's version has no link to its successor, so the
 * caller fails instead of skipping it (wcfdw_replaced_error), as PostgreSQL
 * does for a row a concurrent UPDATE moved to another partition.  Both views
 * are read with like's options (its own pending writes, its filters).
 */
bool
wcfdw_cell_replaced(WcFdwStore *store, const wc_scan_opts *like, const wc_cell_view *cell)
{
	wc_scan_opts o = *like;
	wc_key_range range;
	wc_slice	fam,
				qual;
	uint64	   *seen = NULL;
	int			nseen = 0,
				maxseen = 0;
	bool		replaced = false;
	wc_scan    *point = NULL;
	wc_cell_view v;
	wc_err		err;
	int			found;

	/*
	 * Only outnumbered by a newer version (past max_versions), not deleted: a
	 * put of a newer version (a wide UPDATE's), which is no change of ts.
	 */
	wcfdw_cell_version_opts(&o, &range, &fam, &qual, cell);
	wcfdw_scan_opts_newest(&o);
	o.every_version = true;
	wc_err_clear(&err);
	found = wc_scan_open(store->db, &o, &point, &err);
	if (found >= 0)
		found = wc_scan_next(point, &v, &err);
	if (point != NULL)
		wc_scan_close(point);
	if (found < 0)
		wcfdw_engine_error(ERROR, found, &err, "scan", store->relname);
	if (found == 1)
		return false;

	o = *like;
	wcfdw_cell_version_opts(&o, &range, &fam, &qual, cell);
	o.ts_min = PG_INT64_MIN;
	o.ts_max = PG_INT64_MAX;
	for (int pass = 0; pass < 2 && !replaced; pass++)
	{
		wc_scan    *scan = NULL;
		int			rc;

		if (pass == 1)
			wcfdw_scan_opts_newest(&o);		/* newest committed */
		wc_err_clear(&err);
		rc = wc_scan_open(store->db, &o, &scan, &err);
		if (rc < 0)
			wcfdw_engine_error(ERROR, rc, &err, "scan", store->relname);
		while ((rc = wc_scan_next(scan, &v, &err)) == 1)
		{
			int			i;

			if (pass == 0)
			{
				if (nseen == maxseen)
				{
					maxseen = Max(8, maxseen * 2);
					seen = seen ? repalloc(seen, sizeof(uint64) * maxseen) :
						palloc(sizeof(uint64) * maxseen);
				}
				seen[nseen++] = v.seq;
				continue;
			}
			for (i = 0; i < nseen && seen[i] != v.seq; i++)
				;
			if (i == nseen)
			{
				replaced = true;
				break;
			}
		}
		wc_scan_close(scan);
		if (rc < 0)
			wcfdw_engine_error(ERROR, rc, &err, "scan", store->relname);
	}
	return replaced;
}

/* ERROR: the version waited for was replaced (wcfdw_cell_replaced) */
void
wcfdw_replaced_error(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("cell version to be locked was already replaced by one of another timestamp due to concurrent update"),
			 errdetail("A transaction that committed meanwhile changed the ts of the version this statement waited for; unlike an ordinary table's row, a version is not followed to its replacement."),
			 errhint("Retry the statement. An increment that keeps ts (SET value = value + 1) waits and goes on from the committed value instead.")));
}

/*
 * wcfdw_open_newest
 *		The newest committed version of cell (or the transaction's own pending
 *		one: like's pending batches, and its now_ms), read by a point scan of
 *		the store, which the caller closes (newest lives until then); found
 *		is 1 or 0
 */
wc_scan *
wcfdw_open_newest(WcFdwStore *store, const wc_cell_view *cell, const wc_scan_opts *like,
				  wc_cell_view *newest, int *found)
{
	wc_scan_opts o;
	wc_key_range range;
	wc_slice	fam,
				qual;
	wc_scan    *point = NULL;
	wc_err		err;
	int			rc;

	wc_scan_opts_init(&o);
	wcfdw_cell_version_opts(&o, &range, &fam, &qual, cell);
	o.now_ms = like->now_ms;
	o.pending = like->pending;
	o.npending = like->npending;
	o.pending_excl = like->pending_excl;
	o.npending_excl = like->npending_excl;
	o.pending_max = like->pending_max;
	wc_err_clear(&err);
	rc = wc_scan_open(store->db, &o, &point, &err);
	if (rc < 0)
		wcfdw_engine_error(ERROR, rc, &err, "scan", store->relname);
	*found = wc_scan_next(point, newest, &err);
	if (*found < 0)
	{
		wc_scan_close(point);
		wcfdw_engine_error(ERROR, *found, &err, "scan", store->relname);
	}
	return point;
}

/*
 * wcfdw_inherited_copy_mark
 *		Is the scan of rtindex a child of a row-marked partitioned or
 *		inheritance parent, with a mark of its own that copies the whole row?
 *		The planner then asks every child for the parent's ctid junk column,
 *		which only children with tuple ids use.
 */
static bool
wcfdw_inherited_copy_mark(EState *estate, Index rtindex)
{
	ListCell   *lc;

	foreach(lc, estate->es_plannedstmt->rowMarks)
	{
		PlanRowMark *rc = lfirst(lc);

		if (rc->rti == rtindex)
			return rc->prti != rc->rti && rc->markType == ROW_MARK_COPY;
	}
	return false;
}

static TupleTableSlot *wcfdw_iterate(ForeignScanState *node, WcFdwScanState *ss);

void
widecolBeginForeignScan(ForeignScanState *node, int eflags)
{
	ForeignScan *plan = (ForeignScan *) node->ss.ps.plan;
	EState	   *estate = node->ss.ps.state;
	WcFdwScanState *ss;
	List	   *attrs = list_nth(plan->fdw_private, WCFDW_PRIV_ATTRS);
	int			i;

	ss = palloc0(sizeof(WcFdwScanState));
	node->fdw_state = ss;
	ss->rel = node->ss.ss_currentRelation;
	wcfdw_converter_init(&ss->conv, ss->rel);
	wcfdw_get_table_options(RelationGetRelid(ss->rel), &ss->topts);

	for (i = 0; i < WCF_NFIELDS; i++)
		if (list_member_int(attrs, ss->conv.cols.f[i].attnum))
			ss->need[i] = true;
	if (ss->conv.cols.wide != NULL)
	{
		List	   *wide = list_nth(plan->fdw_private, WCFDW_PRIV_WIDE);
		bool		strict = wide != NIL && linitial_int(wide) != 0;

		/* wide.c: only the needed columns' families when a condition
		 * needs one of them non-NULL, else all, to know which rows exist */
		ss->wneed = palloc0(sizeof(bool) * Max(ss->conv.cols.nwide, 1));
		ss->wread = palloc0(sizeof(bool) * Max(ss->conv.cols.nwide, 1));
		for (i = 0; i < ss->conv.cols.nwide; i++)
		{
			ss->wneed[i] = list_member_int(attrs, ss->conv.cols.wide[i].attnum);
			ss->wread[i] = strict ? ss->wneed[i] : true;
		}

		/* the cell filters (widecol_fdw.c): attnum, index in fdw_exprs */
		ss->nfilters = (list_length(wide) - 1) / 2;
		ss->filter_state = palloc(sizeof(ExprState *) * Max(ss->nfilters, 1));
		ss->filters = palloc(sizeof(WcFdwCellFilter) * Max(ss->nfilters, 1));
		for (i = 0; i < ss->nfilters; i++)
		{
			AttrNumber	attnum = list_nth_int(wide, 1 + 2 * i);
			int			w;

			for (w = 0; w < ss->conv.cols.nwide; w++)
				if (ss->conv.cols.wide[w].attnum == attnum)
					break;
			if (w == ss->conv.cols.nwide)
				elog(ERROR, "cell filter on unknown column %d", attnum);
			ss->filters[i].col = w;
			ss->filter_state[i] = ExecInitExpr(list_nth(plan->fdw_exprs,
														list_nth_int(wide, 2 + 2 * i)),
											   (PlanState *) node);
		}
	}

	if (list_length(plan->fdw_private) > WCFDW_PRIV_REVERSE)
		ss->reverse = linitial_int(list_nth(plan->fdw_private, WCFDW_PRIV_REVERSE)) != 0;
	if (list_length(plan->fdw_private) > WCFDW_PRIV_CURRENT_OF)
		ss->current_of = list_nth(plan->fdw_private, WCFDW_PRIV_CURRENT_OF);

	/*
	 * Only a named portal's query can be the cursor of a WHERE CURRENT OF
	 * (DECLARE, PL/pgSQL's cursors, a protocol-level portal): a tall scan of
	 * one copies the key of each row it returns; a wide scan's rowkey is
	 * kept anyway.  PortalStart makes the portal active while the executor
	 * starts.
	 */
	ss->note_cells = ActivePortal != NULL && ActivePortal->name != NULL &&
		ActivePortal->name[0] != '\0';

	ss->conds = wcfdw_init_conds(node, &ss->nconds);
	ss->rowkey_only_rescan = true;
	for (i = 0; i < ss->nconds; i++)
		if (ss->conds[i].state != NULL && ss->conds[i].field != WCF_ROWKEY &&
			!IsA(ss->conds[i].state->expr, Const))
			ss->rowkey_only_rescan = false;
	for (i = 0; i < ss->nfilters; i++)
		if (!IsA(ss->filter_state[i]->expr, Const))
			ss->rowkey_only_rescan = false;
	if (ss->current_of != NULL)
		ss->rowkey_only_rescan = false;	/* the cursor's row: wcfdw_scan_start */

	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;

	/*
	 * A cell version has no tuple id: every row would show the same invalid
	 * ctid, and postgres_fdw's UPDATE or DELETE that is not sent whole to the
	 * data node (SELECT ctid ... FOR UPDATE, then "DELETE FROM t WHERE ctid =
	 * $1" for each row) would match every row of the table.  Only running
	 * such a scan is an error: postgres_fdw's use_remote_estimate EXPLAINs it
	 * while it plans an UPDATE it will then send whole.
	 */
	if (list_member_int(attrs, SelfItemPointerAttributeNumber) &&
		wcfdw_inherited_copy_mark(estate, plan->scan.scanrelid))
		ss->ctid_junk = true;
	else if (list_member_int(attrs, SelfItemPointerAttributeNumber))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("widecol_fdw table \"%s\" has no ctid", RelationGetRelationName(ss->rel)),
				 errdetail("A cell version is identified by its rowkey, family, qualifier and ts, a wide table's row by its rowkey."),
				 errhint("Through postgres_fdw, an UPDATE or DELETE must be sent whole to the data node: give it only conditions postgres_fdw can ship, and no row triggers on the coordinator.")));

	ss->keycxt = AllocSetContextCreate(estate->es_query_cxt, "widecol_fdw scan keys",
									   ALLOCSET_SMALL_SIZES);
	ss->rangecxt[0] = AllocSetContextCreate(estate->es_query_cxt, "widecol_fdw ranges",
											ALLOCSET_SMALL_SIZES);
	ss->rangecxt[1] = AllocSetContextCreate(estate->es_query_cxt, "widecol_fdw ranges",
											ALLOCSET_SMALL_SIZES);
	ss->tuplecxt = AllocSetContextCreate(estate->es_query_cxt, "widecol_fdw tuple",
										 ALLOCSET_DEFAULT_SIZES);
	if (ss->wneed)
	{
		wcfdw_wide_reader_init(&ss->reader, &ss->conv, ss->wneed, estate->es_query_cxt);
		ss->reader.filters = ss->filters;
		ss->reader.nfilters = ss->nfilters;
	}
	ss->range_in_use = -1;
	ss->curcid = estate->es_snapshot ? estate->es_snapshot->curcid : GetCurrentCommandId(false);
	ss->snap.snapshot = estate->es_snapshot;
	ss->snap.rel = ss->rel;
	ss->snap.serializable = IsolationIsSerializable();
	ss->snap.cxt = estate->es_query_cxt;
	ss->snap.has_running = false;
	if (list_length(plan->fdw_private) > WCFDW_PRIV_LOCK)
	{
		List	   *lock = list_nth(plan->fdw_private, WCFDW_PRIV_LOCK);

		ss->lockmode = linitial_int(lock);
		ss->waitpolicy = lsecond_int(lock);
		ss->lock_target = lthird_int(lock);
	}

	ss->store = wcfdw_store_get(ss->rel);
	ss->snap.owner = ss->store->relid;
	wcfdw_store_begin_statement(ss->store, estate);

	ss->cb.func = wcfdw_scan_cleanup;
	ss->cb.arg = ss;
	MemoryContextRegisterResetCallback(estate->es_query_cxt, &ss->cb);
}

/* memcmp order of rowkeys, a prefix first */
static int
wcfdw_key_cmp(const uint8 *a, size_t alen, const uint8 *b, size_t blen)
{
	int			c = memcmp(a, b, Min(alen, blen));

	if (c != 0)
		return c;
	return (alen > blen) - (alen < blen);
}

/*
 * wcfdw_intersect_range
 *		*out = r intersected with the chunk (lo, hi] (lo, hi NULL: unbounded);
 *		false if that is empty
 */
static bool
wcfdw_intersect_range(const wc_key_range *r, const wc_slice *lo, const wc_slice *hi,
					  wc_key_range *out)
{
	*out = *r;
	if (lo != NULL)
	{
		int			c = out->start_bound == WC_UNBOUNDED ? -1 :
			wcfdw_key_cmp(out->start, out->start_len, lo->data, lo->len);

		if (c <= 0)
		{
			out->start = lo->data;
			out->start_len = lo->len;
			out->start_bound = WC_EXCLUSIVE;
		}
	}
	if (hi != NULL)
	{
		int			c = out->stop_bound == WC_UNBOUNDED ? 1 :
			wcfdw_key_cmp(out->stop, out->stop_len, hi->data, hi->len);

		/* hi is inclusive: an equal stop keeps its own bound */
		if (c > 0)
		{
			out->stop = hi->data;
			out->stop_len = hi->len;
			out->stop_bound = WC_INCLUSIVE;
		}
	}
	if (out->start_bound != WC_UNBOUNDED && out->stop_bound != WC_UNBOUNDED)
	{
		int			c = wcfdw_key_cmp(out->start, out->start_len, out->stop, out->stop_len);

		if (c > 0 || (c == 0 && (out->start_bound == WC_EXCLUSIVE ||
								 out->stop_bound == WC_EXCLUSIVE)))
			return false;
	}
	return true;
}

/*
 * wcfdw_next_chunk
 *		Claims chunks until one holds part of the scan's ranges, and points
 *		the engine scan there; false when none is left
 */
static bool
wcfdw_next_chunk(WcFdwScanState *ss)
{
	wc_key_range all;
	const wc_key_range *ranges = ss->keys.ranges;
	int			nranges = ss->keys.nranges;

	memset(&all, 0, sizeof(all));
	if (nranges == 0)
	{
		/* no ranges: every row */
		ranges = &all;
		nranges = 1;
	}

	for (;;)
	{
		uint32		j = pg_atomic_fetch_add_u32(&ss->pstate->next, 1);
		const wc_slice *lo;
		const wc_slice *hi;
		int			target = (ss->range_in_use == 0) ? 1 : 0;
		wc_key_range *out;
		int			n = 0;
		int			i;
		wc_err		err;
		int			rc;

		if (j > (uint32) ss->nchunk_bounds)
		{
			/* keep the counter from wrapping however often it is asked */
			pg_atomic_write_u32(&ss->pstate->next, (uint32) ss->nchunk_bounds + 1);
			return false;
		}
		lo = j > 0 ? &ss->chunk_bounds[j - 1] : NULL;
		hi = j < (uint32) ss->nchunk_bounds ? &ss->chunk_bounds[j] : NULL;

		/* the open scan may point to the other context's ranges */
		MemoryContextReset(ss->rangecxt[target]);
		out = MemoryContextAlloc(ss->rangecxt[target], sizeof(wc_key_range) * nranges);
		for (i = 0; i < nranges; i++)
			if (wcfdw_intersect_range(&ranges[i], lo, hi, &out[n]))
				n++;
		if (n == 0)
		{
			CHECK_FOR_INTERRUPTS();
			continue;
		}

		wc_err_clear(&err);
		if (ss->scan == NULL)
		{
			ss->opts.ranges = out;
			ss->opts.nranges = n;
			wcfdw_scan_open(ss);
		}
		else
		{
			rc = wc_scan_reset(ss->scan, out, n, &err);
			if (rc < 0)
				wcfdw_engine_error(ERROR, rc, &err, "scan", ss->store->relname);
		}
		ss->range_in_use = target;
		if (ss->wneed)
			wcfdw_wide_reader_reset(&ss->reader, ss->scan);
		return true;
	}
}

/*
 * wcfdw_filters_compute
 *		The cell filters' values as the bytes a cell of their column is
 *		stored as, into the current memory context; false if one is NULL (no
 *		row can match)
 *
 * Cell filters.  A condition "column = value" on a wide table's single-cell
 * column, of a type whose values are equal exactly when their stored bytes
 * are (pushdown.c, wcfdw_cell_filter_from_clause), is also checked by the
 * scan on the bytes of the column's newest visible cell, as HBase's
 * SingleColumnValueFilter checks a cell on the region server: a row whose
 * cell differs, or that has none, is left out before its other cells are
 * decoded and before a tuple is made (wide.c), and is not locked.  The
 * condition stays in the plan's qual (PostgreSQL checks the rows that pass
 * again), so the filter only has to keep every row that can match.
 */
static bool
wcfdw_filters_compute(WcFdwScanState *ss, ExprContext *econtext)
{
	int			i;

	for (i = 0; i < ss->nfilters; i++)
	{
		const WcFdwWideColumn *w = &ss->conv.cols.wide[ss->filters[i].col];
		Oid			vt = exprType((Node *) ss->filter_state[i]->expr);
		bool		isnull;
		Datum		d = ExecEvalExpr(ss->filter_state[i], econtext, &isnull);
		const uint8 *data;
		size_t		len;
		uint8	   *copy;

		if (isnull)
			return false;
		/* an integer of another type (pushdown.c): the column's, if it fits */
		if (vt != w->typid)
		{
			int64		v = vt == INT2OID ? DatumGetInt16(d) :
				vt == INT4OID ? DatumGetInt32(d) : DatumGetInt64(d);

			if ((w->typid == INT2OID && (v < PG_INT16_MIN || v > PG_INT16_MAX)) ||
				(w->typid == INT4OID && (v < PG_INT32_MIN || v > PG_INT32_MAX)))
				return false;	/* no value of the column's type is equal */
			d = w->typid == INT2OID ? Int16GetDatum((int16) v) :
				w->typid == INT4OID ? Int32GetDatum((int32) v) : Int64GetDatum(v);
		}
		wcfdw_value_to_bytes(w->repr, (FmgrInfo *) &w->send, d, &data, &len);
		copy = palloc(Max(len, 1));
		memcpy(copy, data, len);
		ss->filters[i].val = copy;
		ss->filters[i].len = len;
	}
	return true;
}

/* The name of the cursor a WHERE CURRENT OF names through a parameter (PL/pgSQL's). */
static char *
wcfdw_cursor_param_name(ExprContext *econtext, int paramid)
{
	ParamListInfo params = econtext->ecxt_param_list_info;

	if (params != NULL && paramid > 0 && paramid <= params->numParams)
	{
		ParamExternData buf;
		ParamExternData *prm = params->paramFetch != NULL ?
			params->paramFetch(params, paramid, false, &buf) : &params->params[paramid - 1];

		if (OidIsValid(prm->ptype) && !prm->isnull)
		{
			if (prm->ptype != REFCURSOROID)
				ereport(ERROR,
						(errcode(ERRCODE_DATATYPE_MISMATCH),
						 errmsg("type of parameter %d (%s) does not match that when preparing the plan (%s)",
								paramid, format_type_be(prm->ptype),
								format_type_be(REFCURSOROID))));
			return TextDatumGetCString(prm->value);
		}
	}
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("no value found for parameter %d", paramid)));
	return NULL;				/* keep the compiler quiet */
}

/*
 * wcfdw_cursor_scan
 *		Our scans of table relid in a cursor's plan, through the nodes that
 *		return their input's current row (as execCurrent.c looks, and through
 *		LockRows too: our scans lock their rows themselves); *found counts
 *		them, *pending is set if one is under a node with a rescan pending
 */
static void
wcfdw_cursor_scan(PlanState *node, Oid relid, ForeignScanState **scan, int *found,
				  bool *pending)
{
	int			before = *found;

	if (node == NULL)
		return;
	switch (nodeTag(node))
	{
		case T_ForeignScanState:
			{
				ForeignScanState *fs = (ForeignScanState *) node;

				if (fs->ss.ss_currentRelation != NULL &&
					RelationGetRelid(fs->ss.ss_currentRelation) == relid &&
					fs->fdwroutine != NULL &&
					fs->fdwroutine->IterateForeignScan == widecolIterateForeignScan &&
					((ForeignScan *) fs->ss.ps.plan)->operation == CMD_SELECT)
				{
					*scan = fs;
					(*found)++;
				}
				break;
			}
		case T_AppendState:
			for (int i = 0; i < ((AppendState *) node)->as_nplans; i++)
				wcfdw_cursor_scan(((AppendState *) node)->appendplans[i], relid, scan, found,
								  pending);
			break;
		case T_MergeAppendState:
			for (int i = 0; i < ((MergeAppendState *) node)->ms_nplans; i++)
				wcfdw_cursor_scan(((MergeAppendState *) node)->mergeplans[i], relid, scan, found,
								  pending);
			break;
		case T_ResultState:
		case T_LimitState:
		case T_LockRowsState:
			wcfdw_cursor_scan(outerPlanState(node), relid, scan, found, pending);
			break;
		case T_SubqueryScanState:
			wcfdw_cursor_scan(((SubqueryScanState *) node)->subplan, relid, scan, found, pending);
			break;
		default:
			break;
	}
	if (*found > before && node->chgParam != NULL)
		*pending = true;
}

/*
 * wcfdw_current_of
 *		UPDATE or DELETE ... WHERE CURRENT OF cursor: narrows the scan's keys
 *		to the row the cursor's scan of this table returned last (a wide
 *		table's rowkey, a tall table's cell version); false if the cursor is
 *		not on a row of this table
 *
 * PostgreSQL finds that row by the TID of the cursor's current tuple
 * (execCurrent.c), which a foreign row does not have; our scans keep the
 * row's key instead (cur), and the cursor's plan is searched for
 * such a scan of the same table, with execCurrent.c's errors.  A cursor FOR
 * UPDATE works too: the scan under its LockRows locked the row.
 */
static bool
wcfdw_current_of(ForeignScanState *node, WcFdwScanState *ss)
{
	CurrentOfExpr *cexpr = ss->current_of;
	char	   *name = cexpr->cursor_name != NULL ? cexpr->cursor_name :
		wcfdw_cursor_param_name(node->ss.ps.ps_ExprContext, cexpr->cursor_param);
	Portal		portal = GetPortalByName(name);
	QueryDesc  *qd;
	ForeignScanState *fs = NULL;
	WcFdwScanState *cs;
	int			found = 0;
	bool		pending = false;
	wc_key_range *range;

	if (!PortalIsValid(portal))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_CURSOR),
				 errmsg("cursor \"%s\" does not exist", name)));
	if (portal->strategy != PORTAL_ONE_SELECT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_CURSOR_STATE),
				 errmsg("cursor \"%s\" is not a SELECT query", name)));
	qd = portal->queryDesc;
	if (qd == NULL || qd->estate == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_CURSOR_STATE),
				 errmsg("cursor \"%s\" is held from a previous transaction", name)));
	wcfdw_cursor_scan(qd->planstate, RelationGetRelid(ss->rel), &fs, &found, &pending);
	if (found != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_CURSOR_STATE),
				 errmsg("cursor \"%s\" is not a simply updatable scan of table \"%s\"",
						name, RelationGetRelationName(ss->rel))));
	if (portal->atStart || portal->atEnd)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_CURSOR_STATE),
				 errmsg("cursor \"%s\" is not positioned on a row", name)));
	cs = fs->fdw_state;
	if (cs != NULL && cs->conv.cols.wide == NULL && !cs->note_cells)
		ereport(ERROR,			/* not a named portal's, which cannot be */
				(errcode(ERRCODE_INVALID_CURSOR_STATE),
				 errmsg("cursor \"%s\" is not a simply updatable scan of table \"%s\"",
						name, RelationGetRelationName(ss->rel))));
	if (pending || cs == NULL || TupIsNull(fs->ss.ss_ScanTupleSlot) || cs->cur.row == NULL)
		return false;			/* another table's scan gave the cursor's row */

	range = palloc(sizeof(wc_key_range));
	wcfdw_point_range(range, memcpy(palloc(Max(cs->cur.row_len, 1)), cs->cur.row,
									cs->cur.row_len), cs->cur.row_len);
	ss->keys.ranges = range;
	ss->keys.nranges = 1;
	if (ss->conv.cols.wide == NULL)
	{
		wc_slice   *fam = palloc(sizeof(wc_slice));
		wc_slice   *qual = palloc(sizeof(wc_slice));

		fam->data = memcpy(palloc(Max(cs->cur.family_len, 1)), cs->cur.family,
						   cs->cur.family_len);
		fam->len = cs->cur.family_len;
		qual->data = memcpy(palloc(Max(cs->cur.qual_len, 1)), cs->cur.qual, cs->cur.qual_len);
		qual->len = cs->cur.qual_len;
		ss->keys.families = fam;
		ss->keys.nfamilies = 1;
		ss->keys.quals = qual;
		ss->keys.nquals = 1;
		ss->keys.ts_min = ss->keys.ts_max = cs->cur.ts;
	}
	return true;
}

/* A tall scan's row about to be returned: its key, for WHERE CURRENT OF. */
static inline void
wcfdw_note_cell(WcFdwScanState *ss, const wc_cell_view *c)
{
	size_t		need = c->row_len + c->family_len + c->qual_len;

	if (need > ss->cur_cap)
	{
		size_t		cap = Max(need, Max(ss->cur_cap * 2, 128));

		if (ss->cur_buf != NULL)
			pfree(ss->cur_buf);
		ss->cur_buf = MemoryContextAlloc(GetMemoryChunkContext(ss), cap);
		ss->cur_cap = cap;
	}
	memcpy(ss->cur_buf, c->row, c->row_len);
	memcpy(ss->cur_buf + c->row_len, c->family, c->family_len);
	memcpy(ss->cur_buf + c->row_len + c->family_len, c->qual, c->qual_len);
	ss->cur.row = ss->cur_buf;
	ss->cur.row_len = c->row_len;
	ss->cur.family = (const char *) ss->cur_buf + c->row_len;
	ss->cur.family_len = c->family_len;
	ss->cur.qual = ss->cur_buf + c->row_len + c->family_len;
	ss->cur.qual_len = c->qual_len;
	ss->cur.ts = c->ts;
}

/*
 * wcfdw_scan_start
 *		Computes the keys and opens the engine scan
 */
static void
wcfdw_scan_start(ForeignScanState *node, WcFdwScanState *ss)
{
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	MemoryContext old;

	Assert(ss->scan == NULL);
	MemoryContextReset(ss->keycxt);
	ss->range_in_use = -1;
	old = MemoryContextSwitchTo(ss->keycxt);
	wcfdw_compute_keys(ss->conds, ss->nconds, econtext, &ss->conv, &ss->topts,
					   false, &ss->keys);
	ss->started = true;
	ss->empty = ss->keys.empty;
	if (ss->current_of != NULL && !ss->empty && !wcfdw_current_of(node, ss))
		ss->empty = true;
	/* the leader scans the whole table (it has pending writes): nothing here */
	if (ss->pstate != NULL && ss->leader_only && IsParallelWorker())
		ss->empty = true;
	if (ss->empty)
	{
		MemoryContextSwitchTo(old);
		return;
	}

	wc_scan_opts_init(&ss->opts);
	ss->opts.ranges = ss->keys.ranges;
	ss->opts.nranges = ss->keys.nranges;
	ss->opts.families = ss->keys.families;
	ss->opts.nfamilies = ss->keys.nfamilies;
	ss->opts.quals = ss->keys.quals;
	ss->opts.nquals = ss->keys.nquals;
	ss->opts.qual_prefixes = ss->keys.qual_prefixes;
	ss->opts.nqual_prefixes = ss->keys.nqual_prefixes;
	ss->opts.qual_range = ss->keys.has_qual_range ? &ss->keys.qual_range : NULL;
	ss->opts.ts_min = ss->keys.ts_min;
	ss->opts.ts_max = ss->keys.ts_max;
	ss->opts.reverse = ss->reverse;
	/* a parallel scan's chunks: a scan of the table, not of a few rows */
	ss->opts.bulk = ss->pstate != NULL;
	if (ss->wread)
		wcfdw_wide_scan_cells(&ss->conv.cols, ss->wread, ss->keycxt,
							  (wc_slice **) &ss->opts.families, &ss->opts.nfamilies,
							  (wc_slice **) &ss->opts.quals, &ss->opts.nquals);
	ss->opts.now_ms = wcfdw_timestamptz_to_ms(GetCurrentStatementStartTimestamp());
	wcfdw_store_visible_batches(ss->store, ss->curcid, &ss->opts);
	wcfdw_scan_opts_snapshot(&ss->opts, &ss->snap);
	if (!wcfdw_filters_compute(ss, econtext))
	{
		ss->empty = true;
		MemoryContextSwitchTo(old);
		return;
	}
	MemoryContextSwitchTo(old);

	if (ss->pstate != NULL && !ss->leader_only)
	{
		/* the scan opens on the first chunk that holds part of the ranges */
		if (!wcfdw_next_chunk(ss))
			ss->empty = true;
		return;
	}

	wcfdw_scan_open(ss);
	if (ss->wneed)
		wcfdw_wide_reader_reset(&ss->reader, ss->scan);
}

/*
 * wcfdw_rowkey_hash
 *		A hash of a rowkey: the tag of a wide table's row lock, and of the
 *		intention lock a tall table's row lock takes beside its own
 */
static inline uint64
wcfdw_rowkey_hash(const uint8 *row, size_t row_len)
{
	return hash_bytes_extended(row, (int) row_len, 0);
}

/*
 * wcfdw_row_hash
 *		A hash of a tall table's row (a cell version): (rowkey, family,
 *		qualifier, ts), from its rowkey's hash h
 */
static uint64
wcfdw_row_hash(const wc_cell_view *c, uint64 h)
{
	h = hash_bytes_extended((const unsigned char *) c->family, (int) c->family_len, h);
	h = hash_bytes_extended(c->qual, (int) c->qual_len, h);
	return hash_bytes_extended((const unsigned char *) &c->ts, sizeof(c->ts), h);
}

/* Escalation is tried again after this many more row locks when it could not be. */
#define WCFDW_ESCALATION_RETRY	256

/* NOWAIT's error, or false for SKIP LOCKED: a row lock the scan cannot have now. */
static bool
wcfdw_row_lock_not_available(Relation rel, LockWaitPolicy wait)
{
	if (wait == LockWaitSkip)
		return false;
	ereport(ERROR,
			(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
			 errmsg("could not obtain lock on row in relation \"%s\"",
					RelationGetRelationName(rel))));
	return false;				/* keep the compiler quiet */
}

/*
 * wcfdw_row_intention_mode
 *		The mode of the rowkey lock a tall table's row lock in mode takes
 *		beside its own
 *
 * A wide table locks a row by its rowkey, a tall table a cell version, so
 * the tall one also takes its rowkey's tag in a mode that conflicts with the
 * wide modes it must (PostgreSQL's lock modes, conflicts in lock.c):
 * RowExclusiveLock for a writer, against a wide FOR SHARE (ShareLock), FOR
 * NO KEY UPDATE (ExclusiveLock) and FOR UPDATE (AccessExclusiveLock);
 * RowShareLock for FOR SHARE and FOR KEY SHARE, against the last two.  Two
 * tall lockers never conflict there: each waits for the other only on a
 * cell version both lock, as rows of an ordinary table.
 */
static inline LOCKMODE
wcfdw_row_intention_mode(LOCKMODE mode)
{
	return mode >= ExclusiveLock ? RowExclusiveLock : RowShareLock;
}

/* Takes tag in mode, counting a lock newly taken for escalation; false: not available. */
static bool
wcfdw_row_lock_take(WcFdwStore *store, const LOCKTAG *rows, const LOCKTAG *tag, LOCKMODE mode,
					LockWaitPolicy wait)
{
	LockAcquireResult r;
	int64		n;

	/* a lock that would wait is not available only when the lock table is full */
	r = LockAcquireExtended(tag, mode, false, wait != LockWaitBlock, wait != LockWaitBlock, NULL);
	if (r == LOCKACQUIRE_NOT_AVAIL && wait == LockWaitBlock)
	{
		/* every row at once, if no other transaction locks rows in the store */
		if (LockAcquire(rows, ExclusiveLock, false, true) != LOCKACQUIRE_NOT_AVAIL)
			return true;
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of shared memory"),
				 errdetail("The lock table has no room for another row lock of widecol table \"%s\", and other transactions hold row locks in it.",
						   store->relname ? store->relname : "?"),
				 errhint("Increase max_locks_per_transaction, or lower widecol_fdw.max_row_locks so that transactions lock all rows of a table at once sooner.")));
	}
	if (r == LOCKACQUIRE_NOT_AVAIL)
		return false;
	/* past the limit: at once in a table newly locked in, then every RETRY locks */
	if (r == LOCKACQUIRE_OK && wcfdw_max_row_locks >= 0 &&
		(n = wcfdw_store_count_row_lock(store)) > wcfdw_max_row_locks &&
		((n - wcfdw_max_row_locks - 1) % WCFDW_ESCALATION_RETRY == 0 ||
		 (store->nrowlocks - 1) % WCFDW_ESCALATION_RETRY == 0))
		(void) LockAcquire(rows, ExclusiveLock, false, true);
	return true;
}

/*
 * wcfdw_row_lock_acquire
 *		Takes the row lock of a row in mode: a tall table's cell version cell
 *		(rowkey hash rh), or with cell NULL a wide table's rowkey (hash rh);
 *		false if SKIP LOCKED skips it
 *
 * The lock manager's tag is a tuple lock tag of the table that owns the
 * store (so that two tables showing one store lock the same rows), its
 * block and offset 48 bits of the row's hash: pg_locks shows locktype
 * "tuple" on that table.  Two rows share a lock only if their hashes
 * collide: a needless wait, never a missed one.  NOWAIT: 55P03, as for a
 * heap row.  The modes are those of a heap tuple lock of the same strength
 * (widecol_fdw.c, wcfdw_row_lock), but FOR SHARE's is ShareLock, which
 * conflicts with the others as the heap's RowShareLock does and also with
 * the RowExclusiveLock a tall writer takes on its rowkey: when a wide table
 * shows the store (wcfdw_store_has_wide), a tall table's row lock first
 * takes its rowkey's tag (wcfdw_row_intention_mode), so that a tall and a
 * wide table over one store wait for each other's writers.  A store only
 * tall tables show needs no such lock: one lock a row, as before.
 *
 * Lock escalation.  A heap row's lock lives in the row itself; ours take a
 * slot of the shared lock table each, which holds max_locks_per_transaction
 * slots per connection: an UPDATE or DELETE of some thousands of rows in one
 * transaction filled it ("out of shared memory"), for every session.  So a
 * row locker first holds the store's rows lock, a page lock tag (page 0 of
 * the same table, which has no pages), in RowExclusiveLock until its
 * transaction ends: row lockers never wait for each other there.  Once a
 * transaction has taken widecol_fdw.max_row_locks locks of rows and rowkeys
 * in the store, it asks for that lock in ExclusiveLock, without waiting:
 * granted only when no other transaction holds row locks in the store, it
 * then stands for a lock of every row, and no more row locks are taken (a
 * transaction that wants to lock a row waits for the whole transaction, a
 * NOWAIT fails, SKIP LOCKED skips).  Not granted, the transaction goes on
 * with row locks and asks again later, so escalation never waits and never
 * deadlocks.  Plain reads, INSERT and COPY take no row lock and never wait
 * for it.
 */
static bool
wcfdw_row_lock_acquire(WcFdwStore *store, Relation rel, uint64 rh, const wc_cell_view *cell,
					   LOCKMODE mode, LockWaitPolicy wait)
{
	LOCKTAG		rows;
	LOCKTAG		tag;
	uint64		h;

	SET_LOCKTAG_PAGE(rows, MyDatabaseId, store->relid, 0);
	if (LockHeldByMe(&rows, ExclusiveLock))
		return true;			/* escalated: every row is ours */
	if (!LockHeldByMe(&rows, RowExclusiveLock) &&
		LockAcquire(&rows, RowExclusiveLock, false, wait != LockWaitBlock) == LOCKACQUIRE_NOT_AVAIL)
		return wcfdw_row_lock_not_available(rel, wait);

	if (cell != NULL && wcfdw_store_has_wide(store))
	{
		SET_LOCKTAG_TUPLE(tag, MyDatabaseId, store->relid, (BlockNumber) rh,
						  (OffsetNumber) (rh >> 32));
		if (!wcfdw_row_lock_take(store, &rows, &tag, wcfdw_row_intention_mode(mode), wait))
			return wcfdw_row_lock_not_available(rel, wait);
		if (LockHeldByMe(&rows, ExclusiveLock))
			return true;		/* escalated just now */
	}
	h = cell != NULL ? wcfdw_row_hash(cell, rh) : rh;
	SET_LOCKTAG_TUPLE(tag, MyDatabaseId, store->relid, (BlockNumber) h,
					  (OffsetNumber) (h >> 32));
	if (!wcfdw_row_lock_take(store, &rows, &tag, mode, wait))
		return wcfdw_row_lock_not_available(rel, wait);
	return true;
}

/*
 * wcfdw_lock_cell
 *		Takes the row lock of a tall table's cell version c, as a scan that
 *		locks its rows does (direct.c's DELETE); false if SKIP LOCKED skips it
 */
bool
wcfdw_lock_cell(WcFdwStore *store, Relation rel, const wc_cell_view *c, LOCKMODE mode,
				LockWaitPolicy wait)
{
	return wcfdw_row_lock_acquire(store, rel, wcfdw_rowkey_hash(c->row, c->row_len), c, mode,
								  wait);
}

/*
 * wcfdw_lock_rowkey
 *		Takes the row lock of a wide table's row, as a scan that locks its rows
 *		does (direct.c's UPDATE); false if SKIP LOCKED skips it
 */
bool
wcfdw_lock_rowkey(WcFdwStore *store, Relation rel, const uint8 *row, size_t row_len,
				  LOCKMODE mode, LockWaitPolicy wait)
{
	return wcfdw_row_lock_acquire(store, rel, wcfdw_rowkey_hash(row, row_len), NULL, mode, wait);
}

/*
 * wcfdw_row_wait
 *		Waits for the transactions that hold a row's lock (a wide table's
 *		rowkey, cell NULL, or a tall table's cell version) in a mode that
 *		conflicts with an UPDATE's, and keeps nothing of it: as the heap waits
 *		for a tuple's deleter or updater before it looks at the tuple again
 *		(INSERT ... ON CONFLICT DO NOTHING, modify.c)
 */
void
wcfdw_row_wait(WcFdwStore *store, const uint8 *row, size_t row_len, const wc_cell_view *cell)
{
	LOCKTAG		rows;
	LOCKTAG		tag;
	uint64		rh = wcfdw_rowkey_hash(row, row_len);
	uint64		h;

	SET_LOCKTAG_PAGE(rows, MyDatabaseId, store->relid, 0);
	if (LockHeldByMe(&rows, ExclusiveLock))
		return;					/* escalated: every row is ours */
	/* a transaction that escalated holds its rows through this one */
	if (!LockHeldByMe(&rows, RowExclusiveLock))
		(void) LockAcquire(&rows, RowExclusiveLock, false, false);
	if (cell != NULL && wcfdw_store_has_wide(store))
	{
		/* a wide table's writer of the row */
		SET_LOCKTAG_TUPLE(tag, MyDatabaseId, store->relid, (BlockNumber) rh,
						  (OffsetNumber) (rh >> 32));
		if (LockAcquire(&tag, RowExclusiveLock, false, false) == LOCKACQUIRE_OK)
			LockRelease(&tag, RowExclusiveLock, false);
	}
	h = cell != NULL ? wcfdw_row_hash(cell, rh) : rh;
	SET_LOCKTAG_TUPLE(tag, MyDatabaseId, store->relid, (BlockNumber) h,
					  (OffsetNumber) (h >> 32));
	if (LockAcquire(&tag, ExclusiveLock, false, false) == LOCKACQUIRE_OK)
		LockRelease(&tag, ExclusiveLock, false);
}

typedef enum WcFdwLockResult
{
	WCFDW_ROW_SAME,				/* locked; the version read is the newest */
	WCFDW_ROW_NEWER,			/* locked; slot now holds the newest version */
	WCFDW_ROW_GONE,				/* locked; the row was deleted meanwhile */
	WCFDW_ROW_SKIPPED			/* SKIP LOCKED: held by another transaction */
} WcFdwLockResult;

/*
 * wcfdw_lock_row
 *		Locks the row the scan just read (cell, in slot), and finds its newest
 *		committed version
 *
 * As the heap does for UPDATE, DELETE and SELECT FOR UPDATE/SHARE: wait for
 * the transaction holding the row (in the lock manager: deadlocks are
 * detected, lock_timeout and statement_timeout apply), then look at the
 * newest committed version.  If it is the one the snapshot gave, go on.  If
 * not, a transaction committed a change the snapshot does not see: READ
 * COMMITTED works on the newest version (the executor checks the conditions
 * again on it, as EvalPlanQual), REPEATABLE READ and SERIALIZABLE fail with
 * 40001.
 */
static WcFdwLockResult
wcfdw_lock_row(ForeignScanState *node, WcFdwScanState *ss, const wc_cell_view *cell,
			   TupleTableSlot *slot)
{
	wc_scan    *point;
	wc_cell_view newest;
	int			found;
	MemoryContext old;

	if (!wcfdw_lock_cell(ss->store, ss->rel, cell, ss->lockmode, ss->waitpolicy))
		return WCFDW_ROW_SKIPPED;

	/* what committed up to now, and was it anything the snapshot missed? */
	wcfdw_store_refresh(ss->store);
	if (wc_scan_sees_latest(ss->scan))
		return WCFDW_ROW_SAME;

	point = wcfdw_open_newest(ss->store, cell, &ss->opts, &newest, &found);
	if (found == 1 && newest.seq == cell->seq)
	{
		wc_scan_close(point);
		return WCFDW_ROW_SAME;
	}
	if (IsolationUsesXactSnapshot())
	{
		wc_scan_close(point);
		/* the heap's words: a row lock (FOR UPDATE/SHARE) says "update" either way */
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not serialize access due to concurrent %s",
						found == 0 && ss->lock_target ? "delete" : "update")));
	}
	if (found == 0)
	{
		wc_scan_close(point);
		if (wcfdw_cell_replaced(ss->store, &ss->opts, cell))
			wcfdw_replaced_error();
		return WCFDW_ROW_GONE;
	}
	ExecClearTuple(slot);
	MemoryContextReset(ss->tuplecxt);
	old = MemoryContextSwitchTo(ss->tuplecxt);
	wcfdw_cell_to_values(&ss->conv, ss->need, &newest, slot->tts_values, slot->tts_isnull,
						 slot->tts_tupleDescriptor->natts);
	MemoryContextSwitchTo(old);
	wc_scan_close(point);
	ExecStoreVirtualTuple(slot);
	return WCFDW_ROW_NEWER;
}

/*
 * wcfdw_lock_wide_row
 *		Locks the row of a wide table the scan just read (rowkey row, in
 *		slot), and finds its newest committed version
 *
 * As wcfdw_lock_row, for a row that is a rowkey: the lock's tag is a hash of
 * the rowkey alone (on the table that has the store, so that two tables
 * showing one store lock the same rows), and the row read again is the
 * row's cells that the scan reads, newest committed.  The row is the same
 * if it is made of the same cell versions (the reader's fingerprint).
 */
static WcFdwLockResult
wcfdw_lock_wide_row(WcFdwScanState *ss, const uint8 *row, size_t row_len,
					TupleTableSlot *slot)
{
	wc_scan_opts o;
	wc_key_range range;
	wc_scan    *point = NULL;
	WcFdwWideReader pr;
	int			natts = slot->tts_tupleDescriptor->natts;
	Datum	   *values;
	bool	   *isnull;
	const uint8 *prow;
	size_t		prow_len;
	wc_err		err;
	int			rc,
				found;
	MemoryContext old;

	if (!wcfdw_lock_rowkey(ss->store, ss->rel, row, row_len, ss->lockmode, ss->waitpolicy))
		return WCFDW_ROW_SKIPPED;

	wcfdw_store_refresh(ss->store);
	if (wc_scan_sees_latest(ss->scan))
		return WCFDW_ROW_SAME;

	old = MemoryContextSwitchTo(ss->tuplecxt);
	o = ss->opts;
	wcfdw_point_range(&range, row, row_len);
	o.ranges = &range;
	o.nranges = 1;
	wcfdw_scan_opts_newest(&o);
	wc_err_clear(&err);
	rc = wc_scan_open(ss->store->db, &o, &point, &err);
	if (rc < 0)
		wcfdw_engine_error(ERROR, rc, &err, "scan", ss->store->relname);
	wcfdw_wide_reader_init(&pr, &ss->conv, ss->wneed, ss->tuplecxt);
	wcfdw_wide_reader_reset(&pr, point);
	values = palloc(sizeof(Datum) * natts);
	isnull = palloc(sizeof(bool) * natts);
	wc_err_clear(&err);
	PG_TRY();
	{
		found = wcfdw_wide_next_row(&pr, values, isnull, natts, &prow, &prow_len, &err);
	}
	PG_FINALLY();
	{
		wc_scan_close(point);
	}
	PG_END_TRY();
	MemoryContextSwitchTo(old);
	if (found < 0)
		wcfdw_engine_error(ERROR, found, &err, "scan", ss->store->relname);
	if (found == 1 && pr.fingerprint == ss->reader.fingerprint)
		return WCFDW_ROW_SAME;
	if (IsolationUsesXactSnapshot())
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not serialize access due to concurrent %s",
						found == 0 && ss->lock_target ? "delete" : "update")));
	if (found == 0)
		return WCFDW_ROW_GONE;
	ExecClearTuple(slot);
	memcpy(slot->tts_values, values, sizeof(Datum) * natts);
	memcpy(slot->tts_isnull, isnull, sizeof(bool) * natts);
	ExecStoreVirtualTuple(slot);
	return WCFDW_ROW_NEWER;
}

/*
 * wcfdw_iterate_wide
 *		IterateForeignScan of a wide table: one row per rowkey
 */
static TupleTableSlot *
wcfdw_iterate_wide(ForeignScanState *node, WcFdwScanState *ss, TupleTableSlot *slot)
{
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	const uint8 *row;
	size_t		row_len;
	wc_err		err;
	MemoryContext old;
	int			rc;

	for (;;)
	{
		MemoryContextReset(ss->tuplecxt);
		wc_err_clear(&err);
		old = MemoryContextSwitchTo(ss->tuplecxt);
		rc = wcfdw_wide_next_row(&ss->reader, slot->tts_values, slot->tts_isnull,
								 slot->tts_tupleDescriptor->natts, &row, &row_len, &err);
		MemoryContextSwitchTo(old);
		if (rc < 0)
			wcfdw_engine_error(ERROR, rc, &err, "scan", ss->store->relname);
		if (rc == 0)
		{
			if (ss->pstate != NULL && !ss->leader_only && wcfdw_next_chunk(ss))
				continue;
			return ExecClearTuple(slot);
		}
		if (rc == WCFDW_WIDE_FILTERED)
		{
			/* the qual's work: "Rows Removed by Filter", as an ordinary table's */
			InstrCountFiltered1(node, 1);
			CHECK_FOR_INTERRUPTS();
			continue;
		}
		ExecStoreVirtualTuple(slot);
		/* the rowkey lives in tuplecxt as the row does: WHERE CURRENT OF's */
		ss->cur.row = row;
		ss->cur.row_len = row_len;
		if (ss->lockmode == NoLock)
			return slot;

		ResetExprContext(econtext);
		econtext->ecxt_scantuple = slot;
		if (node->ss.ps.qual != NULL && !ExecQual(node->ss.ps.qual, econtext))
			continue;
		switch (wcfdw_lock_wide_row(ss, row, row_len, slot))
		{
			case WCFDW_ROW_SAME:
			case WCFDW_ROW_NEWER:
				return slot;
			case WCFDW_ROW_GONE:
			case WCFDW_ROW_SKIPPED:
				break;
		}
		CHECK_FOR_INTERRUPTS();
	}
}

TupleTableSlot *
widecolIterateForeignScan(ForeignScanState *node)
{
	WcFdwScanState *ss = node->fdw_state;
	TupleTableSlot *slot = wcfdw_iterate(node, ss);

	/*
	 * The ctid of an inherited row mark's junk column is read from a heap
	 * tuple: form one, its tuple id invalid (the child's own mark copies the
	 * whole row and never uses it).
	 */
	if (ss->ctid_junk && !TupIsNull(slot))
		ExecMaterializeSlot(slot);
	return slot;
}

static TupleTableSlot *
wcfdw_iterate(ForeignScanState *node, WcFdwScanState *ss)
{
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	wc_cell_view cell;
	wc_err		err;
	MemoryContext old;
	int			rc;

	CHECK_FOR_INTERRUPTS();
	if (!ss->started)
		wcfdw_scan_start(node, ss);
	ExecClearTuple(slot);
	if (ss->empty)
		return slot;
	if (ss->wneed)
		return wcfdw_iterate_wide(node, ss, slot);

	for (;;)
	{
		MemoryContextReset(ss->tuplecxt);
		wc_err_clear(&err);
		rc = wc_scan_next(ss->scan, &cell, &err);
		if (rc < 0)
			wcfdw_engine_error(ERROR, rc, &err, "scan", ss->store->relname);
		if (rc == 0)
		{
			if (ss->pstate != NULL && !ss->leader_only && wcfdw_next_chunk(ss))
				continue;
			return ExecClearTuple(slot);
		}

		old = MemoryContextSwitchTo(ss->tuplecxt);
		wcfdw_cell_to_values(&ss->conv, ss->need, &cell, slot->tts_values, slot->tts_isnull,
							 slot->tts_tupleDescriptor->natts);
		MemoryContextSwitchTo(old);
		ExecStoreVirtualTuple(slot);
		if (ss->note_cells)
			wcfdw_note_cell(ss, &cell);
		if (ss->lockmode == NoLock)
			return slot;

		/* lock only the rows the conditions take, as read by the snapshot */
		ResetExprContext(econtext);
		econtext->ecxt_scantuple = slot;
		if (node->ss.ps.qual != NULL && !ExecQual(node->ss.ps.qual, econtext))
			continue;
		switch (wcfdw_lock_row(node, ss, &cell, slot))
		{
			case WCFDW_ROW_SAME:
			case WCFDW_ROW_NEWER:	/* the executor checks the conditions again */
				return slot;
			case WCFDW_ROW_GONE:
			case WCFDW_ROW_SKIPPED:
				break;
		}
		CHECK_FOR_INTERRUPTS();
	}
}

void
widecolReScanForeignScan(ForeignScanState *node)
{
	WcFdwScanState *ss = node->fdw_state;

	ss->nrescans++;
	if (!ss->started)
		return;

	/* a parallel scan starts over on the chunks (ReInitializeDSM) */
	if (ss->scan != NULL && ss->rowkey_only_rescan && ss->pstate == NULL)
	{
		int			target = (ss->range_in_use == 0) ? 1 : 0;
		WcFdwScanKeys keys = ss->keys;
		MemoryContext old;
		wc_err		err;
		int			rc;

		MemoryContextReset(ss->rangecxt[target]);
		old = MemoryContextSwitchTo(ss->rangecxt[target]);
		wcfdw_compute_keys(ss->conds, ss->nconds, node->ss.ps.ps_ExprContext,
						   &ss->conv, &ss->topts, true, &keys);
		MemoryContextSwitchTo(old);
		if (keys.empty)
		{
			/* keep the scan (and the ranges it points to) as they are */
			ss->empty = true;
			return;
		}
		wc_err_clear(&err);
		rc = wc_scan_reset(ss->scan, keys.ranges, keys.nranges, &err);
		if (rc < 0)
			wcfdw_engine_error(ERROR, rc, &err, "scan", ss->store->relname);
		ss->keys.ranges = keys.ranges;
		ss->keys.nranges = keys.nranges;
		ss->range_in_use = target;
		ss->empty = false;
		if (ss->wneed)
			wcfdw_wide_reader_reset(&ss->reader, ss->scan);
		return;
	}

	wcfdw_scan_close(ss);
	ss->started = false;
	ss->empty = false;
}

void
widecolEndForeignScan(ForeignScanState *node)
{
	WcFdwScanState *ss = node->fdw_state;

	if (ss)
		wcfdw_scan_close(ss);
}

/* ---------------------------------------------------------------- parallel */

/* the bounds of the DSM at p, as slices pointing into it */
static void
wcfdw_parallel_attach(WcFdwScanState *ss, WcFdwParallel *p)
{
	const char *d = p->data;
	uint32		i;

	ss->pstate = p;
	ss->leader_only = p->leader_only;
	ss->nchunk_bounds = (int) p->nbounds;
	ss->chunk_bounds = palloc(sizeof(wc_slice) * Max(p->nbounds, 1));
	for (i = 0; i < p->nbounds; i++)
	{
		uint32		len;

		memcpy(&len, d, sizeof(len));
		d += sizeof(len);
		ss->chunk_bounds[i].data = (const uint8_t *) d;
		ss->chunk_bounds[i].len = len;
		d += len;
	}
}

/*
 * widecolEstimateDSMForeignScan
 *		The chunks' bounds: at most WCFDW_PARALLEL_MAX_CHUNKS - 1 of the
 *		files' block bounds, evenly taken
 */
Size
widecolEstimateDSMForeignScan(ForeignScanState *node, ParallelContext *pcxt)
{
	WcFdwScanState *ss = node->fdw_state;
	wc_slice   *bounds = NULL;
	int			nbounds = 0;
	int			keep;
	int			i;
	Size		size;
	char	   *d;
	wc_err		err;
	int			rc;

	wc_err_clear(&err);
	rc = wc_db_block_bounds(ss->store->db, NULL, 0, &bounds, &nbounds, &err);
	wcfdw_check(rc, &err, "split", ss->store->relname);
	keep = Min(nbounds, WCFDW_PARALLEL_MAX_CHUNKS - 1);
	size = offsetof(WcFdwParallel, data);
	for (i = 0; i < keep; i++)
		size += sizeof(uint32) + bounds[(int64) i * nbounds / keep].len;
	ss->dsm_image = MemoryContextAllocZero(node->ss.ps.state->es_query_cxt, size);
	ss->dsm_size = size;
	((WcFdwParallel *) ss->dsm_image)->nbounds = keep;
	d = ((WcFdwParallel *) ss->dsm_image)->data;
	for (i = 0; i < keep; i++)
	{
		const wc_slice *b = &bounds[(int64) i * nbounds / keep];
		uint32		len = (uint32) b->len;

		memcpy(d, &len, sizeof(len));
		d += sizeof(len);
		memcpy(d, b->data, b->len);
		d += b->len;
	}
	free(bounds);
	return size;
}

void
widecolInitializeDSMForeignScan(ForeignScanState *node, ParallelContext *pcxt,
								void *coordinate)
{
	WcFdwScanState *ss = node->fdw_state;
	WcFdwParallel *p = coordinate;
	wc_scan_opts mine;

	memcpy(p, ss->dsm_image, ss->dsm_size);
	pg_atomic_init_u32(&p->next, 0);

	/* this transaction's writes, which only the leader can overlay */
	wcfdw_store_visible_batches(ss->store, ss->curcid, &mine);
	p->leader_only = mine.npending > 0;
	if (p->leader_only && !parallel_leader_participation)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot scan widecol table \"%s\" in parallel workers: the transaction has pending writes to it",
						RelationGetRelationName(ss->rel)),
				 errdetail("The plan was made before the writes, and parallel_leader_participation is off."),
				 errhint("Set parallel_leader_participation on, or max_parallel_workers_per_gather to 0.")));
	wcfdw_parallel_attach(ss, p);
}

void
widecolReInitializeDSMForeignScan(ForeignScanState *node, ParallelContext *pcxt,
								  void *coordinate)
{
	WcFdwParallel *p = coordinate;

	pg_atomic_write_u32(&p->next, 0);
}

void
widecolInitializeWorkerForeignScan(ForeignScanState *node, shm_toc *toc, void *coordinate)
{
	WcFdwScanState *ss = node->fdw_state;

	wcfdw_parallel_attach(ss, coordinate);
}

/* ---------------------------------------------------------------- EXPLAIN */

/*
 * wcfdw_explain_node
 *		Appends the condition node at *node (an index into condinfo's triples)
 *		and its subtree; *leaf is the index of the next leaf's expr
 */
static void
wcfdw_explain_node(StringInfo buf, ExplainState *es, List *condinfo, List *exprs,
				   int *node, int *leaf)
{
	WcFdwCondKind k = list_nth_int(condinfo, 3 * *node + 1);
	int			nargs = list_nth_int(condinfo, 3 * *node + 2);
	int			a;

	(*node)++;
	if (k != WCK_OR && k != WCK_AND)
	{
		appendStringInfo(buf, "%s %s", wcfdw_cond_op_name(k),
						 deparse_expression(list_nth(exprs, (*leaf)++), es->deparse_cxt,
											false, false));
		return;
	}
	appendStringInfoChar(buf, '(');
	for (a = 0; a < nargs; a++)
	{
		if (a > 0)
			appendStringInfo(buf, " %s ", wcfdw_cond_op_name(k));
		wcfdw_explain_node(buf, es, condinfo, exprs, node, leaf);
	}
	appendStringInfoChar(buf, ')');
}

/*
 * wcfdw_plan_ancestors
 *		Whether target lies in the tree under plan; if so, *ancestors (most
 *		closely nested first, as EXPLAIN keeps them) gets the plans between
 */
static bool
wcfdw_plan_ancestors(Plan *plan, Plan *target, List **ancestors)
{
	List	   *kids = NIL;
	ListCell   *lc;

	if (plan == NULL)
		return false;
	if (plan == target)
		return true;
	switch (nodeTag(plan))
	{
		case T_Append:
			kids = ((Append *) plan)->appendplans;
			break;
		case T_MergeAppend:
			kids = ((MergeAppend *) plan)->mergeplans;
			break;
		case T_BitmapAnd:
			kids = ((BitmapAnd *) plan)->bitmapplans;
			break;
		case T_BitmapOr:
			kids = ((BitmapOr *) plan)->bitmapplans;
			break;
		case T_SubqueryScan:
			kids = list_make1(((SubqueryScan *) plan)->subplan);
			break;
		case T_CustomScan:
			kids = ((CustomScan *) plan)->custom_plans;
			break;
		default:
			break;
	}
	*ancestors = lcons(plan, *ancestors);
	if (wcfdw_plan_ancestors(plan->lefttree, target, ancestors) ||
		wcfdw_plan_ancestors(plan->righttree, target, ancestors))
		return true;
	foreach(lc, kids)
		if (wcfdw_plan_ancestors(lfirst(lc), target, ancestors))
			return true;
	*ancestors = list_delete_first(*ancestors);
	return false;
}

/*
 * wcfdw_explain_context
 *		Points EXPLAIN's deparse context at our plan node
 *
 * EXPLAIN sets it for a node when it shows the node's qual; ours may have
 * none left (the conditions the engine enforces exactly are not checked
 * again: widecol_fdw.c), and an outer column of a parameterized scan
 * ("Rowkeys: = w.k", a nestloop Param) is found through the ancestors.
 * Called once per node, before its wcfdw_explain_conds.
 */
void
wcfdw_explain_context(ForeignScanState *node, ExplainState *es)
{
	Plan	   *plan = node->ss.ps.plan;
	List	   *ancestors = NIL;
	ListCell   *lc;

	if (es->deparse_cxt == NULL || es->pstmt == NULL)
		return;
	if (!wcfdw_plan_ancestors(es->pstmt->planTree, plan, &ancestors))
	{
		foreach(lc, es->pstmt->subplans)
		{
			ancestors = NIL;
			if (wcfdw_plan_ancestors(lfirst(lc), plan, &ancestors))
				break;
		}
	}
	es->deparse_cxt = set_deparse_context_plan(es->deparse_cxt, plan, ancestors);
}

/*
 * wcfdw_explain_conds
 *		The plan's pushed conditions on field as EXPLAIN shows them ("= 'x'
 *		AND ..."), NULL if none
 */
char *
wcfdw_explain_conds(ForeignScanState *node, ExplainState *es, WcFdwField field)
{
	ForeignScan *plan = (ForeignScan *) node->ss.ps.plan;
	List	   *condinfo = list_nth(plan->fdw_private, WCFDW_PRIV_CONDS);
	int			nnodes = list_length(condinfo) / 3;
	StringInfoData buf;
	StringInfoData one;
	int			i = 0,
				leaf = 0;

	initStringInfo(&buf);
	initStringInfo(&one);
	while (i < nnodes)
	{
		WcFdwField f = list_nth_int(condinfo, 3 * i);

		resetStringInfo(&one);
		wcfdw_explain_node(&one, es, condinfo, plan->fdw_exprs, &i, &leaf);
		if (f != field)
			continue;
		if (buf.len > 0)
			appendStringInfoString(&buf, " AND ");
		appendStringInfoString(&buf, one.data);
	}
	return buf.len > 0 ? buf.data : NULL;
}

static void
wcfdw_explain_field(ForeignScanState *node, ExplainState *es, WcFdwField field,
					const char *label)
{
	char	   *conds = wcfdw_explain_conds(node, es, field);

	if (conds != NULL)
		ExplainPropertyText(label, conds, es);
}

void
widecolExplainForeignScan(ForeignScanState *node, ExplainState *es)
{
	WcFdwScanState *ss = node->fdw_state;

	wcfdw_explain_context(node, es);
	wcfdw_explain_field(node, es, WCF_ROWKEY, "Rowkeys");
	wcfdw_explain_field(node, es, WCF_FAMILY, "Families");
	wcfdw_explain_field(node, es, WCF_QUALIFIER, "Qualifiers");
	wcfdw_explain_field(node, es, WCF_TS, "Timestamps");
	if (ss && ss->reverse)
		ExplainPropertyBool("Reversed", true, es);
	if (ss && ss->current_of)
		ExplainPropertyText("Current of",
							ss->current_of->cursor_name ? ss->current_of->cursor_name :
							psprintf("$%d", ss->current_of->cursor_param), es);
	if (ss && ss->wread)
	{
		StringInfoData buf;
		wc_slice   *fams;
		wc_slice   *quals;
		int			nfams,
					nquals,
					i;

		/* the families the scan reads, and its qualifier filter */
		wcfdw_wide_scan_cells(&ss->conv.cols, ss->wread, CurrentMemoryContext,
							  &fams, &nfams, &quals, &nquals);
		initStringInfo(&buf);
		for (i = 0; i < nfams; i++)
			appendStringInfo(&buf, "%s%.*s", i ? ", " : "", (int) fams[i].len,
							 (const char *) fams[i].data);
		ExplainPropertyText("Cell families", buf.data, es);
		if (nquals > 0)
		{
			resetStringInfo(&buf);
			for (i = 0; i < nquals; i++)
				appendStringInfo(&buf, "%s'%.*s'", i ? ", " : "", (int) quals[i].len,
								 (const char *) quals[i].data);
			ExplainPropertyText("Cell qualifiers", buf.data, es);
		}
		if (ss->nfilters > 0)
		{
			ForeignScan *plan = (ForeignScan *) node->ss.ps.plan;
			List	   *wide = list_nth(plan->fdw_private, WCFDW_PRIV_WIDE);

			resetStringInfo(&buf);
			for (i = 0; i < ss->nfilters; i++)
				appendStringInfo(&buf, "%s%s = %s", i ? " AND " : "",
								 quote_identifier(ss->conv.cols.wide[ss->filters[i].col].name),
								 deparse_expression(list_nth(plan->fdw_exprs,
															 list_nth_int(wide, 2 + 2 * i)),
													es->deparse_cxt, false, false));
			ExplainPropertyText("Cell filter", buf.data, es);
		}
	}

	if (es->analyze && ss && ss->keycxt)
	{
		wc_scan_stats st = ss->stats;

		if (ss->scan)
		{
			wc_scan_stats cur;

			wc_scan_get_stats(ss->scan, &cur);
			wcfdw_add_stats(&st, &cur);
		}
		if (es->format == EXPLAIN_FORMAT_TEXT)
		{
			appendStringInfoSpaces(es->str, es->indent * 2);
			appendStringInfo(es->str,
							 "Store: files read=" UINT64_FORMAT " skipped=" UINT64_FORMAT
							 " (key=" UINT64_FORMAT " time=" UINT64_FORMAT " bloom=" UINT64_FORMAT
							 ") blocks read=" UINT64_FORMAT " cells scanned=" UINT64_FORMAT
							 " seeks=" UINT64_FORMAT "\n",
							 st.files_read,
							 st.files_skipped_key + st.files_skipped_time + st.files_skipped_bloom,
							 st.files_skipped_key, st.files_skipped_time, st.files_skipped_bloom,
							 st.blocks_read, st.cells_scanned, st.seeks);
			/* as "Buffers:" of ordinary tables: shared memory hits vary run to run */
			if (es->buffers)
			{
				appendStringInfoSpaces(es->str, es->indent * 2);
				appendStringInfo(es->str, "Block Cache: hit=" UINT64_FORMAT
								 " miss=" UINT64_FORMAT "\n",
								 st.blocks_cached, st.blocks_read - st.blocks_cached);
				/* the session's own (widecol_fdw.row_cache_size) */
				appendStringInfoSpaces(es->str, es->indent * 2);
				appendStringInfo(es->str, "Row Cache: hit=" UINT64_FORMAT "\n", st.rows_cached);
			}
		}
		else
		{
			ExplainPropertyUInteger("Files Read", NULL, st.files_read, es);
			ExplainPropertyUInteger("Files Skipped by Key", NULL, st.files_skipped_key, es);
			ExplainPropertyUInteger("Files Skipped by Time", NULL, st.files_skipped_time, es);
			ExplainPropertyUInteger("Files Skipped by Bloom", NULL, st.files_skipped_bloom, es);
			ExplainPropertyUInteger("Blocks Read", NULL, st.blocks_read, es);
			if (es->buffers)
			{
				ExplainPropertyUInteger("Blocks Cached", NULL, st.blocks_cached, es);
				ExplainPropertyUInteger("Rows Cached", NULL, st.rows_cached, es);
			}
			ExplainPropertyUInteger("Cells Scanned", NULL, st.cells_scanned, es);
			ExplainPropertyUInteger("Seeks", NULL, st.seeks, es);
		}
	}
}

/* ---------------------------------------------------------------- ANALYZE */

/*
 * How ANALYZE samples a store.
 *
 * The sorted files' indexes give the rowkey that ends each data block
 * (wc_db_block_bounds, no data block read).  Those keys, merged over every
 * file, cut the key space into N pieces (b[j-1], b[j]] that each hold at
 * most about one block of each file, plus whatever the logs hold there.  A
 * uniform random subset of n pieces (Knuth's algorithm S, PostgreSQL's
 * BlockSampler, as ANALYZE picks a heap's blocks) is read by one ordinary
 * scan over their ranges, in key order: retention, tombstones, the logs and
 * the pending writes apply as for any read, so what is counted are visible
 * rows.  The rows seen form a cluster sample from which a reservoir keeps
 * targrows, as PostgreSQL does with the rows of the blocks it reads.
 *
 * The total: every row lies in exactly one piece and each piece is read with
 * probability n/N, so (rows seen) * N / n would be unbiased, but pieces
 * differ in size (where blocks of several files interleave) and n is small,
 * so it scatters by 10% and more.  The store knows its entries exactly
 * (wc_db_get_stats), and the entries a piece holds vary with its rows, so
 * the ratio estimate (rows seen / entries scanned) * entries is used, which
 * scatters by a few percent.  Dead rows are the rest of the entries (older
 * versions, tombstones, writes not seen).  Entries a scan seeks past (a
 * column's versions beyond the 8th past max_versions) are not counted as
 * scanned, which errs toward more rows.
 *
 * n is what should yield about 1.5 * targrows rows if rows are spread evenly
 * over the pieces, and at least 100: rows of neighbouring keys often have
 * alike values, and a cluster sample of few clusters would describe them
 * badly (as a heap's blocks sampled are many).  A store too small for that
 * (or one whose data is all in the logs: one piece) is read whole and
 * counted exactly.
 */
#define WCFDW_SAMPLE_MARGIN 1.5
#define WCFDW_SAMPLE_MIN_PIECES 100

static int
wcfdw_acquire_sample_rows(Relation relation, int elevel, HeapTuple *rows, int targrows,
						  double *totalrows, double *totaldeadrows)
{
	WcFdwConverter conv;
	WcFdwStore *store;
	TupleDesc	tupdesc = RelationGetDescr(relation);
	Datum	   *values = palloc(sizeof(Datum) * tupdesc->natts);
	bool	   *nulls = palloc(sizeof(bool) * tupdesc->natts);
	MemoryContext tmpcxt;
	MemoryContext old;
	ReservoirStateData rstate;
	wc_scan_opts opts;
	wc_scan    *scan = NULL;
	wc_scan_stats st;
	wc_cell_view cell;
	wc_err		err;
	bool	   *wneed = NULL;
	WcFdwWideReader reader;
	wc_slice   *bounds = NULL;
	int			nbounds = 0;
	wc_key_range *ranges = NULL;
	wc_db_stats dbst;
	double		npieces,
				entries,
				nsample,
				units,
				scale = 1.0;
	double		seen = 0;
	double		rowstoskip = -1;
	int			numrows = 0;
	int			rc;

	wcfdw_converter_init(&conv, relation);
	store = wcfdw_store_get(relation);
	wcfdw_store_refresh(store);
	tmpcxt = AllocSetContextCreate(CurrentMemoryContext, "widecol_fdw analyze",
								   ALLOCSET_DEFAULT_SIZES);
	reservoir_init_selection_state(&rstate, targrows);

	wc_scan_opts_init(&opts);
	if (conv.cols.wide != NULL)
	{
		/* a wide table's rows: every column, from every mapped cell */
		wneed = palloc(sizeof(bool) * conv.cols.nwide);
		memset(wneed, true, sizeof(bool) * conv.cols.nwide);
		wcfdw_wide_scan_cells(&conv.cols, wneed, CurrentMemoryContext,
							  (wc_slice **) &opts.families, &opts.nfamilies,
							  (wc_slice **) &opts.quals, &opts.nquals);
		wcfdw_wide_reader_init(&reader, &conv, wneed, CurrentMemoryContext);
	}

	/* the pieces, and how many of them to read */
	wc_err_clear(&err);
	wcfdw_check(wc_db_get_stats(store->db, NULL, &dbst, &err), &err,
				"read statistics of the", store->relname);
	rc = wc_db_block_bounds(store->db, opts.families, opts.nfamilies, &bounds, &nbounds, &err);
	wcfdw_check(rc, &err, "sample", store->relname);
	npieces = (double) nbounds + 1;
	entries = (double) (dbst.file_cells + dbst.mem_cells);
	if (opts.nfamilies > 0)
	{
		int			f;

		/* only the families read */
		entries = 0;
		for (f = 0; f < opts.nfamilies; f++)
		{
			wc_db_stats fst;
			char	   *name = pnstrdup((const char *) opts.families[f].data,
										opts.families[f].len);

			wcfdw_check(wc_db_get_stats(store->db, name, &fst, &err), &err,
						"read statistics of the", store->relname);
			entries += (double) (fst.file_cells + fst.mem_cells);
		}
	}
	units = entries;
	if (wneed && dbst.distinct_rows_est > 0)
		units = (double) dbst.distinct_rows_est;
	nsample = ceil(WCFDW_SAMPLE_MARGIN * targrows * npieces / Max(units, 1.0));
	nsample = Max(nsample, WCFDW_SAMPLE_MIN_PIECES);
	if (nsample < npieces)
	{
		BlockSamplerData bs;
		int			n = 0;

		/* pieces are numbered 0..nbounds: piece j is (b[j-1], b[j]] */
		BlockSampler_Init(&bs, (BlockNumber) npieces, (int) nsample,
						  pg_prng_uint32(&pg_global_prng_state));
		ranges = palloc0(sizeof(wc_key_range) * (Size) nsample);
		while (BlockSampler_HasMore(&bs))
		{
			BlockNumber j = BlockSampler_Next(&bs);
			wc_key_range *r = &ranges[n++];

			if (j > 0)
			{
				r->start = bounds[j - 1].data;
				r->start_len = bounds[j - 1].len;
				r->start_bound = WC_EXCLUSIVE;
			}
			if (j < (BlockNumber) nbounds)
			{
				r->stop = bounds[j].data;
				r->stop_len = bounds[j].len;
				r->stop_bound = WC_INCLUSIVE;
			}
		}
		opts.ranges = ranges;
		opts.nranges = n;
		scale = npieces / n;
	}

	wc_err_clear(&err);
	rc = wc_scan_open(store->db, &opts, &scan, &err);
	if (rc < 0)
	{
		free(bounds);
		wcfdw_engine_error(ERROR, rc, &err, "scan", store->relname);
	}
	wcfdw_store_scan_opened(store);
	if (wneed)
		wcfdw_wide_reader_reset(&reader, scan);

	PG_TRY();
	{
		for (;;)
		{
			vacuum_delay_point();
			MemoryContextReset(tmpcxt);
			if (wneed)
			{
				const uint8 *row;
				size_t		row_len;

				old = MemoryContextSwitchTo(tmpcxt);
				rc = wcfdw_wide_next_row(&reader, values, nulls, tupdesc->natts,
										 &row, &row_len, &err);
				MemoryContextSwitchTo(old);
			}
			else
				rc = wc_scan_next(scan, &cell, &err);
			if (rc < 0)
				wcfdw_engine_error(ERROR, rc, &err, "scan", store->relname);
			if (rc == 0)
				break;

			old = MemoryContextSwitchTo(tmpcxt);
			if (!wneed)
				wcfdw_cell_to_values(&conv, NULL, &cell, values, nulls, tupdesc->natts);
			MemoryContextSwitchTo(old);

			if (numrows < targrows)
				rows[numrows++] = heap_form_tuple(tupdesc, values, nulls);
			else
			{
				if (rowstoskip < 0)
					rowstoskip = reservoir_get_next_S(&rstate, seen, targrows);
				if (rowstoskip <= 0)
				{
					int			k = (int) (targrows * sampler_random_fract(&rstate.randstate));

					heap_freetuple(rows[k]);
					rows[k] = heap_form_tuple(tupdesc, values, nulls);
				}
				rowstoskip -= 1;
			}
			seen += 1;
		}
		wc_scan_get_stats(scan, &st);
	}
	PG_FINALLY();
	{
		wc_scan_close(scan);
		wcfdw_store_scan_closed(store);
		free(bounds);
	}
	PG_END_TRY();

	MemoryContextDelete(tmpcxt);
	if (scale == 1.0)
	{
		/* read whole: counted */
		*totalrows = seen;
		*totaldeadrows = wneed ? 0 :
			(double) (st.cells_scanned - Min(st.cells_scanned, st.cells_returned));
	}
	else if (st.cells_scanned > 0)
	{
		/*
		 * A scan steps on one entry past each range's stop in each family
		 * it reads, before it seeks to the next range: not entries of the
		 * pieces
		 */
		double		past = (double) opts.nranges *
			(opts.nfamilies > 0 ? opts.nfamilies : store->nfamilies);
		double		scanned = Max((double) st.cells_scanned - past,
								  (double) st.cells_returned);

		scanned = Max(scanned, 1.0);
		*totalrows = floor(Min(seen / scanned, 1.0) * entries + 0.5);
		*totaldeadrows = wneed ? 0 : Max(0, entries - *totalrows);
	}
	else
	{
		*totalrows = floor(seen * scale + 0.5);
		*totaldeadrows = 0;
	}
	ereport(elevel,
			(errmsg("\"%s\": read %.0f of %.0f key ranges of the store, %.0f of %.0f entries, containing %.0f %s; %d rows in sample, %.0f estimated total rows",
					RelationGetRelationName(relation), npieces / scale, npieces,
					(double) st.cells_scanned, entries, seen,
					wneed ? "rows" : "cell versions", numrows, *totalrows)));
	return numrows;
}

bool
widecolAnalyzeForeignTable(Relation relation, AcquireSampleRowsFunc *func,
						   BlockNumber *totalpages)
{
	WcFdwStore *store = wcfdw_store_get(relation);
	wc_db_stats st;
	wc_err		err;

	wc_err_clear(&err);
	wcfdw_check(wc_db_get_stats(store->db, NULL, &st, &err), &err,
				"read statistics of the", store->relname);
	*func = wcfdw_acquire_sample_rows;
	*totalpages = (BlockNumber) Max(1, (st.file_bytes + st.mem_bytes) / BLCKSZ);
	return true;
}
