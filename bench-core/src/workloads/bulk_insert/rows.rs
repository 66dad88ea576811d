//! bulk_insert's table and rows (from the database_benchmark suite): 16 columns,
//! an integer, text, a datetime, a real, a bool, a blob, JSON and nine text columns; rows
//! generated from a fixed seed, so every backend inserts exactly the same data.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Table name used everywhere, PostgreSQL included: benches never touch any other table.
pub const TABLE: &str = "benchscope_bulk_insert";

pub const SQLITE_CREATE: &str = "CREATE TABLE benchscope_bulk_insert (
    id INTEGER NOT NULL, title TEXT NOT NULL, created_at TEXT NOT NULL, amount REAL NOT NULL,
    flag INTEGER NOT NULL, payload BLOB NOT NULL, meta TEXT NOT NULL,
    c1 TEXT NOT NULL, c2 TEXT NOT NULL, c3 TEXT NOT NULL, c4 TEXT NOT NULL, c5 TEXT NOT NULL,
    c6 TEXT NOT NULL, c7 TEXT NOT NULL, c8 TEXT NOT NULL, c9 TEXT NOT NULL)";
pub const POSTGRES_CREATE: &str = "CREATE TABLE benchscope_bulk_insert (
    id BIGINT NOT NULL, title TEXT NOT NULL, created_at TIMESTAMPTZ NOT NULL, amount DOUBLE PRECISION NOT NULL,
    flag BOOLEAN NOT NULL, payload BYTEA NOT NULL, meta JSONB NOT NULL,
    c1 TEXT NOT NULL, c2 TEXT NOT NULL, c3 TEXT NOT NULL, c4 TEXT NOT NULL, c5 TEXT NOT NULL,
    c6 TEXT NOT NULL, c7 TEXT NOT NULL, c8 TEXT NOT NULL, c9 TEXT NOT NULL)";
pub const DROP: &str = "DROP TABLE IF EXISTS benchscope_bulk_insert";
pub const SQLITE_INSERT: &str = "INSERT INTO benchscope_bulk_insert VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)";
pub const POSTGRES_INSERT: &str = "INSERT INTO benchscope_bulk_insert VALUES ($1, $2, $3::timestamptz, $4, $5, $6, $7::jsonb, $8, $9, $10, $11, $12, $13, $14, $15, $16)";
/// The same insert for a driver whose parameter types the server infers (tokio-postgres):
/// the timestamp and the JSON arrive as text and are cast, as sqlx's text binds are.
pub const POSTGRES_INSERT_FROM_TEXT: &str = "INSERT INTO benchscope_bulk_insert VALUES ($1, $2, $3::text::timestamptz, $4, $5, $6, $7::text::jsonb, $8, $9, $10, $11, $12, $13, $14, $15, $16)";
pub const COUNT: &str = "SELECT count(*) FROM benchscope_bulk_insert";
/// Run before the clock starts, after the table is made fresh: with a WAL, it is emptied, so
/// every sample's transaction starts from the same file state (else SQLite's automatic
/// checkpoint lands in every other sample and splits the samples into two groups). A no-op in
/// the other journal modes.
pub const CHECKPOINT: &str = "PRAGMA wal_checkpoint(TRUNCATE)";

/// A scratch database file for one bench, removed (with its WAL) when dropped.
pub struct Scratch(pub std::path::PathBuf);

impl Scratch {
    pub fn new(dir: &std::path::Path, bench: &str) -> Scratch {
        let p = dir.join(format!(
            "bulk-{}-{}.sqlite",
            bench.replace('/', "_"),
            std::process::id()
        ));
        crate::dataset::remove_db_files(&p);
        Scratch(p)
    }
}

/// Where one bench's database lives: a scratch file (removed with it), or an in-memory
/// database (memdb) its connections share.
pub enum Place {
    File(Scratch),
    Memory(std::path::PathBuf),
}

impl Place {
    /// The database of `bench` of a `kind` of target, in `dir` or in memory.
    pub fn new(dir: &std::path::Path, memory: bool, kind: &str, bench: &str) -> Place {
        if memory {
            Place::Memory(std::path::PathBuf::from(format!(
                "file:/benchscope-{kind}-{}-{}?vfs=memdb",
                std::process::id(),
                bench.replace('/', "_")
            )))
        } else {
            Place::File(Scratch::new(dir, &format!("{kind}-{bench}")))
        }
    }

    /// The path or URI every connection opens.
    pub fn path(&self) -> &std::path::Path {
        match self {
            Place::File(s) => &s.0,
            Place::Memory(p) => p,
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        crate::dataset::remove_db_files(&self.0);
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct BulkRow {
    pub id: i64,
    pub title: String,
    /// RFC 3339, UTC.
    pub created_at: String,
    pub amount: f64,
    pub flag: bool,
    pub payload: Vec<u8>,
    /// A JSON object, as text.
    pub meta: String,
    pub texts: [String; 9],
}

fn word(rng: &mut ChaCha8Rng, len: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    (0..len)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

/// `n` rows from `seed`: the same rows for the same arguments, on every backend.
pub fn rows(n: u64, seed: u64) -> Vec<BulkRow> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let base = 1_700_000_000i64;
    (1..=n as i64)
        .map(|id| {
            let created =
                time::OffsetDateTime::from_unix_timestamp(base + id * 37).expect("in range");
            let score: f64 = rng.random_range(0.0..1000.0);
            BulkRow {
                id,
                title: format!("title-{id}-{}", word(&mut rng, 8)),
                created_at: created
                    .format(&time::format_description::well_known::Rfc3339)
                    .expect("formats"),
                amount: (rng.random_range(0.0..100_000.0f64) * 100.0).round() / 100.0,
                flag: rng.random_bool(0.5),
                payload: (0..32).map(|_| rng.random::<u8>()).collect(),
                meta: format!(
                    r#"{{"id":{id},"score":{score:.3},"tags":["{}","{}"]}}"#,
                    word(&mut rng, 4),
                    word(&mut rng, 4)
                ),
                texts: std::array::from_fn(|_| word(&mut rng, 16)),
            }
        })
        .collect()
}

/// A text value as an SQL literal: in single quotes, each quote doubled (the only character a
/// string literal escapes). SQLite ends the SQL text at a NUL, so a text holding one is
/// written as its UTF-8 bytes cast to text instead.
fn quoted(text: &str) -> String {
    if text.contains('\0') {
        let hex: String = text.bytes().map(|b| format!("{b:02X}")).collect();
        format!("CAST(X'{hex}' AS TEXT)")
    } else {
        format!("'{}'", text.replace('\'', "''"))
    }
}

/// How one database writes each kind of value as a literal.
struct Literals {
    text: fn(&str) -> String,
    real: fn(f64) -> String,
    flag: fn(bool) -> &'static str,
    bytes: fn(&[u8]) -> String,
    /// What follows the timestamp's and the JSON's text: a cast, or nothing.
    timestamp: &'static str,
    json: &'static str,
}

/// The rows as SQL text in `lit`'s literals, one `INSERT ... VALUES (...)` per row.
fn batch_text_in(rows: &[BulkRow], lit: &Literals) -> String {
    let mut out = String::with_capacity(rows.len() * 460);
    for r in rows {
        out.push_str(&format!(
            "INSERT INTO {TABLE} VALUES ({}, {}, {}{}, {}, {}, {}, {}{}",
            r.id,
            (lit.text)(&r.title),
            (lit.text)(&r.created_at),
            lit.timestamp,
            (lit.real)(r.amount),
            (lit.flag)(r.flag),
            (lit.bytes)(&r.payload),
            (lit.text)(&r.meta),
            lit.json,
        ));
        for t in &r.texts {
            out.push_str(", ");
            out.push_str(&(lit.text)(t));
        }
        out.push_str(");\n");
    }
    out
}

/// The rows as SQL text, one `INSERT ... VALUES (...)` statement per row with every value a
/// literal (the blob in hex, the real in Rust's shortest form that reads back exactly), as the
/// bulk insert suite hands `execute_batch` its generated text.
pub fn batch_text(rows: &[BulkRow]) -> String {
    batch_text_in(
        rows,
        &Literals {
            text: quoted,
            real: |x| format!("{x:?}"),
            flag: |f| if f { "1" } else { "0" },
            bytes: |b| {
                let hex: String = b.iter().map(|b| format!("{b:02X}")).collect();
                format!("X'{hex}'")
            },
            timestamp: "",
            json: "",
        },
    )
}

/// A text value as a PostgreSQL literal: an escape string (`E'...'`, read the same whatever
/// `standard_conforming_strings` says), each backslash and quote doubled. PostgreSQL's text
/// cannot hold a NUL, bound or written: a text holding one is refused by the server either way.
fn pg_quoted(text: &str) -> String {
    format!("E'{}'", text.replace('\\', "\\\\").replace('\'', "''"))
}

/// A real as a PostgreSQL literal: text cast to `float8`, so the server's own parser (correctly
/// rounded) reads it as a `double precision`, not as a `numeric` first (which has no -0): Rust's
/// shortest form that reads back exactly, or the server's spelling of the three values that
/// have no digits.
fn pg_real(x: f64) -> String {
    let spelled = if x.is_nan() {
        "NaN".to_string()
    } else if x.is_infinite() {
        format!("{}Infinity", if x < 0.0 { "-" } else { "" })
    } else {
        format!("{x:?}")
    };
    format!("'{spelled}'::float8")
}

/// The rows as PostgreSQL SQL text, one `INSERT ... VALUES (...)` per row with every value a
/// literal, for the PostgreSQL benches' `method=batch_text` (the server's simple query protocol
/// runs it as one batch): the timestamp and the JSON cast from text as the prepared insert's
/// text binds are, the bytes in `bytea`'s hex form.
pub fn batch_text_postgres(rows: &[BulkRow]) -> String {
    batch_text_in(
        rows,
        &Literals {
            text: pg_quoted,
            real: pg_real,
            flag: |f| if f { "TRUE" } else { "FALSE" },
            bytes: |b| {
                let hex: String = b.iter().map(|b| format!("{b:02x}")).collect();
                format!("E'\\\\x{hex}'::bytea")
            },
            timestamp: "::timestamptz",
            json: "::jsonb",
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_deterministic_and_well_formed() {
        let a = rows(50, 7);
        assert_eq!(a, rows(50, 7));
        assert_ne!(a, rows(50, 8));
        assert_eq!(a.len(), 50);
        assert_eq!(a[0].id, 1);
        assert_eq!(a[0].created_at, "2023-11-14T22:13:57Z");
        assert!(
            a.iter()
                .all(|r| r.payload.len() == 32 && r.texts.iter().all(|t| t.len() == 16))
        );
        assert!(
            a[3].meta.starts_with(r#"{"id":4,"score":"#),
            "{}",
            a[3].meta
        );
        assert_eq!(SQLITE_INSERT.matches('?').count(), 16);
        assert_eq!(POSTGRES_INSERT.matches('$').count(), 16);
    }

    #[cfg(feature = "sqlite")]
    mod batch {
        use super::super::*;
        use proptest::prelude::*;

        /// What a table holds, row by row, as SQLite reads it back.
        fn table(conn: &rusqlite::Connection) -> Vec<Vec<rusqlite::types::Value>> {
            let mut stmt = conn
                .prepare(&format!("SELECT * FROM {TABLE} ORDER BY rowid"))
                .unwrap();
            let n = stmt.column_count();
            stmt.query_map([], |row| (0..n).map(|i| row.get(i)).collect())
                .unwrap()
                .map(Result::unwrap)
                .collect()
        }

        fn a_row() -> impl Strategy<Value = BulkRow> {
            (
                any::<i64>(),
                ".*",
                ".*",
                any::<f64>().prop_filter("finite", |f| f.is_finite()),
                any::<bool>(),
                proptest::collection::vec(any::<u8>(), 0..40),
                ".*",
                proptest::array::uniform9(".*"),
            )
                .prop_map(
                    |(id, title, created_at, amount, flag, payload, meta, texts)| BulkRow {
                        id,
                        title,
                        created_at,
                        amount,
                        flag,
                        payload,
                        meta,
                        texts,
                    },
                )
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]
            /// Any rows (quotes, NULs, newlines, semicolons and comment marks in the text, any
            /// real, any bytes) inserted as batch text are, value for value, what the
            /// prepared insert binds: the text is made by SQLite's own literal rules, not
            /// guessed, and no value can end a statement or start another.
            #[test]
            fn batch_text_inserts_exactly_what_the_prepared_insert_binds(
                rows in proptest::collection::vec(a_row(), 0..6),
            ) {
                let batch = rusqlite::Connection::open_in_memory().unwrap();
                batch.execute_batch(SQLITE_CREATE).unwrap();
                batch.execute_batch(&batch_text(&rows)).unwrap();
                prop_assert_eq!(batch.total_changes(), rows.len() as u64);
                let mut bound = rusqlite::Connection::open_in_memory().unwrap();
                bound.execute_batch(SQLITE_CREATE).unwrap();
                crate::on_rusqlite::bulk_insert_all(&mut bound, &rows).unwrap();
                prop_assert_eq!(table(&batch), table(&bound));
            }
        }

        #[test]
        fn the_suites_rows_as_text() {
            let rows = rows(2, 7);
            let text = batch_text(&rows);
            assert_eq!(text.lines().count(), 2);
            assert!(
                text.starts_with("INSERT INTO benchscope_bulk_insert VALUES (1, 'title-1-"),
                "{text}"
            );
            let r = BulkRow {
                title: "it's; -- not /* a */ comment".into(),
                ..rows[0].clone()
            };
            assert!(
                batch_text(std::slice::from_ref(&r)).contains("'it''s; -- not /* a */ comment'")
            );
            let r = BulkRow {
                title: "a\0b".into(),
                ..r
            };
            assert!(batch_text(&[r]).contains(", CAST(X'610062' AS TEXT), "));
        }
    }

    #[test]
    fn the_suites_rows_as_postgres_text() {
        let r = BulkRow {
            title: "it's \\ -- not /* a */ comment".into(),
            amount: f64::NEG_INFINITY,
            ..rows(1, 7).remove(0)
        };
        let text = batch_text_postgres(std::slice::from_ref(&r));
        assert!(
            text.starts_with("INSERT INTO benchscope_bulk_insert VALUES (1, E'it''s \\\\ -- not /* a */ comment', E'2023-11-14T22:13:57Z'::timestamptz, '-Infinity'::float8, "),
            "{text}"
        );
        let hex: String = r.payload.iter().map(|b| format!("{b:02x}")).collect();
        assert!(
            text.contains(&format!(", E'\\\\x{hex}'::bytea, E'{{\"id\":1,")),
            "{text}"
        );
        assert!(
            text.ends_with(");\n") && text.lines().count() == 1,
            "{text}"
        );
        assert_eq!(pg_real(f64::NAN), "'NaN'::float8");
        assert_eq!(pg_real(f64::INFINITY), "'Infinity'::float8");
        assert_eq!(pg_real(0.1), "'0.1'::float8");
        assert_eq!(pg_real(-0.0), "'-0.0'::float8");
    }

    /// `batch_text_postgres` against a real server (BENCHSCOPE_POSTGRES_URL; `.ci/run` starts
    /// one): any rows PostgreSQL's types can hold (quotes, backslashes, newlines and comment
    /// marks in the text, any real, any bytes, any JSON string) inserted as text read back,
    /// value for value, as the prepared insert binds them.
    #[cfg(feature = "crates")]
    #[test]
    fn postgres_batch_text_inserts_exactly_what_the_prepared_insert_binds() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};
        let Some(url) = std::env::var("BENCHSCOPE_POSTGRES_URL")
            .ok()
            .filter(|u| !u.is_empty())
        else {
            crate::testing::skip(
                "postgres_batch_text_inserts_exactly_what_the_prepared_insert_binds",
                "BENCHSCOPE_POSTGRES_URL is not set (.ci/postgres.sh starts a throwaway server)",
            );
            return;
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let client = rt.block_on(async {
            let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                .await
                .unwrap();
            tokio::spawn(conn);
            // A temporary table of the same name: searched first, seen by this session only.
            client
                .batch_execute(&POSTGRES_CREATE.replacen("CREATE TABLE", "CREATE TEMP TABLE", 1))
                .await
                .unwrap();
            client
        });
        let table = |client: &tokio_postgres::Client| -> Vec<Vec<Option<String>>> {
            rt.block_on(async {
                let read = format!(
                    "SELECT id::text, title, created_at::text, amount::text, flag::text, \
                     encode(payload, 'hex'), meta::text, c1, c2, c3, c4, c5, c6, c7, c8, c9 \
                     FROM pg_temp.{TABLE} ORDER BY ctid"
                );
                let rows = client.query(&read, &[]).await.unwrap();
                let got = rows
                    .iter()
                    .map(|r| (0..16).map(|i| r.get::<_, Option<String>>(i)).collect())
                    .collect();
                client
                    .batch_execute(&format!("TRUNCATE pg_temp.{TABLE}"))
                    .await
                    .unwrap();
                got
            })
        };
        let text = "[^\\x00]*";
        let row = (
            any::<i64>(),
            text,
            // 0001-01-01 .. 9999-12-31, as the generated rows write them.
            -62_135_596_800i64..253_402_300_799,
            any::<f64>(),
            any::<bool>(),
            proptest::collection::vec(any::<u8>(), 0..40),
            text,
            proptest::array::uniform9(text),
        )
            .prop_map(
                |(id, title, at, amount, flag, payload, tag, texts)| BulkRow {
                    id,
                    title,
                    created_at: time::OffsetDateTime::from_unix_timestamp(at)
                        .unwrap()
                        .format(&time::format_description::well_known::Rfc3339)
                        .unwrap(),
                    amount,
                    flag,
                    payload,
                    meta: serde_json::json!({ "tag": tag }).to_string(),
                    texts,
                },
            );
        let mut runner = TestRunner::new(Config::with_cases(64));
        runner
            .run(&proptest::collection::vec(row, 0..5), |rows| {
                rt.block_on(client.batch_execute(&batch_text_postgres(&rows)))
                    .map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
                let from_text = table(&client);
                rt.block_on(async {
                    let insert = client.prepare(POSTGRES_INSERT_FROM_TEXT).await.unwrap();
                    for r in &rows {
                        let t = &r.texts;
                        client
                            .execute(
                                &insert,
                                &[
                                    &r.id,
                                    &r.title,
                                    &r.created_at,
                                    &r.amount,
                                    &r.flag,
                                    &r.payload,
                                    &r.meta,
                                    &t[0],
                                    &t[1],
                                    &t[2],
                                    &t[3],
                                    &t[4],
                                    &t[5],
                                    &t[6],
                                    &t[7],
                                    &t[8],
                                ],
                            )
                            .await
                            .unwrap();
                    }
                });
                prop_assert_eq!(from_text, table(&client));
                Ok(())
            })
            .unwrap();
    }
}
