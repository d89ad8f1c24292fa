#!/usr/bin/env bash
# t/140_standby_conflict.sh -- a hot standby's old snapshots and the primary's flushes and
# compactions: a standby query never reads what its snapshot must not see.
#
# Without hot_standby_feedback (PostgreSQL's default; the other tests turn it on), the primary's
# horizon ignores the standby's snapshots, and a flush or compaction writes files relying on it
# (versions dropped, commits settled as seen by every snapshot).  A MANIFEST record carries that
# horizon, and its redo cancels the standby queries whose snapshots it passed, as the heap's
# pruning records do (before, such a query read the primary's newer rows in its old snapshot).
# A wide table w and a tall table t, 1,000 rows each; on the standby a REPEATABLE READ
# transaction reads both, then the primary deletes and updates rows and flushes (then compacts),
# and the transaction reads again:
#   1. max_standby_streaming_delay = -1 (replay waits for the query): the second read gives what
#      the first gave;
#   2. max_standby_streaming_delay = 0: the transaction is cancelled (conflict with recovery),
#      never a read of the newer rows; a new standby session then reads the primary's rows;
#   3. with hot_standby_feedback = on: no conflict, the second read gives the first's rows.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

t_cluster_with_fdw
wc_psql -c "CREATE FOREIGN TABLE w (rowkey text COLLATE \"C\", v text OPTIONS (cell 'f:v'))
            SERVER wide OPTIONS (families 'f', max_versions '1')" \
        -c "CREATE FOREIGN TABLE t (rowkey text COLLATE \"C\", family text COLLATE \"C\",
                                    qualifier text COLLATE \"C\", ts bigint, value text)
            SERVER wide OPTIONS (families 'a', max_versions '1')" >/dev/null || t_bail "the tables"
wc_standby_create sb || t_bail "a streaming standby"
work=$(mktemp -d /tmp/widecol-conflict.XXXXXX)
wc_on_exit "rm -rf '$work'"

READ="SELECT count(*) || ' ' || min(v) || ' ' || max(v) FROM w UNION ALL
      SELECT count(*) || ' ' || min(value) || ' ' || max(value) FROM t"
# round N: fresh rows (flushed), the standby's transaction, the primary's changes meanwhile;
# prints the transaction's two reads and its errors into $work/round-N.out
round() {
    local n=$1
    wc_psql -c "TRUNCATE w, t" \
            -c "INSERT INTO w SELECT 'k' || lpad(i::text, 4, '0'), 'v1' FROM generate_series(1, 1000) i" \
            -c "INSERT INTO t SELECT 'k' || lpad(i::text, 4, '0'), 'a', 'q', 1, 'v1' FROM generate_series(1, 1000) i" \
            -c "SELECT widecol_flush('w'), widecol_flush('t')" >/dev/null || t_bail "round $n: the rows"
    wc_wait_replay sb || t_bail "round $n: the standby catches up"
    {
        echo "BEGIN ISOLATION LEVEL REPEATABLE READ;"
        echo "$READ;"
        echo "\\! touch '$work/read-$n'"
        echo "\\! while [ ! -e '$work/go-$n' ]; do sleep 0.1; done"
        echo "$READ;"
        echo "COMMIT;"
    } | wc_node_psql sb -v ON_ERROR_STOP=0 >"$work/round-$n.out" 2>&1 &
    local reader=$!
    for ((i = 0; i < 100; i++)); do [ -e "$work/read-$n" ] && break; sleep 0.1; done
    wc_psql -c "DELETE FROM w WHERE rowkey < 'k0500'" -c "UPDATE w SET v = 'v2'" \
            -c "DELETE FROM t WHERE rowkey < 'k0500'" -c "UPDATE t SET value = 'v2'" \
            -c "SELECT widecol_flush('w'), widecol_flush('t')" \
            -c "SELECT widecol_compact('w'), widecol_compact('t')" >/dev/null || t_bail "round $n: the changes"
    sleep 2     # the standby replays what it may
    touch "$work/go-$n"
    wait "$reader"
}
OLD=$'1000 v1 v1\n1000 v1 v1'
NEW=$'501 v2 v2\n501 v2 v2'

# --- 1. replay waits for the query
wc_node_conf sb "hot_standby_feedback = off" "max_standby_streaming_delay = -1"
wc_node_restart sb || t_bail "the standby restarts"
round 1
t_is "$(grep -v ERROR "$work/round-1.out")" "$OLD"$'\n'"$OLD" \
    "1. replay waiting for it: the standby transaction's second read gives its first one's rows"
t_ok "1. the standby caught up after it ended" wc_wait_replay sb
t_is "$(wc_node_psql sb -c "$READ")" "$NEW" "1. a new standby session reads the primary's rows"

# --- 2. replay cancels it
wc_node_conf sb "max_standby_streaming_delay = 0"
wc_node_restart sb || t_bail "the standby restarts"
round 2
t_ok "2. replay not waiting: the standby transaction is cancelled by the conflict with recovery" \
    grep -q "conflict with recovery" "$work/round-2.out" ||
    sed 's/^/#   /' "$work/round-2.out" | head -n 8
t_ok "2. it never read the newer rows in its old snapshot" \
    bash -c "! grep -q 'v2' '$work/round-2.out'"
t_ok "2. the standby caught up" wc_wait_replay sb
t_is "$(wc_node_psql sb -c "$READ")" "$NEW" "2. a new standby session reads the primary's rows"

# --- 3. hot_standby_feedback on: the primary keeps what the standby's snapshot needs
wc_node_conf sb "hot_standby_feedback = on"
wc_node_restart sb || t_bail "the standby restarts"
sleep 2     # its first feedback message
round 3
t_is "$(grep -v ERROR "$work/round-3.out")" "$OLD"$'\n'"$OLD" \
    "3. with hot_standby_feedback: no conflict, the second read gives the first one's rows"
t_done
