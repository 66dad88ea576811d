//! The script guard against SQLite itself, over generated scripts: each statement of a known
//! class (a read, a write, or one the guard must refuse) is dressed as an attacker would dress
//! it (comments between its words, one with a `;` inside, tabs, CR LF and form feeds, a byte
//! order mark, random case, a CTE in front, a BEGIN ... COMMIT around it), and
//! - the guard's verdict must be the statement's class, whatever the dress;
//! - every statement the guard lets through is then run by SQLite on a real file of its own,
//!   and must do no more than its verdict says: a read changes no byte, and nothing changes
//!   which databases the connection has or adds a file beside the database.
//!
//! `BENCHSCOPE_PROPTEST_CASES` sets the number of scripts (256 by default; the long runs in
//! the guards' notes used millions).

use std::path::Path;

use proptest::prelude::*;

use super::{Kind, Mix, Placeholders};

/// What a statement is, as the generator knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Read,
    Write,
    Refused,
}

const STATEMENTS: &[(&str, Class)] = &[
    ("SELECT v FROM t WHERE id = 1", Class::Read),
    ("SELECT count ( * ) FROM t", Class::Read),
    (
        "WITH x AS ( SELECT id FROM t ) SELECT * FROM x",
        Class::Read,
    ),
    ("VALUES ( 1 ) , ( 2 )", Class::Read),
    ("SELECT * FROM pragma_table_info ( 't' )", Class::Read),
    ("EXPLAIN SELECT v FROM t", Class::Read),
    ("PRAGMA table_info ( t )", Class::Read),
    ("PRAGMA page_count", Class::Read),
    ("SELECT json_extract ( '{\"a\":1}' , '$.a' )", Class::Read),
    ("INSERT INTO t ( v ) VALUES ( 'x' )", Class::Write),
    ("UPDATE t SET v = 'y' WHERE id = 2", Class::Write),
    ("DELETE FROM t WHERE id = 3", Class::Write),
    (
        "WITH d AS ( SELECT 3 AS id ) DELETE FROM t WHERE id IN ( SELECT id FROM d )",
        Class::Write,
    ),
    (
        "WITH n AS ( SELECT 1 ) INSERT INTO t ( v ) SELECT 'w' FROM n",
        Class::Write,
    ),
    ("REPLACE INTO t VALUES ( 4 , 'z' )", Class::Write),
    (
        "INSERT INTO t ( v ) VALUES ( 'r' ) RETURNING id",
        Class::Write,
    ),
    ("CREATE TABLE u ( a )", Class::Write),
    ("CREATE INDEX ti ON t ( v )", Class::Write),
    ("CREATE VIEW vw AS SELECT 1", Class::Write),
    ("CREATE TEMP TABLE tt ( a )", Class::Write),
    ("DROP TABLE w", Class::Write),
    ("ANALYZE", Class::Write),
    ("ATTACH ':memory:' AS a", Class::Refused),
    ("ATTACH 'other.db' AS a", Class::Refused),
    ("DETACH a", Class::Refused),
    ("PRAGMA journal_mode = delete", Class::Refused),
    ("PRAGMA writable_schema = 1", Class::Refused),
    ("PRAGMA optimize", Class::Refused),
    ("PRAGMA wal_checkpoint ( TRUNCATE )", Class::Refused),
    ("VACUUM", Class::Refused),
    ("VACUUM INTO 'copied.db'", Class::Refused),
    ("SELECT load_extension ( 'x.so' )", Class::Refused),
    ("SAVEPOINT s", Class::Refused),
    ("RELEASE s", Class::Refused),
];

/// What may stand between two words of a statement.
const GAPS: &[&str] = &[
    " ",
    "\t",
    "\n",
    "\r\n",
    "\x0c",
    "/* c */",
    "/**/",
    "-- c\n",
    " /* ; */ ",
    "/* -- */",
    "\n-- ATTACH 'x' AS y;\n",
];

fn dressed(words: &[&str], gaps: &[usize], upper: &[bool]) -> String {
    let mut out = String::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            out.push_str(GAPS[gaps[i % gaps.len()] % GAPS.len()]);
        }
        // Case changes the words, not what is quoted.
        if w.starts_with('\'') || w.starts_with('"') {
            out.push_str(w);
        } else if upper[i % upper.len()] {
            out.push_str(&w.to_ascii_uppercase());
        } else {
            out.push_str(&w.to_ascii_lowercase());
        }
    }
    out
}

/// A database of the tests' own, as bytes: copied into each case's folder.
fn template() -> &'static [u8] {
    use std::sync::OnceLock;
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.db");
        let c = rusqlite::Connection::open(&p).unwrap();
        c.execute_batch(
            "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);
             CREATE TABLE w(a);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50)
             INSERT INTO t SELECT i, 'row ' || i FROM n;",
        )
        .unwrap();
        drop(c);
        std::fs::read(&p).unwrap()
    })
}

fn listing(dir: &Path) -> Vec<String> {
    crate::testing::folder_listing(dir)
        .into_iter()
        .map(|(n, _, _)| n)
        .filter(|n| !n.ends_with("-journal") && !n.ends_with("-wal") && !n.ends_with("-shm"))
        .collect()
}

fn cases() -> u32 {
    crate::testing::proptest_cases()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn the_guard_judges_as_sqlite_does_however_a_statement_is_dressed(
        which in 0..STATEMENTS.len(),
        gaps in proptest::collection::vec(0..GAPS.len(), 1..8),
        upper in proptest::collection::vec(any::<bool>(), 1..8),
        bom in any::<bool>(),
        lead in 0..GAPS.len(),
        in_tx in any::<bool>(),
    ) {
        let (text, class) = STATEMENTS[which];
        let words: Vec<&str> = text.split(' ').collect();
        let stmt = dressed(&words, &gaps, &upper);
        let mut script = String::new();
        if bom {
            script.push('\u{feff}');
        }
        script.push_str(GAPS[lead]);
        if in_tx {
            script.push_str(&dressed(&["BEGIN"], &gaps, &upper));
            script.push_str(";\n");
        }
        script.push_str(&stmt);
        script.push_str(";\n");
        if in_tx {
            script.push_str(&dressed(&["COMMIT"], &gaps, &upper));
            script.push_str(";\n");
        }
        let mut mix = Mix::parse(&[("g.sql".into(), script.clone(), 1)], &[])
            .map_err(|e| TestCaseError::fail(format!("{script:?}: the lexer refused it: {e}")))?;
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("t.db");
        std::fs::write(&db, template()).unwrap();
        let verdict = super::judge::judge(&db, &mut mix);
        match (class, &verdict) {
            (Class::Refused, Err(_)) => return Ok(()),
            (Class::Refused, Ok(())) => {
                return Err(TestCaseError::fail(format!("{script:?} was let through")));
            }
            (_, Err(e)) => {
                return Err(TestCaseError::fail(format!("{script:?} was refused: {e}")));
            }
            (_, Ok(())) => {}
        }
        let kinds: Vec<Kind> = mix.statements().map(|s| s.kind).collect();
        let want = if class == Class::Read { Kind::Read } else { Kind::Write };
        prop_assert!(kinds.contains(&want), "{script:?}: {kinds:?}, not {want:?}");
        prop_assert_eq!(mix.read_only(), class == Class::Read, "{:?}", script);
        // What the judged statements do when SQLite runs them, on a file of their own.
        let before = std::fs::read(&db).unwrap();
        let files = listing(dir.path());
        {
            let c = rusqlite::Connection::open(&db).unwrap();
            let dbs = |c: &rusqlite::Connection| -> i64 {
                // The temp database opens with a temp table: only others are attached.
                c.query_row(
                    "SELECT count(*) FROM pragma_database_list WHERE name NOT IN ('main', 'temp')",
                    [],
                    |r| r.get(0),
                )
                .unwrap()
            };
            prop_assert_eq!(dbs(&c), 0);
            for s in mix.statements() {
                let sql = s.sql(Placeholders::Numbered);
                let mut st = c.prepare(&sql).unwrap();
                let mut rows = st.raw_query();
                while rows.next().unwrap().is_some() {}
            }
            prop_assert_eq!(dbs(&c), 0, "{:?} attached a database", script);
        }
        prop_assert_eq!(listing(dir.path()), files, "{:?} added a file", script);
        if class == Class::Read {
            prop_assert!(std::fs::read(&db).unwrap() == before, "{:?} wrote", script);
        }
    }
}
