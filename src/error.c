/*-------------------------------------------------------------------------
 *
 * error.c
 *		  The one place where engine status codes become PostgreSQL errors
 *
 *		WC_CORRUPT		XX001 data_corrupted
 *		WC_IO			errcode_for_file_access() from the engine's errno, %m
 *		WC_NOSPACE		53100 disk_full
 *		WC_INVALID		22023 invalid_parameter_value
 *		WC_BUSY			55P03 lock_not_available
 *		WC_ABORTED		pending interrupt, else 57014 query_canceled
 *		WC_NOMEM		53200 out_of_memory
 *		WC_FAILED		58030 io_error (the handle is reopened on next use)
 *		WC_NOT_FOUND	58P01 undefined_file
 *		WC_CALLBACK		the error our own callback caught, kept here by
 *						wcfdw_catch_callback_error, re-thrown
 *
 * errmsg is short ("could not read store of foreign table \"t\""), errdetail
 * is the engine's complete message.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <errno.h>

#include "miscadmin.h"
#include "utils/memutils.h"

#include "widecol_fdw.h"

/* the error a callback of ours caught (resolve.c), until it is re-thrown */
static ErrorData *wcfdw_callback_error = NULL;

/*
 * wcfdw_catch_callback_error
 *		In the PG_CATCH of a callback the engine called: keeps the error for
 *		wcfdw_engine_error to re-throw once the engine has returned
 *		WC_CALLBACK, clears the error state and returns the message
 *
 * oldcxt is the memory context the callback was called in.
 */
const char *
wcfdw_catch_callback_error(MemoryContext oldcxt)
{
	ErrorData  *edata;

	MemoryContextSwitchTo(TopMemoryContext);
	edata = CopyErrorData();
	FlushErrorState();
	MemoryContextSwitchTo(oldcxt);
	if (wcfdw_callback_error)
		FreeErrorData(wcfdw_callback_error);
	wcfdw_callback_error = edata;
	return edata->message ? edata->message : "error";
}

/*
 * wcfdw_engine_error
 *		Reports engine status rc at elevel; returns only if elevel < ERROR
 */
void
wcfdw_engine_error(int elevel, int rc, const wc_err *err, const char *action,
				   const char *relname)
{
	const char *detail = (err && err->msg[0]) ? err->msg : wc_code_name(rc);
	int			sqlstate;

	if (rc == WC_CALLBACK && wcfdw_callback_error != NULL && elevel >= ERROR)
	{
		ErrorData  *edata = wcfdw_callback_error;

		wcfdw_callback_error = NULL;
		ReThrowError(edata);
	}
	if (rc == WC_ABORTED && elevel >= ERROR)
	{
		CHECK_FOR_INTERRUPTS();
		ereport(ERROR,
				(errcode(ERRCODE_QUERY_CANCELED),
				 errmsg("canceling statement due to user request"),
				 errdetail_internal("%s", detail)));
	}
	if (rc == WC_IO)
	{
		errno = err ? err->sys_errno : 0;
		ereport(elevel,
				(errcode_for_file_access(),
				 errmsg("could not %s store of foreign table \"%s\": %m", action, relname),
				 errdetail_internal("%s", detail)));
		return;
	}

	if (rc == WC_HELD)
	{
		ereport(elevel,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("could not %s foreign table \"%s\": a prepared transaction holds its log",
						action, relname),
				 errdetail("%s.", detail),
				 errhint("COMMIT PREPARED or ROLLBACK PREPARED the transactions of pg_prepared_xacts that wrote to it.")));
		return;
	}
	if (rc == WC_TOO_OLD)
	{
		ereport(elevel,
				(errcode(ERRCODE_SNAPSHOT_TOO_OLD),
				 errmsg("snapshot too old"),
				 errdetail("Foreign table \"%s\": %s.", relname, detail),
				 errhint("A transaction this old can read the table only while it remembers fewer committed transactions than widecol_fdw.max_remembered_commits.")));
		return;
	}
	switch (rc)
	{
		case WC_CORRUPT:
			sqlstate = ERRCODE_DATA_CORRUPTED;
			break;
		case WC_NOSPACE:
			sqlstate = ERRCODE_DISK_FULL;
			break;
		case WC_INVALID:
			sqlstate = ERRCODE_INVALID_PARAMETER_VALUE;
			break;
		case WC_BUSY:
			sqlstate = ERRCODE_LOCK_NOT_AVAILABLE;
			break;
		case WC_NOMEM:
			sqlstate = ERRCODE_OUT_OF_MEMORY;
			break;
		case WC_FAILED:
			sqlstate = ERRCODE_IO_ERROR;
			break;
		case WC_NOT_FOUND:
			sqlstate = ERRCODE_UNDEFINED_FILE;
			break;
		case WC_ABORTED:
			sqlstate = ERRCODE_QUERY_CANCELED;
			break;
		default:
			sqlstate = ERRCODE_INTERNAL_ERROR;
			break;
	}
	if (rc == WC_CORRUPT)
		ereport(elevel,
				(errcode(sqlstate),
				 errmsg("store of foreign table \"%s\" is corrupted", relname),
				 errdetail_internal("%s", detail),
				 errcontext("while trying to %s the store", action)));
	else
		ereport(elevel,
				(errcode(sqlstate),
				 errmsg("could not %s store of foreign table \"%s\"", action, relname),
				 errdetail_internal("%s", detail)));
}
