/*-------------------------------------------------------------------------
 *
 * resolve.c
 *		  What the engine asks PostgreSQL: the fate of a transaction, and
 *		  whether to stop
 *
 * A store is opened with these callbacks (wc_open_opts).  The engine calls
 * wcfdw_resolve for the tag of every log record written by a transaction
 * (its FullTransactionId) until it knows whether that transaction committed,
 * wcfdw_horizon to learn which committed writes every snapshot sees, and
 * wcfdw_interrupt between steps of long work.  A scan asks wcfdw_tag_visible
 * whether its snapshot sees a committed write (doc/SQL.md, "Transactions").
 *
 * Neither may longjmp through the engine: an error is caught, kept by
 * error.c (wcfdw_catch_callback_error), and re-thrown by wcfdw_engine_error
 * once the engine has returned WC_CALLBACK.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/transam.h"
#include "access/twophase.h"
#include "access/xlog.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "storage/predicate.h"
#include "storage/procarray.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "widecol_fdw.h"

/*
 * wcfdw_resolve_xid
 *		What became of the transaction whose FullTransactionId is tag
 *
 * As the heap does for xmin: our own (until its commit is recorded) and
 * running transactions are in progress, then the commit log decides.  A tag the clog can no longer answer
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
	/*
	 * Ours is in progress until its commit record is in the clog; the flush a
	 * TRUNCATE runs after its commit (store.c) asks while the transaction is
	 * still our current one.
	 */
	if (TransactionIdIsCurrentTransactionId(xid))
		return TransactionIdDidCommit(xid) ? WC_TXN_COMMITTED : WC_TXN_IN_PROGRESS;
	if (TransactionIdIsInProgress(xid))
	{
		/*
		 * A prepared transaction is in progress with no backend of its own (its
		 * PGPROC is a dummy with pid 0); asked twice, since one that just ended
		 * has no backend either.  A standby knows no backends of the primary:
		 * only a flush tells the two states apart, and a standby never flushes.
		 * With max_prepared_transactions 0 (the default) none can be prepared:
		 * no second scan of the procs, which a refresh would make for every
		 * record of every concurrent writer.
		 */
		if (max_prepared_xacts > 0 && !RecoveryInProgress() && BackendXidGetPid(xid) == 0 &&
			TransactionIdIsInProgress(xid))
			return WC_TXN_PREPARED;
		return WC_TXN_IN_PROGRESS;
	}
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

/* The highest horizon this process gave the engine (wal.c: what a standby must honour). */
uint64_t	wcfdw_horizon_seen = 0;

/*
 * wcfdw_horizon
 *		The engine's horizon callback: every committed transaction below it is
 *		seen by every snapshot, now and later
 *
 * The oldest xmin of any snapshot in the cluster (every database: a store's
 * records are few, and shared horizons are what the heap keeps for shared
 * catalogs), as a FullTransactionId of the current or the previous epoch.
 */
uint64_t
wcfdw_horizon(void *arg)
{
	uint64_t	h = wcfdw_full_xid(GetOldestNonRemovableTransactionId(NULL));

	if (h > wcfdw_horizon_seen)
		wcfdw_horizon_seen = h;
	return h;
}

/*
 * wcfdw_full_xid
 *		xid, which does not follow nextXid (a horizon, a snapshot's xmin), as a
 *		FullTransactionId of the current or the previous epoch; 0 if not normal
 */
uint64_t
wcfdw_full_xid(TransactionId xid)
{
	FullTransactionId next = ReadNextFullTransactionId();
	uint32		epoch = EpochFromFullTransactionId(next);

	if (!TransactionIdIsNormal(xid))
		return 0;
	if (xid > XidFromFullTransactionId(next) && epoch > 0)
		epoch--;
	return U64FromFullTransactionId(FullTransactionIdFromEpochAndXid(epoch, xid));
}

/*
 * Serializable transactions' predicate locks and conflicts stand on the
 * table that has the store (store->relid), also when the table used only
 * shows it (option store): so reads and writes through a tall and a wide
 * table over one store conflict as through one table, as a view's do on its
 * base table.  That table is locked (wcfdw_store_get) for the transaction.
 */
static Relation
wcfdw_ssi_open(Relation rel, Oid owner)
{
	return RelationGetRelid(rel) == owner ? rel : relation_open(owner, NoLock);
}

static void
wcfdw_ssi_close(Relation rel, Relation used)
{
	if (used != rel)
		relation_close(used, NoLock);
}

/* PredicateLockRelation of rel's store */
void
wcfdw_ssi_lock(Relation rel, Oid owner, Snapshot snapshot)
{
	Relation	r = wcfdw_ssi_open(rel, owner);

	PredicateLockRelation(r, snapshot);
	wcfdw_ssi_close(rel, r);
}

/* CheckForSerializableConflictIn of a write of rel's store */
void
wcfdw_ssi_conflict_in(Relation rel, Oid owner)
{
	Relation	r = wcfdw_ssi_open(rel, owner);

	CheckForSerializableConflictIn(r, NULL, InvalidBlockNumber);
	wcfdw_ssi_close(rel, r);
}

/*
 * wcfdw_tag_visible
 *		The engine's tag_visible callback: does the scan's snapshot see the
 *		writes of the committed transaction tag?
 *
 * As the heap decides for xmin: a transaction the snapshot counts as running
 * (or that began after it) is not seen.  In a serializable transaction, a
 * write it does not see (or one still in progress) is a read-write conflict
 * out, as for a heap tuple: CheckForSerializableConflictOut.
 */
int
wcfdw_tag_visible(void *arg, uint64_t tag, bool committed, bool *visible, wc_err *err)
{
	WcFdwSnapshotArg *sa = arg;
	MemoryContext oldcxt = CurrentMemoryContext;
	TransactionId xid = XidFromFullTransactionId(FullTransactionIdFromU64(tag));
	volatile int rc = WC_OK;

	PG_TRY();
	{
		bool		seen = committed && !XidInMVCCSnapshot(xid, sa->snapshot);

		if (committed)
			*visible = seen;
		if (!seen && sa->serializable && TransactionIdIsNormal(xid))
		{
			Relation	r = wcfdw_ssi_open(sa->rel, sa->owner);

			CheckForSerializableConflictOut(r, xid, sa->snapshot);
			wcfdw_ssi_close(sa->rel, r);
		}
	}
	PG_CATCH();
	{
		const char *message = wcfdw_catch_callback_error(oldcxt);

		err->code = WC_CALLBACK;
		snprintf(err->msg, sizeof(err->msg), "%s", message);
		rc = WC_CALLBACK;
	}
	PG_END_TRY();
	return rc;
}
