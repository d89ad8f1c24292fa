/*-------------------------------------------------------------------------
 *
 * direct.c
 *		  DELETE of whole rows or families of rows as one marker each, and
 *		  UPDATE of a wide table's rows by rowkey, by direct modification
 *
 * "DELETE FROM t WHERE rowkey = 'x' [AND family = 'f']" on a tall table
 * would otherwise fetch every visible cell version and write a tombstone for
 * each (modify.c): 1,000 versions, 1,000 tombstones.  HBase writes one
 * DeleteFamily marker per family.  As postgres_fdw sends such a DELETE whole
 * to the remote server (PlanDirectModify and the *DirectModify callbacks),
 * we do the delete inside the scan node: per target rowkey, one bounded
 * DEL_FAMILY per family (engine/cell.h).
 *
 * When.  PlanDirectModify takes a DELETE of a tall table whose scan has only
 * conditions "rowkey = expr" or "rowkey = ANY (array expr)" (exactly one of
 * them) and, optionally, "family = constant" and bounds or a prefix of the
 * rowkey (which the key ranges intersect exactly), with no RETURNING and no
 * row-level DELETE trigger.  Anything else (other conditions, joins, wide
 * tables) keeps the ordinary path, which gives the same result.
 *
 * What is deleted.  Exactly what the ordinary path deletes: the row's cell
 * versions the statement's snapshot sees (the transaction's own earlier
 * writes included), each locked as the ordinary path locks it (scan.c,
 * wcfdw_lock_cell: a lock manager tuple lock of the cell, FOR UPDATE
 * strength), and, in READ COMMITTED, the newest committed versions of cells
 * a concurrent transaction changed while we waited (EvalPlanQual's result).
 * A plain DEL_FAMILY would do more: it hides every entry with a lower seq,
 * and seqs are given at commit, so it would also hide cells committed after
 * our snapshot.  So the marker carries a bound B, the seq below which the
 * scan sees every write (wc_scan_visible_bound: below any write in progress
 * or excluded by the snapshot when the scan opened), and hides only entries
 * with seq <= B: all of them are writes our snapshot sees.  A visible
 * version above B (one of the transaction's own pending writes, whose seqs
 * come at commit, or a committed one above a write the snapshot excludes)
 * gets a version tombstone of its own.
 *
 * Per target rowkey:
 *	1. read its visible cells in the families asked for;
 *	2. lock each, then refresh: if anything committed that the scan did not
 *	   see (wc_scan_sees_latest), read each cell's newest committed version;
 *	3. none changed: one bounded DEL_FAMILY per family that has a visible
 *	   cell at or below B, a DEL_VERSION for each visible cell above B;
 *	4. one changed: REPEATABLE READ and SERIALIZABLE fail with 40001, as the
 *	   ordinary path does; READ COMMITTED writes a DEL_VERSION for the newest
 *	   committed version of each cell that still exists (a cell deleted
 *	   meanwhile is skipped).
 * The row count is the number of cell versions deleted, as the ordinary
 * path reports.  A serializable transaction takes the same predicate lock
 * and conflict-in check as a scan and a write of the table do.
 *
 * UPDATE of a wide table.  PostgreSQL asks a foreign table's UPDATE for the
 * whole old row (a wholerow junk column, for the values the statement does
 * not set): an UPDATE of one cell read and decoded all the row's cells, and
 * built the row twice, to write one cell.  HBase's Put writes the cell.  So
 * an UPDATE of a wide table whose scan has only "rowkey = expr" or "rowkey
 * = ANY (array expr)" (with, optionally, bounds or a prefix of the rowkey:
 * a view of a rowkey range), no RETURNING, no row-level UPDATE trigger and
 * no CHECK constraint or NOT NULL column set (which the ordinary path checks),
 * and whose SET expressions read nothing of the row (no column of it, no
 * sub-select), runs inside the scan node, per target rowkey:
 *	1. is the row there for the statement's snapshot: a mapped cell visible
 *	   (the row's cells merged, none decoded);
 *	2. lock it as the ordinary path does (scan.c, wcfdw_lock_rowkey: the
 *	   rowkey's lock manager tuple lock, FOR NO KEY UPDATE strength), then
 *	   refresh: if anything committed that the scan did not see, compare
 *	   the row the snapshot sees with the newest committed one (the wide
 *	   reader's fingerprint of their cell versions);
 *	3. changed: REPEATABLE READ and SERIALIZABLE fail with 40001; READ
 *	   COMMITTED updates the newest row, or nothing if it is gone (what
 *	   EvalPlanQual gives when the only condition is the rowkey);
 *	4. the SET expressions, then the cells as the ordinary path writes them
 *	   (wcfdw_wide_put_row: a NULL deletes the cell).
 * The row count is the number of rows updated.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "access/xact.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/appendinfo.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "parser/parsetree.h"
#include "storage/lmgr.h"
#include "storage/predicate.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "widecol_fdw.h"

/* A visible cell version of the row being deleted (copied out of the scan). */
typedef struct WcFdwDirectCell
{
	int			family;			/* index in topts.families */
	uint8	   *qual;
	size_t		qual_len;
	int64		ts;
	uint64		seq;
} WcFdwDirectCell;

typedef struct WcFdwDirectState
{
	CmdType		operation;		/* CMD_DELETE or CMD_UPDATE */
	Relation	rel;
	WcFdwStore *store;
	WcFdwConverter conv;
	WcFdwTableOptions topts;
	WcFdwCondExec *conds;
	int			nconds;
	bool		set_tag;		/* count the rows in es_processed */
	LOCKMODE	lockmode;
	LockWaitPolicy waitpolicy;
	CommandId	cid;			/* the command's writes */
	WcFdwSnapshotArg snap;
	bool		done;

	wc_scan    *scan;
	wc_scan_opts opts;
	WcFdwScanKeys keys;

	/* the row being deleted */
	uint8	   *row;
	size_t		row_len;
	WcFdwDirectCell *cells;
	int			ncells;
	int			maxcells;

	/* UPDATE: the columns it sets, their expressions, a slot of the values */
	int			nset;
	AttrNumber *set_attnums;
	ExprState **set_exprs;
	Bitmapset  *updated;		/* attnums - FirstLowInvalidHeapAttributeNumber */
	TupleTableSlot *setslot;
	WcFdwWideReader reader;		/* decodes no column: existence, fingerprint */

	/* what it did, for EXPLAIN ANALYZE */
	uint64		rows;			/* rowkeys with something deleted, or rows updated */
	uint64		deleted;		/* cell versions */
	uint64		markers;		/* bounded DEL_FAMILY entries written */
	uint64		tombstones;		/* DEL_VERSION entries written */
	uint64		fallbacks;		/* rows deleted version by version (READ
								 * COMMITTED after a concurrent change) */

	MemoryContext rowcxt;		/* the row's cells */
	MemoryContextCallback cb;
} WcFdwDirectState;

/* ---------------------------------------------------------------- planning */

/*
 * wcfdw_direct_cond_ok
 *		Is rinfo a condition the direct modification evaluates exactly:
 *		rowkey = expr, rowkey = ANY (expr) (counted in *nrowkey), a bound or
 *		a prefix of the rowkey (a view's "rowkey >= 'p1' AND rowkey < 'p2'",
 *		which the engine's key ranges intersect with the rowkeys), family =
 *		constant?
 */
static bool
wcfdw_direct_cond_ok(PlannerInfo *root, RelOptInfo *baserel, const WcFdwColumns *cols,
					 RestrictInfo *rinfo, int *nrowkey)
{
	WcFdwCond	cond;

	if (!wcfdw_cond_from_clause(root, baserel, cols, rinfo, &cond))
		return false;
	if (cond.field == WCF_ROWKEY && (cond.kind == WCK_EQ || cond.kind == WCK_IN))
	{
		(*nrowkey)++;
		return true;
	}
	if (cond.field == WCF_ROWKEY)
		return cond.kind == WCK_LT || cond.kind == WCK_LE || cond.kind == WCK_GT ||
			cond.kind == WCK_GE || cond.kind == WCK_PREFIX;
	return cond.field == WCF_FAMILY && cond.kind == WCK_EQ && IsA(cond.expr, Const);
}

/* Does node hold a PARAM_EXEC Param (an initplan's or a join's output)? */
static bool
wcfdw_has_exec_param(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param) && ((Param *) node)->paramkind == PARAM_EXEC)
		return true;
	return expression_tree_walker(node, wcfdw_has_exec_param, context);
}

/*
 * wcfdw_direct_set_ok
 *		Can the direct UPDATE compute what the statement sets: each SET
 *		target a cell column (not the rowkey), its expression one that
 *		reads no column of the row (no Var, no sub-select, no PARAM_EXEC)?
 *		Fills *attnos and *exprs.
 */
static bool
wcfdw_direct_set_ok(PlannerInfo *root, Index rti, const WcFdwColumns *cols,
					List **attnos, List **exprs)
{
	List	   *tlist;
	List	   *colnos;
	ListCell   *lc,
			   *lc2;

	get_translated_update_targetlist(root, rti, &tlist, &colnos);
	if (tlist == NIL)
		return false;
	forboth(lc, tlist, lc2, colnos)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		AttrNumber	attno = (AttrNumber) lfirst_int(lc2);
		bool		cell = false;
		int			i;

		for (i = 0; i < cols->nwide; i++)
			cell |= cols->wide[i].attnum == attno;
		if (!cell || contain_var_clause((Node *) tle->expr) ||
			contain_subplans((Node *) tle->expr) ||
			wcfdw_has_exec_param((Node *) tle->expr, NULL))
			return false;
		*attnos = lappend_int(*attnos, attno);
		*exprs = lappend(*exprs, tle->expr);
	}
	return true;
}

/*
 * widecolPlanDirectModify
 *		Turns the ForeignScan under a DELETE of a tall table into the delete
 *		itself, when its conditions name whole rows or families of rows, and
 *		the one under an UPDATE of a wide table into the update, when they
 *		name rowkeys and what it sets reads nothing of the row (see the top)
 */
bool
widecolPlanDirectModify(PlannerInfo *root, ModifyTable *plan, Index resultRelation,
						int subplan_index)
{
	RangeTblEntry *rte = planner_rt_fetch(resultRelation, root);
	RelOptInfo *baserel;
	ForeignScan *fscan;
	Plan	   *subplan = outerPlan(plan);
	Relation	rel;
	WcFdwColumns cols;
	ListCell   *lc;
	int			nrowkey = 0;
	bool		ok;

	List	   *set_attnos = NIL;
	List	   *set_exprs = NIL;
	List	   *tlist;

	if ((plan->operation != CMD_DELETE && plan->operation != CMD_UPDATE) ||
		plan->returningLists != NIL ||
		list_length(plan->resultRelations) != 1 || subplan == NULL ||
		!IsA(subplan, ForeignScan))
		return false;
	fscan = (ForeignScan *) subplan;
	if (fscan->scan.scanrelid != resultRelation || fscan->fdw_scan_tlist != NIL ||
		fscan->scan.plan.lefttree != NULL || list_length(fscan->fdw_private) != WCFDW_PRIV_DIRECT ||
		list_nth(fscan->fdw_private, WCFDW_PRIV_CURRENT_OF) != NULL)
		return false;
	baserel = find_base_rel(root, resultRelation);
	if (baserel->baserestrictinfo == NIL)
		return false;			/* a DELETE of the whole table */

	rel = table_open(rte->relid, NoLock);
	wcfdw_get_columns(rel, &cols);
	if (plan->operation == CMD_DELETE)
		ok = cols.wide == NULL &&
			!(rel->trigdesc && (rel->trigdesc->trig_delete_before_row ||
								rel->trigdesc->trig_delete_after_row ||
								rel->trigdesc->trig_delete_instead_row));
	else
		ok = cols.wide != NULL &&
			!(rel->trigdesc && (rel->trigdesc->trig_update_before_row ||
								rel->trigdesc->trig_update_after_row ||
								rel->trigdesc->trig_update_instead_row)) &&
			wcfdw_direct_set_ok(root, resultRelation, &cols, &set_attnos, &set_exprs);
	/* constraints a new row must meet are checked by the ordinary path (modify.c) */
	if (ok && plan->operation == CMD_UPDATE && rel->rd_att->constr != NULL)
	{
		if (rel->rd_att->constr->num_check > 0)
			ok = false;
		foreach(lc, set_attnos)
			if (TupleDescAttr(rel->rd_att, lfirst_int(lc) - 1)->attnotnull)
				ok = false;
	}
	table_close(rel, NoLock);
	if (!ok)
		return false;

	/* every condition is one we evaluate exactly, and one names the rowkeys */
	foreach(lc, baserel->baserestrictinfo)
		if (!wcfdw_direct_cond_ok(root, baserel, &cols, lfirst(lc), &nrowkey))
			return false;
	if (nrowkey != 1 ||
		list_length(fscan->scan.plan.qual) + list_length(fscan->fdw_recheck_quals) !=
		list_length(baserel->baserestrictinfo))
		return false;

	/*
	 * The scan's conditions (fdw_private WCFDW_PRIV_CONDS, fdw_exprs) are
	 * these; no qual is left to check.  The statement's count goes to
	 * es_processed through us.
	 */
	fscan->operation = plan->operation;
	fscan->resultRelation = resultRelation;
	fscan->scan.plan.qual = NIL;
	fscan->fdw_recheck_quals = NIL;
	fscan->fdw_private = lappend(list_copy(fscan->fdw_private),
								 list_make1_int(plan->canSetTag ? 1 : 0));
	if (plan->operation == CMD_UPDATE)
	{
		fscan->fdw_private = lappend(fscan->fdw_private, set_attnos);
		fscan->fdw_exprs = list_concat(list_copy(fscan->fdw_exprs), set_exprs);
	}

	/*
	 * The scan returns no rows (no RETURNING), so nothing projects its
	 * target list: the new values and the junk columns the ModifyTable would
	 * have read.  Left there, the executor would compile the SET expressions
	 * for the projection as well as for us (ExecInitForeignScan), twice the
	 * work for each UPDATE of a prepared statement.  They become NULLs of
	 * their types; the junk columns stay (ExecInitModifyTable looks for its
	 * wholerow one).
	 */
	tlist = NIL;
	foreach(lc, fscan->scan.plan.targetlist)
	{
		TargetEntry *tle = lfirst(lc);

		if (!tle->resjunk)
		{
			tle = flatCopyTargetEntry(tle);
			tle->expr = (Expr *) makeNullConst(exprType((Node *) tle->expr),
											   exprTypmod((Node *) tle->expr),
											   exprCollation((Node *) tle->expr));
		}
		tlist = lappend(tlist, tle);
	}
	fscan->scan.plan.targetlist = tlist;
	return true;
}

/* ---------------------------------------------------------------- execution */

static void
wcfdw_direct_close(WcFdwDirectState *ds)
{
	if (ds->scan)
	{
		wc_scan_close(ds->scan);
		ds->scan = NULL;
		wcfdw_store_scan_closed(ds->store);
	}
}

static void
wcfdw_direct_cleanup(void *arg)
{
	wcfdw_direct_close((WcFdwDirectState *) arg);
}

void
widecolBeginDirectModify(ForeignScanState *node, int eflags)
{
	ForeignScan *plan = (ForeignScan *) node->ss.ps.plan;
	EState	   *estate = node->ss.ps.state;
	List	   *lock = list_nth(plan->fdw_private, WCFDW_PRIV_LOCK);
	WcFdwDirectState *ds;

	ds = palloc0(sizeof(WcFdwDirectState));
	node->fdw_state = ds;
	ds->operation = plan->operation;
	ds->rel = node->ss.ss_currentRelation;
	ds->set_tag = linitial_int(list_nth(plan->fdw_private, WCFDW_PRIV_DIRECT)) != 0;
	ds->lockmode = linitial_int(lock);
	ds->waitpolicy = lsecond_int(lock);

	ds->conds = wcfdw_init_conds(node, &ds->nconds);
	if (ds->operation == CMD_UPDATE)
	{
		List	   *attnos = list_nth(plan->fdw_private, WCFDW_PRIV_SET);
		int			first = list_length(plan->fdw_exprs) - list_length(attnos);
		int			i;

		/* the SET expressions end fdw_exprs, after the conditions' */
		ds->nset = list_length(attnos);
		ds->set_attnums = palloc(sizeof(AttrNumber) * Max(ds->nset, 1));
		ds->set_exprs = palloc(sizeof(ExprState *) * Max(ds->nset, 1));
		for (i = 0; i < ds->nset; i++)
		{
			ds->set_attnums[i] = (AttrNumber) list_nth_int(attnos, i);
			ds->set_exprs[i] = ExecInitExpr(list_nth(plan->fdw_exprs, first + i),
											(PlanState *) node);
			ds->updated = bms_add_member(ds->updated,
										 ds->set_attnums[i] - FirstLowInvalidHeapAttributeNumber);
		}
	}
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	wcfdw_converter_init(&ds->conv, ds->rel);
	if (ds->operation == CMD_UPDATE)
	{
		ds->setslot = ExecInitExtraTupleSlot(estate, RelationGetDescr(ds->rel), &TTSOpsVirtual);
		/* a reader of the rows that decodes nothing (wcfdw_direct_read_row) */
		wcfdw_wide_reader_init(&ds->reader, &ds->conv,
							   palloc0(sizeof(bool) * Max(ds->conv.cols.nwide, 1)),
							   estate->es_query_cxt);
	}
	wcfdw_get_table_options(RelationGetRelid(ds->rel), &ds->topts);
	ds->cid = estate->es_output_cid;
	ds->snap.snapshot = estate->es_snapshot;
	ds->snap.rel = ds->rel;
	ds->snap.serializable = IsolationIsSerializable();
	ds->snap.cxt = estate->es_query_cxt;
	ds->snap.has_running = false;
	ds->rowcxt = AllocSetContextCreate(estate->es_query_cxt, "widecol_fdw direct modify",
									   ALLOCSET_DEFAULT_SIZES);
	ds->store = wcfdw_store_get(ds->rel);
	ds->snap.owner = ds->store->relid;
	wcfdw_store_begin_statement(ds->store, estate);
	/* as any write of the table (modify.c) */
	wcfdw_ssi_conflict_in(ds->rel, ds->store->relid);
	ds->cb.func = wcfdw_direct_cleanup;
	ds->cb.arg = ds;
	MemoryContextRegisterResetCallback(estate->es_query_cxt, &ds->cb);
}

/*
 * wcfdw_direct_open
 *		Opens the scan of the target rows under the statement's snapshot,
 *		with the transaction's earlier writes overlaid (as scan.c does);
 *		false if no row can match
 */
static bool
wcfdw_direct_keys(ForeignScanState *node, WcFdwDirectState *ds)
{
	EState	   *estate = node->ss.ps.state;
	MemoryContext old = MemoryContextSwitchTo(estate->es_query_cxt);

	wcfdw_compute_keys(ds->conds, ds->nconds, node->ss.ps.ps_ExprContext, &ds->conv,
					   &ds->topts, false, &ds->keys);
	if (ds->keys.empty)
	{
		MemoryContextSwitchTo(old);
		return false;
	}
	wc_scan_opts_init(&ds->opts);
	ds->opts.ranges = ds->keys.ranges;
	ds->opts.nranges = ds->keys.nranges;
	if (ds->operation == CMD_UPDATE)
	{
		/* every mapped cell: a row is there if it has one of them */
		bool	   *all = palloc(sizeof(bool) * Max(ds->conv.cols.nwide, 1));
		wc_slice   *families;
		wc_slice   *quals;

		memset(all, true, sizeof(bool) * Max(ds->conv.cols.nwide, 1));
		wcfdw_wide_scan_cells(&ds->conv.cols, all, estate->es_query_cxt,
							  &families, &ds->opts.nfamilies, &quals, &ds->opts.nquals);
		ds->opts.families = families;
		ds->opts.quals = quals;
	}
	else
	{
		ds->opts.families = ds->keys.families;
		ds->opts.nfamilies = ds->keys.nfamilies;
	}
	ds->opts.now_ms = wcfdw_timestamptz_to_ms(GetCurrentStatementStartTimestamp());
	wcfdw_store_visible_batches(ds->store, ds->snap.snapshot->curcid, &ds->opts);
	wcfdw_scan_opts_snapshot(&ds->opts, &ds->snap);
	MemoryContextSwitchTo(old);
	return true;
}

/* Opens ds->scan with opts (ds->opts, or a copy with other ranges). */
static void
wcfdw_direct_scan_open(WcFdwDirectState *ds, const wc_scan_opts *opts)
{
	wc_err		err;
	int			rc;

	wc_err_clear(&err);
	rc = wc_scan_open(ds->store->db, opts, &ds->scan, &err);
	if (rc < 0)
	{
		ds->scan = NULL;
		wcfdw_engine_error(ERROR, rc, &err, "scan", ds->store->relname);
	}
	wcfdw_store_scan_opened(ds->store);
}

static bool
wcfdw_direct_open(ForeignScanState *node, WcFdwDirectState *ds)
{
	if (!wcfdw_direct_keys(node, ds))
		return false;
	wcfdw_direct_scan_open(ds, &ds->opts);
	return true;
}

/* c, a cell of the current row, as a view (its key) */
static void
wcfdw_direct_view(const WcFdwDirectState *ds, const WcFdwDirectCell *c, wc_cell_view *v)
{
	memset(v, 0, sizeof(*v));
	v->row = ds->row;
	v->row_len = ds->row_len;
	v->family = ds->topts.families[c->family].name;
	v->family_len = strlen(v->family);
	v->qual = c->qual;
	v->qual_len = c->qual_len;
	v->ts = c->ts;
}

/* The newest committed (or own pending) version of c's cell; 0 if none. */
static int
wcfdw_direct_newest(WcFdwDirectState *ds, const WcFdwDirectCell *c, uint64 *seq)
{
	wc_cell_view cell,
				newest;
	wc_scan    *point;
	int			found;

	wcfdw_direct_view(ds, c, &cell);
	point = wcfdw_open_newest(ds->store, &cell, &ds->opts, &newest, &found);
	if (found == 1)
		*seq = newest.seq;
	wc_scan_close(point);
	return found;
}

static void
wcfdw_direct_tombstone(WcFdwDirectState *ds, wc_batch *b, const WcFdwDirectCell *c)
{
	const char *fam = ds->topts.families[c->family].name;
	wc_err		err;
	int			rc;

	wc_err_clear(&err);
	rc = wc_batch_delete_version(b, fam, strlen(fam), ds->row, ds->row_len,
								 c->qual, c->qual_len, c->ts, &err);
	wcfdw_check(rc, &err, "buffer a delete in the", RelationGetRelationName(ds->rel));
	ds->tombstones++;
}

/*
 * wcfdw_direct_delete_row
 *		Locks the cells read of the current row and deletes them (steps 2-4
 *		at the top)
 */
static void
wcfdw_direct_delete_row(WcFdwDirectState *ds)
{
	wc_batch   *b;
	bool		changed = false;
	bool		gone_seen = false;
	uint64	   *newest = NULL;
	bool	   *exists = NULL;
	uint64		bound;
	bool	   *marked;
	int			i;

	if (ds->ncells == 0)
		return;
	for (i = 0; i < ds->ncells; i++)
	{
		wc_cell_view v;

		wcfdw_direct_view(ds, &ds->cells[i], &v);
		(void) wcfdw_lock_cell(ds->store, ds->rel, &v, ds->lockmode, ds->waitpolicy);
		CHECK_FOR_INTERRUPTS();
	}

	/* what committed up to now, and was it anything the snapshot missed? */
	wcfdw_store_refresh(ds->store);
	if (!wc_scan_sees_latest(ds->scan))
	{
		newest = palloc(sizeof(uint64) * ds->ncells);
		exists = palloc(sizeof(bool) * ds->ncells);
		for (i = 0; i < ds->ncells; i++)
		{
			exists[i] = wcfdw_direct_newest(ds, &ds->cells[i], &newest[i]) == 1;
			if (!exists[i] || newest[i] != ds->cells[i].seq)
			{
				changed = true;
				gone_seen |= !exists[i];
			}
		}
	}
	if (changed && IsolationUsesXactSnapshot())
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not serialize access due to concurrent %s",
						gone_seen ? "delete" : "update")));

	b = wcfdw_store_write_batch(ds->store, ds->cid, false);
	if (changed)
	{
		/* READ COMMITTED: the newest committed versions, as after EvalPlanQual */
		ds->fallbacks++;
		for (i = 0; i < ds->ncells; i++)
			if (!exists[i])
			{
				wc_cell_view cell;

				/* replaced by a version of another ts: not followed, as a row would be */
				wcfdw_direct_view(ds, &ds->cells[i], &cell);
				if (wcfdw_cell_replaced(ds->store, &ds->opts, &cell))
					wcfdw_replaced_error();
			}
		for (i = 0; i < ds->ncells; i++)
			if (exists[i])
			{
				wcfdw_direct_tombstone(ds, b, &ds->cells[i]);
				ds->deleted++;
			}
		ds->rows++;
		return;
	}

	/* one bounded marker per family with a cell at or below the bound */
	bound = wc_scan_visible_bound(ds->scan);
	marked = palloc0(sizeof(bool) * Max(ds->topts.nfamilies, 1));
	for (i = 0; i < ds->ncells; i++)
	{
		const WcFdwDirectCell *c = &ds->cells[i];
		const char *fam = ds->topts.families[c->family].name;
		wc_err		err;
		int			rc;

		if (c->seq > bound)
		{
			wcfdw_direct_tombstone(ds, b, c);
			continue;
		}
		if (marked[c->family])
			continue;
		marked[c->family] = true;
		wc_err_clear(&err);
		rc = wc_batch_delete_family_upto(b, fam, strlen(fam), ds->row, ds->row_len, bound, &err);
		wcfdw_check(rc, &err, "buffer a delete in the", RelationGetRelationName(ds->rel));
		ds->markers++;
	}
	ds->deleted += ds->ncells;
	ds->rows++;
}

/*
 * wcfdw_direct_run
 *		The whole delete: the target rows' cells, row by row
 */
static void
wcfdw_direct_run(ForeignScanState *node, WcFdwDirectState *ds)
{
	wc_cell_view cell;
	wc_err		err;
	int			rc;

	if (!wcfdw_direct_open(node, ds))
		return;
	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		wc_err_clear(&err);
		rc = wc_scan_next(ds->scan, &cell, &err);
		if (rc < 0)
			wcfdw_engine_error(ERROR, rc, &err, "scan", ds->store->relname);
		if (rc == 0 || ds->row == NULL ||
			cell.row_len != ds->row_len || memcmp(cell.row, ds->row, cell.row_len) != 0)
		{
			/* the end of a row */
			wcfdw_direct_delete_row(ds);
			MemoryContextReset(ds->rowcxt);
			ds->row = NULL;
			ds->cells = NULL;
			ds->ncells = ds->maxcells = 0;
			if (rc == 0)
				break;
			ds->row = MemoryContextAlloc(ds->rowcxt, Max(cell.row_len, 1));
			memcpy(ds->row, cell.row, cell.row_len);
			ds->row_len = cell.row_len;
		}
		if (ds->ncells == ds->maxcells)
		{
			ds->maxcells = ds->maxcells ? ds->maxcells * 2 : 16;
			ds->cells = ds->cells
				? repalloc(ds->cells, sizeof(WcFdwDirectCell) * ds->maxcells)
				: MemoryContextAlloc(ds->rowcxt, sizeof(WcFdwDirectCell) * ds->maxcells);
		}
		{
			WcFdwDirectCell *c = &ds->cells[ds->ncells++];

			c->family = wcfdw_family_index(&ds->topts, cell.family, cell.family_len);
			if (c->family < 0)
				elog(ERROR, "scan of foreign table \"%s\" returned an undeclared family",
					 RelationGetRelationName(ds->rel));
			c->qual = MemoryContextAlloc(ds->rowcxt, Max(cell.qual_len, 1));
			if (cell.qual_len)
				memcpy(c->qual, cell.qual, cell.qual_len);
			c->qual_len = cell.qual_len;
			c->ts = cell.ts;
			c->seq = cell.seq;
		}
	}
	wcfdw_direct_close(ds);
}

/*
 * wcfdw_direct_read_row
 *		Reads the row scan gives (its one range) as the reader of a wide scan
 *		does, decoding nothing: 1 and *fp (the cell versions it is made of),
 *		or 0 if it has no mapped cell.  Without exact, only whether it has
 *		one (up to its first mapped cell), and *fp is 0.
 */
static int
wcfdw_direct_read_row(WcFdwDirectState *ds, wc_scan *scan, bool exact, uint64 *fp)
{
	TupleTableSlot *slot = ds->setslot;	/* its arrays: nothing is decoded */
	MemoryContext old = MemoryContextSwitchTo(ds->rowcxt);
	const uint8 *row;
	size_t		row_len;
	wc_err		err;
	int			rc;

	wcfdw_wide_reader_reset(&ds->reader, scan);
	wc_err_clear(&err);
	if (exact)
		rc = wcfdw_wide_next_row(&ds->reader, slot->tts_values, slot->tts_isnull,
								 slot->tts_tupleDescriptor->natts, &row, &row_len, &err);
	else
		rc = wcfdw_wide_row_exists(&ds->reader, &err);
	MemoryContextSwitchTo(old);
	if (rc < 0)
		wcfdw_engine_error(ERROR, rc, &err, "scan", ds->store->relname);
	*fp = exact ? ds->reader.fingerprint : 0;
	return rc;
}

/*
 * wcfdw_direct_update_row
 *		UPDATE of the row whose rowkey is range's: is it there for the
 *		statement's snapshot (a mapped cell), lock it, check what committed
 *		meanwhile, write what the statement sets (see the top)
 */
static void
wcfdw_direct_update_row(ForeignScanState *node, WcFdwDirectState *ds, wc_key_range *range)
{
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	TupleTableSlot *slot = ds->setslot;
	wc_scan_opts o = ds->opts;
	wc_batch   *b;
	MemoryContext old;
	uint64		fp_snap = 0,
				fp_new = 0;
	int			i;

	/*
	 * READ COMMITTED updates the newest row whatever changed in it, so it
	 * asks only whether the row is there, for the snapshot and then newest:
	 * a read up to the first mapped cell instead of all of them.  The
	 * snapshot isolation levels compare the two rows; so does EXPLAIN
	 * ANALYZE, which counts the rows changed concurrently.
	 */
	bool		exact = IsolationUsesXactSnapshot() || node->ss.ps.instrument != NULL;

	o.ranges = range;
	o.nranges = 1;
	wcfdw_direct_scan_open(ds, &o);
	if (wcfdw_direct_read_row(ds, ds->scan, exact, &fp_snap) == 0 ||
		!wcfdw_lock_rowkey(ds->store, ds->rel, range->start, range->start_len,
						   ds->lockmode, ds->waitpolicy))
	{
		wcfdw_direct_close(ds);
		return;
	}

	/* what committed up to now: did it change the row the snapshot saw? */
	wcfdw_store_refresh(ds->store);
	if (!wc_scan_sees_latest(ds->scan))
	{
		wc_scan_opts newest = o;
		wc_scan    *scan = NULL;
		wc_err		err;
		int			rc,
					is;

		wcfdw_scan_opts_newest(&newest);
		wc_err_clear(&err);
		rc = wc_scan_open(ds->store->db, &newest, &scan, &err);
		if (rc < 0)
			wcfdw_engine_error(ERROR, rc, &err, "scan", ds->store->relname);
		PG_TRY();
		{
			is = wcfdw_direct_read_row(ds, scan, exact, &fp_new);
		}
		PG_FINALLY();
		{
			wc_scan_close(scan);
		}
		PG_END_TRY();
		if (!(is == 1 && (!exact || fp_snap == fp_new)))
		{
			if (IsolationUsesXactSnapshot())
				ereport(ERROR,
						(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
						 errmsg("could not serialize access due to concurrent %s",
								is == 0 ? "delete" : "update")));
			ds->fallbacks++;
			if (is == 0)
			{
				/* READ COMMITTED: deleted meanwhile, nothing to update */
				wcfdw_direct_close(ds);
				return;
			}
		}
	}
	wcfdw_direct_close(ds);

	/* the values it sets (READ COMMITTED: on the newest row, as after EvalPlanQual) */
	ResetExprContext(econtext);
	ExecClearTuple(slot);
	memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	for (i = 0; i < ds->nset; i++)
	{
		AttrNumber	a = ds->set_attnums[i];

		slot->tts_values[a - 1] = ExecEvalExpr(ds->set_exprs[i], econtext, &slot->tts_isnull[a - 1]);
	}
	ExecStoreVirtualTuple(slot);
	b = wcfdw_store_write_batch(ds->store, ds->cid, false);
	old = MemoryContextSwitchTo(ds->rowcxt);	/* reset for each rowkey */
	wcfdw_wide_delete_replaced(&ds->conv, ds->store, ds->cid, b, slot,
							   range->start, range->start_len, ds->updated);
	wcfdw_wide_put_row(&ds->conv, b, slot, range->start, range->start_len, wcfdw_now_ms(),
					   ds->updated);
	MemoryContextSwitchTo(old);
	ds->rows++;
}

/*
 * wcfdw_direct_update_run
 *		The whole UPDATE: row by row of the rowkeys its condition names
 */
static void
wcfdw_direct_update_run(ForeignScanState *node, WcFdwDirectState *ds)
{
	int			i;

	if (!wcfdw_direct_keys(node, ds))
		return;
	for (i = 0; i < ds->keys.nranges; i++)
	{
		wc_key_range *r = &ds->keys.ranges[i];

		CHECK_FOR_INTERRUPTS();
		/* rowkey = and = ANY give rowkeys (keys.c) */
		if (r->start_bound != WC_INCLUSIVE || r->stop_bound != WC_INCLUSIVE ||
			r->start_len != r->stop_len || memcmp(r->start, r->stop, r->start_len) != 0)
			elog(ERROR, "direct update of foreign table \"%s\" given a range of rowkeys",
				 RelationGetRelationName(ds->rel));
		MemoryContextReset(ds->rowcxt);
		wcfdw_direct_update_row(node, ds, r);
	}
	MemoryContextReset(ds->rowcxt);
}

TupleTableSlot *
widecolIterateDirectModify(ForeignScanState *node)
{
	WcFdwDirectState *ds = node->fdw_state;
	EState	   *estate = node->ss.ps.state;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;

	if (!ds->done)
	{
		uint64		n;

		ds->done = true;
		if (ds->operation == CMD_UPDATE)
			wcfdw_direct_update_run(node, ds);
		else
			wcfdw_direct_run(node, ds);
		n = ds->operation == CMD_UPDATE ? ds->rows : ds->deleted;
		if (ds->set_tag)
			estate->es_processed += n;
		if (node->ss.ps.instrument)
			node->ss.ps.instrument->tuplecount += n;
	}
	return ExecClearTuple(slot);
}

void
widecolEndDirectModify(ForeignScanState *node)
{
	WcFdwDirectState *ds = node->fdw_state;

	if (ds != NULL && ds->rowcxt != NULL)
		wcfdw_direct_close(ds);
}

void
widecolExplainDirectModify(ForeignScanState *node, ExplainState *es)
{
	WcFdwDirectState *ds = node->fdw_state;
	char	   *rowkeys;
	char	   *families;

	wcfdw_explain_context(node, es);
	rowkeys = wcfdw_explain_conds(node, es, WCF_ROWKEY);
	families = wcfdw_explain_conds(node, es, WCF_FAMILY);

	if (((ForeignScan *) node->ss.ps.plan)->operation == CMD_UPDATE)
	{
		ExplainPropertyText("Direct Update", psprintf("rowkey %s", rowkeys ? rowkeys : ""), es);
		if (es->analyze && ds != NULL && ds->done)
		{
			ExplainPropertyUInteger("Rows Updated", NULL, ds->rows, es);
			if (ds->fallbacks > 0)
				ExplainPropertyUInteger("Rows Changed Concurrently", NULL, ds->fallbacks, es);
		}
		return;
	}
	ExplainPropertyText("Direct Delete",
						psprintf("rowkey %s%s%s", rowkeys ? rowkeys : "",
								 families ? " AND family " : "", families ? families : ""),
						es);
	if (es->analyze && ds != NULL && ds->done)
	{
		ExplainPropertyUInteger("Rows Deleted", NULL, ds->rows, es);
		ExplainPropertyUInteger("Cells Deleted", NULL, ds->deleted, es);
		ExplainPropertyUInteger("Family Markers", NULL, ds->markers, es);
		ExplainPropertyUInteger("Version Tombstones", NULL, ds->tombstones, es);
		if (ds->fallbacks > 0)
			ExplainPropertyUInteger("Rows Changed Concurrently", NULL, ds->fallbacks, es);
	}
}
