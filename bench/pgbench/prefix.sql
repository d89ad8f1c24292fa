-- A prefix scan: the 10 consecutive HBase rows user<lo> .. user<lo+9> (100 cells), i.e. the rows
-- of a 5-digit prefix such as 'user01234%' (written as a key range so that a prepared,
-- generic plan can use the btree too; the range is pushed down into widecol the same way).
\set p random(0, :nrows / 10 - 1)
\set lo :p * 10
\set hi :lo + 10
SELECT * FROM @TABLE@ WHERE rowkey >= 'user' || lpad(:lo::text, 6, '0')
                        AND rowkey <  'user' || lpad(:hi::text, 6, '0');
