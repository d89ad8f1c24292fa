--
-- basic: the worked examples of the data model (webtable, scores, follows, inbox)
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

-- webtable (Bigtable paper); timestamps t3..t9 are 3..9
CREATE FOREIGN TABLE webtable (
    rowkey    text COLLATE "C",
    family    text COLLATE "C",
    qualifier text COLLATE "C",
    ts        bigint,
    value     text
) SERVER wide OPTIONS (families 'contents,anchor,people');

INSERT INTO webtable VALUES
    ('com.cnn.www', 'anchor', 'cnnsi.com', 9, 'CNN'),
    ('com.cnn.www', 'anchor', 'my.look.ca', 8, 'CNN.com'),
    ('com.cnn.www', 'contents', 'html', 6, '<html>...t6'),
    ('com.cnn.www', 'contents', 'html', 5, '<html>...t5'),
    ('com.cnn.www', 'contents', 'html', 3, '<html>...t3'),
    ('com.example.www', 'contents', 'html', 5, '<html>example'),
    ('com.example.www', 'people', 'author', 5, 'John Doe');

-- every cell version, in (rowkey, family, qualifier, ts DESC) order
SELECT * FROM webtable;

-- contents:html at exactly t8: nothing
SELECT * FROM webtable
 WHERE rowkey = 'com.cnn.www' AND family = 'contents' AND qualifier = 'html' AND ts = 8;

-- contents:html at t5 and at t6
SELECT ts, value FROM webtable
 WHERE rowkey = 'com.cnn.www' AND family = 'contents' AND qualifier = 'html' AND ts IN (5, 6);

-- the row with no timestamp: the latest version of each cell
SELECT DISTINCT ON (rowkey, family, qualifier) family, qualifier, ts, value
  FROM webtable WHERE rowkey = 'com.cnn.www'
 ORDER BY rowkey, family, qualifier, ts DESC;

-- the newest version as of t5 (ts <= 5)
SELECT DISTINCT ON (rowkey, family, qualifier) rowkey, family, qualifier, ts, value
  FROM webtable WHERE ts <= 5
 ORDER BY rowkey, family, qualifier, ts DESC;

-- one family only
SELECT rowkey, qualifier, value FROM webtable WHERE family = 'anchor';

-- a Get of the other row
SELECT family, qualifier, ts, value FROM webtable WHERE rowkey = 'com.example.www';

-- a qualifier that does not exist, a row that does not exist
SELECT count(*) FROM webtable WHERE qualifier = 'nothing';
SELECT count(*) FROM webtable WHERE rowkey = 'com.nowhere.www';

-- default max_versions is 3: a fourth version of contents:html pushes out t3
INSERT INTO webtable VALUES ('com.cnn.www', 'contents', 'html', 7, '<html>...t7');
SELECT ts, value FROM webtable WHERE rowkey = 'com.cnn.www' AND family = 'contents';
-- the same (rowkey, family, qualifier, ts) replaces the value
INSERT INTO webtable VALUES ('com.cnn.www', 'contents', 'html', 7, '<html>...t7 again');
SELECT ts, value FROM webtable WHERE rowkey = 'com.cnn.www' AND family = 'contents';

-- scores: empty qualifiers
CREATE FOREIGN TABLE scores (
    rowkey text, family text, qualifier text, ts bigint, value text
) SERVER wide OPTIONS (families 'grade,course');
INSERT INTO scores VALUES
    ('Tom', 'grade', '', 1, '5'),
    ('Tom', 'course', 'math', 1, '97'),
    ('Tom', 'course', 'art', 1, '87'),
    ('Jim', 'grade', '', 1, '4'),
    ('Jim', 'course', '', 1, '89'),
    ('Jim', 'course', '', 2, '80');
SELECT rowkey, family, qualifier, qualifier = '' AS empty_qualifier, ts, value FROM scores;
SELECT rowkey, value FROM scores WHERE family = 'grade' AND qualifier = '';
-- Jim's latest course value
SELECT value FROM scores WHERE rowkey = 'Jim' AND family = 'course' ORDER BY ts DESC LIMIT 1;

-- follows: wide rows and tall rows
CREATE FOREIGN TABLE follows_wide (
    rowkey text COLLATE "C", qualifier text COLLATE "C", value text
) SERVER wide OPTIONS (families 'follows');
INSERT INTO follows_wide VALUES ('userA', 'userB', '1'), ('userA', 'userC', '1'), ('userB', 'userA', '1');
SELECT qualifier FROM follows_wide WHERE rowkey = 'userA';
SELECT rowkey FROM follows_wide WHERE qualifier = 'userA';

CREATE FOREIGN TABLE follows_tall (
    rowkey text COLLATE "C", family text, value text
) SERVER wide OPTIONS (families 'f');
INSERT INTO follows_tall
SELECT md5(a) || md5(b), 'f', '1'
  FROM (VALUES ('userA', 'userB'), ('userA', 'userC'), ('userB', 'userA'), ('userC', 'userA')) v(a, b);
-- does A follow B: one Get
SELECT count(*) FROM follows_tall WHERE rowkey = md5('userA') || md5('userB');
SELECT count(*) FROM follows_tall WHERE rowkey = md5('userB') || md5('userC');
-- whom does A follow: a prefix scan of md5(A)
SELECT substr(rowkey, 33) = md5('userB') AS b, substr(rowkey, 33) = md5('userC') AS c
  FROM follows_tall WHERE starts_with(rowkey, md5('userA'))
 ORDER BY rowkey;

-- inbox: <userId>-<date>-<messageId>
CREATE FOREIGN TABLE inbox (
    rowkey text COLLATE "C", family text, qualifier text, value text
) SERVER wide OPTIONS (families 'm');
INSERT INTO inbox VALUES
    ('12345-20240101-1', 'm', 'subject', 'hello'),
    ('12345-20240102-2', 'm', 'subject', 'again'),
    ('123456-20240101-1', 'm', 'subject', 'other user'),
    ('1234-20240101-1', 'm', 'subject', 'yet another'),
    ('12346-20240101-1', 'm', 'subject', 'neighbour');
-- start 12345, stop 123456 (exclusive): one user's mail (and nothing of 123456)
SELECT rowkey, value FROM inbox WHERE rowkey >= '12345' AND rowkey < '123456';
-- the prefix 12345-
SELECT rowkey, value FROM inbox WHERE rowkey LIKE '12345-%';
-- byte order of numbers as strings: 1, 10, 100, 11, 2
CREATE FOREIGN TABLE numbers (rowkey text COLLATE "C", value text) SERVER wide OPTIONS (families 'f');
INSERT INTO numbers VALUES ('2', 'b'), ('11', 'b'), ('100', 'b'), ('10', 'b'), ('1', 'b');
SELECT rowkey FROM numbers;

DROP FOREIGN TABLE webtable, scores, follows_wide, follows_tall, inbox, numbers;
