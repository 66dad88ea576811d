//! turso (the Rust rewrite of SQLite) on the same dataset file: raw prepared-statement lookups,
//! and the middleware's generic value / result-set path over it. turso runs a query on the
//! calling task, so there is no dispatch hop, and it has no pool: a connection is opened from
//! the `Database`.

use std::path::Path;
use std::time::Instant;

use crate::backends::middleware::value::{ResultSet, Value, decode_bench_row};
use crate::dataset::{BenchRow, SELECT_BY_ID};
use crate::error::BenchError;
use crate::measure::trace::{Phase, PhaseTotals, ns_between};

fn err(e: turso::Error) -> BenchError {
    BenchError::driver(e)
}

pub async fn open(path: &Path) -> Result<turso::Database, BenchError> {
    let p = path
        .to_str()
        .ok_or_else(|| BenchError::Invalid(format!("path {} is not UTF-8", path.display())))?;
    turso::Builder::new_local(p).build().await.map_err(err)
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
    let t3 = TRACE.then(Instant::now);
    let row = decode_bench_row(&rs)?;
    if let (Some(t0), Some(t1), Some(t2), Some(t3)) = (t0, t1, t2, t3) {
        phases.add(Phase::Prepare, ns_between(t0, t1));
        phases.add(Phase::Bind, ns_between(t1, t2));
        phases.add(Phase::ExecuteMarshal, ns_between(t2, t3));
        phases.add(Phase::Decode, ns_between(t3, Instant::now()));
    }
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{DatasetKey, ensure, lookup_order, row};

    #[test]
    fn turso_reads_the_same_rows_in_the_same_order() {
        let dir = tempfile::tempdir().unwrap();
        let key = DatasetKey {
            workload: "t".into(),
            rows: 200,
            seed: 3,
        };
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
