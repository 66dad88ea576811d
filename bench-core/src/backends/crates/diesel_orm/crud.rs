//! crud_overhead through diesel's query DSL.

use super::{Diesel, DieselHeld};
use crate::error::BenchError;

mod crud_schema {
    diesel::table! {
        benchscope_crud (id) {
            id -> BigInt,
            text_col -> Text,
            int_col -> BigInt,
            real_col -> Double,
            bool_col -> Bool,
        }
    }
}

#[derive(diesel::Queryable, diesel::Insertable)]
#[diesel(table_name = crud_schema::benchscope_crud)]
struct CrudRow {
    id: i64,
    text_col: String,
    int_col: i64,
    real_col: f64,
    bool_col: bool,
}

impl From<CrudRow> for crate::workloads::crud_overhead::plan::Row {
    fn from(r: CrudRow) -> Self {
        crate::workloads::crud_overhead::plan::Row {
            id: r.id,
            text: r.text_col,
            int: r.int_col,
            real: r.real_col,
            flag: r.bool_col,
        }
    }
}

impl From<&crate::workloads::crud_overhead::plan::Row> for CrudRow {
    fn from(r: &crate::workloads::crud_overhead::plan::Row) -> Self {
        CrudRow {
            id: r.id,
            text_col: r.text.clone(),
            int_col: r.int,
            real_col: r.real,
            bool_col: r.flag,
        }
    }
}

/// crud_overhead's operations in diesel's query DSL (its statement cache holds every one of
/// them: none is built from SQL text), BEGIN and COMMIT through diesel's transaction manager,
/// each operation in a `spawn_blocking` closure on one connection of diesel's r2d2 pool held
/// for the bench.
pub type DieselCrud = DieselHeld;

impl Diesel {
    /// One connection of the pool, held by the crud replay.
    pub fn crud(&self) -> Result<DieselCrud, BenchError> {
        self.hold()
    }
}

impl crate::workloads::crud_overhead::plan::Crud for DieselCrud {
    async fn drop_table(
        &mut self,
        sql: &crate::workloads::crud_overhead::plan::Sql,
    ) -> Result<(), BenchError> {
        self.run_batch(sql.drop.clone()).await
    }
    async fn create_table(
        &mut self,
        sql: &crate::workloads::crud_overhead::plan::Sql,
    ) -> Result<(), BenchError> {
        self.run_batch(sql.create.clone()).await
    }
    async fn begin(&mut self) -> Result<(), BenchError> {
        self.tx_begin().await
    }
    async fn commit(&mut self) -> Result<(), BenchError> {
        self.tx_commit().await
    }
    async fn insert(
        &mut self,
        _: &crate::workloads::crud_overhead::plan::Sql,
        r: &crate::workloads::crud_overhead::plan::Row,
    ) -> Result<u64, BenchError> {
        use diesel::RunQueryDsl;
        let row = CrudRow::from(r);
        self.on(move |c| {
            diesel::insert_into(crud_schema::benchscope_crud::table)
                .values(&row)
                .execute(c)
        })
        .await
        .map(|n| n as u64)
    }
    async fn update(
        &mut self,
        _: &crate::workloads::crud_overhead::plan::Sql,
        id: i64,
        text: &str,
    ) -> Result<u64, BenchError> {
        use crud_schema::benchscope_crud::dsl;
        use diesel::{ExpressionMethods, QueryDsl, RunQueryDsl};
        let text = text.to_string();
        self.on(move |c| {
            diesel::update(dsl::benchscope_crud.find(id))
                .set(dsl::text_col.eq(text))
                .execute(c)
        })
        .await
        .map(|n| n as u64)
    }
    async fn delete(
        &mut self,
        _: &crate::workloads::crud_overhead::plan::Sql,
        id: i64,
    ) -> Result<u64, BenchError> {
        use crud_schema::benchscope_crud::dsl;
        use diesel::{QueryDsl, RunQueryDsl};
        self.on(move |c| diesel::delete(dsl::benchscope_crud.find(id)).execute(c))
            .await
            .map(|n| n as u64)
    }
    async fn select(
        &mut self,
        _: &crate::workloads::crud_overhead::plan::Sql,
        above: i64,
    ) -> Result<Vec<crate::workloads::crud_overhead::plan::Row>, BenchError> {
        use crud_schema::benchscope_crud::dsl;
        use diesel::{ExpressionMethods, QueryDsl, RunQueryDsl};
        let rows: Vec<CrudRow> = self
            .on(move |c| dsl::benchscope_crud.filter(dsl::int_col.gt(above)).load(c))
            .await?;
        Ok(rows.into_iter().map(Into::into).collect())
    }
    async fn cached(
        &mut self,
        _: &crate::workloads::crud_overhead::plan::Sql,
        q: usize,
        fresh: bool,
    ) -> Result<crate::workloads::crud_overhead::plan::Answer, BenchError> {
        use crate::workloads::crud_overhead::plan::Answer;
        if fresh {
            // crud_overhead skips select_first on diesel, saying why.
            return Err(BenchError::Other(
                "diesel has no uncached run of its query DSL".into(),
            ));
        }
        use crud_schema::benchscope_crud::dsl;
        use diesel::dsl::{avg, count_star};
        use diesel::{ExpressionMethods, QueryDsl, RunQueryDsl, TextExpressionMethods};
        let rows = |v: Vec<CrudRow>| Answer::Rows(v.into_iter().map(Into::into).collect());
        // The same five queries as Sql::cached, in the DSL.
        Ok(match q {
            0 => rows(
                self.on(|c| {
                    dsl::benchscope_crud
                        .filter(dsl::int_col.between(4000, 4500))
                        .load(c)
                })
                .await?,
            ),
            1 => rows(
                self.on(|c| dsl::benchscope_crud.filter(dsl::bool_col.eq(true)).load(c))
                    .await?,
            ),
            2 => Answer::Count(
                self.on(|c| {
                    dsl::benchscope_crud
                        .filter(dsl::text_col.like("a%"))
                        .select(count_star())
                        .first::<i64>(c)
                })
                .await?,
            ),
            3 => Answer::Count(
                self.on(|c| {
                    dsl::benchscope_crud
                        .filter(dsl::int_col.between(2000, 4000))
                        .select((avg(dsl::real_col), count_star()))
                        .first::<(Option<f64>, i64)>(c)
                })
                .await?
                .1,
            ),
            4 => rows(
                self.on(|c| {
                    dsl::benchscope_crud
                        .order((dsl::real_col.desc(), dsl::id))
                        .limit(10)
                        .load(c)
                })
                .await?,
            ),
            other => return Err(BenchError::Other(format!("no cached query {other}"))),
        })
    }
    async fn insert_values(
        &mut self,
        _: &crate::workloads::crud_overhead::plan::Sql,
        rows: &[crate::workloads::crud_overhead::plan::Row],
    ) -> Result<u64, BenchError> {
        use diesel::RunQueryDsl;
        let rows: Vec<CrudRow> = rows.iter().map(CrudRow::from).collect();
        // One multi-row INSERT (diesel batches a Vec on SQLite).
        self.on(move |c| {
            diesel::insert_into(crud_schema::benchscope_crud::table)
                .values(&rows)
                .execute(c)
        })
        .await
        .map(|n| n as u64)
    }
}
