#!/usr/bin/env bash
# t/070_pitr.sh -- point-in-time recovery to a restore point brings widecol tables back exactly
# as they were at that point, as it does ordinary tables.
#
# The primary archives its WAL (archive_command copying into a local directory).  After a base
# backup, a load writes a widecol table w and an ordinary table h in the same transactions
# (t_twin_sql in t/testlib.sh: INSERTs, UPDATEs, DELETEs, rollbacks, bulk writes, a TRUNCATE
# of both) while another session flushes and compacts w and w2, and a second pair w2/h2
# (created before the backup) is written too.  Then every row of the four tables is recorded
# (COPY ... TO STDOUT, ordered), and pg_create_restore_point('before_x') is called.  After it:
# more writes, a TRUNCATE of w and h, a DROP of w2 and h2, flushes and compactions.  The base
# backup is restored with recovery.signal, restore_command from the archive, recovery_target_name
# = 'before_x' and recovery_target_action = 'promote'.  Checked there: recovery stopped at the
# restore point; w, h, w2 and h2 hold exactly the recorded rows (w2 was dropped after the point,
# so it is there, with its store); and the recovered cluster takes writes.
# 800 transactions per writer; 3000 with WIDECOL_LONG=1.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

t_cluster_with_fdw
ntx=800
t_long && ntx=3000
archive=$WC_CLUSTER_DIR/archive
rec=$WC_CLUSTER_DIR/recorded
mkdir -p "$rec"
wc_archive_on main "$archive" || t_bail "archive_mode = on, archiving into $archive"
t_is "$(wc_psql -c "SHOW archive_mode")" on "the primary archives its WAL"

t_twin_create main w h && t_twin_create main w2 h2 || t_bail "the tables"
{ t_twin_sql w h r0 1 20; t_twin_sql w2 h2 r0 1 10; echo "SELECT widecol_flush('w');"; } |
    wc_psql -f - >/dev/null || t_bail "the first writes"
wc_basebackup main "$WC_CLUSTER_DIR/bb" || t_bail "a base backup"

# --- the load, after the backup
t_twin_load_start main w h r1 "$ntx" $((ntx / 3)) w2
t_twin_sql w2 h2 r1 9 200 | wc_psql -f - >/dev/null || t_bail "writes to w2 and h2"
t_twin_load_wait "the load"

# --- the rows at the restore point
for t in w h w2 h2; do
    t_twin_dump main "$t" >"$rec/$t" || t_bail "COPY of $t"
done
twins_recorded() { cmp -s "$rec/w" "$rec/h" && cmp -s "$rec/w2" "$rec/h2" && test -s "$rec/h" -a -s "$rec/h2"; }
t_ok "on the primary, w holds exactly the rows of h ($(wc -l <"$rec/h") rows), w2 those of h2 ($(wc -l <"$rec/h2"))" \
    twins_recorded
wc_psql -c "SELECT pg_create_restore_point('before_x')" >/dev/null || t_bail "pg_create_restore_point"

# --- after it: more writes, a TRUNCATE, a DROP
{
    t_twin_sql w h r2 1 60 30
    echo "SELECT widecol_flush('w'); SELECT widecol_flush('w2');"
    t_twin_sql w2 h2 r2 1 20
    echo "DROP FOREIGN TABLE w2; DROP TABLE h2;"
    t_twin_sql w h r2 2 40
    echo "SELECT widecol_compact('w');"
    t_twin_sql w h r2 3 20
} | wc_psql -f - >/dev/null || t_bail "the writes after the restore point"
changed_after() {
    ! t_twin_dump main w | cmp -s - "$rec/w" && ! t_twin_dump main h | cmp -s - "$rec/h" &&
        [ "$(wc_psql -c "SELECT count(*) FROM pg_class WHERE relname IN ('w2', 'h2')")" = 0 ]
}
t_ok "after the restore point the primary's w and h differ (TRUNCATE, new rows), w2 and h2 are dropped" changed_after
t_twin_compare main w h "the primary after the writes that follow the restore point"
t_ok "the WAL up to there is archived" wc_archive_switch main "$archive"

# --- point-in-time recovery
t_ok "the base backup recovers to 'before_x' from the archive and is promoted" \
    wc_node_pitr pitr "$WC_CLUSTER_DIR/bb" "$archive" "recovery_target_name = 'before_x'" ||
    t_bail "no recovered cluster"
t_ok "recovery stopped at the restore point" grep -q 'recovery stopping at restore point "before_x"' "$(wc_node_log pitr)"

dboid=$(wc_node_psql pitr -c "SELECT oid FROM pg_database WHERE datname = current_database()")
w2oid=$(wc_node_psql pitr -c "SELECT 'w2'::regclass::oid")
t_ok "w2 (dropped after the restore point) has its store, base/$dboid/widecol_$w2oid" \
    test -d "$(wc_node_pgdata pitr)/base/$dboid/widecol_$w2oid"

# same_rows NODE TABLE FILE: every row of TABLE on NODE is the recorded row of FILE
same_rows() {
    local got
    got=$(mktemp "$WC_CLUSTER_DIR/got.XXXXXX")
    t_twin_dump "$1" "$2" >"$got" 2>&1
    if cmp -s "$got" "$3"; then rm -f "$got"; return 0; fi
    t_diag "$2: $(wc -l <"$got") rows, recorded $(wc -l <"$3"); rows only there, then only recorded:"
    LC_ALL=C comm -23 <(LC_ALL=C sort "$got") <(LC_ALL=C sort "$3") | head -n 3 | cut -c 1-120 | sed 's/^/#   + /'
    LC_ALL=C comm -13 <(LC_ALL=C sort "$got") <(LC_ALL=C sort "$3") | head -n 3 | cut -c 1-120 | sed 's/^/#   - /'
    rm -f "$got"
    return 1
}
for t in h w h2 w2; do
    t_ok "after the recovery, $t holds exactly the rows recorded before the restore point ($(wc -l <"$rec/$t") rows)" \
        same_rows pitr "$t" "$rec/$t"
done

t_ok "the recovered cluster takes writes, flushes and compacts" t_twin_writes pitr w h r3
t_twin_compare pitr w h "the recovered cluster after its own writes"

t_done
