#!/usr/bin/env bash
# t/095_twophase.sh -- prepared transactions (two-phase commit) over widecol tables survive a
# crash and reach a standby, and end as COMMIT PREPARED or ROLLBACK PREPARED says.
#
# A widecol table w and an ordinary table h are written in the same transactions (t_twin_sql in
# t/testlib.sh: INSERTs, UPDATEs of values and keys, DELETEs, savepoints rolled back, bulk
# writes, rollbacks); here each transaction that would commit is prepared instead, so w must
# read exactly as h at every step, with a streaming standby beside:
#   1. 60 transactions committed, then 60 prepared by three sessions at once: w equals h (the
#      prepared ones in neither); a flush of w is refused at once (55000) while a compaction
#      runs; a third of them committed and a third rolled back: w equals h.
#   2. kill -9 of the whole cluster: after the restart the rest are still prepared, w equals h;
#      the standby (hot-standby reads, caught up) shows the same.
#   3. The rest finished (most committed): w equals h on the primary, a flush and a compaction
#      work again; the standby, caught up, equals too, also after a kill -9 and restart.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

t_cluster_with_fdw
t_twin_create main w h || t_bail "the tables w and h"
t_twin_sql w h base 1 60 | wc_psql -f - >/dev/null || t_bail "60 committed transactions"
wc_standby_create sb || t_bail "a streaming standby"

# prepared NAME WR N: t_twin_sql's transactions, each COMMIT made PREPARE TRANSACTION 'NAME-WR-i'
prepared() {
    t_twin_sql w h "$1" "$2" "$3" |
        awk -v g="$1-$2" -v q="'" '/^BEGIN;$/ { i++ } /^COMMIT;$/ { print "PREPARE TRANSACTION " q g "-" i q ";"; next } { print }'
}

# --- 1.
pids=()
for wr in 1 2 3; do
    prepared tp "$wr" 20 | wc_psql -f - >/dev/null 2>"$WC_CLUSTER_DIR/prep$wr.err" &
    pids+=($!)
done
fail=0
for p in "${pids[@]}"; do wait "$p" || fail=$((fail + 1)); done
t_is "$fail" 0 "three sessions prepared their transactions without error" ||
    head -n 5 "$WC_CLUSTER_DIR"/prep*.err | sed 's/^/#   /'
nprep=$(wc_psql -c "SELECT count(*) FROM pg_prepared_xacts")
t_is "$nprep" 54 "54 transactions are prepared (60, less the 6 the load rolls back)"
t_twin_compare main w h "with 54 transactions prepared"
t_is "$(wc_psql -c "DO \$\$ BEGIN PERFORM widecol_flush('w'); EXCEPTION WHEN OTHERS THEN
                       RAISE NOTICE '%', SQLSTATE; END \$\$" 2>&1 >/dev/null | sed -n 's/^NOTICE:  //p')" 55000 \
    "a flush meets a prepared transaction's record: refused at once with 55000"
quiet() { "$@" >/dev/null; }
t_ok "a compaction goes on meanwhile" quiet wc_psql -c "SELECT widecol_compact('w')"

# finish: COMMIT PREPARED or ROLLBACK PREPARED of the prepared transactions whose gid matches
finish() {
    wc_psql -c "SELECT gid FROM pg_prepared_xacts WHERE gid ~ '$1' ORDER BY gid" |
        while read -r g; do echo "$2 PREPARED '$g';"; done | wc_psql -f - >/dev/null
}
# (the ordinary table follows: the prepared transactions wrote to both); of each session's
# 18 prepared transactions (1..20 but 7 and 17), 4 committed and 5 rolled back here
finish '-[147]$|-1[03]$' COMMIT || t_bail "COMMIT PREPARED of some"
finish '-[258]$|-1[14]$' ROLLBACK || t_bail "ROLLBACK PREPARED of some"
t_twin_compare main w h "after COMMIT PREPARED of some and ROLLBACK PREPARED of others"

# --- 2.
wc_cluster_kill9
wc_cluster_restart || t_bail "the restart after kill -9"
left=$(wc_psql -c "SELECT count(*) FROM pg_prepared_xacts")
t_is "$left" 27 "after kill -9 and restart the other 27 prepared transactions are still there"
t_twin_compare main w h "after the crash, with $left transactions prepared"
wc_wait_replay sb || t_bail "the standby catches up"
t_twin_compare sb w h "on the standby, with $left transactions prepared"

# --- 3.
finish '-[0-9]*[0-8]$' COMMIT || t_bail "COMMIT PREPARED of most of the rest"
finish '.' ROLLBACK || t_bail "ROLLBACK PREPARED of the last ones"
t_is "$(wc_psql -c "SELECT count(*) FROM pg_prepared_xacts")" 0 "no transaction is left prepared"
t_twin_compare main w h "once every prepared transaction ended"
t_ok "a flush and a compaction work again" quiet wc_psql -c "SELECT widecol_flush('w'), widecol_compact('w')"
t_twin_compare main w h "after the flush and the compaction"
wc_wait_replay sb || t_bail "the standby catches up"
t_twin_compare sb w h "on the standby, once every prepared transaction ended"
wc_node_kill9 sb
wc_node_start sb || t_bail "the standby restarts after kill -9"
wc_wait_replay sb || t_bail "the standby catches up after its restart"
t_twin_compare sb w h "on the standby after its kill -9 and restart"

t_done
