#!/usr/bin/env bash
# t/090_pg_dump.sh -- pg_dump --include-foreign-data=wide dumps a widecol table consistently with
# the ordinary tables of the same dump, while writers run.
#
# A widecol table w and an ordinary table h are written in the same transactions (t_twin_sql in
# t/testlib.sh: INSERTs, UPDATEs, DELETEs, rollbacks, savepoints, bulk writes) by 3 sessions
# while a 4th calls widecol_flush() and widecol_compact() on w.  An ordinary table m of 300,000
# rows sorts between h and w, so pg_dump copies w a while after its snapshot was taken and
# after it copied h.  Each round, during the load:
#   - a plain-format dump (one REPEATABLE READ transaction): the COPY data of w equals that of h,
#     line for line once sorted;
#   - a custom-format dump with --snapshot, on a snapshot that another session exported (SET
#     TRANSACTION SNAPSHOT) a second before: h as that session saw it, w the same; then
#     pg_restore -j 2 into a new database, where w (a widecol table again) equals h.
# (pg_dump 15 refuses --include-foreign-data with -j, whose workers would import a snapshot.)
# The writers must have committed during the dumps (else the test proves nothing).  In the end
# the live w still equals h.
# 4 rounds; 12 with WIDECOL_LONG=1.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

rounds=4
t_long && rounds=12

t_cluster_with_fdw
t_twin_create main w h || t_bail "the tables w and h"
wc_psql -c "CREATE TABLE m (i int, pad text)" \
        -c "INSERT INTO m SELECT i, repeat('m', 40) FROM generate_series(1, 300000) i" >/dev/null ||
    t_bail "the ordinary table m"
{ t_twin_sql w h d0 1 20; echo "SELECT widecol_flush('w');"; } | wc_psql -f - >/dev/null ||
    t_bail "the first writes to w and h"

work=$(mktemp -d /tmp/widecol-dump.XXXXXX) || t_bail "mktemp"
wc_on_exit "rm -rf '$work'"

# copy_data FILE TABLE: the data lines of "COPY public.TABLE (...) FROM stdin;" in the SQL FILE,
# sorted (the heap's order and the store's differ)
copy_data() {
    awk -v head="COPY public.$2 (" '
        index($0, head) == 1 && / FROM stdin;$/ { on = 1; found = 1; next }
        on && $0 == "\\." { on = 0 }
        on { print }
        END { if (!found) print "(no COPY of '"$2"')" }' "$1" | LC_ALL=C sort
}

# same_data FILE: the COPY data of w and h in FILE are equal and not empty; shows the difference
same_data() {
    local file=$1 a b
    copy_data "$file" w >"$file.w"
    copy_data "$file" h >"$file.h"
    a=$(wc -l <"$file.w"); b=$(wc -l <"$file.h")
    if cmp -s "$file.w" "$file.h" && [ "$b" -gt 0 ] && ! grep -q '^(no COPY' "$file.h"; then
        return 0
    fi
    t_diag "w: $a lines, h: $b lines; lines only in w: $(comm -23 "$file.w" "$file.h" | wc -l), only in h: $(comm -13 "$file.w" "$file.h" | wc -l)"
    { comm -23 "$file.w" "$file.h" | head -n 3 | sed 's/^/only in w: /'
      comm -13 "$file.w" "$file.h" | head -n 3 | sed 's/^/only in h: /'; } | cut -c 1-140 | sed 's/^/#   /'
    return 1
}

hrows() { wc_psql -c "SELECT count(*) FROM h"; }

# db_equal DB: in database DB, w holds the rows of h (t_twin_equal)
db_equal() { PGDATABASE=$1 t_twin_equal main w h; }

t_twin_load_start main w h d1 1000000
for ((i = 0; i < 600; i++)); do [ "$(hrows)" -gt 1500 ] && break; sleep 0.1; done

# An exporting session: a REPEATABLE READ transaction that exports its snapshot for pg_dump
# --snapshot (pg_dump 15 refuses --include-foreign-data with -j, whose workers would import one).
mkfifo "$work/exporter.in" || t_bail "mkfifo"
PGAPPNAME=exporter "$WC_PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 <"$work/exporter.in" \
    >"$work/exporter.out" 2>"$work/exporter.err" &
exporter=$!
wc_on_exit "kill $exporter"
exec 7>"$work/exporter.in"
# exporter_ask SQL: runs SQL in the exporting session, prints the line it returned
exporter_ask() {
    local n i
    n=$(wc -l <"$work/exporter.out")
    printf '%s\n' "$1" >&7
    for ((i = 0; i < 300; i++)); do
        [ "$(wc -l <"$work/exporter.out")" -gt "$n" ] && { sed -n "$((n + 1))p" "$work/exporter.out"; return 0; }
        kill -0 "$exporter" 2>/dev/null || break
        sleep 0.1
    done
    t_diag "the exporting session did not answer $1: $(head -c 300 "$work/exporter.err")"
    return 1
}

moved=0
for ((r = 1; r <= rounds; r++)); do
    # --- plain format: pg_dump's own REPEATABLE READ transaction
    before=$(hrows)
    if ! "$WC_PGBIN/pg_dump" --include-foreign-data=wide -f "$work/plain$r.sql" 2>"$work/plain$r.err"; then
        sed 's/^/#   /' "$work/plain$r.err" | head -n 5
        t_bail "round $r: pg_dump (plain) failed"
    fi
    after=$(hrows)
    [ "$after" != "$before" ] && moved=$((moved + 1))
    t_ok "round $r: a plain dump taken while the writers ran ($before -> $after rows in h) holds the same rows for w as for h ($(copy_data "$work/plain$r.sql" h | wc -l) rows)" \
        same_data "$work/plain$r.sql"

    # --- custom format on a snapshot exported by another session a second before
    printf '%s\n' "BEGIN ISOLATION LEVEL REPEATABLE READ;" >&7
    snap=$(exporter_ask "SELECT pg_export_snapshot();") || t_bail "round $r: pg_export_snapshot()"
    snaprows=$(exporter_ask "SELECT count(*) FROM h;") || t_bail "round $r: the exporter's count of h"
    sleep 1
    before=$(hrows)
    if ! "$WC_PGBIN/pg_dump" --include-foreign-data=wide --snapshot="$snap" -Fc -f "$work/custom$r.dump" \
            2>"$work/custom$r.err"; then
        sed 's/^/#   /' "$work/custom$r.err" | head -n 5
        t_bail "round $r: pg_dump --snapshot -Fc failed"
    fi
    after=$(hrows)
    printf '%s\n' "COMMIT;" >&7
    [ "$after" != "$snaprows" ] && moved=$((moved + 1))
    "$WC_PGBIN/pg_restore" -f "$work/custom$r.sql" "$work/custom$r.dump" || t_bail "round $r: pg_restore -f"
    t_is "$(copy_data "$work/custom$r.sql" h | wc -l)" "$snaprows" \
        "round $r: pg_dump --snapshot dumps h as of the exported snapshot ($snaprows rows then, $before when the dump began)"
    t_ok "round $r: ... and the same rows for w as for h" same_data "$work/custom$r.sql"

    # --- restored into a new database
    if [ "$r" -le 2 ] || t_long; then
        wc_psql -c "CREATE DATABASE restored$r" || t_bail "CREATE DATABASE restored$r"
        if ! "$WC_PGBIN/pg_restore" -j 2 -d "restored$r" "$work/custom$r.dump" 2>"$work/restore$r.err"; then
            sed 's/^/#   /' "$work/restore$r.err" | head -n 5
            t_bail "round $r: pg_restore -j 2 into restored$r failed"
        fi
        t_is "$(PGDATABASE=restored$r wc_psql -c "SELECT count(*) FROM pg_foreign_table WHERE ftrelid = 'w'::regclass")" 1 \
            "round $r: the restored w is a widecol table"
        t_ok "round $r: restored (pg_restore -j 2), w holds exactly the rows of h ($(PGDATABASE=restored$r wc_psql -c "SELECT count(*) FROM h" 2>/dev/null) rows)" \
            db_equal "restored$r"
        wc_psql -c "DROP DATABASE restored$r" >/dev/null
    fi
    rm -f "$work/plain$r".* "$work/custom$r".*
done
exec 7>&-
wait "$exporter"
t_ok "the writers committed during $moved of the $((rounds * 2)) dumps (at least one)" test "$moved" -gt 0

t_twin_load_stop
t_twin_load_wait "the load"
t_twin_compare main w h "after the load"

t_done
