/*-------------------------------------------------------------------------
 *
 * wide.c
 *		  Wide tables: one SQL row per rowkey, columns mapped to cells
 *
 * A foreign table with a column option cell is a wide table:
 *
 *		rowkey	text (or bytea), matched by name, as in a tall table
 *		c		any type	OPTIONS (cell 'family:qualifier')
 *		j		jsonb		OPTIONS (cell 'family:*')
 *
 * Every other column needs a cell; a cell names a declared family and no
 * two columns map the same cell (a 'family:*' column maps every cell of
 * its family).  Cells are stored exactly as a tall table stores them: the
 * bytes of a text or bytea value, the binary send/receive form of any other
 * type (convert.c), so a tall table over the same store shows them.
 *
 * Reading.  The scan's cells come in (rowkey, family, qualifier, ts DESC)
 * order, a cell's versions newest first.  A row is the run of cells of one
 * rowkey that holds at least one cell some column maps; a column holds the
 * first (newest visible) version of its cell, NULL if there is none.  A
 * 'family:*' column holds a jsonb object {"qualifier": value, ...} of the
 * newest version of every qualifier of the family: the value is the cell's
 * text parsed as JSON when it is valid JSON (97 -> 97, {"a":1} -> {"a":1},
 * "\"x\"" -> "x"), else the text as a JSON string (Tom -> "Tom"); bytes
 * that are not text in the database encoding show as a string "\x<hex>".
 *
 * Which families are read.  Whether a rowkey has a row depends on every
 * mapped cell.  A query that needs only some columns reads only their
 * families when one of its conditions requires a needed column to be
 * non-NULL (name = 'x', age > 3, j IS NOT NULL): a row without cells in
 * those families fails that condition anyway.  Otherwise the families of
 * every column are read, the values of columns the query does not need
 * are not decoded.  When no read column maps a whole family, the scan
 * filters the cells by qualifier as well.
 *
 * Writing (modify.c calls these).  A row is put as one cell per non-NULL
 * column, all with one timestamp; a jsonb object as one cell per key (a
 * JSON string as its text, any other value as its JSON text, null as no
 * cell).  An UPDATE writes the changed columns: a NULL deletes the cell
 * (every version), a 'family:*' column replaces the whole family.  A
 * DELETE deletes every mapped cell of the row; cells no column maps stay.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/sysattr.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "common/jsonapi.h"
#include "executor/tuptable.h"
#include "foreign/foreign.h"
#include "mb/pg_wchar.h"
#include "commands/defrem.h"
#include "nodes/pathnodes.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "widecol_fdw.h"

/*
 * wcfdw_wide_parse_spec
 *		'family:qualifier' or 'family:*' -> its parts (palloc'd); ERROR on
 *		anything else
 *
 * The qualifier is everything after the first colon and may be empty
 * ('grade:'); '*' alone means the whole family, so a qualifier "*" cannot
 * be mapped on its own.
 */
void
wcfdw_wide_parse_spec(const char *spec, char **family, char **qual, bool *whole_family)
{
	const char *colon = strchr(spec, ':');

	if (colon == NULL || colon == spec)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"cell\": \"%s\"", spec),
				 errdetail(colon == NULL ? "It has no colon." : "The family name is empty."),
				 errhint("Give 'family:qualifier' for one cell, or 'family:*' for a whole family in a jsonb column.")));
	if (colon - spec > WC_MAX_FAMILY)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"cell\""),
				 errdetail("The family name is longer than %d bytes.", WC_MAX_FAMILY)));
	if (strlen(colon + 1) > WC_MAX_QUALIFIER)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"cell\""),
				 errdetail("The qualifier is longer than %d bytes.", WC_MAX_QUALIFIER)));
	*family = pnstrdup(spec, colon - spec);
	*qual = pstrdup(colon + 1);
	*whole_family = strcmp(colon + 1, "*") == 0;
}

/*
 * wcfdw_wide_get_columns
 *		cols->wide for a table with cell options (nothing for a tall table);
 *		ERROR on a column without cell (other than rowkey), a cell of an
 *		undeclared family, a whole family not in a jsonb column, or a cell
 *		mapped twice
 */
static void
wcfdw_wide_columns(Relation rel, WcFdwColumns *cols, bool partial)
{
	TupleDesc	tupdesc = RelationGetDescr(rel);
	Oid			relid = RelationGetRelid(rel);
	const char *relname = RelationGetRelationName(rel);
	char	  **specs;
	WcFdwTableOptions topts;
	int			i,
				j;

	if (!wcfdw_get_cell_specs(rel, &specs))
		return;

	wcfdw_get_table_options(relid, &topts);
	cols->wide = palloc0(sizeof(WcFdwWideColumn) * tupdesc->natts);
	cols->nwide = 0;
	for (i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);
		const char *name = NameStr(att->attname);
		WcFdwWideColumn *w;
		char	   *qual;

		if (att->attisdropped)
			continue;
		if (strcmp(name, "rowkey") == 0)
		{
			if (specs[i] != NULL)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
						 errmsg("column \"rowkey\" of foreign table \"%s\" cannot have option \"cell\"",
								relname),
						 errdetail("The rowkey of a wide table is its rows' key, not a cell.")));
			continue;
		}
		if (specs[i] == NULL && partial)
			continue;
		if (specs[i] == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_COLUMN_NAME),
					 errmsg("column \"%s\" of wide foreign table \"%s\" has no option \"cell\"",
							name, relname),
					 errhint("In a table with cell options, every column but rowkey maps a cell: OPTIONS (cell 'family:qualifier').")));

		w = &cols->wide[cols->nwide++];
		w->attnum = att->attnum;
		w->typid = att->atttypid;
		w->typmod = att->atttypmod;
		w->name = pstrdup(name);
		w->spec = specs[i];
		wcfdw_wide_parse_spec(specs[i], &w->family, &qual, &w->whole_family);
		w->family_index = wcfdw_family_index(&topts, w->family, strlen(w->family));
		if (w->family_index < 0)
		{
			StringInfoData fams;

			initStringInfo(&fams);
			for (j = 0; j < topts.nfamilies; j++)
				appendStringInfo(&fams, "%s%s", j ? ", " : "", topts.families[j].name);
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cell \"%s\" of column \"%s\" names family \"%s\", which is not declared for foreign table \"%s\"",
							w->spec, name, w->family, relname),
					 errhint("The families of the table are: %s.", fams.data)));
		}
		/* the declared name: the same memory as every other use */
		w->family = pstrdup(topts.families[w->family_index].name);
		w->family_len = strlen(w->family);
		if (w->whole_family)
		{
			if (getBaseType(w->typid) != JSONBOID)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
						 errmsg("column \"%s\" of foreign table \"%s\" maps a whole family and must be jsonb, not %s",
								name, relname, format_type_be(w->typid)),
						 errhint("A 'family:*' column holds a JSON object of the family's qualifiers.")));
			w->repr = WCR_NONE;
		}
		else
		{
			w->qual = (uint8 *) qual;
			w->qual_len = strlen(qual);
			w->repr = wcfdw_value_repr(w->typid);
		}
		for (j = 0; j < cols->nwide - 1; j++)
		{
			WcFdwWideColumn *o = &cols->wide[j];

			if (o->family_index != w->family_index)
				continue;
			if (o->whole_family || w->whole_family ||
				(o->qual_len == w->qual_len && memcmp(o->qual, w->qual, w->qual_len) == 0))
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_COLUMN),
						 errmsg("columns \"%s\" and \"%s\" of foreign table \"%s\" map the same cell",
								o->name, name, relname),
						 errdetail("Cells \"%s\" and \"%s\" overlap.", o->spec, w->spec)));
		}
	}
}

void
wcfdw_wide_get_columns(Relation rel, WcFdwColumns *cols)
{
	wcfdw_wide_columns(rel, cols, false);
}

/*
 * wcfdw_check_columns_ddl
 *		The check of the event trigger (ddl.c) on a new or altered table:
 *		wcfdw_get_columns' errors; but after commands that only define
 *		columns (defining), a table whose columns are rowkey and others with
 *		no cell field's name, some of them without option cell yet, only gets
 *		a WARNING, and the cell options it has are checked
 *
 * pg_dump writes a wide table as CREATE FOREIGN TABLE with its columns, then
 * one ALTER COLUMN ... OPTIONS (cell ...) per column: every state in between
 * must be accepted for its output to restore.  Such a table is refused at
 * its first use until every column but rowkey maps a cell.
 */
void
wcfdw_check_columns_ddl(Relation rel, bool defining)
{
	TupleDesc	tupdesc = RelationGetDescr(rel);
	const char *unmapped = NULL;
	bool		tall_field = false;
	bool		has_rowkey = false;
	char	  **specs;
	WcFdwColumns cols;
	int			i;

	if (!wcfdw_get_cell_specs(rel, &specs))
		specs = NULL;
	for (i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);
		const char *name = NameStr(att->attname);
		bool		mapped = specs != NULL && specs[i] != NULL;

		if (att->attisdropped)
			continue;
		if (strcmp(name, "rowkey") == 0)
			has_rowkey = true;
		else if (wcfdw_field_by_name(name) >= 0)
			tall_field |= !mapped;
		else if (!mapped && unmapped == NULL)
			unmapped = name;
	}
	if (!defining || unmapped == NULL || tall_field || !has_rowkey)
	{
		wcfdw_get_columns(rel, &cols);
		return;
	}
	ereport(WARNING,
			(errcode(ERRCODE_FDW_INVALID_COLUMN_NAME),
			 errmsg("column \"%s\" of foreign table \"%s\" is not a cell field and has no option \"cell\"",
					unmapped, RelationGetRelationName(rel)),
			 errdetail("The table cannot be read or written until every column but rowkey maps a cell."),
			 errhint("ALTER FOREIGN TABLE ... ALTER COLUMN ... OPTIONS (ADD cell 'family:qualifier'), as pg_dump's output does after CREATE.")));
	memset(&cols, 0, sizeof(cols));
	wcfdw_wide_columns(rel, &cols, true);
}

/*
 * wcfdw_wide_strict
 *		Does a condition of the scan need some cell column non-NULL?
 *
 * Then a row without any cell in the families of the needed columns fails
 * it, and the scan reads only those families.
 */
bool
wcfdw_wide_strict(PlannerInfo *root, RelOptInfo *baserel, const WcFdwColumns *cols)
{
	ListCell   *lc;

	foreach(lc, baserel->baserestrictinfo)
	{
		RestrictInfo *ri = lfirst(lc);
		ListCell   *lv;

		foreach(lv, find_nonnullable_vars((Node *) ri->clause))
		{
			Var		   *v = lfirst(lv);
			int			i;

			if (!IsA(v, Var) || v->varno != baserel->relid || v->varlevelsup != 0)
				continue;
			for (i = 0; i < cols->nwide; i++)
				if (cols->wide[i].attnum == v->varattno)
					return true;
		}
	}
	return false;
}

/*
 * wcfdw_wide_scan_cells
 *		The families, and the qualifier filter, of a scan that must see the
 *		cells of the columns in read[] (palloc'd in cxt)
 */
void
wcfdw_wide_scan_cells(const WcFdwColumns *cols, const bool *read, MemoryContext cxt,
					  wc_slice **families, int *nfamilies, wc_slice **quals, int *nquals)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	bool		whole = false;
	int			i,
				j;

	*families = palloc0(sizeof(wc_slice) * Max(cols->nwide, 1));
	*quals = palloc0(sizeof(wc_slice) * Max(cols->nwide, 1));
	*nfamilies = 0;
	*nquals = 0;
	for (i = 0; i < cols->nwide; i++)
	{
		const WcFdwWideColumn *w = &cols->wide[i];
		bool		seen = false;

		if (!read[i])
			continue;
		for (j = 0; j < *nfamilies; j++)
			if (strcmp((const char *) (*families)[j].data, w->family) == 0)
				seen = true;
		if (!seen)
		{
			(*families)[*nfamilies].data = (const uint8_t *) w->family;
			(*families)[*nfamilies].len = strlen(w->family);
			(*nfamilies)++;
		}
		if (w->whole_family)
			whole = true;
		else
		{
			(*quals)[*nquals].data = w->qual;
			(*quals)[*nquals].len = w->qual_len;
			(*nquals)++;
		}
	}
	if (whole)
		*nquals = 0;
	MemoryContextSwitchTo(old);
}

/* ---------------------------------------------------------------- reading */

void
wcfdw_wide_reader_init(WcFdwWideReader *r, WcFdwConverter *conv, const bool *need,
					   MemoryContext parent)
{
	memset(r, 0, sizeof(*r));
	r->conv = conv;
	r->need = need;
	r->cxt = parent;
	r->have = MemoryContextAlloc(parent, sizeof(bool) * Max(conv->cols.nwide, 1));
	r->json = MemoryContextAlloc(parent, sizeof(StringInfoData) * Max(conv->cols.nwide, 1));
}

/* A new scan (or the same one re-seeked): no cell read ahead. */
void
wcfdw_wide_reader_reset(WcFdwWideReader *r, wc_scan *scan)
{
	r->scan = scan;
	r->done = false;
	r->have_next = false;
}

static bool
wcfdw_bytes_are_text(const uint8 *data, size_t len)
{
	return memchr(data, 0, len) == NULL &&
		pg_verifymbstr((const char *) data, (int) len, true);
}

/* The bytes as a JSON string: their text, or "\x<hex>" if they are not text. */
static void
wcfdw_json_string(StringInfo buf, const uint8 *data, size_t len)
{
	if (wcfdw_bytes_are_text(data, len))
		escape_json(buf, pnstrdup((const char *) data, len));
	else
	{
		char	   *hex = palloc(len * 2 + 3);
		size_t		k;

		hex[0] = '\\';
		hex[1] = 'x';
		for (k = 0; k < len; k++)
			sprintf(hex + 2 + 2 * k, "%02x", data[k]);
		hex[2 + 2 * len] = '\0';
		escape_json(buf, hex);
	}
}

/*
 * Whether JSON number text s fits jsonb's numeric (numeric_in's limits): at
 * most 16383 digits after the point (counting those an exponent adds), and
 * the first nonzero digit at most 131071 places before it.  JSON's grammar
 * has no such limit ("1e999999"), and jsonb_in refuses what exceeds them.
 */
static bool
wcfdw_json_number_fits(const char *s)
{
	const char *p = s;
	int64		intdigits = 0,	/* significant digits before the point */
				fracdigits = 0,
				fraczeros = 0,	/* zeros after the point before the first nonzero */
				exp = 0,
				dscale,
				weight;
	bool		nonzero = false,
				negexp = false;

	if (*p == '-')
		p++;
	for (; *p >= '0' && *p <= '9'; p++)
		if (nonzero || *p != '0')
		{
			nonzero = true;
			intdigits++;
		}
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
		{
			fracdigits++;
			if (!nonzero && *p == '0')
				fraczeros++;
			else
				nonzero = true;
		}
	if (*p == 'e' || *p == 'E')
	{
		p++;
		if (*p == '-' || *p == '+')
			negexp = *p++ == '-';
		for (; *p >= '0' && *p <= '9'; p++)
			if ((exp = exp * 10 + (*p - '0')) >= PG_INT32_MAX / 2)
				return false;
		if (negexp)
			exp = -exp;
	}
	dscale = Max(fracdigits - exp, 0);
	if (dscale > 16383)
		return false;
	if (!nonzero)
		return true;
	weight = intdigits > 0 ? intdigits - 1 + exp : -(fraczeros + 1) + exp;
	return weight <= 131071;
}

/* pg_parse_json's scalar callback: notes a number jsonb cannot hold. */
static void
wcfdw_json_scalar_check(void *state, char *token, JsonTokenType tokentype)
{
	if (tokentype == JSON_TOKEN_NUMBER && !wcfdw_json_number_fits(token))
		*(bool *) state = true;
}

/* Whether s (len bytes, text) is JSON that jsonb takes as it is. */
static bool
wcfdw_text_is_json(char *s, size_t len)
{
	JsonLexContext *lex = makeJsonLexContextCstringLen(s, (int) len, GetDatabaseEncoding(), true);
	JsonSemAction sem;
	bool		unfit = false;

	memset(&sem, 0, sizeof(sem));
	sem.semstate = &unfit;
	sem.scalar = wcfdw_json_scalar_check;
	return pg_parse_json(lex, &sem) == JSON_SUCCESS && !unfit;
}

/*
 * A cell value in a jsonb column: its text if it is valid JSON (whose numbers
 * jsonb can hold), else a string.
 */
static void
wcfdw_json_value(StringInfo buf, const uint8 *data, size_t len)
{
	if (wcfdw_bytes_are_text(data, len))
	{
		char	   *s = pnstrdup((const char *) data, len);

		if (wcfdw_text_is_json(s, len))
		{
			appendBinaryStringInfo(buf, s, (int) len);
			return;
		}
	}
	wcfdw_json_string(buf, data, len);
}

/* Does column w (of cols) take cell c? */
static inline bool
wcfdw_wide_takes(const WcFdwWideColumn *w, const wc_cell_view *c)
{
	return wc_bytes_eq((const uint8 *) c->family, c->family_len,
					   (const uint8 *) w->family, w->family_len) &&
		(w->whole_family || wc_bytes_eq(c->qual, c->qual_len, w->qual, w->qual_len));
}

/*
 * The column a cell belongs to, or -1: a binary search of the columns in
 * (family, qualifier) order (a family has either one whole-family column or
 * columns of single qualifiers).  *pos is set to the column's place in that
 * order.
 */
static int
wcfdw_wide_column_of(const WcFdwColumns *cols, const wc_cell_view *c, int *pos)
{
	int			lo = 0,
				hi = cols->nwide;

	Assert(cols->wide_sorted != NULL);
	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;
		const WcFdwWideColumn *w = &cols->wide[cols->wide_sorted[mid]];
		int			cmp = memcmp(c->family, w->family, Min(c->family_len, w->family_len));

		if (cmp == 0 && c->family_len != w->family_len)
			cmp = c->family_len < w->family_len ? -1 : 1;
		if (cmp == 0)
		{
			if (w->whole_family)
			{
				*pos = mid;
				return cols->wide_sorted[mid];
			}
			cmp = memcmp(c->qual, w->qual, Min(c->qual_len, w->qual_len));
			if (cmp == 0 && c->qual_len != w->qual_len)
				cmp = c->qual_len < w->qual_len ? -1 : 1;
			if (cmp == 0)
			{
				*pos = mid;
				return cols->wide_sorted[mid];
			}
		}
		if (cmp < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/*
 * wcfdw_wide_column_of, trying first where the cell before left off: *hint is
 * the place (in wide_sorted) of the last cell's column, -1 at a row's start.
 * A row's cells come in the order of the columns (a whole-family column's
 * several in a row): the guess is mostly right, two comparisons instead of a
 * search.
 */
static inline int
wcfdw_wide_column_near(const WcFdwColumns *cols, const wc_cell_view *c, int *hint)
{
	int			h = *hint;

	if (h >= 0 && h < cols->nwide && cols->wide[cols->wide_sorted[h]].whole_family &&
		wcfdw_wide_takes(&cols->wide[cols->wide_sorted[h]], c))
		return cols->wide_sorted[h];
	if (h + 1 < cols->nwide && wcfdw_wide_takes(&cols->wide[cols->wide_sorted[h + 1]], c))
	{
		*hint = h + 1;
		return cols->wide_sorted[h + 1];
	}
	return wcfdw_wide_column_of(cols, c, hint);
}

/*
 * Keeps cell c, the first of the next row, as r->next: its bytes in r's one
 * buffer, which grows to the largest such cell (once a row, so no allocation
 * there: the executor may write to the store before the next row is asked
 * for, and the engine's view of c would not survive that).
 */
static void
wcfdw_keep_next(WcFdwWideReader *r, const wc_cell_view *c)
{
	size_t		need = c->row_len + c->family_len + c->qual_len + c->val_len;
	uint8	   *p;

	if (need > r->nextcap)
	{
		size_t		cap = Max(need, Max(r->nextcap * 2, 256));

		if (r->nextbuf != NULL)
			pfree(r->nextbuf);
		r->nextbuf = MemoryContextAllocHuge(r->cxt, cap);
		r->nextcap = cap;
	}
	p = r->nextbuf;
	r->next = *c;
	memcpy(p, c->row, c->row_len);
	r->next.row = p;
	p += c->row_len;
	memcpy(p, c->family, c->family_len);
	r->next.family = (const char *) p;
	p += c->family_len;
	memcpy(p, c->qual, c->qual_len);
	r->next.qual = p;
	p += c->qual_len;
	memcpy(p, c->val, c->val_len);
	r->next.val = p;
	r->have_next = true;
}

/*
 * wcfdw_wide_row_exists
 *		Whether the scan, of one rowkey, has a cell a column maps: 1 or 0, or
 *		a negative wc_code (err filled).  Reads up to the first such cell,
 *		where a row read merges all of them (a direct UPDATE in READ COMMITTED
 *		needs no more, direct.c).
 */
int
wcfdw_wide_row_exists(WcFdwWideReader *r, wc_err *err)
{
	const WcFdwColumns *cols = &r->conv->cols;
	int			pos;

	for (;;)
	{
		wc_cell_view c;
		int			rc = wc_scan_next(r->scan, &c, err);

		if (rc <= 0)
			return rc;
		if (wcfdw_wide_column_of(cols, &c, &pos) >= 0)
			return 1;
	}
}

/* Does cell c, the newest visible one of column col, pass r's filters on col? */
static bool
wcfdw_wide_filter_ok(const WcFdwWideReader *r, int col, const wc_cell_view *c)
{
	for (int i = 0; i < r->nfilters; i++)
		if (r->filters[i].col == col &&
			!wc_bytes_eq(c->val, c->val_len, r->filters[i].val, r->filters[i].len))
			return false;
	return true;
}

/* Has the row read (have) a cell in every filtered column? */
static bool
wcfdw_wide_filters_met(const WcFdwWideReader *r, const bool *have)
{
	for (int i = 0; i < r->nfilters; i++)
		if (!have[r->filters[i].col])
			return false;
	return true;
}

/*
 * wcfdw_wide_next_row
 *		The next row: values[] and isnull[] (natts) of the needed columns,
 *		the rest NULL, and the rowkey bytes; 1, 0 at the end,
 *		WCFDW_WIDE_FILTERED, or a negative wc_code (err filled)
 *
 * Values, and *row, are palloc'd in the current memory context; the caller
 * resets it between rows.  r->fingerprint identifies the cell versions the
 * row was made of (a lock compares it with a re-read).  With cell filters
 * (scan.c), a row whose filtered column has no cell or another value is
 * WCFDW_WIDE_FILTERED instead (nothing in values[], its cells after that one
 * not decoded): the caller resets the context and asks for the next.
 */
int
wcfdw_wide_next_row(WcFdwWideReader *r, Datum *values, bool *isnull, int natts,
					const uint8 **row, size_t *row_len, wc_err *err)
{
	const WcFdwColumns *cols = &r->conv->cols;
	uint8	   *cur = NULL;		/* rowkey of the run being read */
	size_t		cur_len = 0;
	bool		mapped = false; /* the run has a cell a column maps */
	bool		rejected = false;	/* a cell filter refused the run */
	bool	   *have = r->have;
	StringInfoData *json = r->json;
	StringInfoData prevqual;	/* of the last whole-family cell taken */
	int			prevcol = -1;
	int			hint = -1;		/* wcfdw_wide_column_near's */
	uint64		fp = 0;
	int			i;

	memset(have, 0, sizeof(bool) * Max(cols->nwide, 1));
	prevqual.data = NULL;
	for (;;)
	{
		wc_cell_view c;
		int			col;

		if (r->have_next)
		{
			c = r->next;
			r->have_next = false;
		}
		else if (r->done)
			c.row = NULL;
		else
		{
			int			rc = wc_scan_next(r->scan, &c, err);

			if (rc < 0)
				return rc;
			if (rc == 0)
			{
				r->done = true;
				c.row = NULL;
			}
		}

		/* the end of a run: a row if it had a mapped cell */
		if (cur != NULL &&
			(c.row == NULL || !wc_bytes_eq(c.row, c.row_len, cur, cur_len)))
		{
			if (mapped)
			{
				if (c.row != NULL)
					wcfdw_keep_next(r, &c);
				/* refused, or a filtered column has no cell */
				if (rejected || !wcfdw_wide_filters_met(r, have))
					return WCFDW_WIDE_FILTERED;
				break;
			}
			/* cells no column maps (a qualifier filter's near misses) */
			cur = NULL;
			memset(have, 0, sizeof(bool) * Max(cols->nwide, 1));
			prevcol = -1;
			hint = -1;
			fp = 0;
		}
		if (c.row == NULL)
		{
			if (cur == NULL || !mapped)
				return 0;
			break;
		}
		if (cur == NULL)
		{
			cur = palloc(Max(c.row_len, 1));
			memcpy(cur, c.row, c.row_len);
			cur_len = c.row_len;
			mapped = false;
		}
		else if (rejected)
			continue;

		col = wcfdw_wide_column_near(cols, &c, &hint);
		if (col < 0)
			continue;
		mapped = true;
		if (cols->wide[col].whole_family)
		{
			/* a qualifier's older versions follow its newest: skip them */
			if (prevcol == col && (size_t) prevqual.len == c.qual_len &&
				memcmp(prevqual.data, c.qual, c.qual_len) == 0)
				continue;
			prevcol = col;
			if (prevqual.data == NULL)
				initStringInfo(&prevqual);
			resetStringInfo(&prevqual);
			appendBinaryStringInfo(&prevqual, (const char *) c.qual, (int) c.qual_len);
		}
		else if (have[col])
			continue;
		else if (r->nfilters > 0 && !wcfdw_wide_filter_ok(r, col, &c))
		{
			rejected = true;
			continue;
		}
		/* a version is its sequence number and cell: a column's one
		 * qualifier, or one of a whole family's */
		fp = hash_combine64(fp, c.seq);
		fp = hash_combine64(fp, cols->wide[col].whole_family ?
							hash_bytes_extended(c.qual, (int) c.qual_len, (uint64) col) :
							(uint64) col);
		if (!r->need[col])
		{
			have[col] = true;
			continue;
		}
		if (cols->wide[col].whole_family)
		{
			StringInfo	j = &json[col];

			if (!have[col])
			{
				initStringInfo(j);
				appendStringInfoChar(j, '{');
			}
			else
				appendStringInfoString(j, ", ");
			wcfdw_json_string(j, c.qual, c.qual_len);
			appendStringInfoString(j, ": ");
			wcfdw_json_value(j, c.val, c.val_len);
		}
		else
		{
			const WcFdwWideColumn *w = &cols->wide[col];

			values[w->attnum - 1] =
				wcfdw_value_from_bytes(w->repr, w->typid, w->typmod,
									   (FmgrInfo *) &w->recv, w->ioparam,
									   r->conv->relname, w->name, c.val, c.val_len);
		}
		have[col] = true;
	}

	/* a row: cur, and what the columns collected */
	memset(isnull, true, sizeof(bool) * natts);
	if (cols->f[WCF_ROWKEY].attnum != 0)
	{
		AttrNumber	a = cols->f[WCF_ROWKEY].attnum;

		values[a - 1] = wcfdw_bytes_to_datum(r->conv, WCF_ROWKEY, cur, cur_len);
		isnull[a - 1] = false;
	}
	for (i = 0; i < cols->nwide; i++)
	{
		const WcFdwWideColumn *w = &cols->wide[i];

		if (!have[i] || !r->need[i])
			continue;
		if (w->whole_family)
		{
			appendStringInfoChar(&json[i], '}');
			values[w->attnum - 1] = DirectFunctionCall1(jsonb_in, CStringGetDatum(json[i].data));
		}
		isnull[w->attnum - 1] = false;
	}
	*row = cur;
	*row_len = cur_len;
	r->fingerprint = fp;
	return 1;
}

/* ---------------------------------------------------------------- writing */

static void
wcfdw_wide_check(int rc, wc_err *err, const char *relname)
{
	wcfdw_check(rc, err, "buffer a write to the", relname);
}

/* The text a JSON value is stored as: a string's own text, else its JSON text. */
static char *
wcfdw_jsonb_value_text(JsonbValue *v, int *len)
{
	char	   *s;

	switch (v->type)
	{
		case jbvString:
			*len = v->val.string.len;
			return v->val.string.val;
		case jbvNumeric:
			s = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v->val.numeric)));
			break;
		case jbvBool:
			s = pstrdup(v->val.boolean ? "true" : "false");
			break;
		case jbvBinary:
			s = JsonbToCString(NULL, v->val.binary.data, v->val.binary.len);
			break;
		default:
			elog(ERROR, "unexpected jsonb value type %d", v->type);
			s = NULL;
	}
	*len = (int) strlen(s);
	return s;
}

static int
wcfdw_hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * A JSON string "\x<hex>" whose bytes are not text (a zero byte, or not valid
 * in the database encoding) stands for those bytes: the jsonb rule shows such
 * bytes so (wcfdw_json_string), and writing them back as the bytes keeps a
 * binary cell or qualifier what it was through a read-modify-write of its
 * family.  Either way the cell reads back as the same string.  False, and
 * nothing set, for any other string.
 */
static bool
wcfdw_json_string_bytes(const char *s, int len, char **out, int *outlen)
{
	char	   *buf;
	int			n;

	if (len < 4 || len % 2 != 0 || s[0] != '\\' || s[1] != 'x')
		return false;
	n = (len - 2) / 2;
	buf = palloc(n);
	for (int i = 0; i < n; i++)
	{
		int			hi = wcfdw_hex_value(s[2 + 2 * i]);
		int			lo = wcfdw_hex_value(s[3 + 2 * i]);

		if (hi < 0 || lo < 0)
		{
			pfree(buf);
			return false;
		}
		buf[i] = (char) (hi << 4 | lo);
	}
	if (wcfdw_bytes_are_text((const uint8 *) buf, n))
	{
		pfree(buf);
		return false;
	}
	*out = buf;
	*outlen = n;
	return true;
}

/*
 * The next member of the object it iterates: its key (pointing into the
 * object) and value in *v, a JSON null too; false after the last one.
 */
static bool
wcfdw_jsonb_next_member(JsonbIterator **it, JsonbValue *v, char **key, int *keylen)
{
	JsonbIteratorToken tok;

	while ((tok = JsonbIteratorNext(it, v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			*key = v->val.string.val;
			*keylen = v->val.string.len;
		}
		else if (tok == WJB_VALUE)
			return true;
	}
	return false;
}

static void
wcfdw_wide_put_family(WcFdwConverter *conv, wc_batch *b, const WcFdwWideColumn *w,
					  Datum d, const uint8 *row, size_t row_len, int64 ts)
{
	Jsonb	   *jb = DatumGetJsonbP(d);
	JsonbIterator *it;
	JsonbValue	v;
	char	   *key = NULL;
	int			keylen = 0;
	wc_err		err;

	if (!JB_ROOT_IS_OBJECT(jb) || JB_ROOT_IS_SCALAR(jb))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("value of column \"%s\" of foreign table \"%s\" must be a JSON object",
						w->name, conv->relname),
				 errdetail("Column \"%s\" maps family \"%s\" (cell '%s'): each key is a qualifier.",
						   w->name, w->family, w->spec)));
	it = JsonbIteratorInit(&jb->root);
	while (wcfdw_jsonb_next_member(&it, &v, &key, &keylen))
	{
		char	   *val;
		int			vallen;

		if (v.type == jbvNull)
			continue;
		(void) wcfdw_json_string_bytes(key, keylen, &key, &keylen);
		if (keylen > WC_MAX_QUALIFIER)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("qualifier too long for foreign table \"%s\"", conv->relname),
					 errdetail("A key of column \"%s\" has %d bytes; the limit is %d.",
							   w->name, keylen, WC_MAX_QUALIFIER)));
		val = wcfdw_jsonb_value_text(&v, &vallen);
		if (v.type == jbvString)
			(void) wcfdw_json_string_bytes(val, vallen, &val, &vallen);
		wc_err_clear(&err);
		wcfdw_wide_check(wc_batch_put(b, w->family, strlen(w->family), row, row_len,
									  key, keylen, ts, val, vallen, &err),
						 &err, conv->relname);
	}
}

/*
 * wcfdw_wide_stored_form
 *		Replaces each 'family:*' object of the row in slot by the object a read
 *		of the cells it writes gives (the jsonb rule, doc/SQL.md): no null
 *		members, a string whose text is JSON as that JSON.  Called before the
 *		row's constraints are checked, so that they hold for the row as stored,
 *		and RETURNING shows it as a later SELECT does.  Other values are left
 *		as they are; a value that is not an object too (it is refused later).
 */
void
wcfdw_wide_stored_form(const WcFdwConverter *conv, TupleTableSlot *slot)
{
	TupleDesc	desc = slot->tts_tupleDescriptor;
	int		   *attnums = NULL;
	Datum	   *values = NULL;
	bool	   *nulls = NULL;
	int			n = 0;

	for (int i = 0; i < conv->cols.nwide; i++)
	{
		const WcFdwWideColumn *w = &conv->cols.wide[i];
		Jsonb	   *jb;
		JsonbIterator *it;
		JsonbValue	v;
		bool		differs = false;
		StringInfoData buf;
		char	   *key = NULL;
		int			keylen = 0;
		bool		first = true;

		if (!w->whole_family)
			continue;
		slot_getallattrs(slot);
		if (slot->tts_isnull[w->attnum - 1])
			continue;
		jb = DatumGetJsonbP(slot->tts_values[w->attnum - 1]);
		if (!JB_ROOT_IS_OBJECT(jb) || JB_ROOT_IS_SCALAR(jb))
			continue;
		it = JsonbIteratorInit(&jb->root);
		while (!differs && wcfdw_jsonb_next_member(&it, &v, &key, &keylen))
			differs = v.type == jbvNull ||
				(v.type == jbvString &&
				 wcfdw_text_is_json(pnstrdup(v.val.string.val, v.val.string.len),
									v.val.string.len));
		if (!differs)
			continue;

		initStringInfo(&buf);
		appendStringInfoChar(&buf, '{');
		it = JsonbIteratorInit(&jb->root);
		while (wcfdw_jsonb_next_member(&it, &v, &key, &keylen))
		{
			char	   *val;
			int			vallen;

			if (v.type == jbvNull)
				continue;
			if (!first)
				appendStringInfoString(&buf, ", ");
			first = false;
			escape_json(&buf, pnstrdup(key, keylen));
			appendStringInfoString(&buf, ": ");
			val = wcfdw_jsonb_value_text(&v, &vallen);
			wcfdw_json_value(&buf, (const uint8 *) val, (size_t) vallen);
		}
		appendStringInfoChar(&buf, '}');
		if (attnums == NULL)
		{
			attnums = palloc(sizeof(int) * conv->cols.nwide);
			values = palloc(sizeof(Datum) * conv->cols.nwide);
			nulls = palloc0(sizeof(bool) * conv->cols.nwide);
		}
		attnums[n] = w->attnum;
		values[n] = DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
		n++;
	}
	if (n > 0)
	{
		HeapTuple	tup = ExecCopySlotHeapTuple(slot);

		tup = heap_modify_tuple_by_cols(tup, desc, n, attnums, values, nulls);
		ExecForceStoreHeapTuple(tup, slot, true);
	}
}

/*
 * wcfdw_wide_row_has_cell
 *		Whether the row in slot would write a cell: a single-cell column not
 *		NULL, or a whole family's object with a value that is not JSON null (an
 *		object of none, '{}', writes nothing).  A family's value that is not an
 *		object counts, so that wcfdw_wide_put_family reports it as such.
 */
bool
wcfdw_wide_row_has_cell(const WcFdwConverter *conv, TupleTableSlot *slot)
{
	slot_getallattrs(slot);
	for (int i = 0; i < conv->cols.nwide; i++)
	{
		const WcFdwWideColumn *w = &conv->cols.wide[i];
		Jsonb	   *jb;
		JsonbIterator *it;
		JsonbValue	v;
		char	   *key;
		int			keylen;

		if (slot->tts_isnull[w->attnum - 1])
			continue;
		if (!w->whole_family)
			return true;
		jb = DatumGetJsonbP(slot->tts_values[w->attnum - 1]);
		if (!JB_ROOT_IS_OBJECT(jb) || JB_ROOT_IS_SCALAR(jb))
			return true;
		it = JsonbIteratorInit(&jb->root);
		while (wcfdw_jsonb_next_member(&it, &v, &key, &keylen))
			if (v.type != jbvNull)
				return true;
	}
	return false;
}

/*
 * wcfdw_wide_put_row
 *		The cells of the row in slot, all at ts: of every column, or of the
 *		columns in only (attnums offset by FirstLowInvalidHeapAttributeNumber,
 *		as ExecGetUpdatedCols gives them).  A NULL writes nothing; an UPDATE
 *		deletes what it replaces first (wcfdw_wide_delete_replaced).
 */
void
wcfdw_wide_put_row(WcFdwConverter *conv, wc_batch *b, TupleTableSlot *slot,
				   const uint8 *row, size_t row_len, int64 ts, const Bitmapset *only)
{
	const WcFdwColumns *cols = &conv->cols;
	int			i;

	slot_getallattrs(slot);
	for (i = 0; i < cols->nwide; i++)
	{
		const WcFdwWideColumn *w = &cols->wide[i];
		Datum		d = slot->tts_values[w->attnum - 1];
		wc_err		err;

		if (slot->tts_isnull[w->attnum - 1] ||
			(only != NULL &&
			 !bms_is_member(w->attnum - FirstLowInvalidHeapAttributeNumber, only)))
			continue;
		if (w->whole_family)
			wcfdw_wide_put_family(conv, b, w, d, row, row_len, ts);
		else
		{
			const uint8 *data;
			size_t		len;

			wcfdw_value_to_bytes(w->repr, (FmgrInfo *) &w->send, d, &data, &len);
			if (len > WC_MAX_VALUE)
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("value too long for foreign table \"%s\"", conv->relname),
						 errdetail("The value of column \"%s\" has %zu bytes; the limit is %zu.",
								   w->name, len, (size_t) WC_MAX_VALUE)));
			wc_err_clear(&err);
			wcfdw_wide_check(wc_batch_put(b, w->family, strlen(w->family), row, row_len,
										  w->qual, w->qual_len, ts, data, len, &err),
							 &err, conv->relname);
		}
	}
}

/* A version one of the columns del marks holds: a cell of the column, or of a 'family:*' column's family. */
static bool
wcfdw_wide_deleted_cell(const WcFdwColumns *cols, const bool *del, const wc_cell_view *c)
{
	for (int i = 0; i < cols->nwide; i++)
	{
		const WcFdwWideColumn *w = &cols->wide[i];

		if (del[i] && wcfdw_same_bytes((const uint8 *) c->family, c->family_len,
									   (const uint8 *) w->family, w->family_len) &&
			(w->whole_family || wcfdw_same_bytes(c->qual, c->qual_len, w->qual, w->qual_len)))
			return true;
	}
	return false;
}

/* A version to delete by its timestamp: what the scan gave, copied. */
typedef struct WcFdwOwnVersion
{
	char	   *family;
	size_t		family_len;
	uint8	   *qual;
	size_t		qual_len;
	int64		ts;
} WcFdwOwnVersion;

/*
 * wcfdw_wide_delete_cells
 *		Deletes every version of the row's cells in the columns del marks (all
 *		when del is NULL), as a transaction deletes what it sees: what others
 *		commit later stays
 *
 * A DEL_COLUMN (DEL_FAMILY for a 'family:*' column) hides the entries of its
 * column with a lower seq, and seqs come at commit: a DELETE that committed
 * after a concurrent INSERT of the same rowkey (a blind put, which takes no
 * row lock) hid that INSERT's cells too, where an ordinary table keeps the
 * row the INSERT made.  So the markers are bounded (engine/cell.h): they hide
 * the entries with a seq up to B, the seq up to which the store's newest
 * committed state is whole as of its last refresh, which the row lock made
 * (wcfdw_lock_wide_row, direct.c: what the statement decided to change, the
 * newest committed row under READ COMMITTED); and each version above B that
 * the transaction sees, its own writes (above every committed seq until its
 * commit; those of this statement in b too), gets a version tombstone.  Cells
 * that no column maps stay.
 */
void
wcfdw_wide_delete_cells(WcFdwConverter *conv, WcFdwStore *store, CommandId cid, wc_batch *b,
						const uint8 *row, size_t row_len, const bool *del)
{
	const WcFdwColumns *cols = &conv->cols;
	bool	   *all = NULL;
	wc_slice   *fams,
			   *quals;
	int			nfams,
				nquals;
	wc_scan_opts o;
	wc_key_range range;
	wc_scan    *scan = NULL;
	WcFdwOwnVersion *own = NULL;
	int			nown = 0,
				maxown = 0;
	uint64		bound;
	wc_err		err;
	int			rc;
	int			i;

	if (del == NULL)
	{
		all = palloc(sizeof(bool) * Max(cols->nwide, 1));
		for (i = 0; i < cols->nwide; i++)
			all[i] = true;
		del = all;
	}
	wcfdw_wide_scan_cells(cols, del, CurrentMemoryContext, &fams, &nfams, &quals, &nquals);
	if (nfams == 0)
		return;

	/* the row's newest committed versions and the transaction's own, and B */
	wc_scan_opts_init(&o);
	wcfdw_point_range(&range, row, row_len);
	o.ranges = &range;
	o.nranges = 1;
	o.families = fams;
	o.nfamilies = nfams;
	o.quals = quals;
	o.nquals = nquals;
	o.now_ms = wcfdw_timestamptz_to_ms(GetCurrentStatementStartTimestamp());
	wcfdw_store_visible_batches(store, cid + 1, &o);
	for (i = 0; i < o.npending && o.pending[i] != b; i++)
		;
	if (i == o.npending)
	{
		/* b, an UPDATE's deferred batch, holds this statement's earlier writes */
		wc_batch  **pending = palloc(sizeof(wc_batch *) * (o.npending + 1));

		if (o.npending > 0)
			memcpy(pending, o.pending, sizeof(wc_batch *) * o.npending);
		pending[o.npending] = b;
		o.pending = pending;
		o.npending++;
	}
	wc_err_clear(&err);
	rc = wc_scan_open(store->db, &o, &scan, &err);
	if (rc < 0)
		wcfdw_engine_error(ERROR, rc, &err, "scan", store->relname);
	bound = wc_scan_visible_bound(scan);
	PG_TRY();
	{
		wc_cell_view c;

		/* copied: the scan may read the batch the tombstones go to */
		while ((rc = wc_scan_next(scan, &c, &err)) == 1)
		{
			WcFdwOwnVersion *v;

			if (c.seq <= bound || !wcfdw_wide_deleted_cell(cols, del, &c))
				continue;
			if (nown == maxown)
			{
				maxown = Max(8, maxown * 2);
				own = own == NULL ? palloc(sizeof(WcFdwOwnVersion) * maxown) :
					repalloc(own, sizeof(WcFdwOwnVersion) * maxown);
			}
			v = &own[nown++];
			v->family = pnstrdup(c.family, c.family_len);
			v->family_len = c.family_len;
			v->qual = palloc(Max(c.qual_len, 1));
			memcpy(v->qual, c.qual, c.qual_len);
			v->qual_len = c.qual_len;
			v->ts = c.ts;
		}
		if (rc < 0)
			wcfdw_engine_error(ERROR, rc, &err, "scan", store->relname);
	}
	PG_FINALLY();
	{
		wc_scan_close(scan);
	}
	PG_END_TRY();

	for (i = 0; i < nown; i++)
	{
		wc_err_clear(&err);
		wcfdw_wide_check(wc_batch_delete_version(b, own[i].family, own[i].family_len, row, row_len,
												 own[i].qual, own[i].qual_len, own[i].ts, &err),
						 &err, conv->relname);
	}
	for (i = 0; i < cols->nwide; i++)
	{
		const WcFdwWideColumn *w = &cols->wide[i];

		if (!del[i])
			continue;
		wc_err_clear(&err);
		if (w->whole_family)
			wcfdw_wide_check(wc_batch_delete_family_upto(b, w->family, w->family_len,
														 row, row_len, bound, &err),
							 &err, conv->relname);
		else
			wcfdw_wide_check(wc_batch_delete_column_upto(b, w->family, w->family_len,
														 row, row_len, w->qual, w->qual_len,
														 bound, &err),
							 &err, conv->relname);
	}
}

/*
 * wcfdw_wide_delete_replaced
 *		What an UPDATE of the row in slot replaces, deleted before its cells
 *		are written (wcfdw_wide_put_row): the columns in only (NULL: every
 *		column) that are NULL (the cell goes) or map a whole family (its
 *		cells are replaced by the object's)
 */
void
wcfdw_wide_delete_replaced(WcFdwConverter *conv, WcFdwStore *store, CommandId cid, wc_batch *b,
						   TupleTableSlot *slot, const uint8 *row, size_t row_len,
						   const Bitmapset *only)
{
	const WcFdwColumns *cols = &conv->cols;
	bool	   *del = palloc0(sizeof(bool) * Max(cols->nwide, 1));
	bool		any = false;
	int			i;

	slot_getallattrs(slot);
	for (i = 0; i < cols->nwide; i++)
	{
		const WcFdwWideColumn *w = &cols->wide[i];

		if (only != NULL &&
			!bms_is_member(w->attnum - FirstLowInvalidHeapAttributeNumber, only))
			continue;
		del[i] = w->whole_family || slot->tts_isnull[w->attnum - 1];
		any |= del[i];
	}
	if (any)
		wcfdw_wide_delete_cells(conv, store, cid, b, row, row_len, del);
}
