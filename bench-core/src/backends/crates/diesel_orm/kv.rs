//! key_value's store through diesel's query DSL: the upsert as `insert_into(..).on_conflict(..)
//! .do_update()`, the TTL as a filter on `expires_at`, the prefix scan as a range on the key;
//! every statement one `spawn_blocking` closure on a connection held per task, BEGIN and
//! COMMIT through diesel's transaction manager. The schema is made from the store's SQL text
//! (diesel's DSL has no DDL).

use super::DieselHeld;
use crate::error::BenchError;
use crate::workloads::key_value::plan::{self, Kv, NAMESPACE, NOW, TENANT};

mod kv_schema {
    diesel::table! {
        kv_store (tenant_id, namespace, key) {
            tenant_id -> Text,
            namespace -> Text,
            key -> Text,
            value -> Binary,
            expires_at -> Nullable<BigInt>,
            created_at -> BigInt,
            updated_at -> BigInt,
        }
    }
}

use kv_schema::kv_store::dsl;

/// The store through diesel: one connection of its pool held per task.
pub type DieselKv = DieselHeld;

/// The rows of one tenant's namespace that are live at the logical clock.
macro_rules! live {
    () => {{
        use diesel::{BoolExpressionMethods, ExpressionMethods, QueryDsl};
        dsl::kv_store
            .filter(dsl::tenant_id.eq(TENANT))
            .filter(dsl::namespace.eq(NAMESPACE))
            .filter(dsl::expires_at.is_null().or(dsl::expires_at.gt(NOW)))
    }};
}

impl Kv for DieselKv {
    async fn reset(&mut self) -> Result<(), BenchError> {
        self.run_batch(plan::CREATE.join(";")).await
    }
    async fn clear(&mut self) -> Result<(), BenchError> {
        use diesel::RunQueryDsl;
        self.on(|c| diesel::delete(dsl::kv_store).execute(c))
            .await
            .map(drop)
    }
    async fn begin(&mut self) -> Result<(), BenchError> {
        self.tx_begin().await
    }
    async fn commit(&mut self) -> Result<(), BenchError> {
        self.tx_commit().await
    }
    async fn put(
        &mut self,
        key: &str,
        value: &[u8],
        expires_at: Option<i64>,
    ) -> Result<u64, BenchError> {
        use diesel::upsert::excluded;
        use diesel::{ExpressionMethods, RunQueryDsl};
        let (key, value) = (key.to_string(), value.to_vec());
        self.on(move |c| {
            diesel::insert_into(dsl::kv_store)
                .values((
                    dsl::tenant_id.eq(TENANT),
                    dsl::namespace.eq(NAMESPACE),
                    dsl::key.eq(&key),
                    dsl::value.eq(&value),
                    dsl::expires_at.eq(expires_at),
                    dsl::created_at.eq(NOW),
                    dsl::updated_at.eq(NOW),
                ))
                .on_conflict((dsl::tenant_id, dsl::namespace, dsl::key))
                .do_update()
                .set((
                    dsl::value.eq(excluded(dsl::value)),
                    dsl::expires_at.eq(excluded(dsl::expires_at)),
                    dsl::updated_at.eq(excluded(dsl::updated_at)),
                ))
                .execute(c)
        })
        .await
        .map(|n| n as u64)
    }
    async fn get(&mut self, key: &str) -> Result<Option<Vec<u8>>, BenchError> {
        use diesel::{ExpressionMethods, OptionalExtension, QueryDsl, RunQueryDsl};
        let key = key.to_string();
        self.on(move |c| {
            live!()
                .filter(dsl::key.eq(&key))
                .select(dsl::value)
                .first::<Vec<u8>>(c)
                .optional()
        })
        .await
    }
    async fn exists(&mut self, key: &str) -> Result<bool, BenchError> {
        use diesel::{ExpressionMethods, QueryDsl, RunQueryDsl};
        let key = key.to_string();
        self.on(move |c| {
            diesel::select(diesel::dsl::exists(live!().filter(dsl::key.eq(&key))))
                .get_result::<bool>(c)
        })
        .await
    }
    async fn delete(&mut self, key: &str) -> Result<u64, BenchError> {
        use diesel::{ExpressionMethods, QueryDsl, RunQueryDsl};
        let key = key.to_string();
        self.on(move |c| {
            diesel::delete(
                dsl::kv_store
                    .filter(dsl::tenant_id.eq(TENANT))
                    .filter(dsl::namespace.eq(NAMESPACE))
                    .filter(dsl::key.eq(&key)),
            )
            .execute(c)
        })
        .await
        .map(|n| n as u64)
    }
    async fn scan(&mut self, from: &str, to: &str) -> Result<Vec<(String, Vec<u8>)>, BenchError> {
        use diesel::{ExpressionMethods, QueryDsl, RunQueryDsl};
        let (from, to) = (from.to_string(), to.to_string());
        self.on(move |c| {
            live!()
                .filter(dsl::key.ge(&from))
                .filter(dsl::key.lt(&to))
                .order(dsl::key)
                .select((dsl::key, dsl::value))
                .load::<(String, Vec<u8>)>(c)
        })
        .await
    }
}
