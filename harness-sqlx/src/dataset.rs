//! The shared dataset, built and checked with sqlx (same file, same keys as bench-core's).

use std::collections::HashMap;
use std::path::Path;

use bench_core::BenchError;
use bench_core::dataset::{
    BenchRow, CONTENT_SELECT, CREATE_TABLE, Content, DatasetKey, INSERT_ROW, META_INSERT,
    META_SELECT, META_TABLE, RANGE_SELECT, SELECT_BY_ID, check, meta, spot_ids,
};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqliteRow, SqliteSynchronous};
use sqlx::{ConnectOptions, Connection, Executor, Row};

fn s(e: sqlx::Error) -> BenchError {
    BenchError::driver(e)
}

/// Decodes a `SELECT id, name, score, active` row by position.
#[inline]
pub fn decode(row: &SqliteRow) -> Result<BenchRow, sqlx::Error> {
    Ok(BenchRow {
        id: row.try_get(0)?,
        name: row.try_get(1)?,
        score: row.try_get(2)?,
        active: row.try_get(3)?,
    })
}

/// The version of the SQLite library sqlx links.
pub async fn sqlite_version() -> Result<String, BenchError> {
    let mut conn = SqliteConnectOptions::new()
        .in_memory(true)
        .connect()
        .await
        .map_err(s)?;
    let v: String = sqlx::query_scalar("SELECT sqlite_version()")
        .fetch_one(&mut conn)
        .await
        .map_err(s)?;
    conn.close().await.map_err(s)?;
    Ok(v)
}

/// Checks a cached file with sqlx, by the same rules as bench-core's rusqlite check.
pub async fn validate(path: &Path, key: &DatasetKey) -> Result<(), BenchError> {
    let mut conn = SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .connect()
        .await
        .map_err(s)?;
    let mut metas = HashMap::new();
    for (k, _) in meta(key) {
        let v: Result<String, BenchError> = sqlx::query_scalar(META_SELECT)
            .bind(k)
            .fetch_one(&mut conn)
            .await
            .map_err(s);
        metas.insert(k, v);
    }
    let (min, max): (Option<i64>, Option<i64>) = sqlx::query_as(RANGE_SELECT)
        .fetch_one(&mut conn)
        .await
        .map_err(s)?;
    let (count, ids, names, scores, active): (i64, i64, i64, f64, i64) =
        sqlx::query_as(CONTENT_SELECT)
            .fetch_one(&mut conn)
            .await
            .map_err(s)?;
    let counts = (count, min, max);
    let content: Content = (ids, names, scores, active);
    let journal: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&mut conn)
        .await
        .map_err(s)?;
    let mut spots = HashMap::new();
    for id in spot_ids(key.rows) {
        let row = sqlx::query(SELECT_BY_ID)
            .bind(id)
            .fetch_one(&mut conn)
            .await
            .map_err(s);
        spots.insert(id, row.and_then(|r| decode(&r).map_err(s)));
    }
    conn.close().await.map_err(s)?;
    check(
        key,
        &mut |k| {
            metas
                .remove(k)
                .unwrap_or_else(|| Err(BenchError::Other("not read".into())))
        },
        counts,
        content,
        &journal,
        &mut |id| {
            spots
                .remove(&id)
                .unwrap_or_else(|| Err(BenchError::Other("not read".into())))
        },
    )
}

/// Writes the dataset into `path` with sqlx, in one transaction.
pub async fn write(path: &Path, key: &DatasetKey) -> Result<(), BenchError> {
    let mut conn = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(if key.wal {
            SqliteJournalMode::Wal
        } else {
            SqliteJournalMode::Delete
        })
        .synchronous(SqliteSynchronous::Off)
        .connect()
        .await
        .map_err(s)?;
    let mut tx = conn.begin().await.map_err(s)?;
    tx.execute(CREATE_TABLE).await.map_err(s)?;
    tx.execute(META_TABLE).await.map_err(s)?;
    for id in 1..=key.rows as i64 {
        sqlx::query(INSERT_ROW)
            .bind(id)
            .bind(format!("name-{id}"))
            .bind(id as f64 * 0.5)
            .bind(id % 2 == 0)
            .execute(&mut *tx)
            .await
            .map_err(s)?;
    }
    for (k, v) in meta(key) {
        sqlx::query(META_INSERT)
            .bind(k)
            .bind(v)
            .execute(&mut *tx)
            .await
            .map_err(s)?;
    }
    tx.commit().await.map_err(s)?;
    if key.wal {
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            .await
            .map_err(s)?;
    }
    conn.close().await.map_err(s)
}
