/*-------------------------------------------------------------------------
 *
 * modify.c
 *		  INSERT, UPDATE, DELETE, COPY FROM and TRUNCATE
 *
 * Nothing is written here: every change goes into the transaction's pending
 * batch for the store (store.c) and reaches the disk at commit.  A cell
 * version is identified by (rowkey, family, qualifier, ts); UPDATE and DELETE
 * get these from row identity columns and need them declared.
 *
 * Checks, the same for every way in:
 *		NULL rowkey, family, qualifier or value	23502 not_null_violation
 *		empty rowkey, undeclared family			22023 invalid_parameter_value
 *		rowkey > 64 KiB, qualifier > 1 MiB,
 *		value > 256 MiB							54000 program_limit_exceeded
 * A missing ts column or a NULL ts means the current time in milliseconds.
 * A table without a family column writes to its only family; without a
 * qualifier column the qualifier is empty; without a value column the value.
 *
 * A wide table (wide.c) writes a row's cells instead: INSERT one cell per
 * non-NULL column, all at the current time; UPDATE the cells of the changed
 * columns (NULL deletes the cell); DELETE every mapped cell of the row.  Its
 * rows are identified by the rowkey alone.
 *
 * UPDATE deletes the old version when its key changes and puts the new one.
 * The puts are applied after all of the statement's deletes (EndForeignModify),
 * so that a statement that shifts versions (SET ts = ts - 1) cannot delete a
 * version it has just written.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "optimizer/appendinfo.h"
#include "storage/predicate.h"
#include "utils/datum.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "widecol_fdw.h"

static const char *const wcfdw_junk_names[] = {
	"wcfdw_rowkey", "wcfdw_family", "wcfdw_qualifier", "wcfdw_ts", "wcfdw_value"
};

/*
 * The name of field f's row identity column, at attnum: an UPDATE or DELETE
 * through a partitioned or inheritance parent gives each name one Var for
 * every child, and children may hold the field at different attnums.
 */
static char *
wcfdw_junk_name(int f, AttrNumber attnum)
{
	return psprintf("%s_%d", wcfdw_junk_names[f], attnum);
}

typedef struct WcFdwModifyState
{
	Relation	rel;
	WcFdwStore *store;
	WcFdwConverter conv;
	WcFdwTableOptions topts;
	CmdType		operation;
	CommandId	cid;			/* the command id at the start of the statement */
	AttrNumber	junk[WCF_NFIELDS];	/* in the subplan's tlist, or 0 */
	AttrNumber	junk_wholerow;	/* wide DELETE ... RETURNING: the old row */
	Bitmapset  *updated;		/* wide UPDATE: the columns it sets, and the
								 * generated columns computed from them */
	AttrNumber	junk_old;		/* ... and with a BEFORE UPDATE row trigger,
								 * the old row: columns it changed are set */
	bool		if_absent;		/* INSERT ... ON CONFLICT DO NOTHING */
	bool	   *all_cells;		/* ... of a wide table: every column (nwide) */
	wc_slice   *ia_families;	/* ... the families and qualifiers it maps */
	int			ia_nfamilies;
	wc_slice   *ia_quals;
	int			ia_nquals;
	HTAB	   *seen;			/* UPDATE, DELETE whose plan may give a row
								 * twice: the rows' keys changed so far, */
	HTAB	   *moved;			/* UPDATE: the keys rows were moved to so far */
	MemoryContext querycxt;
	MemoryContext tmpcxt;
} WcFdwModifyState;

int
widecolIsForeignRelUpdatable(Relation rel)
{
	return (1 << CMD_INSERT) | (1 << CMD_UPDATE) | (1 << CMD_DELETE);
}

void
widecolAddForeignUpdateTargets(PlannerInfo *root, Index rtindex,
							   RangeTblEntry *target_rte, Relation target_relation)
{
	WcFdwColumns cols;
	int			f;

	wcfdw_get_columns(target_relation, &cols);
	if (cols.wide != NULL)
	{
		/* a wide table's row is its rowkey; RETURNING of a DELETE needs the row */
		Var		   *var = makeVar(rtindex, cols.f[WCF_ROWKEY].attnum, cols.f[WCF_ROWKEY].typid,
								  cols.f[WCF_ROWKEY].typmod, cols.f[WCF_ROWKEY].collid, 0);

		add_row_identity_var(root, var, rtindex,
							 wcfdw_junk_name(WCF_ROWKEY, cols.f[WCF_ROWKEY].attnum));
		/* a record, as PostgreSQL's own: every child's row type is another one */
		if (root->parse->returningList != NIL && root->parse->commandType == CMD_DELETE)
			add_row_identity_var(root, makeVar(rtindex, InvalidAttrNumber, RECORDOID, -1,
											   InvalidOid, 0),
								 rtindex, "wcfdw_wholerow");
		return;
	}
	for (f = WCF_ROWKEY; f <= WCF_TS; f++)
		if (cols.f[f].attnum == 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot update or delete in foreign table \"%s\" without column \"%s\"",
							RelationGetRelationName(target_relation), wcfdw_field_names[f]),
					 errdetail("UPDATE and DELETE identify a cell version by its rowkey, family, qualifier and ts.")));
	for (f = 0; f < WCF_NFIELDS; f++)
	{
		Var		   *var;

		/* the value only for RETURNING of a DELETE */
		if (cols.f[f].attnum == 0 || (f == WCF_VALUE && root->parse->returningList == NIL))
			continue;
		var = makeVar(rtindex, cols.f[f].attnum, cols.f[f].typid, cols.f[f].typmod,
					  cols.f[f].collid, 0);
		add_row_identity_var(root, var, rtindex, wcfdw_junk_name(f, cols.f[f].attnum));
	}
}

List *
widecolPlanForeignModify(PlannerInfo *root, ModifyTable *plan, Index resultRelation,
						 int subplan_index)
{
	/*
	 * DO NOTHING (with no conflict target: PostgreSQL refuses one, a foreign
	 * table having no unique index) is a put if absent, ExecForeignInsert;
	 * DO UPDATE cannot come here for the same reason.
	 */
	if (plan->onConflictAction != ONCONFLICT_NONE &&
		plan->onConflictAction != ONCONFLICT_NOTHING)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("INSERT with ON CONFLICT DO UPDATE is not supported by widecol_fdw")));
	return NIL;
}

/*
 * Each row once.  A join under an UPDATE or DELETE (UPDATE ... FROM, DELETE
 * ... USING) can give a row of the table more than once; the heap changes it
 * the first time and skips it after (the tuple is the command's own), so the
 * statement counts, returns and changes it once.  We know a row by its key:
 * with such a plan the keys changed so far are kept, and a row met again is
 * not changed (NULL to the executor).  A plan that only scans the table
 * (a projection or an Append of scans above) gives each row once and keeps
 * nothing.
 */
typedef struct WcFdwSeenKey
{
	const uint8 *data;
	size_t		len;
} WcFdwSeenKey;

static uint32
wcfdw_seen_hash(const void *key, Size keysize)
{
	const WcFdwSeenKey *k = key;

	return hash_bytes(k->data, (int) k->len);
}

static int
wcfdw_seen_match(const void *a, const void *b, Size keysize)
{
	const WcFdwSeenKey *x = a;
	const WcFdwSeenKey *y = b;

	return x->len == y->len && memcmp(x->data, y->data, x->len) == 0 ? 0 : 1;
}

/* Does plan give each row of the table it scans once? */
static bool
wcfdw_plan_gives_rows_once(Plan *plan)
{
	ListCell   *lc;

	while (plan != NULL && IsA(plan, Result) && outerPlan(plan) != NULL)
		plan = outerPlan(plan);
	if (plan == NULL)
		return false;
	if (IsA(plan, ForeignScan))
		return true;
	if (!IsA(plan, Append))
		return false;
	foreach(lc, ((Append *) plan)->appendplans)
		if (!wcfdw_plan_gives_rows_once(lfirst(lc)))
			return false;
	return true;
}

/* A set of keys (byte strings), for the query (cxt). */
static HTAB *
wcfdw_key_set(MemoryContext cxt, const char *name)
{
	HASHCTL		ctl;

	ctl.keysize = sizeof(WcFdwSeenKey);
	ctl.entrysize = sizeof(WcFdwSeenKey);
	ctl.hash = wcfdw_seen_hash;
	ctl.match = wcfdw_seen_match;
	ctl.hcxt = cxt;
	return hash_create(name, 256, &ctl, HASH_ELEM | HASH_FUNCTION | HASH_COMPARE | HASH_CONTEXT);
}

/* Adds key (len bytes, copied into cxt) to set: false if it was there already. */
static bool
wcfdw_key_set_add(HTAB *set, MemoryContext cxt, const uint8 *key, size_t len)
{
	WcFdwSeenKey probe = {key, len};
	WcFdwSeenKey *e;
	bool		found;
	uint8	   *copy;

	e = hash_search(set, &probe, HASH_ENTER, &found);
	if (found)
		return false;
	copy = MemoryContextAlloc(cxt, Max(len, 1));
	memcpy(copy, key, len);
	e->data = copy;
	e->len = len;
	return true;
}

/* A tall table's cell version c, its key as bytes (palloc'd, *n of them). */
static uint8 *
wcfdw_cell_key(const wc_cell_view *c, size_t *n)
{
	uint32		lens[3] = {(uint32) c->row_len, (uint32) c->family_len, (uint32) c->qual_len};
	uint8	   *buf;
	uint8	   *p;

	*n = sizeof(lens) + c->row_len + c->family_len + c->qual_len + sizeof(c->ts);
	buf = p = palloc(*n);
	memcpy(p, lens, sizeof(lens));
	p += sizeof(lens);
	memcpy(p, c->row, c->row_len);
	p += c->row_len;
	memcpy(p, c->family, c->family_len);
	p += c->family_len;
	memcpy(p, c->qual, c->qual_len);
	p += c->qual_len;
	memcpy(p, &c->ts, sizeof(c->ts));
	return buf;
}

/*
 * Writes happen as each row is changed, so that what the statement runs
 * (BEFORE triggers, volatile functions of later rows) and what runs after
 * it (AFTER triggers) see the rows it changed, as with a heap table.  A row
 * moved to another key (a wide table's rowkey, a tall table's cell key)
 * deletes its old key, which an earlier row of the statement may have
 * been moved to (rows swapping keys): that row's new version is kept, as
 * the heap keeps both rows.  The keys rows were moved to are remembered
 * for that (only in statements that move rows).
 */
static bool
wcfdw_moved_here(WcFdwModifyState *ms, const uint8 *key, size_t len)
{
	WcFdwSeenKey probe = {key, len};

	return ms->moved != NULL && hash_search(ms->moved, &probe, HASH_FIND, NULL) != NULL;
}

static void
wcfdw_note_moved(WcFdwModifyState *ms, const uint8 *key, size_t len)
{
	if (ms->moved == NULL)
		ms->moved = wcfdw_key_set(ms->querycxt, "widecol_fdw rows moved");
	(void) wcfdw_key_set_add(ms->moved, ms->querycxt, key, len);
}

/*
 * wcfdw_first_time
 *		Is key (len bytes) a row this statement has not changed yet?  Then it
 *		is remembered
 */
static bool
wcfdw_first_time(WcFdwModifyState *ms, const uint8 *key, size_t len)
{
	return ms->seen == NULL || wcfdw_key_set_add(ms->seen, ms->querycxt, key, len);
}

/* wcfdw_first_time of a tall table's row, the cell version c (its key as bytes) */
static bool
wcfdw_cell_first_time(WcFdwModifyState *ms, const wc_cell_view *c)
{
	uint8	   *key;
	size_t		n;

	if (ms->seen == NULL)
		return true;
	key = wcfdw_cell_key(c, &n);
	return wcfdw_first_time(ms, key, n);
}

static WcFdwModifyState *
wcfdw_modify_begin(EState *estate, ResultRelInfo *rinfo, CmdType operation, Plan *subplan)
{
	WcFdwModifyState *ms = palloc0(sizeof(WcFdwModifyState));
	int			f;

	ms->rel = rinfo->ri_RelationDesc;
	ms->operation = operation;
	ms->cid = GetCurrentCommandId(true);	/* = es_output_cid; also set for COPY */
	wcfdw_converter_init(&ms->conv, ms->rel);
	wcfdw_get_table_options(RelationGetRelid(ms->rel), &ms->topts);
	ms->querycxt = estate->es_query_cxt;
	ms->tmpcxt = AllocSetContextCreate(estate->es_query_cxt, "widecol_fdw modify",
									   ALLOCSET_DEFAULT_SIZES);
	if (subplan && (operation == CMD_UPDATE || operation == CMD_DELETE))
	{
		for (f = 0; f < WCF_NFIELDS; f++)
			if (ms->conv.cols.f[f].attnum != 0)
				ms->junk[f] = ExecFindJunkAttributeInTlist(subplan->targetlist,
														   wcfdw_junk_name(f, ms->conv.cols.f[f].attnum));
		ms->junk_wholerow = ExecFindJunkAttributeInTlist(subplan->targetlist, "wcfdw_wholerow");
		for (f = WCF_ROWKEY; f <= (ms->conv.cols.wide ? WCF_ROWKEY : WCF_TS); f++)
			if (!AttributeNumberIsValid(ms->junk[f]))
				elog(ERROR, "could not find junk column %s", wcfdw_junk_names[f]);
	}
	if ((operation == CMD_UPDATE || operation == CMD_DELETE) && subplan != NULL &&
		!wcfdw_plan_gives_rows_once(subplan))
		ms->seen = wcfdw_key_set(estate->es_query_cxt, "widecol_fdw rows changed");
	if (operation == CMD_UPDATE && ms->conv.cols.wide != NULL)
	{
		ms->updated = bms_union(ExecGetUpdatedCols(rinfo, estate),
								ExecGetExtraUpdatedCols(rinfo, estate));
		/* the executor's own whole-row column of a foreign table's UPDATE */
		if (subplan && rinfo->ri_TrigDesc && rinfo->ri_TrigDesc->trig_update_before_row)
			ms->junk_old = ExecFindJunkAttributeInTlist(subplan->targetlist, "wholerow");
	}
	ms->store = wcfdw_store_get(ms->rel);
	wcfdw_store_begin_statement(ms->store, estate);
	/* a serializable reader of the table (of its store) before us is in a
	 * read-write conflict with this write, as with a heap table read by a
	 * sequential scan */
	wcfdw_ssi_conflict_in(ms->rel, ms->store->relid);
	return ms;
}

/*
 * wcfdw_modify_if_absent
 *		An INSERT ... ON CONFLICT DO NOTHING (also one routed to a partition):
 *		ms->if_absent, and for a wide table the cells whose presence makes a
 *		row
 */
static void
wcfdw_modify_if_absent(WcFdwModifyState *ms, ModifyTableState *mtstate)
{
	EState	   *estate = mtstate->ps.state;
	int			n = Max(ms->conv.cols.nwide, 1);

	/* COPY's ModifyTableState has no plan */
	if (ms->operation != CMD_INSERT || mtstate->ps.plan == NULL ||
		!IsA(mtstate->ps.plan, ModifyTable) ||
		((ModifyTable *) mtstate->ps.plan)->onConflictAction != ONCONFLICT_NOTHING)
		return;
	ms->if_absent = true;
	if (ms->conv.cols.wide == NULL)
		return;
	ms->all_cells = MemoryContextAlloc(estate->es_query_cxt, sizeof(bool) * n);
	memset(ms->all_cells, true, sizeof(bool) * n);
	wcfdw_wide_scan_cells(&ms->conv.cols, ms->all_cells, estate->es_query_cxt,
						  &ms->ia_families, &ms->ia_nfamilies, &ms->ia_quals, &ms->ia_nquals);
}

void
widecolBeginForeignModify(ModifyTableState *mtstate, ResultRelInfo *rinfo,
						  List *fdw_private, int subplan_index, int eflags)
{
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	rinfo->ri_FdwState = wcfdw_modify_begin(mtstate->ps.state, rinfo, mtstate->operation,
											outerPlanState(mtstate)->plan);
	wcfdw_modify_if_absent(rinfo->ri_FdwState, mtstate);
}

void
widecolBeginForeignInsert(ModifyTableState *mtstate, ResultRelInfo *rinfo)
{
	rinfo->ri_FdwState = wcfdw_modify_begin(mtstate->ps.state, rinfo, CMD_INSERT, NULL);
	wcfdw_modify_if_absent(rinfo->ri_FdwState, mtstate);
}

static void
wcfdw_null_error(WcFdwModifyState *ms, WcFdwField f)
{
	ereport(ERROR,
			(errcode(ERRCODE_NOT_NULL_VIOLATION),
			 errmsg("null value in column \"%s\" of foreign table \"%s\" violates not-null constraint",
					wcfdw_field_names[f], RelationGetRelationName(ms->rel)),
			 errdetail("A cell needs a rowkey, a family, a qualifier and a value (the last two may be empty); only a NULL ts is allowed, meaning now.")));
}

static void
wcfdw_size_error(WcFdwModifyState *ms, WcFdwField f, size_t len, size_t limit)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("%s too long for foreign table \"%s\"",
					wcfdw_field_names[f], RelationGetRelationName(ms->rel)),
			 errdetail("The %s has %zu bytes; the limit is %zu.", wcfdw_field_names[f], len, limit)));
}

/*
 * wcfdw_field_bytes
 *		The bytes of field f in column attno of slot (a tuple of the table,
 *		or a junk column of a plan slot), NULL if the column is null
 */
static const uint8 *
wcfdw_field_bytes(WcFdwModifyState *ms, TupleTableSlot *slot, AttrNumber attno, WcFdwField f,
				  size_t *len)
{
	const uint8 *data;
	bool		isnull;
	Datum		d;

	d = slot_getattr(slot, attno, &isnull);
	if (isnull)
		return NULL;
	wcfdw_datum_to_bytes(&ms->conv, f, d, &data, len);
	return data;
}

/*
 * wcfdw_rowkey_from_slot
 *		The rowkey of a tuple of the table, checked
 */
static const uint8 *
wcfdw_rowkey_from_slot(WcFdwModifyState *ms, TupleTableSlot *slot, size_t *len)
{
	const uint8 *row;

	row = wcfdw_field_bytes(ms, slot, ms->conv.cols.f[WCF_ROWKEY].attnum, WCF_ROWKEY, len);
	if (row == NULL)
		wcfdw_null_error(ms, WCF_ROWKEY);
	if (*len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("rowkey must not be empty in foreign table \"%s\"",
						RelationGetRelationName(ms->rel))));
	if (*len > WC_MAX_ROWKEY)
		wcfdw_size_error(ms, WCF_ROWKEY, *len, WC_MAX_ROWKEY);
	return row;
}

/*
 * wcfdw_wide_insert
 *		The cells of a new row of a wide table; a row of NULLs (and empty
 *		objects) has none and would not exist, so it is an error
 */
static void
wcfdw_wide_insert(WcFdwModifyState *ms, TupleTableSlot *slot)
{
	const uint8 *row;
	size_t		row_len;

	slot_getallattrs(slot);
	row = wcfdw_rowkey_from_slot(ms, slot, &row_len);
	if (!wcfdw_wide_row_has_cell(&ms->conv, slot))
		ereport(ERROR,
				(errcode(ERRCODE_NOT_NULL_VIOLATION),
				 errmsg("row of wide foreign table \"%s\" has no cell",
						RelationGetRelationName(ms->rel)),
				 errdetail("Every column but rowkey is NULL or an object of no values; a row is its cells, so it would not exist."),
				 errhint("Give at least one column a value.")));
	wcfdw_wide_put_row(&ms->conv, wcfdw_store_write_batch(ms->store, ms->cid, false), slot,
					   row, row_len, wcfdw_now_ms(), NULL);
}

/*
 * wcfdw_cell_from_slot
 *		The cell a tuple of the table describes, checked; true if its ts
 *		was null and is now the current time
 */
static bool
wcfdw_cell_from_slot(WcFdwModifyState *ms, TupleTableSlot *slot, wc_cell_view *c)
{
	WcFdwColumns *cols = &ms->conv.cols;
	static const uint8 empty[1] = {0};
	bool		ts_now = true;
	int			fi;

	memset(c, 0, sizeof(*c));
	slot_getallattrs(slot);

	c->row = wcfdw_rowkey_from_slot(ms, slot, &c->row_len);

	if (cols->f[WCF_FAMILY].attnum == 0)
	{
		if (ms->topts.nfamilies != 1)
			ereport(ERROR,
					(errcode(ERRCODE_NOT_NULL_VIOLATION),
					 errmsg("foreign table \"%s\" has no column \"family\" and more than one family",
							RelationGetRelationName(ms->rel)),
					 errhint("Declare a column family, or give the table a single family.")));
		c->family = ms->topts.families[0].name;
		c->family_len = strlen(c->family);
	}
	else
	{
		c->family = (const char *) wcfdw_field_bytes(ms, slot, cols->f[WCF_FAMILY].attnum,
													 WCF_FAMILY, &c->family_len);
		if (c->family == NULL)
			wcfdw_null_error(ms, WCF_FAMILY);
	}
	fi = wcfdw_family_index(&ms->topts, c->family, c->family_len);
	if (fi < 0)
	{
		StringInfoData fams;
		int			i;

		initStringInfo(&fams);
		for (i = 0; i < ms->topts.nfamilies; i++)
			appendStringInfo(&fams, "%s%s", i ? ", " : "", ms->topts.families[i].name);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("family \"%s\" is not declared for foreign table \"%s\"",
						pnstrdup(c->family, c->family_len),
						RelationGetRelationName(ms->rel)),
				 errhint("The families of the table are: %s.", fams.data)));
	}
	/* the declared name: stable memory */
	c->family = ms->topts.families[fi].name;
	c->family_len = strlen(c->family);

	if (cols->f[WCF_QUALIFIER].attnum == 0)
	{
		c->qual = empty;
		c->qual_len = 0;
	}
	else
	{
		c->qual = wcfdw_field_bytes(ms, slot, cols->f[WCF_QUALIFIER].attnum, WCF_QUALIFIER,
									&c->qual_len);
		if (c->qual == NULL)
			wcfdw_null_error(ms, WCF_QUALIFIER);
	}
	if (c->qual_len > WC_MAX_QUALIFIER)
		wcfdw_size_error(ms, WCF_QUALIFIER, c->qual_len, WC_MAX_QUALIFIER);

	if (cols->f[WCF_TS].attnum != 0)
	{
		bool		isnull;
		Datum		d = slot_getattr(slot, cols->f[WCF_TS].attnum, &isnull);

		if (!isnull)
		{
			c->ts = wcfdw_datum_to_ts(&ms->conv, d);
			ts_now = false;
			/* the engine keeps the largest timestamp for tombstones */
			if (c->ts == PG_INT64_MAX)
				ereport(ERROR,
						(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
						 errmsg("ts out of range for foreign table \"%s\"",
								RelationGetRelationName(ms->rel)),
						 errdetail("The largest cell timestamp is " INT64_FORMAT ".",
								   PG_INT64_MAX - 1)));
		}
	}
	if (ts_now)
		c->ts = wcfdw_now_ms();

	if (cols->f[WCF_VALUE].attnum == 0)
	{
		c->val = empty;
		c->val_len = 0;
	}
	else
	{
		c->val = wcfdw_field_bytes(ms, slot, cols->f[WCF_VALUE].attnum, WCF_VALUE, &c->val_len);
		if (c->val == NULL)
			wcfdw_null_error(ms, WCF_VALUE);
	}
	if (c->val_len > WC_MAX_VALUE)
		wcfdw_size_error(ms, WCF_VALUE, c->val_len, WC_MAX_VALUE);
	return ts_now;
}

static void
wcfdw_put(WcFdwModifyState *ms, wc_batch *b, const wc_cell_view *c)
{
	wc_err		err;
	int			rc;

	wc_err_clear(&err);
	rc = wc_batch_put(b, c->family, c->family_len, c->row, c->row_len, c->qual, c->qual_len,
					  c->ts, c->val, c->val_len, &err);
	wcfdw_check(rc, &err, "buffer a write to the", RelationGetRelationName(ms->rel));
}

/* A NULL ts became "now" (ts_now): show it in RETURNING. */
static TupleTableSlot *
wcfdw_fill_ts(WcFdwModifyState *ms, TupleTableSlot *slot, const wc_cell_view *c, bool ts_now)
{
	AttrNumber	a = ms->conv.cols.f[WCF_TS].attnum;
	HeapTuple	tup;
	Datum		value;
	bool		isnull = false;
	int			attnum = a;

	if (!ts_now || a == 0)
		return slot;
	value = wcfdw_ts_to_datum(&ms->conv, c->ts);
	tup = ExecCopySlotHeapTuple(slot);
	tup = heap_modify_tuple_by_cols(tup, RelationGetDescr(ms->rel), 1, &attnum, &value, &isnull);
	ExecForceStoreHeapTuple(tup, slot, true);
	return slot;
}

/*
 * wcfdw_check_row
 *		A row written must meet the table's NOT NULL and CHECK constraints
 *		(23502, 23514) and, in a partition, be within its bounds (23514), as
 *		in an ordinary table
 *
 * PostgreSQL leaves a foreign table's constraints to its wrapper: this one
 * holds the data, so it checks them.  Nor does it check a foreign
 * partition's direct INSERT or the new row of its UPDATE, or move a row whose
 * partition key an UPDATE changed to another partition (it does so only for
 * local partitions): the row would be stored where pruning never looks for
 * it.  Rows routed through the partitioned table pass.
 */
static void
wcfdw_check_row(ResultRelInfo *rinfo, TupleTableSlot *slot, EState *estate)
{
	Relation	rel = rinfo->ri_RelationDesc;

	if (rel->rd_att->constr != NULL)
		ExecConstraints(rinfo, slot, estate);
	if (rel->rd_rel->relispartition)
		(void) ExecPartitionCheck(rinfo, slot, estate, true);
}

/*
 * wcfdw_row_present
 *		Whether the row (a wide table's rowkey), or the cell version cell (a
 *		tall table's), is there: newest committed with the transaction's own
 *		writes, this statement's included, or with snapshot, as it sees them.
 *		With fp, the version found: a wide row's reader fingerprint (all its
 *		mapped cells read), a cell's sequence number.
 */
static bool
wcfdw_row_present(WcFdwModifyState *ms, const uint8 *row, size_t row_len,
				  const wc_cell_view *cell, Snapshot snapshot, uint64 *fp)
{
	wc_scan_opts o;
	wc_key_range range;
	WcFdwSnapshotArg snap;
	wc_slice	fam,
				qual;
	wc_scan    *scan = NULL;
	wc_err		err;
	int			rc;

	wc_scan_opts_init(&o);
	if (cell != NULL)
		wcfdw_cell_version_opts(&o, &range, &fam, &qual, cell);
	else
	{
		wcfdw_point_range(&range, row, row_len);
		o.ranges = &range;
		o.nranges = 1;
		o.families = ms->ia_families;
		o.nfamilies = ms->ia_nfamilies;
		o.quals = ms->ia_quals;
		o.nquals = ms->ia_nquals;
	}
	o.now_ms = wcfdw_timestamptz_to_ms(GetCurrentStatementStartTimestamp());
	/* the writes of every command so far, this one's too (a row given twice) */
	wcfdw_store_visible_batches(ms->store, ms->cid + 1, &o);
	if (snapshot != NULL)
	{
		memset(&snap, 0, sizeof(snap));
		snap.snapshot = snapshot;
		snap.rel = ms->rel;
		snap.owner = ms->store->relid;
		snap.cxt = ms->tmpcxt;
		wcfdw_scan_opts_snapshot(&o, &snap);
	}
	wc_err_clear(&err);
	rc = wc_scan_open(ms->store->db, &o, &scan, &err);
	if (rc < 0)
		wcfdw_engine_error(ERROR, rc, &err, "scan", ms->store->relname);
	PG_TRY();
	{
		if (cell != NULL)
		{
			wc_cell_view v;

			rc = wc_scan_next(scan, &v, &err);
			if (rc == 1 && fp != NULL)
				*fp = v.seq;
		}
		else
		{
			WcFdwWideReader r;

			if (fp == NULL)
			{
				/* up to its first mapped cell */
				wcfdw_wide_reader_init(&r, &ms->conv, ms->all_cells, ms->tmpcxt);
				wcfdw_wide_reader_reset(&r, scan);
				rc = wcfdw_wide_row_exists(&r, &err);
			}
			else
			{
				/* every mapped cell, none decoded */
				int			natts = RelationGetDescr(ms->rel)->natts;
				bool	   *none = palloc0(sizeof(bool) * Max(ms->conv.cols.nwide, 1));
				const uint8 *prow;
				size_t		prow_len;

				wcfdw_wide_reader_init(&r, &ms->conv, none, ms->tmpcxt);
				wcfdw_wide_reader_reset(&r, scan);
				rc = wcfdw_wide_next_row(&r, palloc(sizeof(Datum) * natts),
										 palloc(sizeof(bool) * natts), natts, &prow, &prow_len,
										 &err);
				*fp = r.fingerprint;
			}
		}
	}
	PG_FINALLY();
	{
		wc_scan_close(scan);
	}
	PG_END_TRY();
	if (rc < 0)
		wcfdw_engine_error(ERROR, rc, &err, "scan", ms->store->relname);
	return rc == 1;
}

/*
 * wcfdw_insert_conflicts
 *		INSERT ... ON CONFLICT DO NOTHING: true if the row (wide: a row of
 *		that rowkey, cell == NULL; tall: the cell version cell) is there, and
 *		the INSERT skips it
 *
 * As an ordinary table with a unique index on the key: a row there,
 * committed or written earlier by this transaction (or this statement), is a
 * conflict, once the transactions that are deleting or changing it (holding
 * its lock) have ended; a row another transaction is inserting this way is
 * waited for (an inserter takes the row's lock before it looks again: the
 * lock an UPDATE of the row takes, kept to the end of the transaction), and
 * is a conflict if that one commits.  A plain INSERT takes no lock (it puts
 * the row whether or not it is there), so is not waited for.  In REPEATABLE
 * READ and SERIALIZABLE a conflict with a row the transaction's snapshot
 * does not see is a serialization failure, as the heap's.
 */
static bool
wcfdw_insert_conflicts(WcFdwModifyState *ms, EState *estate, const uint8 *row, size_t row_len,
					   const wc_cell_view *cell)
{
	bool		present;

	uint64		fp_new = 0,
				fp_snap = 0;

	/* the snapshot isolation levels compare versions (below): read them whole */
	uint64	   *fp = IsolationUsesXactSnapshot() ? &fp_new : NULL;

	wcfdw_store_refresh(ms->store);
	present = wcfdw_row_present(ms, row, row_len, cell, NULL, fp);
	if (present)
	{
		/* there: wait for a transaction deleting or changing it, look again */
		wcfdw_row_wait(ms->store, row, row_len, cell);
		wcfdw_store_refresh(ms->store);
		present = wcfdw_row_present(ms, row, row_len, cell, NULL, fp);
	}
	if (!present)
	{
		/* absent: lock it, then look again at what committed meanwhile */
		if (cell != NULL)
			(void) wcfdw_lock_cell(ms->store, ms->rel, cell, ExclusiveLock, LockWaitBlock);
		else
			(void) wcfdw_lock_rowkey(ms->store, ms->rel, row, row_len, ExclusiveLock,
									 LockWaitBlock);
		wcfdw_store_refresh(ms->store);
		present = wcfdw_row_present(ms, row, row_len, cell, NULL, fp);
	}

	/*
	 * The snapshot isolation levels: the version in the way must be the one
	 * the snapshot sees (the heap checks the conflicting tuple's visibility),
	 * not one committed since, nor a row deleted since and written again.
	 */
	if (present && fp != NULL &&
		(!wcfdw_row_present(ms, row, row_len, cell, estate->es_snapshot, &fp_snap) ||
		 fp_new != fp_snap))
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not serialize access due to concurrent update")));
	return present;
}

TupleTableSlot *
widecolExecForeignInsert(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot,
						 TupleTableSlot *planSlot)
{
	WcFdwModifyState *ms = rinfo->ri_FdwState;
	wc_cell_view c;
	bool		ts_now;
	MemoryContext old;

	if (ms->conv.cols.wide != NULL)
		wcfdw_wide_stored_form(&ms->conv, slot);
	wcfdw_check_row(rinfo, slot, estate);
	MemoryContextReset(ms->tmpcxt);
	old = MemoryContextSwitchTo(ms->tmpcxt);
	if (ms->conv.cols.wide != NULL)
	{
		if (ms->if_absent)
		{
			const uint8 *row;
			size_t		row_len;

			slot_getallattrs(slot);
			row = wcfdw_rowkey_from_slot(ms, slot, &row_len);
			if (wcfdw_insert_conflicts(ms, estate, row, row_len, NULL))
			{
				MemoryContextSwitchTo(old);
				return NULL;
			}
		}
		wcfdw_wide_insert(ms, slot);
		MemoryContextSwitchTo(old);
		return slot;
	}
	ts_now = wcfdw_cell_from_slot(ms, slot, &c);
	if (ms->if_absent && wcfdw_insert_conflicts(ms, estate, c.row, c.row_len, &c))
	{
		MemoryContextSwitchTo(old);
		return NULL;
	}
	wcfdw_put(ms, wcfdw_store_write_batch(ms->store, ms->cid, false), &c);
	MemoryContextSwitchTo(old);
	return wcfdw_fill_ts(ms, slot, &c, ts_now);
}

/* The (old) key of the cell version the plan slot's junk columns name. */
static void
wcfdw_key_from_junk(WcFdwModifyState *ms, TupleTableSlot *planSlot, wc_cell_view *c)
{
	bool		isnull;
	Datum		d;

	memset(c, 0, sizeof(*c));
	c->row = wcfdw_field_bytes(ms, planSlot, ms->junk[WCF_ROWKEY], WCF_ROWKEY, &c->row_len);
	c->family = (const char *) wcfdw_field_bytes(ms, planSlot, ms->junk[WCF_FAMILY], WCF_FAMILY,
												 &c->family_len);
	c->qual = wcfdw_field_bytes(ms, planSlot, ms->junk[WCF_QUALIFIER], WCF_QUALIFIER, &c->qual_len);
	d = ExecGetJunkAttribute(planSlot, ms->junk[WCF_TS], &isnull);
	if (c->row == NULL || c->family == NULL || c->qual == NULL || isnull)
		elog(ERROR, "cell identity of foreign table \"%s\" is null", RelationGetRelationName(ms->rel));
	c->ts = wcfdw_datum_to_ts(&ms->conv, d);
}

static void
wcfdw_delete_version(WcFdwModifyState *ms, const wc_cell_view *c)
{
	wc_err		err;
	int			rc;

	wc_err_clear(&err);
	rc = wc_batch_delete_version(wcfdw_store_write_batch(ms->store, ms->cid, false),
								 c->family, c->family_len, c->row, c->row_len,
								 c->qual, c->qual_len, c->ts, &err);
	wcfdw_check(rc, &err, "buffer a delete in the", RelationGetRelationName(ms->rel));
}

/* The transaction's batch that takes this statement's writes. */
static wc_batch *
wcfdw_batch(WcFdwModifyState *ms)
{
	return wcfdw_store_write_batch(ms->store, ms->cid, false);
}

/*
 * wcfdw_wide_trigger_changed
 *		The columns to write of an UPDATE whose row a BEFORE UPDATE trigger
 *		may have changed: those the statement sets, and every cell column
 *		whose new value differs from the old row's (planSlot's whole row)
 */
static Bitmapset *
wcfdw_wide_trigger_changed(WcFdwModifyState *ms, TupleTableSlot *slot, TupleTableSlot *planSlot)
{
	TupleDesc	tupdesc = RelationGetDescr(ms->rel);
	Bitmapset  *cols = bms_copy(ms->updated);
	HeapTupleData tuple;
	Datum	   *values;
	bool	   *isnull;
	bool		null;
	Datum		d = ExecGetJunkAttribute(planSlot, ms->junk_old, &null);
	int			i;

	if (null)
		elog(ERROR, "whole-row of a row of foreign table \"%s\" is null",
			 RelationGetRelationName(ms->rel));
	tuple.t_data = DatumGetHeapTupleHeader(d);
	tuple.t_len = HeapTupleHeaderGetDatumLength(tuple.t_data);
	ItemPointerSetInvalid(&tuple.t_self);
	tuple.t_tableOid = RelationGetRelid(ms->rel);
	values = palloc(sizeof(Datum) * tupdesc->natts);
	isnull = palloc(sizeof(bool) * tupdesc->natts);
	heap_deform_tuple(&tuple, tupdesc, values, isnull);
	slot_getallattrs(slot);
	for (i = 0; i < ms->conv.cols.nwide; i++)
	{
		AttrNumber	a = ms->conv.cols.wide[i].attnum;
		Form_pg_attribute att = TupleDescAttr(tupdesc, a - 1);

		if (slot->tts_isnull[a - 1] != isnull[a - 1] ||
			(!isnull[a - 1] &&
			 !datumIsEqual(slot->tts_values[a - 1], values[a - 1], att->attbyval, att->attlen)))
			cols = bms_add_member(cols, a - FirstLowInvalidHeapAttributeNumber);
	}
	return cols;
}

/*
 * wcfdw_wide_update
 *		UPDATE of a row of a wide table: the changed columns' cells at the
 *		current time, a NULL deleting the cell; a new rowkey moves the row
 *		(the old one's cells deleted, the new one's replaced)
 *
 * The changed columns: those the statement sets, the stored generated
 * columns computed from them, and those a BEFORE UPDATE trigger changed.
 * False for a row the statement changed already (wcfdw_first_time).
 */
static bool
wcfdw_wide_update(WcFdwModifyState *ms, TupleTableSlot *slot, TupleTableSlot *planSlot)
{
	const uint8 *old_row;
	size_t		old_len;
	const uint8 *row;
	size_t		row_len;
	int64		ts = wcfdw_now_ms();

	old_row = wcfdw_field_bytes(ms, planSlot, ms->junk[WCF_ROWKEY], WCF_ROWKEY, &old_len);
	if (old_row == NULL)
		elog(ERROR, "rowkey of a row of foreign table \"%s\" is null", RelationGetRelationName(ms->rel));
	if (!wcfdw_first_time(ms, old_row, old_len))
		return false;
	slot_getallattrs(slot);
	row = wcfdw_rowkey_from_slot(ms, slot, &row_len);
	if (wcfdw_same_bytes(old_row, old_len, row, row_len))
	{
		const Bitmapset *changed = AttributeNumberIsValid(ms->junk_old) ?
			wcfdw_wide_trigger_changed(ms, slot, planSlot) : ms->updated;

		wcfdw_wide_delete_replaced(&ms->conv, ms->store, ms->cid, wcfdw_batch(ms), slot,
								   row, row_len, changed);
		wcfdw_wide_put_row(&ms->conv, wcfdw_batch(ms), slot, row, row_len, ts, changed);
		return true;
	}
	/* moved: the old row goes, unless an earlier row moved there (wcfdw_moved_here) */
	if (!wcfdw_moved_here(ms, old_row, old_len))
		wcfdw_wide_delete_cells(&ms->conv, ms->store, ms->cid, wcfdw_batch(ms),
								old_row, old_len, NULL);
	wcfdw_wide_delete_cells(&ms->conv, ms->store, ms->cid, wcfdw_batch(ms), row, row_len, NULL);
	wcfdw_wide_put_row(&ms->conv, wcfdw_batch(ms), slot, row, row_len, ts, NULL);
	wcfdw_note_moved(ms, row, row_len);
	return true;
}

TupleTableSlot *
widecolExecForeignUpdate(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot,
						 TupleTableSlot *planSlot)
{
	WcFdwModifyState *ms = rinfo->ri_FdwState;
	wc_cell_view old_key;
	wc_cell_view c;
	bool		ts_now;
	MemoryContext old;

	if (ms->conv.cols.wide != NULL)
		wcfdw_wide_stored_form(&ms->conv, slot);
	wcfdw_check_row(rinfo, slot, estate);
	MemoryContextReset(ms->tmpcxt);
	old = MemoryContextSwitchTo(ms->tmpcxt);
	if (ms->conv.cols.wide != NULL)
	{
		bool		changed = wcfdw_wide_update(ms, slot, planSlot);

		MemoryContextSwitchTo(old);
		return changed ? slot : NULL;
	}
	wcfdw_key_from_junk(ms, planSlot, &old_key);
	if (!wcfdw_cell_first_time(ms, &old_key))
	{
		MemoryContextSwitchTo(old);
		return NULL;
	}
	ts_now = wcfdw_cell_from_slot(ms, slot, &c);

	if (!(wcfdw_same_bytes(old_key.row, old_key.row_len, c.row, c.row_len) &&
		  wcfdw_same_bytes(old_key.family, old_key.family_len, c.family, c.family_len) &&
		  wcfdw_same_bytes(old_key.qual, old_key.qual_len, c.qual, c.qual_len) &&
		  old_key.ts == c.ts))
	{
		/* moved: the old version goes, unless an earlier row moved there */
		size_t		n;
		uint8	   *key = wcfdw_cell_key(&old_key, &n);

		if (!wcfdw_moved_here(ms, key, n))
			wcfdw_delete_version(ms, &old_key);
		key = wcfdw_cell_key(&c, &n);
		wcfdw_note_moved(ms, key, n);
	}
	wcfdw_put(ms, wcfdw_batch(ms), &c);
	MemoryContextSwitchTo(old);
	return wcfdw_fill_ts(ms, slot, &c, ts_now);
}

/*
 * wcfdw_wide_delete
 *		DELETE of a row of a wide table; slot gets the old row for RETURNING;
 *		false for a row the statement deleted already (wcfdw_first_time)
 */
static bool
wcfdw_wide_delete(WcFdwModifyState *ms, TupleTableSlot *slot, TupleTableSlot *planSlot)
{
	const uint8 *row;
	size_t		row_len;

	row = wcfdw_field_bytes(ms, planSlot, ms->junk[WCF_ROWKEY], WCF_ROWKEY, &row_len);
	if (row == NULL)
		elog(ERROR, "rowkey of a row of foreign table \"%s\" is null", RelationGetRelationName(ms->rel));
	if (!wcfdw_first_time(ms, row, row_len))
		return false;
	wcfdw_wide_delete_cells(&ms->conv, ms->store, ms->cid,
							wcfdw_store_write_batch(ms->store, ms->cid, false), row, row_len, NULL);

	ExecClearTuple(slot);
	if (AttributeNumberIsValid(ms->junk_wholerow))
	{
		bool		isnull;
		Datum		d = ExecGetJunkAttribute(planSlot, ms->junk_wholerow, &isnull);

		if (!isnull)
		{
			HeapTupleHeader th = DatumGetHeapTupleHeader(d);
			HeapTupleData tup;

			tup.t_len = HeapTupleHeaderGetDatumLength(th);
			ItemPointerSetInvalid(&tup.t_self);
			tup.t_tableOid = RelationGetRelid(ms->rel);
			tup.t_data = th;
			MemoryContextSwitchTo(slot->tts_mcxt);
			ExecForceStoreHeapTuple(heap_copytuple(&tup), slot, true);
			return true;
		}
	}
	memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	slot->tts_values[ms->conv.cols.f[WCF_ROWKEY].attnum - 1] =
		ExecGetJunkAttribute(planSlot, ms->junk[WCF_ROWKEY], &slot->tts_isnull[ms->conv.cols.f[WCF_ROWKEY].attnum - 1]);
	ExecStoreVirtualTuple(slot);
	return true;
}

TupleTableSlot *
widecolExecForeignDelete(EState *estate, ResultRelInfo *rinfo, TupleTableSlot *slot,
						 TupleTableSlot *planSlot)
{
	WcFdwModifyState *ms = rinfo->ri_FdwState;
	wc_cell_view c;
	MemoryContext old;
	int			f;

	MemoryContextReset(ms->tmpcxt);
	old = MemoryContextSwitchTo(ms->tmpcxt);
	if (ms->conv.cols.wide != NULL)
	{
		bool		changed = wcfdw_wide_delete(ms, slot, planSlot);

		MemoryContextSwitchTo(old);
		return changed ? slot : NULL;
	}
	wcfdw_key_from_junk(ms, planSlot, &c);
	if (!wcfdw_cell_first_time(ms, &c))
	{
		MemoryContextSwitchTo(old);
		return NULL;
	}
	wcfdw_delete_version(ms, &c);
	MemoryContextSwitchTo(old);

	/* for RETURNING: the deleted version, from the identity columns */
	ExecClearTuple(slot);
	memset(slot->tts_isnull, true, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	for (f = 0; f < WCF_NFIELDS; f++)
	{
		AttrNumber	a = ms->conv.cols.f[f].attnum;
		bool		isnull;

		if (a == 0 || !AttributeNumberIsValid(ms->junk[f]))
			continue;
		slot->tts_values[a - 1] = ExecGetJunkAttribute(planSlot, ms->junk[f], &isnull);
		slot->tts_isnull[a - 1] = isnull;
	}
	return ExecStoreVirtualTuple(slot);
}

void
widecolEndForeignModify(EState *estate, ResultRelInfo *rinfo)
{
	/* nothing to do: every write went to the transaction's batch as it was made */
}

void
widecolEndForeignInsert(EState *estate, ResultRelInfo *rinfo)
{
	widecolEndForeignModify(estate, rinfo);
}

void
widecolExecForeignTruncate(List *rels, DropBehavior behavior, bool restart_seqs)
{
	ListCell   *lc;

	foreach(lc, rels)
	{
		Relation	rel = lfirst(lc);

		wcfdw_store_truncate(wcfdw_store_get(rel), GetCurrentCommandId(true));
	}
}
