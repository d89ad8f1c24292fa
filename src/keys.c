/*-------------------------------------------------------------------------
 *
 * keys.c
 *		  Pushed conditions, evaluated at execution -> what the engine reads
 *
 * wcfdw_compute_keys evaluates the conditions pushdown.c recognised (their
 * values may change at every rescan) and intersects them:
 *
 *		rowkey		a sorted list of disjoint ranges: = and IN give points
 *					(sorted, de-duplicated), < <= > >= give half ranges with
 *					their exact inclusivity, a prefix p gives [p, p+1) where
 *					p+1 drops trailing 0xff bytes and increments the last one;
 *					an OR (and LIKE ANY, ^@ ANY) the union of its arms'
 *					ranges, sorted, with overlapping and touching ones merged
 *		family		the declared families named by every = / IN
 *		qualifier	= / IN sets intersected and filtered by the range of
 *					the others, or that range: < <= > >= and prefixes
 *					intersected (the engine seeks to its start in a row)
 *		ts			an inclusive [min, max]; "ts < x" is max = x - 1, computed
 *					without overflow; timestamptz values are rounded to the
 *					cell milliseconds in the direction that keeps the range
 *					exact
 *
 * A NULL value, an empty intersection or an undeclared family make the scan
 * empty (keys->empty).  Everything is allocated in the caller's context.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "datatype/timestamp.h"
#include "executor/executor.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "widecol_fdw.h"

typedef struct WcFdwBytes
{
	uint8	   *data;
	size_t		len;
} WcFdwBytes;

static int
wcfdw_bytes_cmp(const uint8 *a, size_t alen, const uint8 *b, size_t blen)
{
	int			c = memcmp(a, b, Min(alen, blen));

	if (c != 0)
		return c;
	return (alen < blen) ? -1 : (alen > blen) ? 1 : 0;
}

static int
wcfdw_bytes_qsort_cmp(const void *a, const void *b)
{
	const WcFdwBytes *x = a;
	const WcFdwBytes *y = b;

	return wcfdw_bytes_cmp(x->data, x->len, y->data, y->len);
}

/* the bytes a key value is compared as: a varlena's, a uuid's */
typedef WcFdwBytes (*WcFdwBytesOf) (Datum d);

static WcFdwBytes
wcfdw_uuid_bytes(Datum d)
{
	WcFdwBytes	b;

	b.len = UUID_LEN;
	b.data = palloc(UUID_LEN);
	memcpy(b.data, DatumGetUUIDP(d)->data, UUID_LEN);
	return b;
}

static WcFdwBytes
wcfdw_varlena_bytes(Datum d)
{
	struct varlena *v = PG_DETOAST_DATUM_PACKED(d);
	WcFdwBytes	b;

	b.len = VARSIZE_ANY_EXHDR(v);
	b.data = palloc(b.len + 1);
	memcpy(b.data, VARDATA_ANY(v), b.len);
	return b;
}

/* Sorted, de-duplicated values of an array Datum (NULL elements dropped). */
static WcFdwBytes *
wcfdw_array_bytes(Datum arr, int *n, WcFdwBytesOf bytes_of)
{
	ArrayType  *a = DatumGetArrayTypeP(arr);
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	WcFdwBytes *out;
	int			i,
				k = 0;

	get_typlenbyvalalign(ARR_ELEMTYPE(a), &elmlen, &elmbyval, &elmalign);
	deconstruct_array(a, ARR_ELEMTYPE(a), elmlen, elmbyval, elmalign, &elems, &nulls, &nelems);
	out = palloc(sizeof(WcFdwBytes) * Max(nelems, 1));
	for (i = 0; i < nelems; i++)
		if (!nulls[i])
			out[k++] = bytes_of(elems[i]);
	if (k > 1)
	{
		int			j = 0;

		qsort(out, k, sizeof(WcFdwBytes), wcfdw_bytes_qsort_cmp);
		for (i = 1; i < k; i++)
			if (wcfdw_bytes_qsort_cmp(&out[j], &out[i]) != 0)
				out[++j] = out[i];
		k = j + 1;
	}
	*n = k;
	return out;
}

/*
 * wcfdw_like_prefix
 *		The fixed prefix of a LIKE pattern (backslash escapes); *exact when the
 *		pattern has no wildcard at all
 */
static WcFdwBytes
wcfdw_like_prefix(WcFdwBytes pat, bool *exact)
{
	WcFdwBytes	out;
	size_t		i;

	out.data = palloc(pat.len + 1);
	out.len = 0;
	*exact = true;
	for (i = 0; i < pat.len; i++)
	{
		uint8		c = pat.data[i];

		if (c == '%' || c == '_')
		{
			*exact = false;
			break;
		}
		if (c == '\\')
		{
			if (i + 1 >= pat.len)
			{
				*exact = false; /* invalid pattern: PostgreSQL's recheck errors */
				break;
			}
			c = pat.data[++i];
		}
		out.data[out.len++] = c;
	}
	return out;
}

/*
 * A bound of a range while computing: a key and a wc_bound.  As a position
 * among the keys, an inclusive start and an exclusive stop at k lie just
 * before k, an exclusive start and an inclusive stop just after it; an
 * unbounded start lies before every key, an unbounded stop after them all.
 */
typedef struct WcFdwBound
{
	WcFdwBytes	key;
	int			kind;			/* WC_UNBOUNDED, WC_INCLUSIVE, WC_EXCLUSIVE */
} WcFdwBound;

/* A range is not empty when its start lies before its stop. */
typedef struct WcFdwRange
{
	WcFdwBound	lo;
	WcFdwBound	hi;
} WcFdwRange;

/*
 * wcfdw_bound_cmp
 *		Order of bounds a and b as positions among the keys; a_start says
 *		whether a is a start (else a stop), b_start the same of b
 */
static int
wcfdw_bound_cmp(const WcFdwBound *a, bool a_start, const WcFdwBound *b, bool b_start)
{
	/* -1 before every key, 1 after every key, 0 at a key */
	int			a_end = (a->kind != WC_UNBOUNDED) ? 0 : (a_start ? -1 : 1);
	int			b_end = (b->kind != WC_UNBOUNDED) ? 0 : (b_start ? -1 : 1);
	bool		a_after;
	bool		b_after;
	int			c;

	if (a_end != 0 || b_end != 0)
		return (a_end > b_end) - (a_end < b_end);
	c = wcfdw_bytes_cmp(a->key.data, a->key.len, b->key.data, b->key.len);
	if (c != 0)
		return c;
	a_after = (a->kind == WC_INCLUSIVE) != a_start;
	b_after = (b->kind == WC_INCLUSIVE) != b_start;
	return (int) a_after - (int) b_after;
}

/*
 * wcfdw_intersect
 *		Intersection of two sorted lists of disjoint ranges (sorted, disjoint)
 */
static List *
wcfdw_intersect(List *a, List *b)
{
	List	   *out = NIL;
	int			i = 0,
				j = 0;

	while (i < list_length(a) && j < list_length(b))
	{
		WcFdwRange *x = list_nth(a, i);
		WcFdwRange *y = list_nth(b, j);
		WcFdwRange *r = palloc(sizeof(WcFdwRange));
		int			sc = wcfdw_bound_cmp(&x->hi, false, &y->hi, false);

		r->hi = (sc <= 0) ? x->hi : y->hi;
		r->lo = (wcfdw_bound_cmp(&x->lo, true, &y->lo, true) < 0) ? y->lo : x->lo;
		if (wcfdw_bound_cmp(&r->lo, true, &r->hi, false) < 0)
			out = lappend(out, r);
		if (sc <= 0)
			i++;
		else
			j++;
	}
	return out;
}

static WcFdwRange *
wcfdw_make_range(WcFdwBytes lo, int lob, WcFdwBytes hi, int hib)
{
	WcFdwRange *r = palloc(sizeof(WcFdwRange));

	r->lo.key = lo;
	r->lo.kind = lob;
	r->hi.key = hi;
	r->hi.kind = hib;
	return r;
}

/* [p, p+1): p+1 drops trailing 0xff bytes and increments the last byte */
static WcFdwRange *
wcfdw_prefix_range(WcFdwBytes p)
{
	WcFdwBytes	hi;
	WcFdwBytes	none = {NULL, 0};

	if (p.len == 0)
		return wcfdw_make_range(none, WC_UNBOUNDED, none, WC_UNBOUNDED);
	hi.data = palloc(p.len);
	memcpy(hi.data, p.data, p.len);
	hi.len = p.len;
	while (hi.len > 0 && hi.data[hi.len - 1] == 0xff)
		hi.len--;
	if (hi.len == 0)
		return wcfdw_make_range(p, WC_INCLUSIVE, none, WC_UNBOUNDED);
	hi.data[hi.len - 1]++;
	return wcfdw_make_range(p, WC_INCLUSIVE, hi, WC_EXCLUSIVE);
}

/* int2/int4/int8 Datum as int64 */
static int64
wcfdw_int_value(Datum d, Oid type)
{
	return wcfdw_int_datum_value(d, type == INT2OID ? 2 : (type == INT4OID ? 4 : 8));
}

/*
 * wcfdw_ts_bound
 *		Narrows [*min, *max] by "ts kind value"; false if nothing can match
 *
 * For timestamptz the value is in microseconds and cells in milliseconds:
 * ms*1000 < u  <=>  ms <= ceil(u/1000) - 1, and so on.
 */
static bool
wcfdw_ts_bound(WcFdwCondKind kind, Datum d, Oid type, WcFdwRepr repr,
			   int64 *min, int64 *max)
{
	int64		lo,
				hi;				/* the cells allowed: [lo, hi] */

	if (repr == WCR_INT8)
	{
		int64		v = wcfdw_int_value(d, type);

		lo = PG_INT64_MIN;
		hi = PG_INT64_MAX;
		switch (kind)
		{
			case WCK_EQ:
				lo = hi = v;
				break;
			case WCK_LT:
				if (v == PG_INT64_MIN)
					return false;
				hi = v - 1;
				break;
			case WCK_LE:
				hi = v;
				break;
			case WCK_GT:
				if (v == PG_INT64_MAX)
					return false;
				lo = v + 1;
				break;
			case WCK_GE:
				lo = v;
				break;
			default:
				break;
		}
	}
	else
	{
		TimestampTz u = DatumGetTimestampTz(d);
		int64		fl,
					ce,
					rem;
		const int64 diff_ms = (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000;

		lo = PG_INT64_MIN;
		hi = PG_INT64_MAX;
		if (TIMESTAMP_IS_NOEND(u))
		{
			if (kind == WCK_LT || kind == WCK_LE)
				return true;
			return false;
		}
		if (TIMESTAMP_IS_NOBEGIN(u))
		{
			if (kind == WCK_GT || kind == WCK_GE)
				return true;
			return false;
		}
		fl = u / 1000;
		rem = u % 1000;
		if (rem < 0)
		{
			fl -= 1;
			rem += 1000;
		}
		fl += diff_ms;
		ce = fl + (rem != 0);
		switch (kind)
		{
			case WCK_EQ:
				if (rem != 0)
					return false;
				lo = hi = fl;
				break;
			case WCK_LT:
				hi = ce - 1;
				break;
			case WCK_LE:
				hi = fl;
				break;
			case WCK_GT:
				lo = fl + 1;
				break;
			case WCK_GE:
				lo = ce;
				break;
			default:
				break;
		}
	}
	if (lo > *min)
		*min = lo;
	if (hi < *max)
		*max = hi;
	return *min <= *max;
}

static int
wcfdw_range_qsort_cmp(const void *a, const void *b)
{
	const WcFdwRange *x = *(WcFdwRange *const *) a;
	const WcFdwRange *y = *(WcFdwRange *const *) b;

	return wcfdw_bound_cmp(&x->lo, true, &y->lo, true);
}

/*
 * wcfdw_union
 *		The union of ranges in any order and overlapping: sorted, disjoint,
 *		ranges that overlap or touch merged, empty ones dropped
 */
static List *
wcfdw_union(List *ranges)
{
	WcFdwRange **arr;
	List	   *out = NIL;
	WcFdwRange *cur = NULL;
	int			n = 0,
				i;
	ListCell   *lc;

	if (ranges == NIL)
		return NIL;
	arr = palloc(sizeof(WcFdwRange *) * list_length(ranges));
	foreach(lc, ranges)
	{
		WcFdwRange *r = lfirst(lc);

		if (wcfdw_bound_cmp(&r->lo, true, &r->hi, false) < 0)
			arr[n++] = r;
	}
	qsort(arr, n, sizeof(WcFdwRange *), wcfdw_range_qsort_cmp);
	for (i = 0; i < n; i++)
	{
		/* no gap between cur's stop and the next start: one range */
		if (cur != NULL && wcfdw_bound_cmp(&arr[i]->lo, true, &cur->hi, false) <= 0)
		{
			if (wcfdw_bound_cmp(&arr[i]->hi, false, &cur->hi, false) > 0)
				cur->hi = arr[i]->hi;
			continue;
		}
		cur = palloc(sizeof(WcFdwRange));
		*cur = *arr[i];
		out = lappend(out, cur);
	}
	return out;
}

/* The range a LIKE pattern's fixed prefix allows: a point without wildcards. */
static WcFdwRange *
wcfdw_like_range(WcFdwBytes pattern)
{
	bool		exact;
	WcFdwBytes	p = wcfdw_like_prefix(pattern, &exact);

	if (exact)
		return wcfdw_make_range(p, WC_INCLUSIVE, p, WC_INCLUSIVE);
	return wcfdw_prefix_range(p);
}

/*
 * wcfdw_leaf_ranges
 *		The sorted, disjoint ranges a leaf condition on a byte-string field
 *		allows, for the value d (an array for IN and the ANY kinds)
 */
static List *
wcfdw_leaf_ranges(WcFdwCondKind kind, Datum d, WcFdwBytesOf bytes_of)
{
	WcFdwBytes	none = {NULL, 0};
	WcFdwBytes *vals;
	WcFdwBytes	v;
	List	   *these = NIL;
	int			nvals,
				k;

	switch (kind)
	{
		case WCK_IN:
		case WCK_LIKE_ANY:
		case WCK_PREFIX_ANY:
			vals = wcfdw_array_bytes(d, &nvals, bytes_of);
			for (k = 0; k < nvals; k++)
			{
				if (kind == WCK_IN)
					these = lappend(these, wcfdw_make_range(vals[k], WC_INCLUSIVE,
															vals[k], WC_INCLUSIVE));
				else if (kind == WCK_LIKE_ANY)
					these = lappend(these, wcfdw_like_range(vals[k]));
				else
					these = lappend(these, wcfdw_prefix_range(vals[k]));
			}
			/* points come sorted and distinct; prefixes may nest */
			return kind == WCK_IN ? these : wcfdw_union(these);
		default:
			break;
	}
	v = bytes_of(d);
	switch (kind)
	{
		case WCK_EQ:
			return list_make1(wcfdw_make_range(v, WC_INCLUSIVE, v, WC_INCLUSIVE));
		case WCK_LT:
			return list_make1(wcfdw_make_range(none, WC_UNBOUNDED, v, WC_EXCLUSIVE));
		case WCK_LE:
			return list_make1(wcfdw_make_range(none, WC_UNBOUNDED, v, WC_INCLUSIVE));
		case WCK_GT:
			return list_make1(wcfdw_make_range(v, WC_EXCLUSIVE, none, WC_UNBOUNDED));
		case WCK_GE:
			return list_make1(wcfdw_make_range(v, WC_INCLUSIVE, none, WC_UNBOUNDED));
		case WCK_PREFIX:
			return list_make1(wcfdw_prefix_range(v));
		case WCK_LIKE:
			return list_make1(wcfdw_like_range(v));
		default:
			elog(ERROR, "unexpected condition kind %d", (int) kind);
	}
	return NIL;					/* keep the compiler quiet */
}

/* sorts int64s ascending */
static int
wcfdw_int64_qsort_cmp(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/* an integer rowkey v as the one-key range [v, v] */
static WcFdwRange *
wcfdw_intkey_point(int keylen, int64 v)
{
	WcFdwBytes	b;

	b.data = palloc(8);
	b.len = wcfdw_intkey_encode(keylen, v, b.data);
	return wcfdw_make_range(b, WC_INCLUSIVE, b, WC_INCLUSIVE);
}

/*
 * wcfdw_intkey_ranges
 *		The ranges a leaf condition on an integer rowkey of keylen bytes
 *		allows, for the value d of type type (an array of them for IN): the
 *		integers it allows within the key type's range, as their stored bytes
 *		(which sort as the numbers: wcfdw_intkey_encode).  A value beyond the
 *		key type's range (an int rowkey < 10000000000) narrows nothing or
 *		leaves nothing.
 */
static List *
wcfdw_intkey_ranges(WcFdwCondKind kind, Datum d, Oid type, int keylen)
{
	int64		kmin = keylen == 2 ? PG_INT16_MIN : (keylen == 4 ? PG_INT32_MIN : PG_INT64_MIN);
	int64		kmax = keylen == 2 ? PG_INT16_MAX : (keylen == 4 ? PG_INT32_MAX : PG_INT64_MAX);
	int64		lo = kmin,
				hi = kmax,
				v;
	WcFdwBytes	blo,
				bhi;

	if (type != INT2OID && type != INT4OID && type != INT8OID)
		type = getBaseType(type);
	if (kind == WCK_IN)
	{
		ArrayType  *a = DatumGetArrayTypeP(d);
		Oid			et = getBaseType(ARR_ELEMTYPE(a));
		int16		elmlen;
		bool		elmbyval;
		char		elmalign;
		Datum	   *elems;
		bool	   *nulls;
		int64	   *vals;
		int			n,
					k,
					m = 0;
		List	   *these = NIL;

		get_typlenbyvalalign(ARR_ELEMTYPE(a), &elmlen, &elmbyval, &elmalign);
		deconstruct_array(a, ARR_ELEMTYPE(a), elmlen, elmbyval, elmalign, &elems, &nulls, &n);
		vals = palloc(sizeof(int64) * Max(n, 1));
		for (k = 0; k < n; k++)
		{
			if (nulls[k])
				continue;
			v = wcfdw_int_value(elems[k], et);
			if (v >= kmin && v <= kmax)
				vals[m++] = v;
		}
		qsort(vals, m, sizeof(int64), wcfdw_int64_qsort_cmp);
		for (k = 0; k < m; k++)
			if (k == 0 || vals[k] != vals[k - 1])
				these = lappend(these, wcfdw_intkey_point(keylen, vals[k]));
		return these;
	}
	v = wcfdw_int_value(d, type);
	switch (kind)
	{
		case WCK_EQ:
			lo = Max(lo, v);
			hi = Min(hi, v);
			break;
		case WCK_LT:
			if (v == PG_INT64_MIN)
				return NIL;
			hi = Min(hi, v - 1);
			break;
		case WCK_LE:
			hi = Min(hi, v);
			break;
		case WCK_GT:
			if (v == PG_INT64_MAX)
				return NIL;
			lo = Max(lo, v + 1);
			break;
		case WCK_GE:
			lo = Max(lo, v);
			break;
		default:
			elog(ERROR, "unexpected condition kind %d on an integer rowkey", (int) kind);
	}
	if (lo > hi)
		return NIL;
	blo.data = palloc(8);
	blo.len = wcfdw_intkey_encode(keylen, lo, blo.data);
	bhi.data = palloc(8);
	bhi.len = wcfdw_intkey_encode(keylen, hi, bhi.data);
	return list_make1(wcfdw_make_range(blo, WC_INCLUSIVE, bhi, WC_INCLUSIVE));
}

/*
 * wcfdw_rowkey_node_ranges
 *		The rowkey ranges of the condition subtree at conds[*i] (a leaf, or an
 *		OR / AND of subtrees), evaluated now; *i is moved past the subtree.  A
 *		NULL value makes its leaf match nothing.
 */
static List *
wcfdw_rowkey_node_ranges(WcFdwCondExec *conds, int *i, ExprContext *econtext,
						 const WcFdwColumn *rowkey)
{
	WcFdwCondExec *c = &conds[(*i)++];
	WcFdwBytes	none = {NULL, 0};
	List	   *ranges = NIL;
	bool		isnull;
	Datum		d;
	int			a;

	if (c->kind == WCK_OR)
	{
		for (a = 0; a < c->nargs; a++)
			ranges = list_concat(ranges, wcfdw_rowkey_node_ranges(conds, i, econtext, rowkey));
		return wcfdw_union(ranges);
	}
	if (c->kind == WCK_AND)
	{
		ranges = list_make1(wcfdw_make_range(none, WC_UNBOUNDED, none, WC_UNBOUNDED));
		for (a = 0; a < c->nargs; a++)
			ranges = wcfdw_intersect(ranges, wcfdw_rowkey_node_ranges(conds, i, econtext, rowkey));
		return ranges;
	}
	d = ExecEvalExpr(c->state, econtext, &isnull);
	if (isnull)
		return NIL;
	if (rowkey->repr == WCR_INTKEY)
		return wcfdw_intkey_ranges(c->kind, d, c->exprtype, rowkey->keylen);
	return wcfdw_leaf_ranges(c->kind, d,
							 rowkey->repr == WCR_UUIDKEY ? wcfdw_uuid_bytes : wcfdw_varlena_bytes);
}

/*
 * wcfdw_compute_keys
 *		Evaluates the conditions and fills keys (allocated in the current
 *		memory context).  With rowkey_only, only the rowkey ranges are
 *		recomputed (a rescan whose other keys cannot change).
 */
void
wcfdw_compute_keys(WcFdwCondExec *conds, int nconds, ExprContext *econtext,
				   WcFdwConverter *conv, const WcFdwTableOptions *topts,
				   bool rowkey_only, WcFdwScanKeys *keys)
{
	WcFdwBytes	none = {NULL, 0};
	List	   *ranges;
	bool		fam_set = false;
	bool	   *fam_ok = palloc(sizeof(bool) * Max(topts->nfamilies, 1));
	bool		qual_set = false;
	WcFdwBytes *quals = NULL;
	int			nquals = 0;
	List	   *qual_range;
	int64		ts_min = PG_INT64_MIN;
	int64		ts_max = PG_INT64_MAX;
	int			i;

	if (!rowkey_only)
		memset(keys, 0, sizeof(*keys));
	keys->empty = false;
	keys->ranges = NULL;
	keys->nranges = 0;

	ranges = list_make1(wcfdw_make_range(none, WC_UNBOUNDED, none, WC_UNBOUNDED));
	qual_range = list_make1(wcfdw_make_range(none, WC_UNBOUNDED, none, WC_UNBOUNDED));
	for (i = 0; i < topts->nfamilies; i++)
		fam_ok[i] = true;

	i = 0;
	while (i < nconds)
	{
		WcFdwCondExec *c = &conds[i];
		bool		isnull;
		Datum		d;
		WcFdwBytes *vals = NULL;
		int			nvals = 0;
		WcFdwCondKind kind;
		int			k;

		if (c->field == WCF_ROWKEY)
		{
			ranges = wcfdw_intersect(ranges,
									 wcfdw_rowkey_node_ranges(conds, &i, econtext,
															  &conv->cols.f[WCF_ROWKEY]));
			continue;
		}
		i = wcfdw_cond_subtree_end(conds, i);
		if (rowkey_only)
			continue;
		d = ExecEvalExpr(c->state, econtext, &isnull);
		if (isnull)
		{
			keys->empty = true;
			return;
		}

		if (c->field == WCF_TS)
		{
			if (c->kind == WCK_IN)
			{
				/* the smallest range holding every value */
				ArrayType  *a = DatumGetArrayTypeP(d);
				Oid			et = ARR_ELEMTYPE(a);
				int16		elmlen;
				bool		elmbyval;
				char		elmalign;
				Datum	   *elems;
				bool	   *nulls;
				int			n;
				int64		lo = PG_INT64_MAX,
							hi = PG_INT64_MIN;
				bool		any = false;

				get_typlenbyvalalign(et, &elmlen, &elmbyval, &elmalign);
				deconstruct_array(a, et, elmlen, elmbyval, elmalign, &elems, &nulls, &n);
				for (k = 0; k < n; k++)
				{
					int64		emin = PG_INT64_MIN,
								emax = PG_INT64_MAX;

					if (nulls[k] ||
						!wcfdw_ts_bound(WCK_EQ, elems[k], et, conv->cols.f[WCF_TS].repr,
										&emin, &emax))
						continue;
					any = true;
					lo = Min(lo, emin);
					hi = Max(hi, emax);
				}
				if (!any)
				{
					keys->empty = true;
					return;
				}
				ts_min = Max(ts_min, lo);
				ts_max = Min(ts_max, hi);
				if (ts_min > ts_max)
				{
					keys->empty = true;
					return;
				}
			}
			else if (!wcfdw_ts_bound(c->kind, d, c->exprtype, conv->cols.f[WCF_TS].repr,
									 &ts_min, &ts_max))
			{
				keys->empty = true;
				return;
			}
			continue;
		}

		/* byte-string fields: the values */
		if (c->kind == WCK_IN)
			vals = wcfdw_array_bytes(d, &nvals, wcfdw_varlena_bytes);
		else
		{
			vals = palloc(sizeof(WcFdwBytes));
			vals[0] = wcfdw_varlena_bytes(d);
			nvals = 1;
		}

		kind = c->kind;
		if (kind == WCK_LIKE)
		{
			bool		exact;

			vals[0] = wcfdw_like_prefix(vals[0], &exact);
			kind = exact ? WCK_EQ : WCK_PREFIX;
		}

		switch (c->field)
		{
			case WCF_FAMILY:
				{
					bool	   *hit = palloc0(sizeof(bool) * Max(topts->nfamilies, 1));

					for (k = 0; k < nvals; k++)
					{
						int			f = wcfdw_family_index(topts, (char *) vals[k].data, vals[k].len);

						if (f >= 0)
							hit[f] = true;
					}
					for (k = 0; k < topts->nfamilies; k++)
						fam_ok[k] = fam_ok[k] && hit[k];
					fam_set = true;
					break;
				}
			case WCF_QUALIFIER:
				if (kind != WCK_EQ && kind != WCK_IN)
				{
					/* < <= > >= and prefixes: one range, intersected */
					WcFdwBytes	v = vals[0];
					List	   *these;

					switch (kind)
					{
						case WCK_LT:
							these = list_make1(wcfdw_make_range(none, WC_UNBOUNDED, v, WC_EXCLUSIVE));
							break;
						case WCK_LE:
							these = list_make1(wcfdw_make_range(none, WC_UNBOUNDED, v, WC_INCLUSIVE));
							break;
						case WCK_GT:
							these = list_make1(wcfdw_make_range(v, WC_EXCLUSIVE, none, WC_UNBOUNDED));
							break;
						case WCK_GE:
							these = list_make1(wcfdw_make_range(v, WC_INCLUSIVE, none, WC_UNBOUNDED));
							break;
						default:
							these = list_make1(wcfdw_prefix_range(v));
							break;
					}
					qual_range = wcfdw_intersect(qual_range, these);
					if (qual_range == NIL)
					{
						keys->empty = true;
						return;
					}
				}
				else if (!qual_set)
				{
					quals = vals;
					nquals = nvals;
					qual_set = true;
				}
				else
				{
					/* intersect two sorted sets */
					int			a = 0,
								b = 0,
								n = 0;
					WcFdwBytes *out = palloc(sizeof(WcFdwBytes) * Max(nquals, 1));

					while (a < nquals && b < nvals)
					{
						int			cmp = wcfdw_bytes_qsort_cmp(&quals[a], &vals[b]);

						if (cmp == 0)
						{
							out[n++] = quals[a];
							a++, b++;
						}
						else if (cmp < 0)
							a++;
						else
							b++;
					}
					quals = out;
					nquals = n;
				}
				break;
			default:
				break;
		}
	}

	if (ranges == NIL)
	{
		keys->empty = true;
		return;
	}
	if (!(list_length(ranges) == 1 &&
		  ((WcFdwRange *) linitial(ranges))->lo.kind == WC_UNBOUNDED &&
		  ((WcFdwRange *) linitial(ranges))->hi.kind == WC_UNBOUNDED))
	{
		ListCell   *lc;

		keys->ranges = palloc(sizeof(wc_key_range) * list_length(ranges));
		foreach(lc, ranges)
		{
			WcFdwRange *r = lfirst(lc);
			wc_key_range *kr = &keys->ranges[keys->nranges++];

			kr->start = r->lo.key.data;
			kr->start_len = r->lo.key.len;
			kr->start_bound = r->lo.kind;
			kr->stop = r->hi.key.data;
			kr->stop_len = r->hi.key.len;
			kr->stop_bound = r->hi.kind;
		}
	}
	if (rowkey_only)
		return;

	if (fam_set)
	{
		keys->families = palloc(sizeof(wc_slice) * Max(topts->nfamilies, 1));
		for (i = 0; i < topts->nfamilies; i++)
			if (fam_ok[i])
			{
				keys->families[keys->nfamilies].data = (const uint8 *) topts->families[i].name;
				keys->families[keys->nfamilies].len = strlen(topts->families[i].name);
				keys->nfamilies++;
			}
		if (keys->nfamilies == 0)
		{
			keys->empty = true;
			return;
		}
	}

	if (qual_set)
	{
		/* the values of = and IN that lie in the range */
		WcFdwRange *qr = linitial(qual_range);
		int			n = 0;

		keys->quals = palloc(sizeof(wc_slice) * Max(nquals, 1));
		for (i = 0; i < nquals; i++)
		{
			WcFdwRange	point;

			point.lo.key = point.hi.key = quals[i];
			point.lo.kind = point.hi.kind = WC_INCLUSIVE;
			if (wcfdw_bound_cmp(&qr->lo, true, &point.lo, true) <= 0 &&
				wcfdw_bound_cmp(&point.hi, false, &qr->hi, false) <= 0)
			{
				keys->quals[n].data = quals[i].data;
				keys->quals[n].len = quals[i].len;
				n++;
			}
		}
		keys->nquals = n;
		if (n == 0)
		{
			keys->empty = true;
			return;
		}
	}
	else
	{
		WcFdwRange *qr = linitial(qual_range);

		if (qr->lo.kind != WC_UNBOUNDED || qr->hi.kind != WC_UNBOUNDED)
		{
			keys->has_qual_range = true;
			keys->qual_range.start = qr->lo.key.data;
			keys->qual_range.start_len = qr->lo.key.len;
			keys->qual_range.start_bound = qr->lo.kind;
			keys->qual_range.stop = qr->hi.key.data;
			keys->qual_range.stop_len = qr->hi.key.len;
			keys->qual_range.stop_bound = qr->hi.kind;
		}
	}

	keys->ts_min = ts_min;
	keys->ts_max = ts_max;
}
