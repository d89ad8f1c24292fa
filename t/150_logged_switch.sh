#!/usr/bin/env bash
# t/150_logged_switch.sh -- an unlogged widecol table made logged again while a streaming standby
# runs: the standby reads all of it, and so does the standby once promoted.
#
# What was written while the table was unlogged never reached the WAL: the standby's copy of
# the store's log had a hole of zeros there, behind which the logged commits that followed were
# replayed, so every read on the standby was XX001 ("corrupted"), and after a promotion the
# table could be neither read nor written.  ALTER FOREIGN TABLE ... OPTIONS (SET logged 'true')
# now rewrites the store with a major compaction, logged, as PostgreSQL's ALTER TABLE ... SET
# LOGGED writes the whole table into the WAL.  Checked: a tall table and a wide table, each
# written logged, then unlogged (also flushed meanwhile), then logged again: after replay the
# standby reads every row, the unlogged ones too; promoted, it reads them and takes writes.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

t_cluster_with_fdw
wc_psql -c "CREATE FOREIGN TABLE l (rowkey text COLLATE \"C\", family text COLLATE \"C\",
                                    qualifier text COLLATE \"C\", ts bigint, value text)
            SERVER wide OPTIONS (families 'a')" \
        -c "CREATE FOREIGN TABLE w (rowkey text COLLATE \"C\", v text OPTIONS (cell 'f:v'))
            SERVER wide OPTIONS (families 'f')" \
        -c "INSERT INTO l VALUES ('a1', 'a', 'q', 1, 'logged')" \
        -c "INSERT INTO w VALUES ('a1', 'logged')" >/dev/null || t_bail "the tables"
wc_standby_create sb || t_bail "a streaming standby"
wc_psql -c "ALTER FOREIGN TABLE l OPTIONS (ADD logged 'false')" \
        -c "ALTER FOREIGN TABLE w OPTIONS (ADD logged 'false')" \
        -c "INSERT INTO l VALUES ('b2', 'a', 'q', 1, 'unlogged')" \
        -c "INSERT INTO w VALUES ('b2', 'unlogged')" \
        -c "SELECT widecol_flush('w')" \
        -c "INSERT INTO w VALUES ('b3', 'unlogged')" \
        -c "ALTER FOREIGN TABLE l OPTIONS (SET logged 'true')" \
        -c "ALTER FOREIGN TABLE w OPTIONS (SET logged 'true')" \
        -c "INSERT INTO l VALUES ('c3', 'a', 'q', 1, 'logged again')" \
        -c "INSERT INTO w VALUES ('c3', 'logged again')" >/dev/null || t_bail "the switches"
L="SELECT string_agg(rowkey || ':' || value, ',' ORDER BY rowkey) FROM l"
W="SELECT string_agg(rowkey || ':' || v, ',' ORDER BY rowkey) FROM w"
WANT_L="a1:logged,b2:unlogged,c3:logged again"
WANT_W="a1:logged,b2:unlogged,b3:unlogged,c3:logged again"
t_is "$(wc_psql -c "$L")|$(wc_psql -c "$W")" "$WANT_L|$WANT_W" "the primary holds every row"
t_ok "the standby replays the primary's WAL" wc_wait_replay sb
t_is "$(wc_node_psql sb -c "$L" 2>&1)" "$WANT_L" "the standby reads the tall table whole, the rows written unlogged too"
t_is "$(wc_node_psql sb -c "$W" 2>&1)" "$WANT_W" "and the wide table"
t_ok "the standby is promoted" wc_node_promote sb
t_is "$(wc_node_psql sb -c "$L" 2>&1)|$(wc_node_psql sb -c "$W" 2>&1)" "$WANT_L|$WANT_W" \
    "the promoted standby reads both"
promoted_writes() {
    wc_node_psql sb -c "INSERT INTO l VALUES ('d4', 'a', 'q', 1, 'promoted')" \
                    -c "INSERT INTO w VALUES ('d4', 'promoted')" \
                    -c "SELECT widecol_flush('l'), widecol_flush('w')" >/dev/null
}
t_ok "the promoted standby takes writes and flushes of both" promoted_writes
t_is "$(wc_node_psql sb -c "SELECT count(*) FROM l")|$(wc_node_psql sb -c "SELECT count(*) FROM w")" "4|5" \
    "and reads them"
t_done
