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
