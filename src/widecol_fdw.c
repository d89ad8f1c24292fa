/*-------------------------------------------------------------------------
 *
 * widecol_fdw.c
 *		  Module load, the FDW handler and the planner callbacks
 *
 * Planning: GetForeignRelSize estimates rows from the store's own
 * statistics (wc_db_get_stats, per family when the family is fixed by the
 * query); GetForeignPaths adds a scan path that carries the store's order as
 * pathkeys (rowkey, family, qualifier, ts DESC, as far as PostgreSQL's order
 * is byte order), a reversed scan path whose rowkeys come descending
 * (rowkey DESC, family, qualifier, ts DESC: the engine reads a row's cells
 * in the forward order) when the query asks for rowkey DESC, and
 * parameterized paths for rowkey = outer.column, so that
 * a nested loop does one point read per outer row; GetForeignPlan passes the
 * pushable conditions' expressions as fdw_exprs, evaluated at execution (see
 * pushdown.c), and leaves PostgreSQL to check only the quals the engine does
 * not enforce exactly (wcfdw_cond_exact).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/sysattr.h"
#include "access/table.h"
#include "catalog/pg_am.h"
#include "catalog/pg_opclass.h"
#include "commands/defrem.h"
#include "foreign/foreign.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planmain.h"
#include "optimizer/prep.h"
#include "optimizer/restrictinfo.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/typcache.h"

#include "widecol_fdw.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(widecol_fdw_handler);

void		_PG_init(void);

/* What GetForeignRelSize learned, for GetForeignPaths and GetForeignPlan. */
typedef struct WcFdwPlanState
{
	WcFdwColumns cols;
	List	   *conds;			/* WcFdwCond of baserestrictinfo */
	double		cells;			/* cells of the families the scan reads */
	double		cells_per_row;	/* cells of one rowkey */
	double		pages;			/* file bytes / BLCKSZ of those families */
	double		files;			/* sorted files per family */
	Selectivity rowkey_sel;		/* of the pushed rowkey conditions */
	double		rowkey_points;	/* rowkeys of point reads (= x, IN), or -1 */
	Selectivity other_sel;		/* of every clause but rowkey/family ones */
	bool		wide_strict;	/* wide.c: a condition needs a cell column */
} WcFdwPlanState;

void
_PG_init(void)
{
	wcfdw_wal_init();
	wcfdw_sync_init();
	wcfdw_cache_init();
	wcfdw_option_init();
	wcfdw_store_init();
	wcfdw_ddl_init();
	wcfdw_database_init();
}

/*
 * wcfdw_family_cells
 *		Cells, bytes and files of the families named by constant family
 *		conditions (all families when there are none)
 */
static void
wcfdw_family_stats(WcFdwStore *store, const WcFdwTableOptions *topts, List *conds,
				   wc_db_stats *out)
{
	bool	   *want = palloc(sizeof(bool) * Max(topts->nfamilies, 1));
	bool		restricted = false;
	ListCell   *lc;
	wc_err		err;
	int			rc;
	int			i;

	for (i = 0; i < topts->nfamilies; i++)
		want[i] = true;
	foreach(lc, conds)
	{
		WcFdwCond  *c = lfirst(lc);
		bool	   *hit;

		if (c->field != WCF_FAMILY || !IsA(c->expr, Const) || ((Const *) c->expr)->constisnull)
			continue;
		hit = palloc0(sizeof(bool) * Max(topts->nfamilies, 1));
		if (c->kind == WCK_EQ)
		{
			text	   *t = DatumGetTextPP(((Const *) c->expr)->constvalue);

			i = wcfdw_family_index(topts, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
			if (i >= 0)
				hit[i] = true;
		}
		else
		{
			/* IN (...): the families named in the constant array */
			ArrayType  *a = DatumGetArrayTypeP(((Const *) c->expr)->constvalue);
			Datum	   *elems;
			bool	   *nulls;
			int			n,
						k;

			deconstruct_array(a, ARR_ELEMTYPE(a), -1, false, TYPALIGN_INT, &elems, &nulls, &n);
			for (k = 0; k < n; k++)
			{
				text	   *t;

				if (nulls[k])
					continue;
				t = DatumGetTextPP(elems[k]);
				i = wcfdw_family_index(topts, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
				if (i >= 0)
					hit[i] = true;
			}
		}
		for (i = 0; i < topts->nfamilies; i++)
			want[i] = want[i] && hit[i];
		restricted = true;
	}

	memset(out, 0, sizeof(*out));
	wc_err_clear(&err);
	if (!restricted)
	{
		rc = wc_db_get_stats(store->db, NULL, out, &err);
		wcfdw_check(rc, &err, "read statistics of the", store->relname);
		return;
	}
	for (i = 0; i < topts->nfamilies; i++)
	{
		wc_db_stats st;

		if (!want[i])
			continue;
		rc = wc_db_get_stats(store->db, topts->families[i].name, &st, &err);
		wcfdw_check(rc, &err, "read statistics of the", store->relname);
		out->files += st.files;
		out->file_cells += st.file_cells;
		out->file_bytes += st.file_bytes;
		out->mem_cells += st.mem_cells;
		out->mem_bytes += st.mem_bytes;
		out->distinct_rows_est = Max(out->distinct_rows_est, st.distinct_rows_est);
	}
}

static void
widecolGetForeignRelSize(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	WcFdwPlanState *ps = palloc0(sizeof(WcFdwPlanState));
	Relation	rel = table_open(foreigntableid, NoLock);
	WcFdwTableOptions topts;
	WcFdwStore *store;
	wc_db_stats all,
				fam;
	wc_err		err;
	List	   *rowkey_clauses = NIL;
	List	   *other_clauses = NIL;
	ListCell   *lc;
	double		rows;

	wcfdw_get_columns(rel, &ps->cols);
	wcfdw_get_table_options(foreigntableid, &topts);
	store = wcfdw_store_get(rel);
	ps->conds = wcfdw_extract_conds(root, baserel, &ps->cols, baserel->baserestrictinfo);

	wc_err_clear(&err);
	wcfdw_check(wc_db_get_stats(store->db, NULL, &all, &err), &err,
				"read statistics of the", store->relname);
	wcfdw_family_stats(store, &topts, ps->conds, &fam);

	ps->cells = (double) (fam.file_cells + fam.mem_cells);
	ps->pages = ceil((double) (fam.file_bytes + fam.mem_bytes) / BLCKSZ);
	ps->files = Max(1.0, (double) all.files / Max(1, topts.nfamilies));
	if (all.distinct_rows_est > 0)
		ps->cells_per_row = Max(1.0, (double) (all.file_cells + all.mem_cells) /
								all.distinct_rows_est);
	else
		ps->cells_per_row = 3.0;

	/* selectivities: rowkey conditions, and the rest but family ones */
	ps->rowkey_points = -1;
	foreach(lc, baserel->baserestrictinfo)
	{
		RestrictInfo *ri = lfirst(lc);
		ListCell   *lc2;
		int			field = -1;

		foreach(lc2, ps->conds)
		{
			WcFdwCond  *c = lfirst(lc2);

			if (c->rinfo == ri)
			{
				field = c->field;

				/*
				 * rowkey = x is one point read whatever x is: a Param of a
				 * generic plan, or the placeholder postgres_fdw's
				 * use_remote_estimate sends in the EXPLAIN of a parameterized
				 * remote scan ("rowkey = ((SELECT null::text)::text)"); an
				 * unknown value's selectivity would estimate a point read
				 * of a 1M-cell table at thousands of rows.
				 */
				if (c->field == WCF_ROWKEY && c->kind == WCK_EQ && c->expr != NULL &&
					!(IsA(c->expr, Const) && ((Const *) c->expr)->constisnull))
				{
					if (ps->rowkey_points < 0 || ps->rowkey_points > 1)
						ps->rowkey_points = 1;
				}
				else if (c->field == WCF_ROWKEY && c->expr != NULL && IsA(c->expr, Const) &&
						 !((Const *) c->expr)->constisnull)
				{
					double		k = -1;

					if (c->kind == WCK_IN)
						k = ArrayGetNItems(ARR_NDIM(DatumGetArrayTypeP(((Const *) c->expr)->constvalue)),
										   ARR_DIMS(DatumGetArrayTypeP(((Const *) c->expr)->constvalue)));
					if (k >= 0 && (ps->rowkey_points < 0 || k < ps->rowkey_points))
						ps->rowkey_points = k;
				}
			}
		}
		if (field == WCF_ROWKEY)
			rowkey_clauses = lappend(rowkey_clauses, ri);
		else if (field != WCF_FAMILY)
			other_clauses = lappend(other_clauses, ri);
	}
	ps->rowkey_sel = clauselist_selectivity(root, rowkey_clauses, baserel->relid, JOIN_INNER, NULL);
	ps->other_sel = clauselist_selectivity(root, other_clauses, baserel->relid, JOIN_INNER, NULL);

	if (ps->rowkey_points >= 0)
		rows = ps->rowkey_points * ps->cells_per_row;
	else
		rows = ps->cells * ps->rowkey_sel;
	rows = Min(rows, ps->cells) * ps->other_sel;
	/* a wide table's row is a rowkey: its cells per row make one */
	if (ps->cols.wide != NULL)
		rows /= ps->cells_per_row;

	baserel->tuples = (double) (all.file_cells + all.mem_cells);
	baserel->rows = clamp_row_est(rows);

	if (ps->cols.wide != NULL)
		ps->wide_strict = wcfdw_wide_strict(root, baserel, &ps->cols);

	baserel->fdw_private = ps;
	table_close(rel, NoLock);
}

/*
 * wcfdw_nulls_as_asked
 *		pk, or its twin with the NULLS order the query asks for at position i
 *
 * A scan returns no NULL rowkey, family, qualifier or ts, so it is in both
 * NULLS orders at once: ORDER BY rowkey DESC NULLS LAST needs no Sort either.
 */
static PathKey *
wcfdw_nulls_as_asked(PlannerInfo *root, PathKey *pk, int i)
{
	PathKey    *q;

	if (list_length(root->query_pathkeys) <= i)
		return pk;
	q = list_nth(root->query_pathkeys, i);
	if (q->pk_eclass != pk->pk_eclass || q->pk_opfamily != pk->pk_opfamily ||
		q->pk_strategy != pk->pk_strategy || q->pk_nulls_first == pk->pk_nulls_first)
		return pk;
	return make_canonical_pathkey(root, pk->pk_eclass, pk->pk_opfamily, pk->pk_strategy,
								  q->pk_nulls_first);
}

/*
 * wcfdw_scan_pathkeys
 *		The store's order as pathkeys, as far as it is PostgreSQL's order;
 *		with reverse, a reversed scan's: rowkey descending, the rest as before
 */
static List *
wcfdw_scan_pathkeys(PlannerInfo *root, RelOptInfo *baserel, const WcFdwColumns *cols,
					bool reverse)
{
	static const WcFdwField order[] = {WCF_ROWKEY, WCF_FAMILY, WCF_QUALIFIER, WCF_TS};
	List	   *pathkeys = NIL;
	int			i;

	for (i = 0; i < lengthof(order); i++)
	{
		const WcFdwColumn *col = &cols->f[order[i]];
		TypeCacheEntry *tce;
		Oid			opno;
		Var		   *var;
		List	   *pk;

		if (col->attnum == 0 || !wcfdw_column_is_byte_ordered(col))
			break;
		/* the type cache, not GetDefaultOpClass: that scans pg_opclass on every
		 * planning, a quarter of a prepared prefix scan's time when it is replanned */
		tce = lookup_type_cache(col->typid, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
		opno = (order[i] == WCF_TS || (reverse && order[i] == WCF_ROWKEY)) ?
			tce->gt_opr : tce->lt_opr;
		if (!OidIsValid(opno))
			break;
		var = makeVar(baserel->relid, col->attnum, col->typid, col->typmod, col->collid, 0);

		/*
		 * Only an order the query can use (as an index's pathkeys): one of an
		 * equivalence class it has (ORDER BY, a merge join, a condition).  A
		 * partition's or an inheritance child's own new class would have no
		 * member for the parent, and an ordered Append over it could not be
		 * planned ("could not find pathkey item to sort").
		 */
		pk = build_expression_pathkey(root, (Expr *) var, NULL, opno, baserel->relids, false);
		if (pk == NIL)
			break;
		/* a column fixed to a constant by the query orders nothing */
		if (EC_MUST_BE_REDUNDANT(((PathKey *) linitial(pk))->pk_eclass))
			continue;
		/* reversed, only a rowkey that orders anything makes a new order */
		if (reverse && pathkeys == NIL && order[i] != WCF_ROWKEY)
			return NIL;
		pk = list_make1(wcfdw_nulls_as_asked(root, linitial(pk), list_length(pathkeys)));
		pathkeys = list_concat(pathkeys, pk);
	}
	return pathkeys;
}

/* cost of reading n cells after s seeks */
static void
wcfdw_cost(PlannerInfo *root, RelOptInfo *baserel, WcFdwPlanState *ps, double seeks,
		   double cells, int nquals, Cost *startup, Cost *total)
{
	double		pages = ps->cells > 0 ? ps->pages * Min(1.0, cells / ps->cells) : 0;

	*startup = 1.0 + 0.25 * random_page_cost * ps->files;
	*total = *startup +
		seeks * 0.25 * random_page_cost * ps->files +
		pages * seq_page_cost +
		cells * (cpu_tuple_cost + cpu_operator_cost * (1 + nquals));
}

/* generate_implied_equalities_for_column callback: is em our rowkey? */
static bool
wcfdw_ec_matches_rowkey(PlannerInfo *root, RelOptInfo *rel, EquivalenceClass *ec,
						EquivalenceMember *em, void *arg)
{
	const WcFdwColumns *cols = arg;
	Expr	   *e = em->em_expr;

	while (e && IsA(e, RelabelType))
		e = ((RelabelType *) e)->arg;
	return e && IsA(e, Var) && ((Var *) e)->varno == rel->relid &&
		((Var *) e)->varlevelsup == 0 &&
		((Var *) e)->varattno == cols->f[WCF_ROWKEY].attnum;
}

/*
 * widecolIsForeignScanParallelSafe
 *		Whether workers may scan the table: only a plain read of what other
 *		transactions committed
 *
 * A worker opens the store itself and sees what is on disk; the pending
 * writes of this transaction live in the leader's memory only, so a table
 * with some is not scanned in parallel (if a plan made before the writes
 * runs, the leader scans it alone: scan.c).  Nor is a table created by this
 * transaction (its store directory is the leader's to remove on abort).
 * Nor a scan that locks rows (FOR UPDATE/SHARE, the target of UPDATE or
 * DELETE): the lock and the read of the newest version that follows it
 * (scan.c, wcfdw_lock_row) are a modifying transaction's, which parallel
 * mode forbids.
 */
static bool
widecolIsForeignScanParallelSafe(PlannerInfo *root, RelOptInfo *baserel, RangeTblEntry *rte)
{
	Relation	rel;
	WcFdwStore *store;
	bool		safe;

	if (root->parse->commandType != CMD_SELECT || root->parse->rowMarks != NIL ||
		root->rowMarks != NIL || bms_is_member(baserel->relid, root->all_result_relids))
		return false;
	rel = table_open(rte->relid, NoLock);
	safe = rel->rd_createSubid == InvalidSubTransactionId &&
		rel->rd_firstRelfilenodeSubid == InvalidSubTransactionId;
	if (safe)
	{
		store = wcfdw_store_get(rel);
		safe = store->npending == 0;
	}
	table_close(rel, NoLock);
	return safe;
}

/*
 * wcfdw_add_partial_path
 *		The parallel scan: workers share out the key space in chunks (scan.c)
 *
 * Costed as PostgreSQL costs a parallel sequential scan: each process reads
 * its share of the cells, the whole I/O is charged once, and the rows are
 * divided among the workers and the leader.  The tuples' transfer through
 * Gather (parallel_tuple_cost) is the Gather's to charge.
 */
static void
wcfdw_add_partial_path(PlannerInfo *root, RelOptInfo *baserel, WcFdwPlanState *ps,
					   double scanned, int nquals)
{
	ForeignPath *path;
	int			workers;
	double		divisor;
	double		leader;
	Cost		startup,
				total,
				cpu;

	workers = compute_parallel_worker(baserel, ps->pages, -1, max_parallel_workers_per_gather);
	if (workers <= 0)
		return;
	/* costsize.c's get_parallel_divisor */
	divisor = workers;
	leader = 1.0 - 0.3 * workers;
	if (parallel_leader_participation && leader > 0)
		divisor += leader;

	wcfdw_cost(root, baserel, ps, 1, scanned, nquals, &startup, &total);
	cpu = scanned * (cpu_tuple_cost + cpu_operator_cost * (1 + nquals));
	total = total - cpu + cpu / divisor;
	path = create_foreignscan_path(root, baserel, NULL, clamp_row_est(baserel->rows / divisor),
								   startup, total, NIL, NULL, NULL, NIL);
	path->path.parallel_aware = true;
	path->path.parallel_safe = true;
	path->path.parallel_workers = workers;
	add_partial_path(baserel, (Path *) path);
}

static void
widecolGetForeignPaths(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid)
{
	WcFdwPlanState *ps = baserel->fdw_private;
	List	   *pathkeys = wcfdw_scan_pathkeys(root, baserel, &ps->cols, false);
	List	   *rev_pathkeys = NIL;
	int			nquals = list_length(baserel->baserestrictinfo);
	List	   *candidates = NIL;
	ListCell   *lc;
	double		scanned;
	double		seeks;
	Cost		startup,
				total;

	/* the plain scan */
	if (ps->rowkey_points >= 0)
	{
		seeks = ps->rowkey_points;
		scanned = Min(ps->cells, ps->rowkey_points * ps->cells_per_row);
	}
	else
	{
		seeks = 1;
		scanned = ps->cells * ps->rowkey_sel;
	}
	wcfdw_cost(root, baserel, ps, seeks, scanned, nquals, &startup, &total);
	add_path(baserel, (Path *)
			 create_foreignscan_path(root, baserel, NULL, baserel->rows,
									 startup, total, pathkeys,
									 baserel->lateral_relids, NULL, NIL));

	/* the parallel scan (scan.c, "Parallel scans") */
	if (baserel->consider_parallel && bms_is_empty(baserel->lateral_relids) &&
		ps->rowkey_points < 0)
		wcfdw_add_partial_path(root, baserel, ps, scanned, nquals);

	/*
	 * The reversed scan, when the query's order starts with rowkey DESC (a
	 * path of no use would only cost planning time).  The same reads, plus
	 * a search a row in every file, in the blocks at hand: the engine steps
	 * back to the row before and reads it forward (engine/scan.c).  A whole
	 * range read so took about as long as a forward read and a Sort of it
	 * (BENCHMARKS.md, "Reversed scans"); it is charged a little less, since
	 * it streams and needs no work_mem.  Its startup cost is the forward
	 * scan's, so that a LIMIT takes it over a Sort of the whole range.
	 */
	if (root->query_pathkeys != NIL)
		rev_pathkeys = wcfdw_scan_pathkeys(root, baserel, &ps->cols, true);
	if (rev_pathkeys != NIL && linitial(rev_pathkeys) == linitial(root->query_pathkeys))
	{
		double		rows = scanned / Max(ps->cells_per_row, 1.0);

		total += rows * 10 * ps->files * cpu_operator_cost;
		add_path(baserel, (Path *)
				 create_foreignscan_path(root, baserel, NULL, baserel->rows,
										 startup, total, rev_pathkeys,
										 baserel->lateral_relids, NULL,
										 list_make1_int(1)));
	}

	/* parameterized scans: rowkey = outer expression */
	foreach(lc, baserel->joininfo)
		candidates = lappend(candidates, lfirst(lc));
	if (baserel->has_eclass_joins)
		candidates = list_concat(candidates,
								 generate_implied_equalities_for_column(root, baserel,
																		wcfdw_ec_matches_rowkey,
																		&ps->cols,
																		baserel->lateral_referencers));
	foreach(lc, candidates)
	{
		RestrictInfo *ri = lfirst(lc);
		WcFdwCond	cond;
		Relids		required_outer;
		double		rows;

		if (!join_clause_is_movable_to(ri, baserel))
			continue;
		if (!wcfdw_cond_from_clause(root, baserel, &ps->cols, ri, &cond) ||
			cond.field != WCF_ROWKEY || cond.kind != WCK_EQ)
			continue;
		required_outer = bms_union(ri->clause_relids, baserel->lateral_relids);
		required_outer = bms_del_member(required_outer, baserel->relid);
		if (bms_is_empty(required_outer))
			continue;
		rows = clamp_row_est((ps->cols.wide != NULL ? 1.0 : Min(ps->cells, ps->cells_per_row)) *
							 ps->other_sel);
		wcfdw_cost(root, baserel, ps, 1, Min(ps->cells, ps->cells_per_row), nquals + 1,
				   &startup, &total);
		add_path(baserel, (Path *)
				 create_foreignscan_path(root, baserel, NULL, rows, startup, total,
										 pathkeys, required_outer, NULL, NIL));
	}
}

/*
 * wcfdw_row_lock
 *		The row lock the scan takes on each row it returns, and how it waits
 *
 * Rows of a table that a statement updates or deletes, or reads FOR UPDATE
 * or FOR SHARE, are locked as the heap locks a tuple (doc/SQL.md,
 * "Transactions"): one lock per row (cell version, or a wide table's
 * rowkey) in the lock manager, in the mode the heap uses for a tuple lock of
 * that strength, so that they conflict exactly as heap row locks do; FOR
 * SHARE's is ShareLock instead of the heap's RowShareLock, which conflicts
 * with the same three and also with a tall writer's rowkey lock (scan.c,
 * wcfdw_row_lock_acquire).  An UPDATE takes FOR NO KEY UPDATE strength (a
 * foreign table has no unique index, so no key changes), a DELETE FOR
 * UPDATE.
 */
static List *
wcfdw_row_lock(PlannerInfo *root, RelOptInfo *baserel)
{
	LOCKMODE	mode = NoLock;
	LockWaitPolicy wait = LockWaitBlock;
	bool		target = false;

	if (bms_is_member(baserel->relid, root->all_result_relids))
	{
		target = true;
		if (root->parse->commandType == CMD_DELETE)
			mode = AccessExclusiveLock;
		else if (root->parse->commandType == CMD_UPDATE)
			mode = ExclusiveLock;
	}
	else
	{
		PlanRowMark *rc = get_plan_rowmark(root->rowMarks, baserel->relid);

		if (rc != NULL)
		{
			switch (rc->strength)
			{
				case LCS_FORKEYSHARE:
					mode = AccessShareLock;
					break;
				case LCS_FORSHARE:
					mode = ShareLock;
					break;
				case LCS_FORNOKEYUPDATE:
					mode = ExclusiveLock;
					break;
				case LCS_FORUPDATE:
					mode = AccessExclusiveLock;
					break;
				case LCS_NONE:
					break;
			}
			wait = rc->waitPolicy;
		}
	}
	return list_make3_int(mode, wait, target);
}

/*
 * wcfdw_plan_attrs
 *		The columns the scan must fill: those the plan above uses and those
 *		of the quals it checks itself (local)
 */
static List *
wcfdw_plan_attrs(RelOptInfo *baserel, const WcFdwColumns *cols, List *local)
{
	Bitmapset  *attrs = NULL;
	List	   *result = NIL;

	pull_varattnos((Node *) baserel->reltarget->exprs, baserel->relid, &attrs);
	pull_varattnos((Node *) local, baserel->relid, &attrs);

	/*
	 * ctid is wanted: BeginForeignScan refuses to run the scan (a plan with it
	 * is fine, for the EXPLAIN of use_remote_estimate; see scan.c)
	 */
	if (bms_is_member(SelfItemPointerAttributeNumber - FirstLowInvalidHeapAttributeNumber, attrs))
		result = lappend_int(result, SelfItemPointerAttributeNumber);
	for (int i = 0; i < WCF_NFIELDS; i++)
	{
		AttrNumber	att = cols->f[i].attnum;

		if (att != 0 &&
			(bms_is_member(att - FirstLowInvalidHeapAttributeNumber, attrs) ||
			 bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, attrs)))
			result = lappend_int(result, att);
	}
	for (int i = 0; i < cols->nwide; i++)
	{
		AttrNumber	att = cols->wide[i].attnum;

		if (bms_is_member(att - FirstLowInvalidHeapAttributeNumber, attrs) ||
			bms_is_member(0 - FirstLowInvalidHeapAttributeNumber, attrs))
			result = lappend_int(result, att);
	}
	return result;
}

/*
 * wcfdw_cond_exact
 *		Whether the engine's scan returns exactly the cells (rows) for which
 *		c's clause is true, so that PostgreSQL need not check it again
 *
 * The rowkey conditions =, IN, < <= > >= and the prefixes (starts_with, ^@,
 * ^@ ANY) and family = and IN: pushdown.c takes them only where PostgreSQL's
 * result is a byte comparison, and keys.c turns them into exact ranges and
 * family sets.  A cell that a scan returns again after a lock wait (its
 * newest version, scan.c) keeps its rowkey and family, so these hold for it
 * too.  Checked again by PostgreSQL: LIKE (a prefix of the pattern is
 * pushed), the OR trees (their arms drop conditions on other columns), the
 * qualifier conditions, and ts, which a newer version may change.  A
 * plan's qual runs once per cell; at 1,000 cells counted, checking the
 * rowkey range took a third of the time (perf).
 */
static bool
wcfdw_cond_exact(const WcFdwCond *c)
{
	switch (c->field)
	{
		case WCF_ROWKEY:
			switch (c->kind)
			{
				case WCK_EQ:
				case WCK_IN:
				case WCK_LT:
				case WCK_LE:
				case WCK_GT:
				case WCK_GE:
				case WCK_PREFIX:
				case WCK_PREFIX_ANY:
					return true;
				default:
					return false;
			}
		case WCF_FAMILY:
			return c->kind == WCK_EQ || c->kind == WCK_IN;
		default:
			return false;
	}
}

/*
 * Whether EvalPlanQual can recheck a row of this scan: only under an UPDATE,
 * DELETE or a row-locking clause, at this query level or one around it (a
 * sublink's).  A plain SELECT never rechecks, so its plan carries no recheck
 * quals, whose set-up in ExecInitForeignScan every execution would pay (a
 * tenth of a point read's executor start in perf).
 */
static bool
wcfdw_epq_possible(PlannerInfo *root)
{
	for (PlannerInfo *r = root; r != NULL; r = r->parent_root)
		if (r->parse->commandType != CMD_SELECT || r->parse->rowMarks != NIL)
			return true;
	return false;
}

static ForeignScan *
widecolGetForeignPlan(PlannerInfo *root, RelOptInfo *baserel, Oid foreigntableid,
					  ForeignPath *best_path, List *tlist, List *scan_clauses,
					  Plan *outer_plan)
{
	WcFdwPlanState *ps = baserel->fdw_private;
	List	   *conds = wcfdw_extract_conds(root, baserel, &ps->cols, scan_clauses);
	List	   *fdw_exprs = NIL;
	List	   *condinfo = NIL;
	List	   *local = NIL;
	List	   *recheck = NIL;
	bool		epq = wcfdw_epq_possible(root);
	List	   *wide;
	Node	   *current_of = NULL;
	ListCell   *lc;

	foreach(lc, conds)
		wcfdw_cond_flatten(lfirst(lc), &fdw_exprs, &condinfo);

	/*
	 * The quals the engine's keys enforce exactly are checked again only by
	 * EvalPlanQual (fdw_recheck_quals: a row a foreign scan gives it is the
	 * whole row, copied), when it can run; the others stay in the plan's
	 * qual.
	 */
	foreach(lc, scan_clauses)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);
		bool		exact = false;
		ListCell   *lc2;

		if (ri->pseudoconstant)
			continue;			/* a gating Result checks it (create_scan_plan) */
		if (IsA(ri->clause, CurrentOfExpr))
		{
			/* the scan reads the cursor's row instead (scan.c) */
			current_of = (Node *) ri->clause;
			continue;
		}
		foreach(lc2, conds)
		{
			WcFdwCond  *c = lfirst(lc2);

			if (c->rinfo == ri)
			{
				exact = wcfdw_cond_exact(c);
				break;
			}
		}
		if (exact)
		{
			if (epq)
				recheck = lappend(recheck, ri->clause);
		}
		else
			local = lappend(local, ri->clause);
	}

	/*
	 * Cell filters: a local "cell column = value" is also checked by the scan
	 * on the cell's bytes, before the row is made (scan.c); it stays in the
	 * qual all the same.  The values end fdw_exprs.
	 */
	wide = list_make1_int(ps->wide_strict);
	foreach(lc, local)
	{
		AttrNumber	attnum;
		Expr	   *value;

		if (wcfdw_cell_filter_from_clause(root, baserel, &ps->cols, lfirst(lc), &attnum, &value))
		{
			wide = lappend_int(lappend_int(wide, attnum), list_length(fdw_exprs));
			fdw_exprs = lappend(fdw_exprs, value);
		}
	}

	/* the path's fdw_private: 1 for the reversed scan */
	return make_foreignscan(tlist, local, baserel->relid, fdw_exprs,
							lappend(list_make5(condinfo, wcfdw_plan_attrs(baserel, &ps->cols, local),
											   wcfdw_row_lock(root, baserel), wide,
											   list_make1_int(best_path->fdw_private != NIL)),
									current_of),
							NIL, recheck, outer_plan);
}

Datum
widecol_fdw_handler(PG_FUNCTION_ARGS)
{
	FdwRoutine *r = makeNode(FdwRoutine);

	r->GetForeignRelSize = widecolGetForeignRelSize;
	r->GetForeignPaths = widecolGetForeignPaths;
	r->GetForeignPlan = widecolGetForeignPlan;
	r->BeginForeignScan = widecolBeginForeignScan;
	r->IterateForeignScan = widecolIterateForeignScan;
	r->ReScanForeignScan = widecolReScanForeignScan;
	r->EndForeignScan = widecolEndForeignScan;
	r->ExplainForeignScan = widecolExplainForeignScan;
	r->IsForeignScanParallelSafe = widecolIsForeignScanParallelSafe;
	r->EstimateDSMForeignScan = widecolEstimateDSMForeignScan;
	r->InitializeDSMForeignScan = widecolInitializeDSMForeignScan;
	r->ReInitializeDSMForeignScan = widecolReInitializeDSMForeignScan;
	r->InitializeWorkerForeignScan = widecolInitializeWorkerForeignScan;
	r->AnalyzeForeignTable = widecolAnalyzeForeignTable;

	r->IsForeignRelUpdatable = widecolIsForeignRelUpdatable;
	r->AddForeignUpdateTargets = widecolAddForeignUpdateTargets;
	r->PlanForeignModify = widecolPlanForeignModify;
	r->BeginForeignModify = widecolBeginForeignModify;
	r->ExecForeignInsert = widecolExecForeignInsert;
	/*
	 * No ExecForeignBatchInsert: a batch of rows is inserted one by one all the
	 * same, and PostgreSQL would first copy every row and its plan row into the
	 * batch's slots (an INSERT ... SELECT of 1M cells 13% slower with batches of
	 * 1,000, A/B).
	 */
	r->ExecForeignUpdate = widecolExecForeignUpdate;
	r->ExecForeignDelete = widecolExecForeignDelete;
	r->EndForeignModify = widecolEndForeignModify;
	r->BeginForeignInsert = widecolBeginForeignInsert;
	r->EndForeignInsert = widecolEndForeignInsert;
	r->ExecForeignTruncate = widecolExecForeignTruncate;
	r->PlanDirectModify = widecolPlanDirectModify;
	r->BeginDirectModify = widecolBeginDirectModify;
	r->IterateDirectModify = widecolIterateDirectModify;
	r->EndDirectModify = widecolEndDirectModify;
	r->ExplainDirectModify = widecolExplainDirectModify;

	r->ImportForeignSchema = widecolImportForeignSchema;

	PG_RETURN_POINTER(r);
}
