/*-------------------------------------------------------------------------
 *
 * pushdown.c
 *		  Quals on rowkey, family, qualifier and ts -> what the engine reads
 *
 * At plan time (wcfdw_cond_from_clause) a clause is recognised as a
 * condition "field OP expr" where expr does not refer to the scanned table
 * and is not volatile: a Const, a Param (prepared statements, generic plans),
 * an outer Var of a parameterized nested loop (turned into a Param by the
 * planner), or a stable expression.  The expression is evaluated at
 * execution, for every (re)scan, and wcfdw_compute_keys (keys.c) turns the
 * values into sorted, disjoint rowkey ranges, a family list, a qualifier
 * filter and an inclusive time range.
 *
 * An OR of conditions on the rowkey (and LIKE ANY / ^@ ANY of an array) is
 * pushed as a tree when every arm narrows the rowkey: an arm that is an AND
 * keeps its rowkey conditions and drops the others (a superset); keys.c
 * turns the tree into the union of its arms' ranges, sorted and merged, so
 * the scan still visits keys in order.
 *
 * Every pushed clause also stays in the plan's qual, so PostgreSQL rechecks
 * it: the keys only have to describe a superset of the matching cells.
 *
 * Where a condition is valid:
 *		= and IN		any deterministic collation: equal text is equal bytes
 *		< <= > >=		rowkey and qualifier: bytea, text under a "C"
 *						collation, text_pattern_ops operators: PostgreSQL's
 *						order is then byte order
 *		LIKE, starts_with, ^@	any deterministic collation: a LIKE pattern
 *						'p%' matches exactly the values whose bytes start
 *						with p, which is the byte range [p, p+1)
 *		ts				bigint with int2/int4/int8 values, timestamptz with
 *						timestamptz values (rounded to the cell milliseconds)
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/stratnum.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "catalog/pg_am.h"
#include "datatype/timestamp.h"
#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/pg_locale.h"
#include "utils/typcache.h"

#include "widecol_fdw.h"


/*
 * wcfdw_column_field
 *		The cell field of node if it is a column of baserel, else -1
 */
static int
wcfdw_column_field(Node *node, RelOptInfo *baserel, const WcFdwColumns *cols)
{
	Var		   *var;
	int			f;

	while (node && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	if (node == NULL || !IsA(node, Var))
		return -1;
	var = (Var *) node;
	if (var->varno != baserel->relid || var->varlevelsup != 0 || var->varattno <= 0)
		return -1;
	for (f = 0; f < WCF_NFIELDS; f++)
		if (cols->f[f].attnum == var->varattno)
			return f;
	return -1;
}

/* Can expr be evaluated at execution, once per scan? */
static bool
wcfdw_is_scan_constant(PlannerInfo *root, RelOptInfo *baserel, Node *expr)
{
	return !bms_is_member(baserel->relid, pull_varnos(root, expr)) &&
		!contain_volatile_functions(expr) &&
		!contain_subplans(expr);
}

/* Is typid smallint, int or bigint? */
static bool
wcfdw_is_integer_type(Oid typid)
{
	return typid == INT2OID || typid == INT4OID || typid == INT8OID;
}

static Oid
wcfdw_ts_opfamily(Oid typid)
{
	if (typid == INT8OID)
		return INTEGER_BTREE_FAM_OID;
	return lookup_type_cache(TIMESTAMPTZOID, TYPECACHE_BTREE_OPFAMILY)->btree_opf;
}

/*
 * wcfdw_classify_op
 *		The btree strategy of opno for a column of field/repr with the other
 *		side of type othertype, or 0 if the engine cannot use it
 */
static int
wcfdw_classify_op(Oid opno, Oid inputcollid, const WcFdwColumn *col, WcFdwField field,
				  Oid coltype, Oid othertype)
{
	Oid			ltype,
				rtype;
	int			strategy;

	op_input_types(opno, &ltype, &rtype);

	switch (col->repr)
	{
		case WCR_TEXT:
		case WCR_BYTEA:
			{
				Oid			want = (col->repr == WCR_TEXT) ? TEXTOID : BYTEAOID;
				bool		byte_order;

				if (ltype != want || rtype != want)
					return 0;
				if (col->repr == WCR_TEXT)
				{
					if (!OidIsValid(inputcollid) || !get_collation_isdeterministic(inputcollid))
						return 0;
					strategy = get_op_opfamily_strategy(opno, TEXT_BTREE_FAM_OID);
					byte_order = lc_collate_is_c(inputcollid);
					if (strategy == 0)
					{
						strategy = get_op_opfamily_strategy(opno, TEXT_PATTERN_BTREE_FAM_OID);
						byte_order = true;
					}
				}
				else
				{
					strategy = get_op_opfamily_strategy(opno, BYTEA_BTREE_FAM_OID);
					byte_order = true;
				}
				if (strategy == BTEqualStrategyNumber)
					return strategy;
				if (strategy != 0 && byte_order &&
					(field == WCF_ROWKEY || field == WCF_QUALIFIER))
					return strategy;
				return 0;
			}
		case WCR_INT8:
			if (ltype != INT8OID ||
				(rtype != INT8OID && rtype != INT4OID && rtype != INT2OID))
				return 0;
			return get_op_opfamily_strategy(opno, INTEGER_BTREE_FAM_OID);
		case WCR_INTKEY:
			/* an integer rowkey against any integer type (its bytes sort as the numbers) */
			if (!wcfdw_is_integer_type(ltype) || !wcfdw_is_integer_type(rtype))
				return 0;
			return get_op_opfamily_strategy(opno, INTEGER_BTREE_FAM_OID);
		case WCR_UUIDKEY:
			if (ltype != UUIDOID || rtype != UUIDOID)
				return 0;
			return get_op_opfamily_strategy(opno,
											lookup_type_cache(UUIDOID, TYPECACHE_BTREE_OPFAMILY)->btree_opf);
		case WCR_TIMESTAMPTZ:
			if (ltype != TIMESTAMPTZOID || rtype != TIMESTAMPTZOID)
				return 0;
			return get_op_opfamily_strategy(opno, wcfdw_ts_opfamily(TIMESTAMPTZOID));
		default:
			return 0;
	}
}

static WcFdwCondKind
wcfdw_strategy_kind(int strategy)
{
	switch (strategy)
	{
		case BTLessStrategyNumber:
			return WCK_LT;
		case BTLessEqualStrategyNumber:
			return WCK_LE;
		case BTGreaterStrategyNumber:
			return WCK_GT;
		case BTGreaterEqualStrategyNumber:
			return WCK_GE;
		default:
			return WCK_EQ;
	}
}

/*
 * wcfdw_cond_from_expr
 *		Fills cond (a leaf) if clause can narrow the engine's scan
 */
static bool
wcfdw_cond_from_expr(PlannerInfo *root, RelOptInfo *baserel, const WcFdwColumns *cols,
					 Expr *clause, RestrictInfo *rinfo, WcFdwCond *cond)
{
	memset(cond, 0, sizeof(*cond));
	if (IsA(clause, OpExpr))
	{
		OpExpr	   *op = (OpExpr *) clause;
		Node	   *left,
				   *right;
		int			field;
		Oid			opno = op->opno;
		int			strategy;

		if (list_length(op->args) != 2)
			return false;
		left = linitial(op->args);
		right = lsecond(op->args);
		field = wcfdw_column_field(left, baserel, cols);
		if (field < 0)
		{
			/* column on the right: commute */
			field = wcfdw_column_field(right, baserel, cols);
			if (field < 0)
				return false;
			opno = get_commutator(opno);
			if (!OidIsValid(opno))
				return false;
			right = left;
		}
		if (!wcfdw_is_scan_constant(root, baserel, right))
			return false;

		/* LIKE on rowkey or qualifier (never commuted: pattern on the right) */
		if ((field == WCF_ROWKEY || field == WCF_QUALIFIER) && opno == op->opno &&
			((opno == OID_TEXT_LIKE_OP && cols->f[field].repr == WCR_TEXT &&
			  OidIsValid(op->inputcollid) &&
			  get_collation_isdeterministic(op->inputcollid)) ||
			 (opno == OID_BYTEA_LIKE_OP && cols->f[field].repr == WCR_BYTEA)))
		{
			cond->field = field;
			cond->kind = WCK_LIKE;
			cond->expr = (Expr *) right;
			cond->rinfo = rinfo;
			return true;
		}

		/* rowkey ^@ 'p' (starts_with as an operator): the byte range [p, p+1) */
		if ((field == WCF_ROWKEY || field == WCF_QUALIFIER) && opno == op->opno &&
			opno == TextPrefixOperator && cols->f[field].repr == WCR_TEXT &&
			OidIsValid(op->inputcollid) && get_collation_isdeterministic(op->inputcollid))
		{
			cond->field = field;
			cond->kind = WCK_PREFIX;
			cond->expr = (Expr *) right;
			cond->rinfo = rinfo;
			return true;
		}

		strategy = wcfdw_classify_op(opno, op->inputcollid, &cols->f[field], field,
									 cols->f[field].typid, exprType(right));
		if (strategy == 0)
			return false;
		if (field == WCF_FAMILY && strategy != BTEqualStrategyNumber)
			return false;
		if (field == WCF_VALUE)
			return false;
		cond->field = field;
		cond->kind = wcfdw_strategy_kind(strategy);
		cond->expr = (Expr *) right;
		cond->rinfo = rinfo;
		return true;
	}

	if (IsA(clause, ScalarArrayOpExpr))
	{
		ScalarArrayOpExpr *saop = (ScalarArrayOpExpr *) clause;
		Node	   *arr;
		int			field;

		if (!saop->useOr || list_length(saop->args) != 2)
			return false;
		field = wcfdw_column_field(linitial(saop->args), baserel, cols);
		if (field < 0 || field == WCF_VALUE)
			return false;
		arr = lsecond(saop->args);
		if (!wcfdw_is_scan_constant(root, baserel, arr))
			return false;

		/*
		 * rowkey LIKE ANY (ARRAY[...]) and rowkey ^@ ANY (...): a union of
		 * prefix ranges (salted keys: one prefix per salt), under the
		 * collations of LIKE and ^@ above
		 */
		if (field == WCF_ROWKEY &&
			((saop->opno == OID_TEXT_LIKE_OP && cols->f[field].repr == WCR_TEXT &&
			  OidIsValid(saop->inputcollid) &&
			  get_collation_isdeterministic(saop->inputcollid)) ||
			 (saop->opno == OID_BYTEA_LIKE_OP && cols->f[field].repr == WCR_BYTEA)))
		{
			cond->field = field;
			cond->kind = WCK_LIKE_ANY;
			cond->expr = (Expr *) arr;
			cond->rinfo = rinfo;
			return true;
		}
		if (field == WCF_ROWKEY && saop->opno == TextPrefixOperator &&
			cols->f[field].repr == WCR_TEXT && OidIsValid(saop->inputcollid) &&
			get_collation_isdeterministic(saop->inputcollid))
		{
			cond->field = field;
			cond->kind = WCK_PREFIX_ANY;
			cond->expr = (Expr *) arr;
			cond->rinfo = rinfo;
			return true;
		}
		if (wcfdw_classify_op(saop->opno, saop->inputcollid, &cols->f[field], field,
							  cols->f[field].typid, InvalidOid) != BTEqualStrategyNumber)
			return false;
		cond->field = field;
		cond->kind = WCK_IN;
		cond->expr = (Expr *) arr;
		cond->rinfo = rinfo;
		return true;
	}

	if (IsA(clause, FuncExpr))
	{
		FuncExpr   *fn = (FuncExpr *) clause;
		int			field;

		if (fn->funcid != F_STARTS_WITH || list_length(fn->args) != 2)
			return false;
		field = wcfdw_column_field(linitial(fn->args), baserel, cols);
		if ((field != WCF_ROWKEY && field != WCF_QUALIFIER) ||
			cols->f[field].repr != WCR_TEXT)
			return false;
		if (!OidIsValid(fn->inputcollid) || !get_collation_isdeterministic(fn->inputcollid))
			return false;
		if (!wcfdw_is_scan_constant(root, baserel, lsecond(fn->args)))
			return false;
		cond->field = field;
		cond->kind = WCK_PREFIX;
		cond->expr = (Expr *) lsecond(fn->args);
		cond->rinfo = rinfo;
		return true;
	}
	return false;
}

static WcFdwCond *wcfdw_rowkey_or(PlannerInfo *root, RelOptInfo *baserel,
								  const WcFdwColumns *cols, BoolExpr *or,
								  RestrictInfo *rinfo);

/*
 * wcfdw_rowkey_arm
 *		What one arm of an OR says about the rowkey, or NULL if it allows every
 *		rowkey: a leaf, an OR, or an AND of those (the arm's conditions on other
 *		columns are left out: the pushed tree only has to hold a superset)
 */
static WcFdwCond *
wcfdw_rowkey_arm(PlannerInfo *root, RelOptInfo *baserel, const WcFdwColumns *cols,
				 Expr *arm, RestrictInfo *rinfo)
{
	WcFdwCond	leaf;

	if (is_orclause(arm))
		return wcfdw_rowkey_or(root, baserel, cols, (BoolExpr *) arm, rinfo);
	if (is_andclause(arm))
	{
		List	   *args = NIL;
		ListCell   *lc;
		WcFdwCond  *c;

		foreach(lc, ((BoolExpr *) arm)->args)
		{
			WcFdwCond  *sub = wcfdw_rowkey_arm(root, baserel, cols, lfirst(lc), rinfo);

			if (sub != NULL)
				args = lappend(args, sub);
		}
		if (args == NIL)
			return NULL;
		if (list_length(args) == 1)
			return linitial(args);
		c = palloc0(sizeof(WcFdwCond));
		c->field = WCF_ROWKEY;
		c->kind = WCK_AND;
		c->args = args;
		c->rinfo = rinfo;
		return c;
	}
	if (wcfdw_cond_from_expr(root, baserel, cols, arm, rinfo, &leaf) &&
		leaf.field == WCF_ROWKEY)
	{
		WcFdwCond  *c = palloc(sizeof(WcFdwCond));

		*c = leaf;
		return c;
	}
	return NULL;
}

/*
 * wcfdw_rowkey_or
 *		An OR whose every arm narrows the rowkey, as a tree (WCK_OR), or NULL
 */
static WcFdwCond *
wcfdw_rowkey_or(PlannerInfo *root, RelOptInfo *baserel, const WcFdwColumns *cols,
				BoolExpr *or, RestrictInfo *rinfo)
{
	List	   *args = NIL;
	ListCell   *lc;
	WcFdwCond  *c;

	foreach(lc, or->args)
	{
		WcFdwCond  *arm = wcfdw_rowkey_arm(root, baserel, cols, lfirst(lc), rinfo);

		if (arm == NULL)
			return NULL;		/* that arm lets any rowkey through */
		args = lappend(args, arm);
	}
	c = palloc0(sizeof(WcFdwCond));
	c->field = WCF_ROWKEY;
	c->kind = WCK_OR;
	c->args = args;
	c->rinfo = rinfo;
	return c;
}

/*
 * wcfdw_cond_from_clause
 *		Fills cond if rinfo's clause can narrow the engine's scan
 */
bool
wcfdw_cond_from_clause(PlannerInfo *root, RelOptInfo *baserel, const WcFdwColumns *cols,
					   RestrictInfo *rinfo, WcFdwCond *cond)
{
	if (rinfo->pseudoconstant)
		return false;
	if (is_orclause(rinfo->clause))
	{
		WcFdwCond  *c = wcfdw_rowkey_or(root, baserel, cols, (BoolExpr *) rinfo->clause,
										rinfo);

		if (c == NULL)
			return false;
		*cond = *c;
		return true;
	}
	return wcfdw_cond_from_expr(root, baserel, cols, rinfo->clause, rinfo, cond);
}

/*
 * wcfdw_cond_flatten
 *		Appends c's tree in prefix order: a (field, kind, nargs) triple per
 *		node to *condinfo, the leaves' expressions to *fdw_exprs
 */
void
wcfdw_cond_flatten(WcFdwCond *c, List **fdw_exprs, List **condinfo)
{
	ListCell   *lc;

	*condinfo = lappend_int(*condinfo, c->field);
	*condinfo = lappend_int(*condinfo, c->kind);
	*condinfo = lappend_int(*condinfo, list_length(c->args));
	if (c->kind != WCK_OR && c->kind != WCK_AND)
		*fdw_exprs = lappend(*fdw_exprs, c->expr);
	foreach(lc, c->args)
		wcfdw_cond_flatten(lfirst(lc), fdw_exprs, condinfo);
}

/*
 * wcfdw_cond_subtree_end
 *		The index after the subtree that starts at conds[i]
 */
int
wcfdw_cond_subtree_end(const WcFdwCondExec *conds, int i)
{
	int			n = conds[i].nargs;

	i++;
	while (n-- > 0)
		i = wcfdw_cond_subtree_end(conds, i);
	return i;
}

/*
 * wcfdw_cell_filter_type
 *		Whether a value of type typid is equal to another exactly when their
 *		stored bytes are (convert.c): text as its bytes (under a deterministic
 *		collation, checked by the caller), bytea as it is, and the binary forms
 *		of types whose receive function reads every byte string of its length
 *		as a different value.  Not bool (any nonzero byte is true), numeric
 *		(1.0 and 1.00), floats (0 and -0), char(n) (trailing blanks), json
 *		(spaces), jsonb, arrays or domains.
 */
static bool
wcfdw_cell_filter_type(Oid typid)
{
	switch (typid)
	{
		case TEXTOID:
		case VARCHAROID:
		case BYTEAOID:
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case OIDOID:
		case CHAROID:
		case DATEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case UUIDOID:
			return true;
		default:
			return false;
	}
}

/*
 * wcfdw_cell_filter_op
 *		Is opno "column = value" for a column of type coltype and a value of
 *		valtype, as a cell filter takes it: the type's own equality, or that
 *		of two integer types (bigint = 7 is int84eq: the scan turns the value
 *		into the column's type, scan.c)
 */
static bool
wcfdw_cell_filter_op(Oid opno, Oid coltype, Oid valtype)
{
	if (valtype == coltype)
		return opno == lookup_type_cache(coltype, TYPECACHE_EQ_OPR)->eq_opr;
	return wcfdw_is_integer_type(coltype) && wcfdw_is_integer_type(valtype) &&
		get_op_opfamily_strategy(opno, INTEGER_BTREE_FAM_OID) == BTEqualStrategyNumber;
}

/*
 * wcfdw_cell_filter_from_clause
 *		Whether clause is "column = value" on a wide table's single-cell
 *		column, which the scan can check on the cell's stored bytes (scan.c,
 *		cell filters): the type's own equality (or one of two integer
 *		types), under a deterministic collation, a value that does not refer
 *		to the table and is not volatile.  Sets *attnum and *value.
 */
bool
wcfdw_cell_filter_from_clause(PlannerInfo *root, RelOptInfo *baserel, const WcFdwColumns *cols,
							  Expr *clause, AttrNumber *attnum, Expr **value)
{
	OpExpr	   *op;
	Node	   *sides[2];
	int			i;

	if (cols->wide == NULL || !IsA(clause, OpExpr))
		return false;
	op = (OpExpr *) clause;
	if (list_length(op->args) != 2)
		return false;
	sides[0] = linitial(op->args);
	sides[1] = lsecond(op->args);
	for (i = 0; i < 2; i++)
	{
		Node	   *n = sides[i];
		Node	   *other = sides[1 - i];
		Oid			optype = exprType(n);
		Var		   *var;
		int			w;

		while (n && IsA(n, RelabelType))
			n = (Node *) ((RelabelType *) n)->arg;
		if (n == NULL || !IsA(n, Var))
			continue;
		var = (Var *) n;
		if (var->varno != baserel->relid || var->varlevelsup != 0 || var->varattno <= 0)
			continue;
		for (w = 0; w < cols->nwide; w++)
			if (cols->wide[w].attnum == var->varattno)
				break;
		if (w == cols->nwide || cols->wide[w].whole_family ||
			!wcfdw_cell_filter_type(cols->wide[w].typid))
			return false;
		/* text and varchar are stored alike; any other relabeling is not ours */
		if (optype != cols->wide[w].typid &&
			!(optype == TEXTOID && cols->wide[w].typid == VARCHAROID))
			return false;
		if (!wcfdw_cell_filter_op(op->opno, optype, exprType(other)) ||
			(OidIsValid(op->inputcollid) && !get_collation_isdeterministic(op->inputcollid)) ||
			!wcfdw_is_scan_constant(root, baserel, other))
			return false;
		*attnum = var->varattno;
		*value = (Expr *) other;
		return true;
	}
	return false;
}

/*
 * wcfdw_extract_conds
 *		The pushable conditions among a list of RestrictInfos
 */
List *
wcfdw_extract_conds(PlannerInfo *root, RelOptInfo *baserel, const WcFdwColumns *cols,
					List *clauses)
{
	List	   *result = NIL;
	ListCell   *lc;

	foreach(lc, clauses)
	{
		WcFdwCond	cond;

		if (wcfdw_cond_from_clause(root, baserel, cols, lfirst(lc), &cond))
		{
			WcFdwCond  *c = palloc(sizeof(WcFdwCond));

			*c = cond;
			result = lappend(result, c);
		}
	}
	return result;
}

char *
wcfdw_cond_op_name(WcFdwCondKind kind)
{
	switch (kind)
	{
		case WCK_EQ:
			return "=";
		case WCK_IN:
			return "= ANY";
		case WCK_LT:
			return "<";
		case WCK_LE:
			return "<=";
		case WCK_GT:
			return ">";
		case WCK_GE:
			return ">=";
		case WCK_PREFIX:
			return "starts with";
		case WCK_LIKE:
			return "LIKE";
		case WCK_LIKE_ANY:
			return "LIKE ANY";
		case WCK_PREFIX_ANY:
			return "starts with ANY";
		case WCK_OR:
			return "OR";
		case WCK_AND:
			return "AND";
	}
	return "?";
}
