//! turso (the Rust rewrite of SQLite) on the same dataset file: raw prepared-statement lookups,
//! and the middleware's generic value / result-set path over it. turso runs a query on the
//! calling task, so there is no dispatch hop, and it has no pool: a connection is opened from
//! the `Database`.

use std::path::Path;
use std::time::Instant;

use crate::backends::middleware::value::{ResultSet, Value, decode_bench_row};
use crate::dataset::{BenchRow, SELECT_BY_ID};
use crate::error::BenchError;
use crate::measure::trace::{Phase, PhaseTotals, traced};

fn err(e: turso::Error) -> BenchError {
    BenchError::driver(e)
}

pub async fn open(path: &Path) -> Result<turso::Database, BenchError> {
    let p = path
        .to_str()
        .ok_or_else(|| BenchError::Invalid(format!("path {} is not UTF-8", path.display())))?;
    turso::Builder::new_local(p).build().await.map_err(err)
}

/// A connection from the `Database` with the run's settings that turso has: synchronous and
/// the page cache. turso keeps its files in WAL mode and locks them exclusively (it has no
/// other locking mode), has no memory map and no SQLite mutex; `read_back` reports so.
pub async fn connect(
    db: &turso::Database,
    s: &crate::settings::SqliteSettings,
) -> Result<turso::Connection, BenchError> {
    let conn = db.connect().map_err(err)?;
    for (name, value) in s.pragmas() {
        if matches!(name, "synchronous" | "cache_size") {
            conn.execute(&format!("PRAGMA {name} = {value}"), ())
                .await
                .map_err(err)?;
        }
    }
    Ok(conn)
}

/// The settings a turso connection runs with, read back from it.
pub async fn read_back(conn: &turso::Connection) -> std::collections::BTreeMap<String, String> {
    use crate::settings::{NAMES, NOT_APPLICABLE, UNSUPPORTED, normalize};
    let mut out = std::collections::BTreeMap::new();
    for name in NAMES {
        let value = if name == "mutex" {
            NOT_APPLICABLE.to_string()
        } else {
            match pragma_value(conn, name).await {
                Some(v) => normalize(name, &v),
                None => UNSUPPORTED.to_string(),
            }
        };
        out.insert(name.to_string(), value);
    }
    out
}

async fn pragma_value(conn: &turso::Connection, name: &str) -> Option<String> {
    let mut rows = conn.query(&format!("PRAGMA {name}"), ()).await.ok()?;
    let row = rows.next().await.ok()??;
    Some(match row.get_value(0).ok()? {
        turso::Value::Integer(i) => i.to_string(),
        turso::Value::Text(t) => t,
        other => format!("{other:?}"),
    })
}

fn int(v: turso::Value, col: &str) -> Result<i64, BenchError> {
    match v {
        turso::Value::Integer(i) => Ok(i),
        other => Err(BenchError::Other(format!(
            "column {col} holds {other:?}, expected an integer"
        ))),
    }
}

/// A turso row of `SELECT id, name, score, active` into `BenchRow`, by position.
#[inline]
pub fn decode_row(row: &turso::Row) -> Result<BenchRow, BenchError> {
    Ok(BenchRow {
        id: int(row.get_value(0).map_err(err)?, "id")?,
        name: match row.get_value(1).map_err(err)? {
            turso::Value::Text(s) => s,
            other => {
                return Err(BenchError::Other(format!(
                    "column name holds {other:?}, expected text"
                )));
            }
        },
        score: match row.get_value(2).map_err(err)? {
            turso::Value::Real(f) => f,
            turso::Value::Integer(i) => i as f64,
            other => {
                return Err(BenchError::Other(format!(
                    "column score holds {other:?}, expected a real"
                )));
            }
        },
        active: int(row.get_value(3).map_err(err)?, "active")? != 0,
    })
}

/// One raw lookup with a statement prepared once.
#[inline]
pub async fn lookup(stmt: &mut turso::Statement, id: i64) -> Result<BenchRow, BenchError> {
    let mut rows = stmt.query([id]).await.map_err(err)?;
    let row = rows
        .next()
        .await
        .map_err(err)?
        .ok_or_else(|| BenchError::Other("no row returned".into()))?;
    decode_row(&row)
}

/// Caller values into turso's parameters.
#[inline]
pub fn to_params(values: &[Value]) -> Vec<turso::Value> {
    values
        .iter()
        .map(|v| match v {
            Value::Null => turso::Value::Null,
            Value::Integer(i) => turso::Value::Integer(*i),
            Value::Real(f) => turso::Value::Real(*f),
            Value::Text(s) => turso::Value::Text(s.clone()),
            Value::Blob(b) => turso::Value::Blob(b.clone()),
        })
        .collect()
}

/// Steps the rows to the end and materialises them into the generic result set.
#[inline]
pub async fn marshal(mut rows: turso::Rows) -> Result<ResultSet, BenchError> {
    let columns = rows.column_names();
    let mut out = Vec::new();
    while let Some(row) = rows.next().await.map_err(err)? {
        let mut values = Vec::with_capacity(columns.len());
        for i in 0..columns.len() {
            values.push(match row.get_value(i).map_err(err)? {
                turso::Value::Null => Value::Null,
                turso::Value::Integer(i) => Value::Integer(i),
                turso::Value::Real(f) => Value::Real(f),
                turso::Value::Text(s) => Value::Text(s),
                turso::Value::Blob(b) => Value::Blob(b),
            });
        }
        out.push(values);
    }
    Ok(ResultSet { columns, rows: out })
}

/// One lookup through the middleware path over turso on an open connection: prepare (cached),
/// bind, execute and marshal, decode. With `TRACE`, the phases go into `phases`.
pub async fn middleware_lookup<const TRACE: bool>(
    conn: &turso::Connection,
    id: i64,
    phases: &mut PhaseTotals,
) -> Result<BenchRow, BenchError> {
    let values = [Value::Integer(id)];
    let t0 = TRACE.then(Instant::now);
    let mut stmt = conn.prepare_cached(SELECT_BY_ID).await.map_err(err)?;
    let t1 = TRACE.then(Instant::now);
    let params = to_params(&values);
    let t2 = TRACE.then(Instant::now);
    let rs = marshal(stmt.query(params).await.map_err(err)?).await?;
    // The statement goes back to the connection's cache as part of executing it.
    drop(stmt);
    let t3 = TRACE.then(Instant::now);
    let row = decode_bench_row(&rs)?;
    drop(rs);
    if let (Some(t0), Some(t1), Some(t2), Some(t3)) = (t0, t1, t2, t3) {
        phases.add(Phase::Prepare, traced(t0, t1));
        phases.add(Phase::Bind, traced(t1, t2));
        phases.add(Phase::ExecuteMarshal, traced(t2, t3));
        phases.add(Phase::Decode, traced(t3, Instant::now()));
    }
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{DatasetKey, lookup_order, row};
    use crate::on_rusqlite::ensure;

    #[test]
    fn turso_reads_the_same_rows_in_the_same_order() {
        let dir = tempfile::tempdir().unwrap();
        let key = DatasetKey::new("t", 200, 3);
        let ds = ensure(dir.path(), &key, &mut |_| {}).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let db = open(&ds.path).await.unwrap();
            let conn = db.connect().unwrap();
            let mut rows = conn
                .query("SELECT id, name, score, active FROM test ORDER BY id", ())
                .await
                .unwrap();
            let mut all = Vec::new();
            while let Some(r) = rows.next().await.unwrap() {
                all.push(decode_row(&r).unwrap());
            }
            assert_eq!(all, (1..=200).map(row).collect::<Vec<_>>());
            // The lookup order is the shared one: every id found, through both turso paths.
            let mut stmt = conn.prepare(SELECT_BY_ID).await.unwrap();
            let mut phases = PhaseTotals::default();
            for id in lookup_order(200, 3).into_iter().take(20) {
                assert_eq!(lookup(&mut stmt, id).await.unwrap(), row(id));
                assert_eq!(
                    middleware_lookup::<true>(&conn, id, &mut phases)
                        .await
                        .unwrap(),
                    row(id)
                );
            }
            assert!(phases.ns[Phase::ExecuteMarshal.index()] > 0);
            // What turso can and cannot match of the run's settings.
            let s = crate::settings::SqliteSettings::default();
            let c = connect(&db, &s).await.unwrap();
            let got = read_back(&c).await;
            assert_eq!(got["journal_mode"], "wal");
            assert_eq!(got["synchronous"], "normal");
            assert_eq!(got["cache_size"], "-2000");
            assert_eq!(got["locking_mode"], "exclusive", "turso has no other");
            assert_eq!(got["mutex"], crate::settings::NOT_APPLICABLE);
            assert!(
                lookup(&mut stmt, 201)
                    .await
                    .unwrap_err()
                    .to_string()
                    .contains("no row")
            );
        });
    }
}
