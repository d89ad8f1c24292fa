#!/usr/bin/env bash
# t/030_files.sh -- a table's store on disk: where it lives, and that it leaves with its table.
#
# $PGDATA/base/<database oid>/widecol_<table oid>/ holds a LOCK, a MANIFEST, logs and, after a
# flush, sorted files; a rolled-back DROP FOREIGN TABLE leaves it (and its data) alone, a
# committed one removes it; TRUNCATE empties the table; DROP DATABASE takes the stores along.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

t_cluster_with_fdw

store_of() {    # store_of TABLE [DB]: the directory of TABLE's store
    wc_psql -d "${2:-postgres}" -c "SELECT format('%s/base/%s/widecol_%s', current_setting('data_directory'),
                                                  d.oid, '$1'::regclass::oid)
                                      FROM pg_database d WHERE d.datname = current_database()"
}

wc_psql -c "CREATE FOREIGN TABLE f (rowkey text, family text, qualifier text, ts bigint, value text)
            SERVER wide OPTIONS (families 'a,b')" \
        -c "INSERT INTO f SELECT 'row' || i, CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END, 'q', i, 'v' || i
              FROM generate_series(1, 1000) i" \
        -c "SELECT widecol_flush('f')" >/dev/null || t_bail "create, fill and flush a table"
dir=$(store_of f)
t_diag "store: $dir"
t_ok "the store is a directory under base/<database oid>/" test -d "$dir"
t_ok "it holds LOCK and MANIFEST" test -f "$dir/LOCK" -a -f "$dir/MANIFEST"
has_sst() { compgen -G "$dir/*.sst" >/dev/null; }
t_ok "after a flush it holds sorted files" has_sst
t_ok "the store's files belong to the server's user" \
    test "$(stat -c %U "$dir/MANIFEST")" = "$(wc_cluster_user)"

t_is "$(wc_psql -c "BEGIN" -c "DROP FOREIGN TABLE f" -c "ROLLBACK" -c "SELECT count(*) FROM f")" 1000 \
    "a rolled-back DROP FOREIGN TABLE keeps the data"
t_ok "... and the directory" test -d "$dir"

t_is "$(wc_psql -c "TRUNCATE f" -c "SELECT count(*) FROM f")" 0 "TRUNCATE empties the table"
t_is "$(wc_psql -c "INSERT INTO f VALUES ('again', 'a', 'q', 1, 'v')" -c "SELECT count(*) FROM f")" 1 \
    "it takes writes after TRUNCATE"

wc_psql -c "DROP FOREIGN TABLE f" || t_bail "DROP FOREIGN TABLE"
t_ok "a committed DROP FOREIGN TABLE removes the store's directory" test ! -e "$dir"

wc_psql -c "CREATE DATABASE other" >/dev/null || t_bail "CREATE DATABASE other"
wc_psql -d other -c "CREATE EXTENSION widecol_fdw" -c "CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw" \
        -c "CREATE FOREIGN TABLE g (rowkey text, family text, value text) SERVER wide OPTIONS (families 'a')" \
        -c "INSERT INTO g VALUES ('k', 'a', 'v')" >/dev/null || t_bail "a widecol table in a second database"
gdir=$(store_of g other)
t_ok "the second database's store is in its own directory" test -d "$gdir"
wc_psql -c "DROP DATABASE other" || t_bail "DROP DATABASE other"
t_ok "DROP DATABASE takes its stores along" test ! -e "$gdir"

t_done
