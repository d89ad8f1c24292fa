/*-------------------------------------------------------------------------
 *
 * convert.c
 *		  The columns of a widecol foreign table, and Datum <-> cell bytes
 *
 * Columns are matched by name: rowkey (required), family, qualifier, ts,
 * value.  rowkey and qualifier are text, varchar or bytea; family is text or
 * varchar; ts is bigint (milliseconds since the Unix epoch) or timestamptz
 * (kept to the millisecond); value is text, varchar, bytea, or any type with
 * binary send/receive functions, stored in its binary form.  Text is stored
 * as its bytes in the database encoding and checked when read back.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tupdesc.h"
#include "catalog/pg_type.h"
#include "common/int.h"
#include "port/pg_bswap.h"
#include "datatype/timestamp.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/uuid.h"
#include "utils/pg_locale.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "widecol_fdw.h"

const char *const wcfdw_field_names[WCF_NFIELDS] = {
	"rowkey", "family", "qualifier", "ts", "value"
};

static Datum wcfdw_fixed_key_to_datum(const WcFdwColumn *col, const char *relname,
									 const uint8 *data, size_t len);

/* microseconds between 1970-01-01 and 2000-01-01 */
#define WCFDW_EPOCH_DIFF_US \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY)

static WcFdwRepr
wcfdw_repr_for(WcFdwField field, Oid typid, const char *relname)
{
	Oid			base = getBaseType(typid);
	bool		is_text = (base == TEXTOID || base == VARCHAROID);
	bool		is_bytea = (base == BYTEAOID);
	const char *allowed = NULL;

	switch (field)
	{
		case WCF_ROWKEY:
			if (base == INT2OID || base == INT4OID || base == INT8OID)
				return WCR_INTKEY;
			if (base == UUIDOID)
				return WCR_UUIDKEY;
			/* fall through */
		case WCF_QUALIFIER:
			if (is_text)
				return WCR_TEXT;
			if (is_bytea)
				return WCR_BYTEA;
			allowed = field == WCF_ROWKEY ? "text, varchar, bytea, smallint, integer, bigint or uuid" :
				"text, varchar or bytea";
			break;
		case WCF_FAMILY:
			if (is_text)
				return WCR_TEXT;
			allowed = "text or varchar";
			break;
		case WCF_TS:
			if (base == INT8OID)
				return WCR_INT8;
			if (base == TIMESTAMPTZOID)
				return WCR_TIMESTAMPTZ;
			allowed = "bigint or timestamptz";
			break;
		case WCF_VALUE:
			if (is_text)
				return WCR_TEXT;
			if (is_bytea)
				return WCR_BYTEA;
			return WCR_BINARY;
		default:
			break;
	}
	ereport(ERROR,
			(errcode(ERRCODE_FDW_INVALID_DATA_TYPE),
			 errmsg("column \"%s\" of foreign table \"%s\" has unsupported type %s",
					wcfdw_field_names[field], relname, format_type_be(typid)),
			 errhint("Column \"%s\" must be %s.", wcfdw_field_names[field], allowed)));
	return WCR_NONE;			/* keep compiler quiet */
}

/*
 * wcfdw_field_by_name
 *		The cell field a column of this name is, or -1
 */
int
wcfdw_field_by_name(const char *name)
{
	for (int f = 0; f < WCF_NFIELDS; f++)
		if (strcmp(name, wcfdw_field_names[f]) == 0)
			return f;
	return -1;
}

/*
 * wcfdw_compute_columns
 *		Maps the table's columns onto cell fields; ERROR on a column that is
 *		not a cell field, a missing rowkey, or an unsupported type
 */
static void
wcfdw_compute_columns(Relation rel, WcFdwColumns *cols)
{
	TupleDesc	tupdesc = RelationGetDescr(rel);
	const char *relname = RelationGetRelationName(rel);
	int			i;

	memset(cols, 0, sizeof(*cols));
	wcfdw_wide_get_columns(rel, cols);
	for (i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);
		const char *name = NameStr(att->attname);
		int			f;

		if (att->attisdropped)
			continue;
		/* a wide table: every column but rowkey maps a cell (wide.c) */
		if (cols->wide != NULL && strcmp(name, "rowkey") != 0)
			continue;
		if ((f = wcfdw_field_by_name(name)) < 0)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_INVALID_COLUMN_NAME),
					 errmsg("column \"%s\" of foreign table \"%s\" is not a cell field",
							name, relname),
					 errhint("Columns are matched by name: rowkey, family, qualifier, ts, value.")));
		cols->f[f].attnum = att->attnum;
		cols->f[f].typid = att->atttypid;
		cols->f[f].typmod = att->atttypmod;
		cols->f[f].collid = att->attcollation;
		cols->f[f].repr = wcfdw_repr_for(f, att->atttypid, relname);
		if (cols->f[f].repr == WCR_INTKEY)
			cols->f[f].keylen = get_typlen(getBaseType(att->atttypid));
		else if (cols->f[f].repr == WCR_UUIDKEY)
			cols->f[f].keylen = UUID_LEN;
	}
	if (cols->f[WCF_ROWKEY].attnum == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_COLUMN_NAME_NOT_FOUND),
				 errmsg("foreign table \"%s\" has no column \"rowkey\"", relname),
				 errhint("A widecol_fdw table needs a column rowkey of type text, varchar, bytea, smallint, integer, bigint or uuid.")));
}

/*
 * wcfdw_get_columns
 *		The table's columns as cell fields (wcfdw_compute_columns), from the
 *		backend's cache of converters when it has them
 */
void
wcfdw_get_columns(Relation rel, WcFdwColumns *cols)
{
	WcFdwConverter conv;

	wcfdw_converter_init(&conv, rel);
	*cols = conv.cols;
}

/*
 * wcfdw_column_is_byte_ordered
 *		Does PostgreSQL's order of this column equal the byte order of the
 *		stored bytes?  (bytea, or text under a C collation; bigint and
 *		timestamptz always.)
 */
bool
wcfdw_column_is_byte_ordered(const WcFdwColumn *col)
{
	switch (col->repr)
	{
		case WCR_BYTEA:
		case WCR_INT8:
		case WCR_TIMESTAMPTZ:
		case WCR_INTKEY:
		case WCR_UUIDKEY:
			return true;
		case WCR_TEXT:
			return OidIsValid(col->collid) && lc_collate_is_c(col->collid);
		default:
			return false;
	}
}

/* wide columns in (family, qualifier) order; a whole family sorts before its qualifiers */
static int
wcfdw_wide_order(const void *a, const void *b, void *arg)
{
	const WcFdwWideColumn *wide = arg;
	const WcFdwWideColumn *x = &wide[*(const int *) a];
	const WcFdwWideColumn *y = &wide[*(const int *) b];
	int			c = memcmp(x->family, y->family, Min(x->family_len, y->family_len));

	if (c != 0)
		return c;
	if (x->family_len != y->family_len)
		return x->family_len < y->family_len ? -1 : 1;
	if (x->whole_family != y->whole_family)
		return x->whole_family ? -1 : 1;
	if (x->whole_family)
		return 0;
	c = memcmp(x->qual, y->qual, Min(x->qual_len, y->qual_len));
	if (c != 0)
		return c;
	return x->qual_len < y->qual_len ? -1 : (x->qual_len > y->qual_len ? 1 : 0);
}

/*
 * Lays cols->wide out anew in cxt: the columns, their order by cell
 * (wide_sorted) and their strings in one allocation of cols->wide_bytes,
 * which wcfdw_converter_copy copies with one memcpy.
 */
static void
wcfdw_columns_flatten(WcFdwColumns *cols, MemoryContext cxt)
{
	const WcFdwWideColumn *from = cols->wide;
	WcFdwWideColumn *wide;
	int		   *sorted;
	Size		head = MAXALIGN(sizeof(WcFdwWideColumn) * cols->nwide) +
		MAXALIGN(sizeof(int) * cols->nwide);
	Size		size = head;
	char	   *base,
			   *p;
	int			i;

	if (from == NULL)
		return;
	for (i = 0; i < cols->nwide; i++)
		size += strlen(from[i].name) + strlen(from[i].spec) + from[i].family_len +
			from[i].qual_len + 4;
	base = MemoryContextAlloc(cxt, size);
	wide = (WcFdwWideColumn *) base;
	sorted = (int *) (base + MAXALIGN(sizeof(WcFdwWideColumn) * cols->nwide));
	p = base + head;
	memcpy(wide, from, sizeof(WcFdwWideColumn) * cols->nwide);
#define WCFDW_PUT_STRING(field, len) \
	do { \
		memcpy(p, from[i].field, (len)); \
		p[len] = '\0'; \
		wide[i].field = (void *) p; \
		p += (len) + 1; \
	} while (0)
	for (i = 0; i < cols->nwide; i++)
	{
		WCFDW_PUT_STRING(name, strlen(from[i].name));
		WCFDW_PUT_STRING(spec, strlen(from[i].spec));
		WCFDW_PUT_STRING(family, from[i].family_len);
		if (from[i].qual != NULL)
			WCFDW_PUT_STRING(qual, from[i].qual_len);
		if (wide[i].repr == WCR_BINARY)
		{
			fmgr_info_copy(&wide[i].send, (FmgrInfo *) &from[i].send, cxt);
			fmgr_info_copy(&wide[i].recv, (FmgrInfo *) &from[i].recv, cxt);
		}
		sorted[i] = i;
	}
#undef WCFDW_PUT_STRING
	Assert(p <= base + size);
	qsort_arg(sorted, cols->nwide, sizeof(int), wcfdw_wide_order, wide);
	cols->wide = wide;
	cols->wide_sorted = sorted;
	cols->wide_bytes = size;
}

/*
 * wcfdw_converter_copy
 *		A copy of from in cxt that shares no memory with it
 */
void
wcfdw_converter_copy(const WcFdwConverter *from, WcFdwConverter *to, MemoryContext cxt)
{
	*to = *from;
	to->relname = MemoryContextStrdup(cxt, from->relname);
	if (from->cols.f[WCF_VALUE].repr == WCR_BINARY)
	{
		fmgr_info_copy(&to->send, (FmgrInfo *) &from->send, cxt);
		fmgr_info_copy(&to->recv, (FmgrInfo *) &from->recv, cxt);
	}
	if (from->cols.wide != NULL)
	{
		char	   *old = (char *) from->cols.wide;
		char	   *base = MemoryContextAlloc(cxt, from->cols.wide_bytes);
		ptrdiff_t	d = base - old;
		int			i;

		Assert(from->cols.wide_bytes > 0);
		memcpy(base, old, from->cols.wide_bytes);
		to->cols.wide = (WcFdwWideColumn *) base;
		to->cols.wide_sorted = (int *) ((char *) from->cols.wide_sorted + d);
		for (i = 0; i < to->cols.nwide; i++)
		{
			WcFdwWideColumn *w = &to->cols.wide[i];

			w->name += d;
			w->spec += d;
			w->family += d;
			if (w->qual != NULL)
				w->qual += d;
			if (w->repr == WCR_BINARY)
			{
				/* as fmgr_info_copy: no cached state, memory of cxt */
				w->send.fn_mcxt = cxt;
				w->send.fn_extra = NULL;
				w->recv.fn_mcxt = cxt;
				w->recv.fn_extra = NULL;
			}
		}
	}
}

/*
 * wcfdw_converter_init
 *		Columns plus the I/O functions the executor needs
 *
 * Worked out once per relation and backend (the options cache keeps it,
 * option.c), then copied: every scan and modification starts here.
 */
void
wcfdw_converter_init(WcFdwConverter *conv, Relation rel)
{
	if (wcfdw_converter_cached(rel, conv))
		return;
	memset(conv, 0, sizeof(*conv));
	wcfdw_compute_columns(rel, &conv->cols);
	conv->relname = pstrdup(RelationGetRelationName(rel));
	for (int i = 0; i < conv->cols.nwide; i++)
	{
		WcFdwWideColumn *w = &conv->cols.wide[i];
		Oid			sendfn;
		Oid			recvfn;
		bool		isvarlena;

		if (w->repr != WCR_BINARY)
			continue;
		getTypeBinaryOutputInfo(w->typid, &sendfn, &isvarlena);
		getTypeBinaryInputInfo(w->typid, &recvfn, &w->ioparam);
		fmgr_info(sendfn, &w->send);
		fmgr_info(recvfn, &w->recv);
	}
	if (conv->cols.f[WCF_VALUE].repr == WCR_BINARY)
	{
		Oid			typid = conv->cols.f[WCF_VALUE].typid;
		Oid			sendfn;
		Oid			recvfn;
		bool		isvarlena;

		getTypeBinaryOutputInfo(typid, &sendfn, &isvarlena);
		getTypeBinaryInputInfo(typid, &recvfn, &conv->ioparam);
		fmgr_info(sendfn, &conv->send);
		fmgr_info(recvfn, &conv->recv);
	}
	wcfdw_columns_flatten(&conv->cols, CurrentMemoryContext);
	wcfdw_converter_remember(rel, conv);
}

int64
wcfdw_timestamptz_to_ms(TimestampTz t)
{
	int64		us;

	if (TIMESTAMP_NOT_FINITE(t) || pg_add_s64_overflow(t, WCFDW_EPOCH_DIFF_US, &us))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range for column \"ts\""),
				 errdetail("A cell timestamp must be a finite time.")));
	/* floor division: keep millisecond precision, round toward -infinity */
	if (us >= 0)
		return us / 1000;
	return -((-us + 999) / 1000);
}

int64
wcfdw_now_ms(void)
{
	return wcfdw_timestamptz_to_ms(GetCurrentTimestamp());
}

/*
 * wcfdw_ts_to_datum
 *		A cell timestamp as the ts column's type
 */
Datum
wcfdw_ts_to_datum(WcFdwConverter *conv, int64 ts)
{
	int64		us;

	if (conv->cols.f[WCF_TS].repr == WCR_INT8)
		return Int64GetDatum(ts);
	if (pg_mul_s64_overflow(ts, 1000, &us) ||
		pg_sub_s64_overflow(us, WCFDW_EPOCH_DIFF_US, &us) ||
		!IS_VALID_TIMESTAMP(us))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("cell timestamp %lld of foreign table \"%s\" is out of range for type timestamp with time zone",
						(long long) ts, conv->relname)));
	return TimestampTzGetDatum(us);
}

int64
wcfdw_datum_to_ts(WcFdwConverter *conv, Datum d)
{
	if (conv->cols.f[WCF_TS].repr == WCR_INT8)
		return DatumGetInt64(d);
	return wcfdw_timestamptz_to_ms(DatumGetTimestampTz(d));
}

/*
 * wcfdw_bytes_to_datum
 *		Cell bytes as the column's type, palloc'd in the current context
 */
Datum
wcfdw_bytes_to_datum(WcFdwConverter *conv, WcFdwField field, const uint8 *data, size_t len)
{
	WcFdwColumn *col = &conv->cols.f[field];

	if (col->repr == WCR_INTKEY || col->repr == WCR_UUIDKEY)
		return wcfdw_fixed_key_to_datum(col, conv->relname, data, len);
	if (col->repr == WCR_NONE || col->repr == WCR_INT8 || col->repr == WCR_TIMESTAMPTZ)
		elog(ERROR, "unexpected representation %d of column %s", col->repr,
			 wcfdw_field_names[field]);
	return wcfdw_value_from_bytes(col->repr, col->typid, col->typmod, &conv->recv,
								  conv->ioparam, conv->relname, wcfdw_field_names[field],
								  data, len);
}

/*
 * wcfdw_int_datum_value
 *		A smallint, int or bigint Datum (of a type width bytes wide) as int64
 */
int64
wcfdw_int_datum_value(Datum d, int width)
{
	switch (width)
	{
		case 2:
			return DatumGetInt16(d);
		case 4:
			return DatumGetInt32(d);
		default:
			return DatumGetInt64(d);
	}
}

/*
 * wcfdw_intkey_encode
 *		The keylen bytes an integer rowkey v is stored as, into buf (8 bytes):
 *		big-endian with the sign bit flipped, as Apache Phoenix stores its
 *		SMALLINT, INTEGER and BIGINT keys, so that the bytes sort as the
 *		numbers (-1 before 0 before 1); returns keylen
 */
size_t
wcfdw_intkey_encode(int keylen, int64 v, uint8 *buf)
{
	uint64		u = (uint64) v;
	int			i;

	u ^= (uint64) 1 << (keylen * 8 - 1);
	for (i = keylen - 1; i >= 0; i--)
	{
		buf[i] = (uint8) (u & 0xff);
		u >>= 8;
	}
	return (size_t) keylen;
}

/*
 * wcfdw_fixed_key_to_datum
 *		The stored bytes of an integer or uuid rowkey as its column's Datum;
 *		bytes of another length (a store another table of another rowkey type
 *		wrote) are an error
 */
static Datum
wcfdw_fixed_key_to_datum(const WcFdwColumn *col, const char *relname, const uint8 *data, size_t len)
{
	uint64		u = 0;
	size_t		i;

	if (len != (size_t) col->keylen)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("rowkey of %zu bytes in foreign table \"%s\" is not a key of type %s",
						len, relname, format_type_be(col->typid)),
				 errdetail("A rowkey of type %s is stored in %d bytes.", format_type_be(col->typid),
						   col->keylen),
				 errhint("Tables sharing a store must declare the same rowkey type (or bytea).")));
	if (col->repr == WCR_UUIDKEY)
	{
		pg_uuid_t  *uuid = palloc(sizeof(pg_uuid_t));

		memcpy(uuid->data, data, UUID_LEN);
		return UUIDPGetDatum(uuid);
	}
	for (i = 0; i < len; i++)
		u = (u << 8) | data[i];
	u ^= (uint64) 1 << (len * 8 - 1);
	switch (len)
	{
		case 2:
			return Int16GetDatum((int16) (uint16) u);
		case 4:
			return Int32GetDatum((int32) (uint32) u);
		default:
			return Int64GetDatum((int64) u);
	}
}

/*
 * wcfdw_value_repr
 *		How a value of type typid is stored: text, bytea, or the binary form
 */
WcFdwRepr
wcfdw_value_repr(Oid typid)
{
	Oid			base = getBaseType(typid);

	if (base == TEXTOID || base == VARCHAROID)
		return WCR_TEXT;
	if (base == BYTEAOID)
		return WCR_BYTEA;
	return WCR_BINARY;
}

/* The unsigned integer of 4 or 8 big-endian bytes, as a receive function reads it. */
static inline uint32
wcfdw_get_be32(const uint8 *p)
{
	uint32		v;

	memcpy(&v, p, 4);
	return pg_ntoh32(v);
}

static inline uint64
wcfdw_get_be64(const uint8 *p)
{
	uint64		v;

	memcpy(&v, p, 8);
	return pg_ntoh64(v);
}

/*
 * wcfdw_binary_size
 *		The size of every binary (send/receive) form of a built-in type of
 *		fixed size, or 0 (a type whose forms vary, or that we do not know)
 */
static int
wcfdw_binary_size(Oid typid)
{
	switch (typid)
	{
		case BOOLOID:
		case CHAROID:
			return 1;
		case INT2OID:
			return 2;
		case INT4OID:
		case OIDOID:
		case FLOAT4OID:
		case DATEOID:
			return 4;
		case INT8OID:
		case FLOAT8OID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case CASHOID:
			return 8;
		case TIMETZOID:
			return 12;
		case INTERVALOID:
		case UUIDOID:
			return 16;
		default:
			return 0;
	}
}

/* The column whose stored value a receive function reads, for its errors' CONTEXT. */
typedef struct WcFdwValueContext
{
	const char *relname;
	const char *colname;
} WcFdwValueContext;

static void
wcfdw_value_context(void *arg)
{
	WcFdwValueContext *vc = arg;

	if (vc->relname != NULL && vc->colname != NULL)
		errcontext("reading a stored value of column \"%s\" of foreign table \"%s\"",
				   vc->colname, vc->relname);
}

/* Pushes cb, naming column colname of relname (vc), onto the error context stack. */
static void
wcfdw_push_value_context(ErrorContextCallback *cb, WcFdwValueContext *vc,
						 const char *relname, const char *colname)
{
	vc->relname = relname;
	vc->colname = colname;
	cb->callback = wcfdw_value_context;
	cb->arg = vc;
	cb->previous = error_context_stack;
	error_context_stack = cb;
}

/* ERROR: bytes that are not a binary form of typid (22P03), why in detail */
static void
wcfdw_bad_binary(Oid typid, const char *relname, const char *colname, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
			 errmsg("a value of column \"%s\" of foreign table \"%s\" is not of type %s",
					colname, relname, format_type_be(typid)),
			 errdetail_internal("%s", detail),
			 errhint("Cells are read in their type's binary form (an integer's 4 bytes, big-endian); "
					 "a cell written as text is read by a text column.")));
}

/*
 * A type's binary form is what its send function writes for a client, and a
 * text inside it (bpchar, json, jsonb, xml, an enum's label, the elements of a
 * text[] or a record's text fields) is converted to the session's
 * client_encoding (pq_sendtext) and back by the receive function
 * (pq_getmsgtext).  Stored bytes must not depend on the session that wrote
 * them, nor a value read on the session that reads it: both calls run with
 * no conversion (the client encoding set to the database's, then back) when
 * the session's differs.  wcfdw_no_conversion returns what to give back to
 * wcfdw_restore_conversion, -1 when nothing was changed.
 */
static int
wcfdw_no_conversion(void)
{
	int			client = pg_get_client_encoding();

	if (client == GetDatabaseEncoding())
		return -1;
	if (SetClientEncoding(GetDatabaseEncoding()) < 0)
		elog(ERROR, "could not turn off the client encoding's conversion");
	return client;
}

static void
wcfdw_restore_conversion(int client)
{
	/* the session's conversion is cached since it was set: this finds it */
	if (client >= 0 && SetClientEncoding(client) < 0)
		elog(ERROR, "could not restore client encoding \"%s\"", pg_encoding_to_char(client));
}

/*
 * wcfdw_value_from_bytes
 *		Value bytes (a tall table's value column, a wide table's cell) as a
 *		Datum of typid, palloc'd in the current context; recv and ioparam
 *		for WCR_BINARY.  Bytes that are no binary form of the type are 22P03,
 *		naming colname: also where the receive function would say 08P01 (a
 *		protocol violation, which a stored value is not) or XX000.
 */
Datum
wcfdw_value_from_bytes(WcFdwRepr repr, Oid typid, int32 typmod, FmgrInfo *recv,
					   Oid ioparam, const char *relname, const char *colname,
					   const uint8 *data, size_t len)
{
	switch (repr)
	{
		case WCR_TEXT:
			if (!pg_verifymbstr((const char *) data, (int) len, true))
			{
				WcFdwValueContext vc;
				ErrorContextCallback cb;

				/* PostgreSQL's own words for the bad bytes, naming the column */
				wcfdw_push_value_context(&cb, &vc, relname, colname);
				(void) pg_verifymbstr((const char *) data, (int) len, false);
				error_context_stack = cb.previous;
			}
			return PointerGetDatum(cstring_to_text_with_len((const char *) data, (int) len));
		case WCR_BYTEA:
			{
				bytea	   *b = (bytea *) palloc(len + VARHDRSZ);

				SET_VARSIZE(b, len + VARHDRSZ);
				memcpy(VARDATA(b), data, len);
				return PointerGetDatum(b);
			}
		case WCR_BINARY:
			{
				StringInfoData buf;
				Datum		result = (Datum) 0;
				MemoryContext cxt = CurrentMemoryContext;
				int			size;
				int			client;

				if ((size = wcfdw_binary_size(typid)) != 0 && len != (size_t) size)
					wcfdw_bad_binary(typid, relname, colname,
									 psprintf("Its length is %zu; every binary value of type %s is %d bytes long.",
											  len, format_type_be(typid), size));

				/*
				 * The fixed-size types whose receive function takes any
				 * bytes of their size (checked above), decoded here as it
				 * would: no copy, no call (a scan decodes a value a cell).
				 */
				switch (typid)
				{
					case INT2OID:
						return Int16GetDatum((int16) ((data[0] << 8) | data[1]));
					case INT4OID:
						return Int32GetDatum((int32) wcfdw_get_be32(data));
					case OIDOID:
						return ObjectIdGetDatum((Oid) wcfdw_get_be32(data));
					case INT8OID:
						return Int64GetDatum((int64) wcfdw_get_be64(data));
					case BOOLOID:
						return BoolGetDatum(data[0] != 0);
					case FLOAT4OID:
						{
							uint32		v = wcfdw_get_be32(data);
							float4		f;

							memcpy(&f, &v, 4);
							return Float4GetDatum(f);
						}
					case FLOAT8OID:
						{
							uint64		v = wcfdw_get_be64(data);
							float8		f;

							memcpy(&f, &v, 8);
							return Float8GetDatum(f);
						}
					case BPCHAROID:
						{
							/*
							 * What bpcharrecv gives for the value a char(n)
							 * column stores: ASCII (valid in every server
							 * encoding), n characters long, or any length
							 * with no n.  It would count the characters one
							 * call each (14% of a scan of char(120) cells).
							 */
							uint8		high = 0;
							bool		nul = false;

							for (size_t i = 0; i < len; i++)
							{
								high |= data[i];
								nul |= data[i] == 0;
							}
							if (high < 0x80 && !nul &&
								(typmod < (int32) VARHDRSZ || len == (size_t) (typmod - VARHDRSZ)))
								return PointerGetDatum(cstring_to_text_with_len((const char *) data,
																				(int) len));
						}
						break;
					case TIMESTAMPOID:
					case TIMESTAMPTZOID:
						/* the receive function's range check; no typmod to round to */
						if (typmod < 0)
						{
							Timestamp	t = (Timestamp) wcfdw_get_be64(data);

							if (TIMESTAMP_NOT_FINITE(t) || IS_VALID_TIMESTAMP(t))
								return TimestampGetDatum(t);
						}
						break;
				}
				buf.data = palloc(len + 1);
				memcpy(buf.data, data, len);
				buf.data[len] = '\0';
				buf.len = (int) len;
				buf.maxlen = (int) len + 1;
				buf.cursor = 0;
				/*
				 * A receive function reading past the end says 08P01, made
				 * for a client's message, and some refuse what they cannot
				 * decode with elog (XX000, jsonb's version byte): said of a
				 * stored value, both are 22P03.
				 */
				client = wcfdw_no_conversion();
				PG_TRY();
				{
					WcFdwValueContext vc;
					ErrorContextCallback cb;

					/* what else it refuses (an enum's label renamed since) names the column */
					wcfdw_push_value_context(&cb, &vc, relname, colname);
					result = ReceiveFunctionCall(recv, &buf, ioparam, typmod);
					error_context_stack = cb.previous;
				}
				PG_CATCH();
				{
					ErrorData  *e;

					wcfdw_restore_conversion(client);
					MemoryContextSwitchTo(cxt);
					e = CopyErrorData();
					if (e->sqlerrcode != ERRCODE_PROTOCOL_VIOLATION &&
						e->sqlerrcode != ERRCODE_INTERNAL_ERROR)
						PG_RE_THROW();
					FlushErrorState();
					wcfdw_bad_binary(typid, relname, colname,
									 psprintf("Type %s's receive function refused it: %s.",
											  format_type_be(typid), e->message));
				}
				PG_END_TRY();
				wcfdw_restore_conversion(client);
				if (buf.cursor != buf.len)
					wcfdw_bad_binary(typid, relname, colname,
									 psprintf("%d of its %d bytes were not used by type %s.",
											  buf.len - buf.cursor, buf.len, format_type_be(typid)));
				return result;
			}
		default:
			elog(ERROR, "unexpected value representation %d", repr);
	}
	return (Datum) 0;			/* keep compiler quiet */
}

/*
 * wcfdw_datum_to_bytes
 *		The bytes a non-null Datum is stored as; may palloc
 */
void
wcfdw_datum_to_bytes(WcFdwConverter *conv, WcFdwField field, Datum d,
					 const uint8 **data, size_t *len)
{
	WcFdwColumn *col = &conv->cols.f[field];

	if (col->repr == WCR_INTKEY)
	{
		uint8	   *buf = palloc(8);

		*len = wcfdw_intkey_encode(col->keylen, wcfdw_int_datum_value(d, col->keylen), buf);
		*data = buf;
		return;
	}
	if (col->repr == WCR_UUIDKEY)
	{
		*data = DatumGetUUIDP(d)->data;
		*len = UUID_LEN;
		return;
	}
	if (col->repr != WCR_TEXT && col->repr != WCR_BYTEA && col->repr != WCR_BINARY)
		elog(ERROR, "unexpected representation %d of column %s", col->repr,
			 wcfdw_field_names[field]);
	wcfdw_value_to_bytes(col->repr, &conv->send, d, data, len);
}

/*
 * wcfdw_value_to_bytes
 *		The bytes a non-null value is stored as; may palloc
 */
void
wcfdw_value_to_bytes(WcFdwRepr repr, FmgrInfo *send, Datum d, const uint8 **data, size_t *len)
{
	switch (repr)
	{
		case WCR_TEXT:
		case WCR_BYTEA:
			{
				struct varlena *v = PG_DETOAST_DATUM_PACKED(d);

				*data = (const uint8 *) VARDATA_ANY(v);
				*len = VARSIZE_ANY_EXHDR(v);
				return;
			}
		case WCR_BINARY:
			{
				int			client = wcfdw_no_conversion();
				bytea	   *b;

				PG_TRY();
				{
					b = SendFunctionCall(send, d);
				}
				PG_FINALLY();
				{
					wcfdw_restore_conversion(client);
				}
				PG_END_TRY();
				*data = (const uint8 *) VARDATA(b);
				*len = VARSIZE(b) - VARHDRSZ;
				return;
			}
		default:
			elog(ERROR, "unexpected value representation %d", repr);
	}
}
