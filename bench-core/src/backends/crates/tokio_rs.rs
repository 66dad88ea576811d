//! tokio-rusqlite: a background thread per connection, `Connection::call`.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::backends::raw;
use crate::dataset::BenchRow;
use crate::error::BenchError;
use crate::measure::drive::LookupPath;
use crate::measure::trace::PhaseTotals;
use crate::on_rusqlite::cached_lookup;
use crate::settings::SqliteSettings;

/// `pool` connections of tokio-rusqlite (it has no pool: a "checkout" takes the next handle
/// round robin, a clone of its sender, as an application sharing a few handles would).
pub struct TokioRusqlite {
    conns: Vec<tokio_rusqlite::Connection>,
    next: AtomicUsize,
}

impl TokioRusqlite {
    pub async fn open(path: &Path, s: &SqliteSettings, n: usize) -> Result<Self, BenchError> {
        let mut conns = Vec::with_capacity(n.max(1));
        for _ in 0..n.max(1) {
            let c = tokio_rusqlite::Connection::open_with_flags(path, raw::flags(s))
                .await
                .map_err(BenchError::from)?;
            let s = s.clone();
            c.call(move |c| raw::configure(c, &s))
                .await
                .map_err(BenchError::driver)?;
            conns.push(c);
        }
        Ok(TokioRusqlite {
            conns,
            next: AtomicUsize::new(0),
        })
    }

    /// Every connection opened, in order.
    pub fn connections(&self) -> &[tokio_rusqlite::Connection] {
        &self.conns
    }

    /// What the first connection runs with.
    pub async fn read_back(&self) -> Result<BTreeMap<String, String>, BenchError> {
        self.conns[0]
            .call(|c| Ok::<_, rusqlite::Error>(raw::read_back(c)))
            .await
            .map_err(BenchError::driver)
    }

    /// One round trip to the connection's thread with an empty closure: the dispatch alone.
    pub async fn dispatch(conn: &tokio_rusqlite::Connection) -> Result<u64, BenchError> {
        conn.call(|c| Ok::<_, rusqlite::Error>(c.is_autocommit() as u64))
            .await
            .map_err(BenchError::driver)
    }
}

impl LookupPath for TokioRusqlite {
    type Conn = tokio_rusqlite::Connection;
    async fn checkout(&self) -> Result<Self::Conn, BenchError> {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.conns.len();
        Ok(self.conns[i].clone())
    }
    async fn lookup<const TRACE: bool>(
        &self,
        conn: &mut Self::Conn,
        id: i64,
        _phases: &mut PhaseTotals,
    ) -> Result<BenchRow, BenchError> {
        conn.call(move |c| cached_lookup(c, id))
            .await
            .map_err(BenchError::driver)
    }
}

impl crate::on_rusqlite::OnConn for tokio_rusqlite::Connection {
    async fn on<T: Send + 'static>(
        &mut self,
        f: impl FnOnce(&rusqlite::Connection) -> Result<T, BenchError> + Send + 'static,
    ) -> Result<T, BenchError> {
        self.call(move |c| f(c)).await.map_err(|e| match e {
            tokio_rusqlite::Error::Error(e) => e,
            other => BenchError::driver(other),
        })
    }
}
