#!/usr/bin/env bash
# t/050_diskfull.sh -- a full disk fails the write cleanly and loses nothing committed.
#
# A 4 MB tmpfs holds a server's stores (server option directory, superuser only) beside a
# filler file.  Transactions of 50 cells of 1 kB are committed one after another until COMMIT
# fails: that error must be 53100 (disk_full) or of class 58 (system error, e.g. 58030
# io_error), and no backend may die.  While the disk is full, every committed transaction
# reads back whole, the failed one not at all, and a flush or compaction fails cleanly too
# (or succeeds, and then every committed cell is in a sorted file).  Then the filler goes,
# writes work again, and after a restart of the cluster every committed row is there with
# all its cells.
# Needs root and a sandbox that allows mount -t tmpfs; else the whole test is skipped.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

wc_is_root || t_skip_all "mounting a tmpfs needs root"
tiny=$(mktemp -d /tmp/widecol-tiny.XXXXXX)
if ! mount -t tmpfs -o size=4m,mode=0755 tmpfs "$tiny" 2>/dev/null; then
    rmdir "$tiny"
    t_skip_all "mount -t tmpfs is not allowed here"
fi
wc_on_exit "umount -l '$tiny'; rmdir '$tiny'"
chown postgres: "$tiny"

t_cluster_with_fdw
quiet_psql() { wc_psql "$@" >/dev/null; }
wc_psql -c "CREATE SERVER tiny FOREIGN DATA WRAPPER widecol_fdw OPTIONS (directory '$tiny')" \
        -c "CREATE FOREIGN TABLE d (rowkey text, family text, qualifier text, ts bigint, value text)
            SERVER tiny OPTIONS (families 'f', compression 'none')" || t_bail "a table on the tmpfs"
# a filler of 2.6 MB, freed later (so that a flush of what was written fits)
runuser -u postgres -- dd if=/dev/zero of="$tiny/filler" bs=1k count=2600 status=none || t_bail "the filler"

# tx N: 50 cells of about 1 kB (incompressible enough), rows tN-00..49
tx() {
    echo "INSERT INTO d SELECT 't$1-' || lpad(i::text, 2, '0'), 'f', 'q', $1,
                 repeat(md5('$1' || i), 32) FROM generate_series(0, 49) i"
}
committed=0; err=
for ((n = 1; n <= 200; n++)); do
    if ! err=$(wc_psql -v VERBOSITY=verbose -c "$(tx $n)" 2>&1); then break; fi
    committed=$n
done
t_diag "committed $committed transactions before a write failed; its error:"
printf '%s\n' "$err" | head -n 4 | sed 's/^/#   /'
t_ok "a write failed once the disk was full" test "$committed" -lt 200 -a "$committed" -gt 0
t_ok "its SQLSTATE is 53100 (disk_full) or of class 58 (system error)" \
    grep -qE 'ERROR:  (53100|58[0-9A-Z]{3}):' <<<"$err"
failed_tx=$((committed + 1))

expected_all() {    # the answer of check_rows for transactions 1..$1
    wc_psql -c "SELECT count(*) || ' ' || md5(string_agg(v, '' ORDER BY k))
                  FROM (SELECT 't' || n || '-' || lpad(i::text, 2, '0') AS k, repeat(md5(n::text || i), 32) AS v
                          FROM generate_series(1, $1) n, generate_series(0, 49) i) s"
}
check_rows() {
    wc_psql -c "SELECT count(*) || ' ' || md5(string_agg(value, '' ORDER BY rowkey)) FROM d"
}
file_cells() {      # the cells in the store's sorted files
    wc_psql -c "SELECT coalesce(sum(cells), 0) FROM widecol_stats('d')"
}
want=$(expected_all "$committed")
t_is "$(check_rows)" "$want" "while the disk is full, every committed transaction reads back whole, the failed one not at all"
t_is "$(wc_psql -c "SELECT count(*) FROM d WHERE rowkey LIKE 't$failed_tx-%'")" 0 "nothing of the failed transaction is stored"

for fn in widecol_flush widecol_compact; do
    if out=$(wc_psql -v VERBOSITY=verbose -c "SELECT $fn('d')" 2>&1); then
        t_diag "$fn succeeded on the full disk"
        t_is "$(file_cells)" "$((committed * 50))" \
            "$fn on the full disk succeeds: every committed cell is in a sorted file"
    else
        t_diag "$fn failed: $(head -n 2 <<<"$out" | tr '\n' ' ')"
        t_ok "$fn on the full disk succeeds or fails cleanly (53100 or class 58)" \
            grep -qE 'ERROR:  (53100|58[0-9A-Z]{3}):' <<<"$out"
    fi
    t_is "$(check_rows)" "$want" "after $fn on the full disk, every committed row is still there"
done

rm -f "$tiny/filler"
t_ok "after space is freed, the table takes writes again" quiet_psql -c "$(tx $failed_tx)"
committed=$failed_tx
t_ok "... and flushes and compacts" quiet_psql -c "SELECT widecol_flush('d')" -c "SELECT widecol_compact('d')"
want=$(expected_all "$committed")
t_is "$(check_rows)" "$want" "every committed transaction reads back whole ($committed)"

wc_as_cluster_user "$WC_PGBIN/pg_ctl" -D "$WC_PGDATA" -m fast -w stop >/dev/null 2>&1
wc_cluster_restart || t_bail "the cluster restarts"
t_is "$(check_rows)" "$want" "after a restart, every committed transaction reads back whole"
t_ok "no backend was terminated by a signal" \
    test "$(grep -c 'terminated by signal' "$WC_CLUSTER_DIR/server.log")" = 0

t_done
