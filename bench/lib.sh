# bench/lib.sh -- what the SQL-level benchmarks share (sourced after scripts/lib.sh).

# bench_build NAME: builds the extension from a fresh copy of the working tree (its tracked and
# untracked files, no build outputs), so that objects left in the tree by another kind of build
# (the sanitizer runs, say) cannot end up in the library we measure, and installs it.  Sets
# BUILDLOG (the build's log), SOFILE (the library the cluster loads: under WC_DESTDIR for a
# private installation) and BENCH_COMMIT (the commit measured, "+local changes" if the tree
# differs); check_so then dies if another build installed over SOFILE meanwhile.
bench_build() {
    BENCH_NAME=$1
    BUILDLOG=$(mktemp "/tmp/widecol-$BENCH_NAME-build.XXXXXX")
    local src
    src=$(mktemp -d "/tmp/widecol-$BENCH_NAME-src.XXXXXX")
    wc_on_exit "rm -rf '$src'"
    if git -C "$WC_ROOT" rev-parse --git-dir >/dev/null 2>&1; then
        (cd "$WC_ROOT" && git ls-files -z -co --exclude-standard |
            tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -xf - -C "$src"
    else
        cp -a "$WC_ROOT/." "$src" && make -C "$src" clean PG_CONFIG="$PG_CONFIG" >/dev/null 2>&1 &&
            make -C "$src/engine" clean >/dev/null 2>&1
    fi
    wc_say "building (in a copy of the tree, $src) and installing widecol_fdw (log: $BUILDLOG)"
    (WC_ROOT=$src; wc_build "$BUILDLOG") || wc_die "the build failed"
    SOFILE=${WC_DESTDIR:-}$("$PG_CONFIG" --pkglibdir)/widecol_fdw.so
    SOSUM=$(md5sum <"$SOFILE")
    BENCH_COMMIT=$(git -C "$WC_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
    if [ -n "$(git -C "$WC_ROOT" status --porcelain -- src engine Makefile 2>/dev/null)" ]; then
        BENCH_COMMIT="$BENCH_COMMIT+local changes"
    fi
}

# Others may reinstall the extension while we run (the library is shared by every cluster of
# one PostgreSQL installation): check before every step that it is still what we installed.
check_so() {
    [ "$(md5sum <"$SOFILE")" = "$SOSUM" ] ||
        wc_die "$SOFILE was replaced during the run (another build installed it): run bench/$BENCH_NAME.sh again"
}

# median X...: the median of the numbers given
median() {
    printf '%s\n' "$@" | sort -g |
        awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# bench_pgbench CLIENTS ARG...: $PGBENCH ARG...  With one client and BENCH_PIN set, pgbench and
# the backend it starts run on CPU 0 (the postmaster's affinity, which a new backend inherits,
# set for the run and given back after): a client and its backend hand each other every
# message, and on two CPUs each hand-over waits for the other CPU to wake, which on the 2-CPU
# VM made one client's reads 3-4 times slower and their rate a matter of where the scheduler
# put the two processes (BENCHMARKS.md, YCSB).
bench_pgbench() {
    local clients=$1 rc=0
    shift
    if [ -z "${BENCH_PIN:-}" ] || [ "$clients" -ne 1 ]; then
        "$PGBENCH" "$@"
        return
    fi
    taskset -p -c 0 "$(wc_postmaster_pid)" >/dev/null
    taskset -c 0 "$PGBENCH" "$@" || rc=$?
    taskset -p -c "0-$(( $(nproc) - 1 ))" "$(wc_postmaster_pid)" >/dev/null
    return $rc
}
