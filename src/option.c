/*-------------------------------------------------------------------------
 *
 * option.c
 *		  Options of widecol_fdw: the validator and the parsed table options
 *
 * Foreign table options:
 *		families		required; comma-separated family names
 *		max_versions	newest N versions of a cell kept (default 3, 0 = all)
 *		ttl				an interval; versions older than now - ttl are gone
 *		compression		lz4 (default), zstd or none
 *		compression_level
 *						zstd's level, 1..19 (default 3); only where zstd is
 *						the compression
 *		logged			true (default): every change goes to PostgreSQL's WAL
 *						(wal.c); false: an unlogged table
 *		"<family>.max_versions", "<family>.ttl", "<family>.compression",
 *		"<family>.compression_level"
 *						the same for one family; the table-level ones are the
 *						defaults of every family
 *		store			the name of another widecol table whose store this
 *						one shows (a tall and a wide table over one store);
 *						families and retention are then that table's, and
 *						none of the options above may be given
 * Column options:
 *		cell			'family:qualifier' or 'family:*': the column maps a
 *						cell, the table is a wide table (wide.c)
 * Server options:
 *		directory		stores live in <directory>/<dboid>_<reloid> instead of
 *						the database directory (superuser only)
 *	table:
 *		store_directory	the store is <directory>/<this name> (superuser only;
 *						set by IMPORT FOREIGN SCHEMA, import.c)
 * GUCs:
 *		widecol_fdw.bulk_write_size
 *						a transaction writing this much to a table commits
 *						it as sorted files (engine/ingest.h)
 *		widecol_fdw.max_row_locks
 *						row locks a transaction takes in one table before it
 *						locks them all at once (scan.c)
 *
 * What a value must look like is checked in optparse.c, which has no
 * PostgreSQL dependency (engine/fuzz/fuzz_options.c fuzzes it); this file
 * reads intervals and turns its results into errors.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "access/reloptions.h"
#include "catalog/pg_foreign_data_wrapper.h"
#include "catalog/pg_foreign_server.h"
#include "catalog/namespace.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_foreign_table.h"
#include "catalog/pg_user_mapping.h"
#include "commands/defrem.h"
#include "common/relpath.h"
#include "datatype/timestamp.h"
#include "foreign/foreign.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/regproc.h"

#include "optparse.h"
#include "widecol_fdw.h"

PG_FUNCTION_INFO_V1(widecol_fdw_validator);

/* widecol_fdw.bulk_write_size, in kB: -1 = never, 0 = every write */
static int	wcfdw_bulk_write_kb = 4096;
int			wcfdw_max_remembered_commits = 100000;
int			wcfdw_session_memory_kb = 65536;
int			wcfdw_max_row_locks = 1000;
int			wcfdw_row_cache_kb = 8192;

#define WCFDW_DEFAULT_MAX_VERSIONS 3

static bool wcfdw_split_family_option(const char *name, char **family, const char **option);

static const char *const table_options[] = {"families", "max_versions", "ttl", "compression", "compression_level", "logged", "store", "store_directory", NULL};

/*
 * wcfdw_parse_families
 *		Splits a families option into trimmed names; ERROR on a bad list
 *
 * The names point into one palloc'd copy of value.
 */
static List *
wcfdw_parse_families(const char *value)
{
	char	   *copy = pstrdup(value);
	char	  **names = palloc(sizeof(char *) * wcfdw_optparse_families_capacity(copy));
	const char *bad;
	int			n;
	WcFdwOptResult rc;
	List	   *list = NIL;
	int			i;

	rc = wcfdw_optparse_families(copy, names, &n, &bad);
	if (rc == WCFDW_OPT_FAMILY_EMPTY)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"families\": \"%s\"", value),
				 errdetail("A family name must not be empty."),
				 errhint("Give a comma-separated list such as 'contents,anchor'.")));
	if (rc == WCFDW_OPT_FAMILY_TOO_LONG)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"families\""),
				 errdetail("Family name \"%s\" is longer than %d bytes.", bad, WC_MAX_FAMILY)));
	if (rc == WCFDW_OPT_FAMILY_TWICE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"families\": \"%s\"", value),
				 errdetail("Family \"%s\" is listed twice.", bad)));
	if (rc == WCFDW_OPT_TOO_MANY_FAMILIES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"families\""),
				 errdetail("A table may have at most %d families.", WC_MAX_FAMILIES)));
	Assert(rc == WCFDW_OPT_OK);

	for (i = 0; i < n; i++)
		list = lappend(list, names[i]);
	pfree(names);
	return list;
}

static uint32
wcfdw_parse_max_versions(const char *name, const char *value)
{
	uint32_t	n;

	if (wcfdw_optparse_max_versions(value, &n) != WCFDW_OPT_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"%s\": \"%s\"", name, value),
				 errhint("Give a whole number of versions to keep, or 0 to keep all of them.")));
	return n;
}

/*
 * wcfdw_parse_ttl
 *		An interval in milliseconds; 0 means no ttl
 *
 * Months and years are refused: they have no fixed length in milliseconds.
 */
static int64
wcfdw_parse_ttl(const char *name, const char *value)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	Interval   *volatile iv = NULL;
	int64_t		ms = 0;
	WcFdwOptResult rc;

	PG_TRY();
	{
		iv = DatumGetIntervalP(DirectFunctionCall3(interval_in,
												   CStringGetDatum(value),
												   ObjectIdGetDatum(InvalidOid),
												   Int32GetDatum(-1)));
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(oldcxt);
		FlushErrorState();
		iv = NULL;
	}
	PG_END_TRY();

	if (iv == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"%s\": \"%s\"", name, value),
				 errhint("Give an interval such as '7 days' or '36 hours'.")));
	rc = wcfdw_optparse_ttl_ms(iv->month, iv->day, iv->time, &ms);
	if (rc == WCFDW_OPT_TTL_MONTHS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"%s\": \"%s\"", name, value),
				 errdetail("Months and years have no fixed length."),
				 errhint("Give the ttl in days or smaller units, such as '30 days'.")));
	if (rc == WCFDW_OPT_TTL_RANGE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"%s\": \"%s\"", name, value),
				 errdetail("The interval is out of range.")));
	if (rc == WCFDW_OPT_TTL_TOO_SMALL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"%s\": \"%s\"", name, value),
				 errdetail("A ttl must be at least 1 millisecond, or 0 for none.")));
	Assert(rc == WCFDW_OPT_OK);
	return ms;
}

static int
wcfdw_parse_compression(const char *name, const char *value)
{
	int			compression = WC_COMPRESS_NONE;

	if (wcfdw_optparse_compression(value, &compression) != WCFDW_OPT_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"%s\": \"%s\"", name, value),
				 errhint("Valid values are \"lz4\", \"zstd\" and \"none\".")));
	return compression;
}

static int
wcfdw_parse_compression_level(const char *name, const char *value)
{
	int			level = WC_ZSTD_LEVEL_DEFAULT;

	if (wcfdw_optparse_compression_level(value, &level) != WCFDW_OPT_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"%s\": \"%s\"", name, value),
				 errhint("A zstd level is a whole number from %d (fastest) to %d (smallest); the default is %d.",
						 WC_ZSTD_LEVEL_MIN, WC_ZSTD_LEVEL_MAX, WC_ZSTD_LEVEL_DEFAULT)));
	return level;
}

/*
 * wcfdw_check_levels
 *		A compression_level option must set the level of some zstd family
 *
 * options is a table's whole (valid) list.  A level where no family is
 * compressed with zstd would change nothing, which is most likely a mistake
 * (a level for lz4, or for the wrong family): an ERROR says so.  The check is
 * of the resulting list, so one ALTER may switch the compression and drop the
 * level together.
 */
static void
wcfdw_check_levels(List *options, List *families)
{
	int			table_compression = WC_COMPRESS_LZ4;
	bool		table_level = false;
	bool		any_zstd_default = false;
	ListCell   *lc;
	ListCell   *lf;

	foreach(lc, options)
	{
		DefElem    *def = (DefElem *) lfirst(lc);

		if (strcmp(def->defname, "compression") == 0)
			table_compression = wcfdw_parse_compression(def->defname, defGetString(def));
		else if (strcmp(def->defname, "compression_level") == 0)
			table_level = true;
	}
	foreach(lf, families)
	{
		const char *name = (const char *) lfirst(lf);
		int			compression = table_compression;
		DefElem    *level = NULL;

		foreach(lc, options)
		{
			DefElem    *def = (DefElem *) lfirst(lc);
			char	   *fam;
			const char *opt;

			if (!wcfdw_split_family_option(def->defname, &fam, &opt) || strcmp(fam, name) != 0)
				continue;
			if (strcmp(opt, "compression") == 0)
				compression = wcfdw_parse_compression(def->defname, defGetString(def));
			else if (strcmp(opt, "compression_level") == 0)
				level = def;
		}
		if (level != NULL && compression != WC_COMPRESS_ZSTD)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("option \"%s\" needs zstd compression", level->defname),
					 errdetail("Family \"%s\" is compressed with %s.", name,
							   compression == WC_COMPRESS_LZ4 ? "lz4" : "none"),
					 errhint("Set \"%s.compression\" or compression to 'zstd', or drop the option.",
							 name)));
		if (level == NULL && compression == WC_COMPRESS_ZSTD)
			any_zstd_default = true;
	}
	if (table_level && !any_zstd_default)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("option \"compression_level\" needs zstd compression"),
				 errdetail("No family without a level of its own is compressed with zstd."),
				 errhint("Set compression to 'zstd' (for the table or a family), or drop the option.")));
}

/*
 * wcfdw_split_family_option
 *		"fam.opt" -> (fam, opt) when opt is a per-family option name; fam palloc'd
 */
static bool
wcfdw_split_family_option(const char *name, char **family, const char **option)
{
	size_t		len;

	if (!wcfdw_optparse_family_option(name, &len, option))
		return false;
	*family = pnstrdup(name, len);
	return true;
}

/*
 * wcfdw_parse_logged
 *		The value of option "logged"; ERROR on anything but a boolean
 */
static bool
wcfdw_parse_logged(const char *value)
{
	bool		result;

	if (!parse_bool(value, &result))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"logged\": \"%s\"", value),
				 errhint("Use true (changes go to PostgreSQL's WAL) or false (an unlogged table).")));
	return result;
}

static void
wcfdw_invalid_option(const char *name, Oid catalog)
{
	const char *valid;

	if (catalog == ForeignTableRelationId)
		valid = "families, max_versions, ttl, compression, compression_level, logged, store, store_directory, "
			"\"<family>.max_versions\", \"<family>.ttl\", \"<family>.compression\", "
			"\"<family>.compression_level\"";
	else if (catalog == AttributeRelationId)
		valid = "cell";
	else if (catalog == ForeignServerRelationId)
		valid = "directory";
	else
		valid = NULL;

	if (valid)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
				 errmsg("invalid option \"%s\"", name),
				 errhint("Valid options in this context are: %s.", valid)));
	ereport(ERROR,
			(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
			 errmsg("invalid option \"%s\"", name),
			 errhint("There are no valid options in this context.")));
}

/*
 * widecol_fdw_validator
 *		Checks the options of the FDW, a server, a user mapping, a table or a column
 */
Datum
widecol_fdw_validator(PG_FUNCTION_ARGS)
{
	List	   *options = untransformRelOptions(PG_GETARG_DATUM(0));
	Oid			catalog = PG_GETARG_OID(1);
	List	   *families = NIL;
	bool		have_families = false;
	DefElem    *store = NULL;
	ListCell   *lc;
	ListCell   *lc2;

	/* first pass: option names, and the families list */
	foreach(lc, options)
	{
		DefElem    *def = (DefElem *) lfirst(lc);
		char	   *fam;
		const char *opt;
		bool		ok = false;
		int			i;

		if (catalog == ForeignTableRelationId)
		{
			for (i = 0; table_options[i]; i++)
				if (strcmp(def->defname, table_options[i]) == 0)
					ok = true;
			if (!ok && wcfdw_split_family_option(def->defname, &fam, &opt))
				ok = true;
			if (strcmp(def->defname, "families") == 0)
			{
				families = wcfdw_parse_families(defGetString(def));
				/*
				 * A wide column's cell 'family:qualifier' splits at the first
				 * ':', so such a family could never be mapped (and HBase
				 * forbids it).  Checked here only: a table defined before
				 * this check keeps working as a tall table.
				 */
				foreach(lc2, families)
					if (strchr(lfirst(lc2), ':') != NULL)
						ereport(ERROR,
								(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
								 errmsg("invalid value for option \"families\": \"%s\"",
										defGetString(def)),
								 errdetail("Family name \"%s\" contains ':', which separates the family from the qualifier in a column's cell option.",
										   (char *) lfirst(lc2))));
				have_families = true;
			}
			if (strcmp(def->defname, "store_directory") == 0)
			{
				const char *name = defGetString(def);

				/* it names files: as for the server's directory */
				if (!superuser())
					ereport(ERROR,
							(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
							 errmsg("permission denied to set option \"store_directory\""),
							 errhint("Only a superuser may choose where a store is kept.")));
				if (name[0] == '\0' || strchr(name, '/') != NULL ||
					strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("invalid value for option \"store_directory\": \"%s\"", name),
							 errhint("Give the name of a directory under the server's directory, without \"/\".")));
			}
			if (strcmp(def->defname, "store") == 0)
			{
				/* a table name, maybe schema-qualified: 42602 if not one */
				(void) stringToQualifiedNameList(defGetString(def));
				store = def;
			}
		}
		else if (catalog == AttributeRelationId)
		{
			if (strcmp(def->defname, "cell") == 0)
			{
				char	   *fam;
				char	   *qual;
				bool		whole;

				wcfdw_wide_parse_spec(defGetString(def), &fam, &qual, &whole);
				ok = true;
			}
		}
		else if (catalog == ForeignServerRelationId)
		{
			if (strcmp(def->defname, "directory") == 0)
			{
				const char *dir = defGetString(def);

				if (!superuser())
					ereport(ERROR,
							(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
							 errmsg("permission denied to set option \"directory\""),
							 errhint("Only a superuser may set where stores are kept.")));
				if (!is_absolute_path(dir))
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("invalid value for option \"directory\": \"%s\"", dir),
							 errhint("Give an absolute path.")));
				ok = true;
			}
		}
		if (!ok)
			wcfdw_invalid_option(def->defname, catalog);
	}

	if (catalog == ForeignTableRelationId && store != NULL)
	{
		/* the store's own table has the settings of the store */
		foreach(lc, options)
		{
			DefElem    *def = (DefElem *) lfirst(lc);

			if (def != store)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
						 errmsg("option \"%s\" cannot be set on a table with option \"store\"",
								def->defname),
						 errdetail("The table shows the store of table \"%s\", whose options are those of the store.",
								   defGetString(store)),
						 errhint("Set it on table \"%s\".", defGetString(store))));
		}
		PG_RETURN_VOID();
	}
	if (catalog == ForeignTableRelationId && !have_families)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("option \"families\" is required for a widecol_fdw foreign table"),
				 errhint("Add OPTIONS (families 'f1,f2') naming the column families, or OPTIONS (store 'table') to show the store of another widecol table.")));

	/* second pass: values */
	foreach(lc, options)
	{
		DefElem    *def = (DefElem *) lfirst(lc);
		char	   *fam = NULL;
		const char *opt = def->defname;

		if (catalog != ForeignTableRelationId || strcmp(opt, "families") == 0 ||
			strcmp(opt, "store_directory") == 0)
			continue;
		if (strcmp(opt, "logged") == 0)
		{
			(void) wcfdw_parse_logged(defGetString(def));
			continue;
		}
		if (strcmp(opt, "max_versions") != 0 && strcmp(opt, "ttl") != 0 &&
			strcmp(opt, "compression") != 0 && strcmp(opt, "compression_level") != 0)
		{
			ListCell   *lf;
			bool		found = false;
			StringInfoData declared;

			wcfdw_split_family_option(def->defname, &fam, &opt);
			initStringInfo(&declared);
			foreach(lf, families)
			{
				if (strcmp((char *) lfirst(lf), fam) == 0)
					found = true;
				appendStringInfo(&declared, "%s%s", declared.len ? ", " : "",
								 (char *) lfirst(lf));
			}
			if (!found)
				ereport(ERROR,
						(errcode(ERRCODE_FDW_INVALID_OPTION_NAME),
						 errmsg("invalid option \"%s\"", def->defname),
						 errdetail("\"%s\" is not a family of the table.", fam),
						 errhint("The families of the table are: %s.", declared.data)));
		}
		if (strcmp(opt, "max_versions") == 0)
			(void) wcfdw_parse_max_versions(def->defname, defGetString(def));
		else if (strcmp(opt, "ttl") == 0)
			(void) wcfdw_parse_ttl(def->defname, defGetString(def));
		else if (strcmp(opt, "compression_level") == 0)
			(void) wcfdw_parse_compression_level(def->defname, defGetString(def));
		else
			(void) wcfdw_parse_compression(def->defname, defGetString(def));
	}
	if (catalog == ForeignTableRelationId)
		wcfdw_check_levels(options, families);

	PG_RETURN_VOID();
}

/* ---------------------------------------------------------------- the options cache */

/*
 * A table's options and its columns' cell options, parsed, by relid, and
 * the converter wcfdw_converter_init works out from them (the columns'
 * mapping, their I/O functions, a wide table's cells in order): every query
 * used to look them up and parse them several times (planning, each scan's
 * start, the store, the column mapping of a wide table), and to work the
 * mapping out at every execution.  A relation's invalidation drops its
 * entry (a column's options, type or name, a rename); a change of any
 * foreign table's or server's options, or a reset of the whole relcache,
 * empties the cache.  A table whose option store names another one is not
 * cached (nor a wide one's converter): the name is looked up at every use
 * (search_path).  Users get copies: an invalidation can come with any
 * catalog access, during a scan too.
 */
typedef struct WcFdwOptCache
{
	Oid			relid;			/* hash key */
	bool		have_topts;
	WcFdwTableOptions topts;	/* in CacheMemoryContext */
	bool		have_specs;
	int			natts;
	char	  **specs;			/* cell option by attribute index, or NULL */
	bool		have_conv;
	int			conv_natts;
	WcFdwConverter conv;		/* wcfdw_converter_init's work (convert.c) */
} WcFdwOptCache;

static HTAB *wcfdw_opt_cache = NULL;

/* Frees e's allocations and removes it. */
static void
wcfdw_opt_cache_forget(WcFdwOptCache *e)
{
	int			i;

	if (e->have_topts)
	{
		for (i = 0; i < e->topts.nfamilies; i++)
			pfree((char *) e->topts.families[i].name);
		pfree(e->topts.families);
		if (e->topts.directory)
			pfree(e->topts.directory);
		if (e->topts.store_dir)
			pfree(e->topts.store_dir);
	}
	if (e->have_specs)
	{
		for (i = 0; i < e->natts; i++)
			if (e->specs[i])
				pfree(e->specs[i]);
		pfree(e->specs);
	}
	if (e->have_conv)
	{
		pfree((char *) e->conv.relname);
		if (e->conv.cols.wide)
			pfree(e->conv.cols.wide);
	}
	hash_search(wcfdw_opt_cache, &e->relid, HASH_REMOVE, NULL);
}

/* relid's entry, or every entry when relid is invalid */
static void
wcfdw_opt_cache_reset(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS seq;
	WcFdwOptCache *e;

	if (wcfdw_opt_cache == NULL)
		return;
	if (OidIsValid(relid))
	{
		e = hash_search(wcfdw_opt_cache, &relid, HASH_FIND, NULL);
		if (e != NULL)
			wcfdw_opt_cache_forget(e);
		return;
	}
	hash_seq_init(&seq, wcfdw_opt_cache);
	while ((e = hash_seq_search(&seq)) != NULL)
		wcfdw_opt_cache_forget(e);
}

static void
wcfdw_opt_cache_syscache_reset(Datum arg, int cacheid, uint32 hashvalue)
{
	wcfdw_opt_cache_reset(arg, InvalidOid);
}

static WcFdwOptCache *
wcfdw_opt_cache_entry(Oid relid)
{
	WcFdwOptCache *e;
	bool		found;

	if (wcfdw_opt_cache == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(WcFdwOptCache);
		ctl.hcxt = CacheMemoryContext;
		wcfdw_opt_cache = hash_create("widecol_fdw options", 64, &ctl,
									  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		CacheRegisterRelcacheCallback(wcfdw_opt_cache_reset, (Datum) 0);
		CacheRegisterSyscacheCallback(FOREIGNTABLEREL, wcfdw_opt_cache_syscache_reset, (Datum) 0);
		CacheRegisterSyscacheCallback(FOREIGNSERVEROID, wcfdw_opt_cache_syscache_reset, (Datum) 0);
	}
	e = hash_search(wcfdw_opt_cache, &relid, HASH_ENTER, &found);
	if (!found)
	{
		e->have_topts = false;
		e->have_specs = false;
		e->have_conv = false;
	}
	return e;
}

/* Copies opts's allocations into cxt. */
static void
wcfdw_copy_table_options(const WcFdwTableOptions *from, WcFdwTableOptions *to, MemoryContext cxt)
{
	int			i;

	*to = *from;
	to->families = MemoryContextAlloc(cxt, sizeof(wc_family_opts) * Max(from->nfamilies, 1));
	for (i = 0; i < from->nfamilies; i++)
	{
		to->families[i] = from->families[i];
		to->families[i].name = MemoryContextStrdup(cxt, from->families[i].name);
	}
	to->directory = from->directory ? MemoryContextStrdup(cxt, from->directory) : NULL;
	to->store_dir = from->store_dir ? MemoryContextStrdup(cxt, from->store_dir) : NULL;
}

static void wcfdw_read_table_options(Oid relid, WcFdwTableOptions *opts);

/*
 * wcfdw_get_table_options
 *		Families with their effective settings, and the server's directory,
 *		allocated in the current memory context
 */
void
wcfdw_get_table_options(Oid relid, WcFdwTableOptions *opts)
{
	WcFdwOptCache *e = wcfdw_opt_cache_entry(relid);

	if (!e->have_topts)
	{
		WcFdwTableOptions fresh;

		wcfdw_read_table_options(relid, &fresh);
		if (fresh.store_relid != relid)
		{
			*opts = fresh;
			return;
		}
		/* the entry may be gone if reading the catalogs processed invalidations */
		e = wcfdw_opt_cache_entry(relid);
		wcfdw_copy_table_options(&fresh, &e->topts, CacheMemoryContext);
		e->have_topts = true;
	}
	wcfdw_copy_table_options(&e->topts, opts, CurrentMemoryContext);
}

/*
 * wcfdw_get_cell_specs
 *		The option cell of each column of rel (by attribute index; NULL for
 *		none, and for dropped columns); false if no column has one
 */
bool
wcfdw_get_cell_specs(Relation rel, char ***specs_out)
{
	TupleDesc	tupdesc = RelationGetDescr(rel);
	Oid			relid = RelationGetRelid(rel);
	WcFdwOptCache *e = wcfdw_opt_cache_entry(relid);
	char	  **specs;
	bool		any = false;
	int			i;

	if (!e->have_specs || e->natts != tupdesc->natts)
	{
		char	  **fresh = palloc0(sizeof(char *) * Max(tupdesc->natts, 1));

		for (i = 0; i < tupdesc->natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(tupdesc, i);
			ListCell   *lc;

			if (att->attisdropped)
				continue;
			foreach(lc, GetForeignColumnOptions(relid, att->attnum))
			{
				DefElem    *def = lfirst(lc);

				if (strcmp(def->defname, "cell") == 0)
					fresh[i] = defGetString(def);
			}
		}
		e = wcfdw_opt_cache_entry(relid);
		if (e->have_specs)
		{
			for (i = 0; i < e->natts; i++)
				if (e->specs[i])
					pfree(e->specs[i]);
			pfree(e->specs);
		}
		e->specs = MemoryContextAllocZero(CacheMemoryContext,
										  sizeof(char *) * Max(tupdesc->natts, 1));
		for (i = 0; i < tupdesc->natts; i++)
			if (fresh[i])
				e->specs[i] = MemoryContextStrdup(CacheMemoryContext, fresh[i]);
		e->natts = tupdesc->natts;
		e->have_specs = true;
	}
	specs = palloc0(sizeof(char *) * Max(tupdesc->natts, 1));
	for (i = 0; i < tupdesc->natts; i++)
		if (e->specs[i])
		{
			specs[i] = pstrdup(e->specs[i]);
			any = true;
		}
	*specs_out = specs;
	return any;
}

/*
 * wcfdw_store_owner_cached
 *		wcfdw_store_owner(relid, false), answered by the cache for a table
 *		whose options it holds (only a table without option store has them
 *		cached)
 */
Oid
wcfdw_store_owner_cached(Oid relid)
{
	WcFdwOptCache *e;

	if (wcfdw_opt_cache != NULL &&
		(e = hash_search(wcfdw_opt_cache, &relid, HASH_FIND, NULL)) != NULL && e->have_topts)
		return relid;
	return wcfdw_store_owner(relid, false);
}

/*
 * wcfdw_converter_cached
 *		Copies rel's converter from the cache into the current memory
 *		context; false if the cache has none
 */
bool
wcfdw_converter_cached(Relation rel, WcFdwConverter *conv)
{
	WcFdwOptCache *e = wcfdw_opt_cache_entry(RelationGetRelid(rel));

	if (!e->have_conv || e->conv_natts != RelationGetDescr(rel)->natts)
		return false;
	wcfdw_converter_copy(&e->conv, conv, CurrentMemoryContext);
	return true;
}

/*
 * wcfdw_converter_remember
 *		Keeps a copy of rel's converter in the cache, unless the cell
 *		options of a wide table name the families of a table its option
 *		store names (looked up by name at every use, as the options are)
 */
void
wcfdw_converter_remember(Relation rel, const WcFdwConverter *conv)
{
	WcFdwOptCache *e = wcfdw_opt_cache_entry(RelationGetRelid(rel));

	if (conv->cols.wide != NULL && !e->have_topts)
		return;
	if (e->have_conv)
	{
		pfree((char *) e->conv.relname);
		if (e->conv.cols.wide)
			pfree(e->conv.cols.wide);
		e->have_conv = false;
	}
	wcfdw_converter_copy(conv, &e->conv, CacheMemoryContext);
	e->conv_natts = RelationGetDescr(rel)->natts;
	e->have_conv = true;
}

/*
 * wcfdw_read_table_options
 *		wcfdw_get_table_options from the catalogs
 */
static void
wcfdw_read_table_options(Oid relid, WcFdwTableOptions *opts)
{
	Oid			owner = wcfdw_store_owner(relid, false);
	ForeignTable *table = GetForeignTable(owner);
	ForeignServer *server = GetForeignServer(table->serverid);
	List	   *names = NIL;
	uint32		max_versions = WCFDW_DEFAULT_MAX_VERSIONS;
	int64		ttl = 0;
	int			compression = WC_COMPRESS_LZ4;
	int			level = WC_ZSTD_LEVEL_DEFAULT;
	ListCell   *lc;
	int			i;

	memset(opts, 0, sizeof(*opts));
	opts->logged = true;
	opts->store_relid = owner;
	foreach(lc, server->options)
	{
		DefElem    *def = (DefElem *) lfirst(lc);

		if (strcmp(def->defname, "directory") == 0)
			opts->directory = pstrdup(defGetString(def));
	}

	foreach(lc, table->options)
	{
		DefElem    *def = (DefElem *) lfirst(lc);

		if (strcmp(def->defname, "families") == 0)
			names = wcfdw_parse_families(defGetString(def));
		else if (strcmp(def->defname, "max_versions") == 0)
			max_versions = wcfdw_parse_max_versions(def->defname, defGetString(def));
		else if (strcmp(def->defname, "ttl") == 0)
			ttl = wcfdw_parse_ttl(def->defname, defGetString(def));
		else if (strcmp(def->defname, "compression") == 0)
			compression = wcfdw_parse_compression(def->defname, defGetString(def));
		else if (strcmp(def->defname, "compression_level") == 0)
			level = wcfdw_parse_compression_level(def->defname, defGetString(def));
		else if (strcmp(def->defname, "logged") == 0)
			opts->logged = wcfdw_parse_logged(defGetString(def));
		else if (strcmp(def->defname, "store_directory") == 0)
			opts->store_dir = pstrdup(defGetString(def));
	}
	if (names == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
				 errmsg("foreign table \"%s\" has no option \"families\"", get_rel_name(owner))));

	opts->nfamilies = list_length(names);
	opts->families = palloc0(sizeof(wc_family_opts) * opts->nfamilies);
	i = 0;
	foreach(lc, names)
	{
		opts->families[i].name = (char *) lfirst(lc);
		opts->families[i].max_versions = max_versions;
		opts->families[i].ttl_ms = ttl;
		opts->families[i].compression = compression;
		opts->families[i].compression_level = level;
		i++;
	}

	foreach(lc, table->options)
	{
		DefElem    *def = (DefElem *) lfirst(lc);
		char	   *fam;
		const char *opt;

		if (!wcfdw_split_family_option(def->defname, &fam, &opt))
			continue;
		i = wcfdw_family_index(opts, fam, strlen(fam));
		if (i < 0)
			continue;
		if (strcmp(opt, "max_versions") == 0)
			opts->families[i].max_versions = wcfdw_parse_max_versions(def->defname, defGetString(def));
		else if (strcmp(opt, "ttl") == 0)
			opts->families[i].ttl_ms = wcfdw_parse_ttl(def->defname, defGetString(def));
		else if (strcmp(opt, "compression_level") == 0)
			opts->families[i].compression_level =
				wcfdw_parse_compression_level(def->defname, defGetString(def));
		else
			opts->families[i].compression = wcfdw_parse_compression(def->defname, defGetString(def));
	}
}

/*
 * wcfdw_store_owner
 *		The table whose store relid shows: relid itself, or the table its
 *		option store names (InvalidOid if that one is missing and missing_ok)
 *
 * The name is looked up at every use, as a view's would not be: after a
 * RENAME of that table the option must be changed too.  An unqualified name
 * is looked up in relid's own schema first, then along the search path (so
 * that pg_dump's output, which runs with an empty search path, restores).
 * The table named must be a widecol table with a store of its own.
 */
Oid
wcfdw_store_owner(Oid relid, bool missing_ok)
{
	ForeignTable *table = GetForeignTable(relid);
	const char *name = NULL;
	List	   *names;
	ListCell   *lc;
	Oid			owner;

	foreach(lc, table->options)
	{
		DefElem    *def = (DefElem *) lfirst(lc);

		if (strcmp(def->defname, "store") == 0)
			name = defGetString(def);
	}
	if (name == NULL)
		return relid;

	names = stringToQualifiedNameList(name);
	owner = InvalidOid;
	if (list_length(names) == 1)
		owner = get_relname_relid(strVal(linitial(names)), get_rel_namespace(relid));
	if (!OidIsValid(owner))
		owner = RangeVarGetRelid(makeRangeVarFromNameList(names), NoLock, true);
	if (!OidIsValid(owner))
	{
		if (missing_ok)
			return InvalidOid;
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("table \"%s\" named by option \"store\" of foreign table \"%s\" does not exist",
						name, get_rel_name(relid)),
				 errhint("Option store names the widecol table whose store this one shows; after a RENAME of that table, change the option.")));
	}
	if (owner == relid || !wcfdw_is_widecol_table(owner))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("option \"store\" of foreign table \"%s\" must name another widecol_fdw table",
						get_rel_name(relid)),
				 errdetail("\"%s\" is not one.", name)));
	foreach(lc, GetForeignTable(owner)->options)
	{
		DefElem    *def = (DefElem *) lfirst(lc);

		if (strcmp(def->defname, "store") == 0)
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("option \"store\" of foreign table \"%s\" names table \"%s\", which shows the store of another table",
							get_rel_name(relid), name),
					 errhint("Name the table that has the store: \"%s\".", defGetString(def))));
	}
	return owner;
}

/*
 * wcfdw_family_index
 *		Position of a family among the table's, or -1
 */
int
wcfdw_family_index(const WcFdwTableOptions *opts, const char *name, size_t len)
{
	int			i;

	for (i = 0; i < opts->nfamilies; i++)
	{
		const char *f = opts->families[i].name;

		if (strlen(f) == len && memcmp(f, name, len) == 0)
			return i;
	}
	return -1;
}

/*
 * wcfdw_store_path
 *		Directory of a table's store
 *
 * By default inside the database's own directory, so that DROP DATABASE
 * removes it with everything else.
 */
char *
wcfdw_store_path(Oid relid, const WcFdwTableOptions *opts)
{
	const char *directory = opts->directory;

	/* a store imported, or placed by hand: its own name */
	if (opts->store_dir)
	{
		if (directory == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FDW_OPTION_NAME_NOT_FOUND),
					 errmsg("option \"store_directory\" of foreign table \"%s\" needs the server option \"directory\"",
							get_rel_name(opts->store_relid)),
					 errhint("Set the server's directory, under which the store is found.")));
		return psprintf("%s/%s", directory, opts->store_dir);
	}
	if (directory)
		return psprintf("%s/%u_%u", directory, MyDatabaseId, relid);
	return psprintf("%s/%s/widecol_%u", DataDir,
					GetDatabasePath(MyDatabaseId, MyDatabaseTableSpace), relid);
}

/*
 * wcfdw_option_init
 *		Defines the GUCs
 */
void
wcfdw_option_init(void)
{
	DefineCustomIntVariable("widecol_fdw.bulk_write_size",
							"A transaction that writes at least this much to one table writes it as sorted files.",
							"Such a bulk write skips the log, the memtables and the flush. -1 turns bulk writes off, 0 makes every write one.",
							&wcfdw_bulk_write_kb,
							4096, -1, INT_MAX / 1024,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
	DefineCustomIntVariable("widecol_fdw.max_remembered_commits",
							"Committed transactions a table remembers for older snapshots.",
							"A snapshot older than the oldest one forgotten gets \"snapshot too old\" when it reads the table.",
							&wcfdw_max_remembered_commits,
							100000, 1000, INT_MAX,
							PGC_SIGHUP, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("widecol_fdw.session_memory",
							"Memory of unflushed cells a session keeps for the widecol tables it read.",
							"Past it, at the end of a transaction, the stores not used longest are closed (opened again on next use); those the transaction used stay. -1: no limit.",
							&wcfdw_session_memory_kb,
							65536, -1, INT_MAX,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
	DefineCustomIntVariable("widecol_fdw.max_row_locks",
							"Row locks a transaction takes in widecol tables (all together) before it locks all rows of a table at once.",
							"Past it, once no other transaction holds row locks in the table, the transaction takes one lock for all of them and no more row locks (scan.c, lock escalation). -1: never.",
							&wcfdw_max_row_locks,
							1000, -1, INT_MAX,
							PGC_USERSET, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("widecol_fdw.row_cache_size",
							"Memory a session keeps per widecol table for rows that point reads found in several sorted files.",
							"A point read of such a row takes it from there until a flush or compaction changes the files. Taken when the session opens the table; 0 turns it off.",
							&wcfdw_row_cache_kb,
							8192, 0, INT_MAX / 1024,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
	MarkGUCPrefixReserved("widecol_fdw");
}

/*
 * wcfdw_bulk_write_bytes
 *		widecol_fdw.bulk_write_size as wc_db_set_ingest_bytes takes it
 */
size_t
wcfdw_bulk_write_bytes(void)
{
	if (wcfdw_bulk_write_kb < 0)
		return SIZE_MAX;
	if (wcfdw_bulk_write_kb == 0)
		return 1;
	return (size_t) wcfdw_bulk_write_kb * 1024;
}
