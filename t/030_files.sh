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

# A session that reads many tables (pg_dump of a database of many tables): an open store holds
# its LOCK file and its live log open, its sorted files only mapped; and the server raised its
# soft limit on open files to the hard one. Before, 5 descriptors a table here (three sorted
# files) ran a session out of them ("Too many open files") at about 200 tables.
NT=300
wc_psql -c "DO \$\$ BEGIN FOR i IN 1..$NT LOOP
              EXECUTE format('CREATE FOREIGN TABLE many%s (rowkey text, family text, qualifier text, ts bigint, value text)
                              SERVER wide OPTIONS (families %L)', i, 'a,b,c');
              EXECUTE format('INSERT INTO many%s VALUES (''r'', ''a'', ''q'', 1, ''v''), (''r'', ''b'', ''q'', 1, ''v''),
                                                         (''r'', ''c'', ''q'', 1, ''v'')', i);
            END LOOP; END \$\$" \
        -c "DO \$\$ BEGIN FOR i IN 1..$NT LOOP PERFORM widecol_flush('many' || i); END LOOP; END \$\$" \
        >/dev/null || t_bail "create $NT tables of three sorted files each"
t_is "$(ls "$(store_of many$NT)" | grep -c '\.sst$')" 3 "table many$NT has three sorted files"
readall="DO \$\$ DECLARE n int; t int := 0; BEGIN FOR i IN 1..$NT LOOP
           EXECUTE format('SELECT count(*) FROM many%s', i) INTO n; t := t + n; END LOOP;
           IF t <> 3 * $NT THEN RAISE EXCEPTION 'read % cells', t; END IF; END \$\$"
fdout=$(mktemp); wc_on_exit "rm -f '$fdout'"
wc_psql -c "$readall" -c "SELECT 'pid ' || pg_backend_pid()" -c "SELECT pg_sleep(2)" \
        -c "SELECT 'read all'" >"$fdout" 2>&1 &
fdpsql=$!
for _ in $(seq 1 300); do grep -q '^pid ' "$fdout" && break; sleep 0.1; done
pid=$(sed -n 's/^pid //p' "$fdout")
if [ -r "/proc/$pid/fd" ]; then
    nsst=$(ls -l "/proc/$pid/fd" 2>/dev/null | grep -c '\.sst$')
    nlock=$(ls -l "/proc/$pid/fd" 2>/dev/null | grep -c '/LOCK$')
    t_is "$nsst" 0 "a session that read $NT tables of 3 sorted files each holds none of them open"
    t_is "$nlock" "$NT" "... and each store's LOCK file ($nlock)"
    read -r soft hard < <(awk '/^Max open files/ { print $4, $5 }' "/proc/$pid/limits")
    t_is "$soft" "$hard" "the backend's soft limit on open files is the hard one ($soft)"
else
    t_diag "no access to /proc/$pid/fd: the descriptor checks are not made"
fi
wait "$fdpsql"
t_ok "the session read every table" grep -qx 'read all' "$fdout"
t_is "$(wc_psql -c "$readall" -c "SELECT 'ok'" 2>&1 | tail -1)" "ok" "... and so does the next session"

wc_psql -c "CREATE DATABASE other" >/dev/null || t_bail "CREATE DATABASE other"
wc_psql -d other -c "CREATE EXTENSION widecol_fdw" -c "CREATE SERVER wide FOREIGN DATA WRAPPER widecol_fdw" \
        -c "CREATE FOREIGN TABLE g (rowkey text, family text, value text) SERVER wide OPTIONS (families 'a')" \
        -c "INSERT INTO g VALUES ('k', 'a', 'v')" >/dev/null || t_bail "a widecol table in a second database"
gdir=$(store_of g other)
t_ok "the second database's store is in its own directory" test -d "$gdir"
wc_psql -c "DROP DATABASE other" || t_bail "DROP DATABASE other"
t_ok "DROP DATABASE takes its stores along" test ! -e "$gdir"

t_done
