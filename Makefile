# Makefile -- widecol_fdw, a PostgreSQL 15 foreign data wrapper for wide-column data
#
#   make                 build engine/build/libwidecol_engine.a, then widecol_fdw.so
#   make install         install the extension (as root)
#   make installcheck    run the pg_regress suite against a running server
#                        (PGHOST, PGPORT, PGUSER as usual)

MODULE_big = widecol_fdw
OBJS = \
	src/convert.o \
	src/ddl.o \
	src/error.o \
	src/functions.o \
	src/keys.o \
	src/modify.o \
	src/option.o \
	src/optparse.o \
	src/pushdown.o \
	src/resolve.o \
	src/scan.o \
	src/store.o \
	src/wal.o \
	src/wide.o \
	src/widecol_fdw.o

EXTENSION = widecol_fdw
DATA = sql/widecol_fdw--1.0.sql
PGFILEDESC = "widecol_fdw - HBase/Bigtable-style wide-column tables"

REGRESS = basic options types scan pushdown order join modify xact bulk errors functions drop differential snapshot wide

ENGINE_LIB = engine/build/libwidecol_engine.a
SHLIB_LINK += $(ENGINE_LIB) -llz4
EXTRA_CLEAN = results regression.diffs regression.out

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

$(OBJS): src/widecol_fdw.h engine/wc.h

$(shlib): $(ENGINE_LIB)

.PHONY: engine
$(ENGINE_LIB): engine
engine:
	$(MAKE) -C engine
