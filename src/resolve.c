/*-------------------------------------------------------------------------
 *
 * resolve.c
 *		  What the engine asks PostgreSQL: the fate of a transaction, and
 *		  whether to stop
 *
 * A store is opened with these two callbacks (wc_open_opts).  The engine
 * calls wcfdw_resolve for the tag of every log record written by a
 * transaction (its FullTransactionId) until it knows whether that
 * transaction committed, and wcfdw_interrupt between steps of long work.
 *
 * Neither may longjmp through the engine: an error is caught, kept by
 * error.c (wcfdw_catch_callback_error), and re-thrown by wcfdw_engine_error
 * once the engine has returned WC_CALLBACK.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "storage/procarray.h"

#include "widecol_fdw.h"

/*
 * wcfdw_resolve_xid
 *		What became of the transaction whose FullTransactionId is tag
 *
 * As the heap does for xmin: our own and running transactions are in
 * progress, then the commit log decides.  A tag the clog can no longer answer
 * for (older than oldestClogXid) belonged to a transaction that finished long
 * ago; only a crash between our pre-commit write and the commit record makes
 * such a record aborted, so it is taken as committed.  A tag from the future
 * was never assigned in this cluster: aborted.
 */
static wc_txn_state
wcfdw_resolve_xid(uint64 tag)
{
	FullTransactionId fxid = FullTransactionIdFromU64(tag);
	FullTransactionId next = ReadNextFullTransactionId();
	TransactionId xid = XidFromFullTransactionId(fxid);

	if (!FullTransactionIdPrecedes(fxid, next))
		return WC_TXN_ABORTED;
	if (U64FromFullTransactionId(next) - tag >= (uint64) (1U << 31))
		return WC_TXN_COMMITTED;
	if (!TransactionIdIsNormal(xid))
		return (xid == FrozenTransactionId || xid == BootstrapTransactionId)
			? WC_TXN_COMMITTED : WC_TXN_ABORTED;
	if (TransactionIdPrecedes(xid, ShmemVariableCache->oldestClogXid))
		return WC_TXN_COMMITTED;
	if (TransactionIdIsCurrentTransactionId(xid))
		return WC_TXN_IN_PROGRESS;
	if (TransactionIdIsInProgress(xid))
		return WC_TXN_IN_PROGRESS;
	if (TransactionIdDidCommit(xid))
		return WC_TXN_COMMITTED;
	return WC_TXN_ABORTED;
}

/*
 * wcfdw_resolve
 *		The engine's resolve callback: wcfdw_resolve_xid, errors caught
 */
int
wcfdw_resolve(void *arg, uint64_t tag, wc_txn_state *state, wc_err *err)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	volatile int rc = WC_OK;

	PG_TRY();
	{
		*state = wcfdw_resolve_xid(tag);
	}
	PG_CATCH();
	{
		const char *message = wcfdw_catch_callback_error(oldcxt);

		err->code = WC_CALLBACK;
		snprintf(err->msg, sizeof(err->msg),
				 "could not resolve transaction " UINT64_FORMAT ": %s",
				 (uint64) tag, message);
		rc = WC_CALLBACK;
	}
	PG_END_TRY();
	return rc;
}

/*
 * wcfdw_interrupt
 *		The engine's interrupt callback: is a cancel or a termination pending?
 */
int
wcfdw_interrupt(void *arg)
{
	return QueryCancelPending || ProcDiePending;
}
