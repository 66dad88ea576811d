//! The script target on PostgreSQL, through tokio-postgres: the run's SQLite database copied
//! into a schema of the bench's own (tables, their rows and their indexes), each client its
//! own connection, every statement prepared once per connection. A statement PostgreSQL
//! cannot prepare is skipped there, with the server's reason; the schema is dropped when the
//! run ends.

use crate::secret::PgUrl;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use bytes::BytesMut;
use tokio_postgres::types::{IsNull, ToSql, Type, to_sql_checked};

use crate::error::BenchError;
use crate::script::Kind;
use crate::script::digest::{Cell, Digest};

/// A value bound on PostgreSQL, converted to the type the server asks for the parameter (a
/// script's `:var`) or the column (a copied row).
#[derive(Debug, Clone, PartialEq)]
pub enum PgVal {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl PgVal {
    fn kind(&self) -> &'static str {
        match self {
            PgVal::Null => "NULL",
            PgVal::Int(_) => "an integer",
            PgVal::Real(_) => "a real",
            PgVal::Text(_) => "a text",
            PgVal::Blob(_) => "a blob",
        }
    }
}

fn is_text(t: &Type) -> bool {
    [
        Type::TEXT,
        Type::VARCHAR,
        Type::BPCHAR,
        Type::NAME,
        Type::UNKNOWN,
    ]
    .contains(t)
}

type BoxError = Box<dyn std::error::Error + Sync + Send>;

impl ToSql for PgVal {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        match self {
            PgVal::Null => Ok(IsNull::Yes),
            PgVal::Int(n) if *ty == Type::INT8 => n.to_sql(ty, out),
            PgVal::Int(n) if *ty == Type::INT4 => i32::try_from(*n)?.to_sql(ty, out),
            PgVal::Int(n) if *ty == Type::INT2 => i16::try_from(*n)?.to_sql(ty, out),
            PgVal::Int(n) if *ty == Type::FLOAT8 => (*n as f64).to_sql(ty, out),
            PgVal::Int(n) if *ty == Type::FLOAT4 => (*n as f32).to_sql(ty, out),
            PgVal::Int(n) if *ty == Type::BOOL => (*n != 0).to_sql(ty, out),
            PgVal::Int(n) if is_text(ty) => n.to_string().to_sql(ty, out),
            PgVal::Real(x) if *ty == Type::FLOAT8 => x.to_sql(ty, out),
            PgVal::Real(x) if *ty == Type::FLOAT4 => (*x as f32).to_sql(ty, out),
            PgVal::Real(x) if is_text(ty) => x.to_string().to_sql(ty, out),
            PgVal::Text(s) if is_text(ty) => s.to_sql(ty, out),
            PgVal::Blob(b) if *ty == Type::BYTEA => b.to_sql(ty, out),
            v => Err(format!("{} value cannot be bound as {ty}", v.kind()).into()),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// A column's cell, hashed as the SQLite backends hash theirs: integers (and booleans) as
/// integers, floats as reals, text as text, bytea as blobs. Another type is named, with the
/// cast that reads it.
fn cell(row: &tokio_postgres::Row, i: usize, d: &mut Digest) -> Result<(), String> {
    let ty = row.columns()[i].type_();
    let bad = |e: tokio_postgres::Error| e.to_string();
    match ty {
        t if *t == Type::INT8 => d.cell(
            row.try_get::<_, Option<i64>>(i)
                .map_err(bad)?
                .map_or(Cell::Null, Cell::Int),
        ),
        t if *t == Type::INT4 => d.cell(
            row.try_get::<_, Option<i32>>(i)
                .map_err(bad)?
                .map_or(Cell::Null, |n| Cell::Int(n.into())),
        ),
        t if *t == Type::INT2 => d.cell(
            row.try_get::<_, Option<i16>>(i)
                .map_err(bad)?
                .map_or(Cell::Null, |n| Cell::Int(n.into())),
        ),
        t if *t == Type::BOOL => d.cell(
            row.try_get::<_, Option<bool>>(i)
                .map_err(bad)?
                .map_or(Cell::Null, |b| Cell::Int(b.into())),
        ),
        t if *t == Type::FLOAT8 => d.cell(
            row.try_get::<_, Option<f64>>(i)
                .map_err(bad)?
                .map_or(Cell::Null, Cell::Real),
        ),
        t if *t == Type::FLOAT4 => d.cell(
            row.try_get::<_, Option<f32>>(i)
                .map_err(bad)?
                .map_or(Cell::Null, |x| Cell::Real(x.into())),
        ),
        t if is_text(t) => d.cell(
            row.try_get::<_, Option<&str>>(i)
                .map_err(bad)?
                .map_or(Cell::Null, Cell::Text),
        ),
        t if *t == Type::BYTEA => d.cell(
            row.try_get::<_, Option<&[u8]>>(i)
                .map_err(bad)?
                .map_or(Cell::Null, Cell::Blob),
        ),
        t => {
            return Err(format!(
                "column {} ({}) is {t} on PostgreSQL, which is not read here; cast it in the script (::bigint, ::float8, ::text)",
                i + 1,
                row.columns()[i].name()
            ));
        }
    }
    Ok(())
}

/// A statement that failed on PostgreSQL: a serialization failure, a deadlock or a lock not
/// available (`busy`, retried or given up as on SQLite), or another error with the server's
/// message.
pub fn is_busy(e: &tokio_postgres::Error) -> bool {
    use tokio_postgres::error::SqlState;
    e.code().is_some_and(|c| {
        [
            SqlState::T_R_SERIALIZATION_FAILURE,
            SqlState::T_R_DEADLOCK_DETECTED,
            SqlState::LOCK_NOT_AVAILABLE,
        ]
        .contains(c)
    })
}

/// The server's message for an error (tokio-postgres's own display says only "db error").
pub fn message(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => e.to_string(),
    }
}

/// What one statement returned on PostgreSQL: the digest and the rows read, and the rows
/// changed (for a write without RETURNING, the count the server gives).
pub async fn statement(
    c: &tokio_postgres::Client,
    stmt: &tokio_postgres::Statement,
    kind: Kind,
    params: &[PgVal],
) -> Result<Result<(u64, u64, u64), String>, tokio_postgres::Error> {
    let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p as _).collect();
    let mut d = Digest::default();
    let changed = if kind != Kind::Write || !stmt.columns().is_empty() {
        let rows = c.query(stmt, &refs).await?;
        for row in &rows {
            for i in 0..row.len() {
                if let Err(m) = cell(row, i, &mut d) {
                    return Ok(Err(m));
                }
            }
            d.row();
        }
        if kind == Kind::Write { d.rows() } else { 0 }
    } else {
        c.execute(stmt, &refs).await?
    };
    d.statement(changed);
    Ok(Ok((d.finish(), d.rows(), changed)))
}

/// A connection to `url`, its driver task on the current runtime, with `schema` first on its
/// search path.
pub async fn connect(
    url: &PgUrl,
    schema: Option<&str>,
) -> Result<tokio_postgres::Client, BenchError> {
    let (client, conn) = tokio_postgres::connect(url.expose(), tokio_postgres::NoTls)
        .await
        .map_err(|e| {
            BenchError::Other(format!(
                "connecting to PostgreSQL at {url}: {}",
                url.scrub(&message(&e))
            ))
        })?;
    tokio::spawn(conn);
    if let Some(s) = schema {
        client
            .batch_execute(&format!("SET search_path TO {}", quote(s)))
            .await
            .map_err(|e| BenchError::Other(message(&e)))?;
    }
    Ok(client)
}

pub fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// One table of the SQLite database: its columns (name, PostgreSQL type), primary key and
/// rows.
struct Table {
    name: String,
    columns: Vec<(String, &'static str)>,
    key: Vec<String>,
    rows: Vec<Vec<PgVal>>,
}

/// The PostgreSQL type a column of declared type `decl` gets, by SQLite's affinity rules:
/// INT → bigint; CHAR, CLOB, TEXT → text; BLOB → bytea; REAL, FLOA, DOUB → double
/// precision; anything else (numeric affinity, no type) → text.
pub fn pg_type(decl: &str) -> &'static str {
    let d = decl.to_ascii_uppercase();
    if d.contains("INT") {
        "bigint"
    } else if d.contains("CHAR") || d.contains("CLOB") || d.contains("TEXT") {
        "text"
    } else if d.contains("BLOB") {
        "bytea"
    } else if d.contains("REAL") || d.contains("FLOA") || d.contains("DOUB") {
        "double precision"
    } else {
        "text"
    }
}

/// What is copied from a SQLite database: its tables, its indexes' SQL, and notes on what is
/// not copied.
struct Copy {
    tables: Vec<Table>,
    indexes: Vec<String>,
    notes: Vec<String>,
}

/// Reads the SQLite database's ordinary tables and the SQL of its indexes. Virtual tables
/// (FTS5 and the like) and their shadow tables are left out, and named in the notes.
fn read_sqlite(path: &Path) -> Result<Copy, BenchError> {
    use rusqlite::types::ValueRef;
    let c = rusqlite::Connection::open_with_flags(
        crate::scratch::jailed_uri(path, true)?,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI,
    )?;
    let mut listed = c.prepare(
        "SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid",
    )?;
    let all: Vec<(String, String)> = listed
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get::<_, Option<String>>(1)?.unwrap_or_default(),
            ))
        })?
        .collect::<Result<_, _>>()?;
    let virtual_tables: Vec<&str> = all
        .iter()
        .filter(|(_, sql)| sql.to_ascii_uppercase().starts_with("CREATE VIRTUAL TABLE"))
        .map(|(n, _)| n.as_str())
        .collect();
    let mut notes = Vec::new();
    let mut tables = Vec::new();
    for (name, _) in &all {
        if let Some(v) = virtual_tables
            .iter()
            .find(|v| name == *v || name.starts_with(&format!("{v}_")))
        {
            if name == v {
                notes.push(format!(
                    "{name} is a virtual table of SQLite's: not copied to PostgreSQL"
                ));
            }
            continue;
        }
        let mut info = c.prepare(&format!("PRAGMA table_info({})", quote(name)))?;
        let cols: Vec<(String, String, i64)> = info
            .query_map([], |r| Ok((r.get(1)?, r.get(2)?, r.get(5)?)))?
            .collect::<Result<_, _>>()?;
        let mut key: Vec<(i64, String)> = cols
            .iter()
            .filter(|(_, _, pk)| *pk > 0)
            .map(|(n, _, pk)| (*pk, n.clone()))
            .collect();
        key.sort();
        let list = cols
            .iter()
            .map(|(n, _, _)| quote(n))
            .collect::<Vec<_>>()
            .join(", ");
        let mut select = c.prepare(&format!("SELECT {list} FROM {}", quote(name)))?;
        let n = cols.len();
        let mut rows = Vec::new();
        let mut q = select.query([])?;
        while let Some(r) = q.next()? {
            let mut row = Vec::with_capacity(n);
            for i in 0..n {
                row.push(match r.get_ref(i)? {
                    ValueRef::Null => PgVal::Null,
                    ValueRef::Integer(v) => PgVal::Int(v),
                    ValueRef::Real(v) => PgVal::Real(v),
                    ValueRef::Text(t) => PgVal::Text(String::from_utf8_lossy(t).into_owned()),
                    ValueRef::Blob(b) => PgVal::Blob(b.to_vec()),
                });
            }
            rows.push(row);
        }
        tables.push(Table {
            name: name.clone(),
            columns: cols
                .iter()
                .map(|(n, t, _)| (n.clone(), pg_type(t)))
                .collect(),
            key: key.into_iter().map(|(_, n)| n).collect(),
            rows,
        });
    }
    let copied: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
    let mut idx = c.prepare(
        "SELECT tbl_name, sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL",
    )?;
    let indexes: Vec<String> = idx
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .filter(|(t, _)| copied.contains(&t.as_str()))
        .map(|(_, sql)| sql)
        .collect();
    Ok(Copy {
        tables,
        indexes,
        notes,
    })
}

/// Copies the SQLite database at `path` into a new schema `schema` on the server: each
/// table with its columns typed as [`pg_type`] says and its primary key, its rows in
/// batches, then its indexes. Returns what was not copied, with why.
pub async fn copy_database(
    url: &PgUrl,
    path: &Path,
    schema: &str,
) -> Result<Vec<String>, BenchError> {
    let path = path.to_path_buf();
    let Copy {
        tables,
        indexes,
        mut notes,
    } = tokio::task::spawn_blocking(move || read_sqlite(&path))
        .await
        .map_err(|e| BenchError::Other(format!("reading the database to copy: {e}")))??;
    let c = connect(url, None).await?;
    let fail = |what: String| {
        move |e: tokio_postgres::Error| BenchError::Other(format!("{what}: {}", message(&e)))
    };
    c.batch_execute(&format!(
        "CREATE SCHEMA {0}; SET search_path TO {0}",
        quote(schema)
    ))
    .await
    .map_err(fail(format!("creating schema {schema}")))?;
    for t in &tables {
        let mut cols: Vec<String> = t
            .columns
            .iter()
            .map(|(n, ty)| format!("{} {ty}", quote(n)))
            .collect();
        if !t.key.is_empty() {
            cols.push(format!(
                "PRIMARY KEY ({})",
                t.key
                    .iter()
                    .map(|k| quote(k))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        c.batch_execute(&format!(
            "CREATE TABLE {} ({})",
            quote(&t.name),
            cols.join(", ")
        ))
        .await
        .map_err(fail(format!("creating table {}", t.name)))?;
        let n = t.columns.len().max(1);
        // PostgreSQL takes at most 65,535 parameters in a statement.
        let per = (60_000 / n).clamp(1, 1000);
        let names = t
            .columns
            .iter()
            .map(|(c, _)| quote(c))
            .collect::<Vec<_>>()
            .join(", ");
        for chunk in t.rows.chunks(per) {
            let values = (0..chunk.len())
                .map(|r| {
                    let p = (1..=n)
                        .map(|k| format!("${}", r * n + k))
                        .collect::<Vec<_>>();
                    format!("({})", p.join(", "))
                })
                .collect::<Vec<_>>()
                .join(", ");
            let sql = format!("INSERT INTO {} ({names}) VALUES {values}", quote(&t.name));
            let params: Vec<&(dyn ToSql + Sync)> = chunk
                .iter()
                .flatten()
                .map(|v| v as &(dyn ToSql + Sync))
                .collect();
            c.execute(&sql, &params)
                .await
                .map_err(fail(format!("copying the rows of {}", t.name)))?;
        }
    }
    for sql in indexes {
        if let Err(e) = c.batch_execute(&sql).await {
            notes.push(format!(
                "index not made on PostgreSQL ({}): {sql}",
                message(&e)
            ));
        }
    }
    c.batch_execute("ANALYZE")
        .await
        .map_err(fail("ANALYZE".into()))?;
    Ok(notes)
}

/// Drops the schemas a run made (best effort: a run that cannot reach the server any more
/// says so on stderr).
pub async fn drop_schemas(url: &PgUrl, schemas: &[String]) {
    let r = async {
        let c = connect(url, None).await?;
        for s in schemas {
            c.batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", quote(s)))
                .await
                .map_err(|e| BenchError::Other(message(&e)))?;
        }
        Ok::<_, BenchError>(())
    };
    if let Err(e) = r.await {
        crate::text::say(&format!(
            "benchscope: the script's PostgreSQL schemas {schemas:?} were not dropped: {e}"
        ));
    }
}

/// Each client's connection and its statements, prepared once: `None` where PostgreSQL
/// cannot prepare one (skipped, with the reason in `skipped`).
pub struct Prepared {
    pub clients: Vec<tokio_postgres::Client>,
    pub stmts: Vec<Vec<Option<tokio_postgres::Statement>>>,
    /// (statement index, the server's reason).
    pub skipped: Vec<(usize, String)>,
    pub settings: BTreeMap<String, String>,
}

/// `n` connections on `schema`, each with `statements` (PostgreSQL's text, `$n` placeholders;
/// BEGIN, COMMIT and ROLLBACK run as text, not prepared) prepared.
pub async fn prepare(
    url: &PgUrl,
    schema: &str,
    n: usize,
    statements: &[(Arc<str>, Kind)],
) -> Result<Prepared, BenchError> {
    let mut clients = Vec::with_capacity(n);
    let mut stmts = Vec::with_capacity(n);
    let mut skipped = Vec::new();
    for k in 0..n {
        let c = connect(url, Some(schema)).await?;
        let mut mine = Vec::with_capacity(statements.len());
        for (i, (sql, kind)) in statements.iter().enumerate() {
            if matches!(kind, Kind::Begin | Kind::Commit | Kind::Rollback) {
                mine.push(None);
                continue;
            }
            match c.prepare(sql).await {
                Ok(s) => mine.push(Some(s)),
                Err(e) => {
                    if k == 0 {
                        skipped.push((i, message(&e)));
                    }
                    mine.push(None);
                }
            }
        }
        clients.push(c);
        stmts.push(mine);
    }
    let mut settings = BTreeMap::new();
    for name in [
        "server_version",
        "transaction_isolation",
        "synchronous_commit",
    ] {
        if let Ok(r) = clients[0].query_one(&format!("SHOW {name}"), &[]).await {
            settings.insert(name.to_string(), r.get::<_, String>(0));
        }
    }
    Ok(Prepared {
        clients,
        stmts,
        skipped,
        settings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SQLite's affinity rules (https://sqlite.org/datatype3.html, 3.1), in their order: INT
    /// before CHAR (so "CHARINT" is an integer), CHAR/CLOB/TEXT before BLOB and REAL.
    #[test]
    fn declared_types_map_by_sqlite_affinity() {
        for (decl, pg) in [
            ("INTEGER", "bigint"),
            ("tinyint", "bigint"),
            ("CHARINT", "bigint"),
            ("VARCHAR(20)", "text"),
            ("CLOB", "text"),
            ("TEXT", "text"),
            ("BLOB", "bytea"),
            ("REAL", "double precision"),
            ("DOUBLE PRECISION", "double precision"),
            ("FLOAT", "double precision"),
            ("NUMERIC", "text"),
            ("", "text"),
        ] {
            assert_eq!(pg_type(decl), pg, "{decl}");
        }
    }

    /// A value goes to the type the server asks for, or is refused naming both.
    #[test]
    fn values_bind_as_the_server_asks() {
        let mut out = BytesMut::new();
        assert!(PgVal::Int(7).to_sql(&Type::INT4, &mut out).is_ok());
        assert_eq!(&out[..], &7i32.to_be_bytes());
        let refused = |v: PgVal, ty: &Type| match v.to_sql(ty, &mut BytesMut::new()) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{v:?} bound as {ty}"),
        };
        let err = refused(PgVal::Int(1 << 40), &Type::INT4);
        assert!(err.contains("out of range"), "{err}");
        assert_eq!(
            refused(PgVal::Blob(vec![1]), &Type::INT8),
            "a blob value cannot be bound as int8"
        );
        assert!(matches!(
            PgVal::Null.to_sql(&Type::TEXT, &mut BytesMut::new()),
            Ok(IsNull::Yes)
        ));
    }
}
