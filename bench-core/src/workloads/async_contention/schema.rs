//! Each database of `async_contention`: blocks and their transactions, seeded from a fixed
//! seed with 100 blocks of 5 transactions over 50 accounts, identical for every strategy.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub const CREATE: &str = "
CREATE TABLE blocks (id INTEGER PRIMARY KEY, hash TEXT NOT NULL, parent_hash TEXT NOT NULL,
    timestamp INTEGER NOT NULL, data BLOB NOT NULL);
CREATE INDEX blocks_timestamp ON blocks(timestamp);
CREATE INDEX blocks_hash ON blocks(hash);
CREATE TABLE transactions (id INTEGER PRIMARY KEY, block_id INTEGER NOT NULL,
    from_account TEXT NOT NULL, to_account TEXT NOT NULL, amount INTEGER NOT NULL);
CREATE INDEX transactions_from ON transactions(from_account);
CREATE INDEX transactions_to ON transactions(to_account);
";

pub const INSERT_BLOCK: &str =
    "INSERT INTO blocks (hash, parent_hash, timestamp, data) VALUES (?1, ?2, ?3, ?4)";
pub const INSERT_TRANSACTION: &str =
    "INSERT INTO transactions (block_id, from_account, to_account, amount) VALUES (?1, ?2, ?3, ?4)";
pub const COUNT_BLOCKS: &str = "SELECT count(*) FROM blocks";

pub const SEED_BLOCKS: u64 = 100;
pub const SEED_TRANSACTIONS_PER_BLOCK: u64 = 5;
pub const ACCOUNTS: u64 = 50;
/// Transactions a writer adds with each block.
pub const WRITE_TRANSACTIONS: u64 = 3;

#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub hash: String,
    pub parent_hash: String,
    pub timestamp: i64,
    pub data: Vec<u8>,
    pub transactions: Vec<(String, String, i64)>,
}

fn hex(rng: &mut ChaCha8Rng) -> String {
    (0..32)
        .map(|_| format!("{:02x}", rng.random::<u8>()))
        .collect()
}

pub fn account(i: u64) -> String {
    format!("acct-{i:02}")
}

/// The seed blocks, the same for the same `seed`.
pub fn seed_blocks(seed: u64) -> Vec<Block> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut parent = "0".repeat(64);
    (0..SEED_BLOCKS as i64)
        .map(|i| {
            let hash = hex(&mut rng);
            Block {
                hash: hash.clone(),
                parent_hash: std::mem::replace(&mut parent, hash),
                timestamp: 1_700_000_000 + i * 12,
                data: (0..256).map(|_| rng.random::<u8>()).collect(),
                transactions: (0..SEED_TRANSACTIONS_PER_BLOCK)
                    .map(|_| {
                        (
                            account(rng.random_range(0..ACCOUNTS)),
                            account(rng.random_range(0..ACCOUNTS)),
                            rng.random_range(1..1_000_000),
                        )
                    })
                    .collect(),
            }
        })
        .collect()
}

/// The `n`-th block a writer adds (after the seed), with `transactions` transactions.
pub fn written_block(n: u64, transactions: u64) -> Block {
    let mut rng = ChaCha8Rng::seed_from_u64(0xB10C ^ n);
    Block {
        hash: hex(&mut rng),
        parent_hash: format!("{n:064x}"),
        timestamp: 1_700_000_000 + (SEED_BLOCKS + n) as i64 * 12,
        data: (0..256).map(|_| rng.random::<u8>()).collect(),
        transactions: (0..transactions)
            .map(|i| {
                (
                    account(i % ACCOUNTS),
                    account((i + 1) % ACCOUNTS),
                    i as i64 + 1,
                )
            })
            .collect(),
    }
}

#[cfg(feature = "sqlite")]
pub use sql::{count_blocks, create, insert_block, read};

#[cfg(feature = "sqlite")]
mod sql {
    use super::*;
    use rusqlite::{Connection, params};

    /// Creates the tables and the seed on an empty database, in one transaction.
    pub fn create(conn: &mut Connection, seed: u64) -> rusqlite::Result<()> {
        let tx = conn.transaction()?;
        tx.execute_batch(CREATE)?;
        for b in seed_blocks(seed) {
            insert_in(&tx, &b)?;
        }
        tx.commit()
    }

    fn insert_in(conn: &Connection, b: &Block) -> rusqlite::Result<()> {
        conn.prepare_cached(INSERT_BLOCK)?.execute(params![
            b.hash,
            b.parent_hash,
            b.timestamp,
            b.data
        ])?;
        let id = conn.last_insert_rowid();
        let mut stmt = conn.prepare_cached(INSERT_TRANSACTION)?;
        for (from, to, amount) in &b.transactions {
            stmt.execute(params![id, from, to, amount])?;
        }
        Ok(())
    }

    /// A writer's write: one block and its transactions in one transaction. Returns the
    /// transactions written.
    pub fn insert_block(conn: &Connection, b: &Block) -> rusqlite::Result<u64> {
        let tx = conn.unchecked_transaction()?;
        insert_in(&tx, b)?;
        tx.commit()?;
        Ok(b.transactions.len() as u64)
    }

    /// A reader's read: the rows of the JOIN, on the cached statement. Returns how many.
    pub fn read(conn: &Connection) -> rusqlite::Result<u64> {
        let mut stmt = conn.prepare_cached(super::super::READ)?;
        let mut rows = stmt.query([])?;
        let mut n = 0u64;
        while let Some(r) = rows.next()? {
            std::hint::black_box(r.get_ref(5)?);
            n += 1;
        }
        Ok(n)
    }

    pub fn count_blocks(conn: &Connection) -> rusqlite::Result<u64> {
        conn.query_row(COUNT_BLOCKS, [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn the_seed_is_fixed_and_reads_see_fifty_rows() {
            assert_eq!(seed_blocks(1), seed_blocks(1));
            assert_ne!(seed_blocks(1), seed_blocks(2));
            let mut c = Connection::open_in_memory().unwrap();
            create(&mut c, 7).unwrap();
            assert_eq!(count_blocks(&c).unwrap(), SEED_BLOCKS);
            assert_eq!(read(&c).unwrap(), super::super::super::READ_ROWS);
            let n = insert_block(&c, &written_block(1, WRITE_TRANSACTIONS)).unwrap();
            assert_eq!(n, WRITE_TRANSACTIONS);
            assert_eq!(count_blocks(&c).unwrap(), SEED_BLOCKS + 1);
            let txs: i64 = c
                .query_row("SELECT count(*) FROM transactions", [], |r| r.get(0))
                .unwrap();
            assert_eq!(txs as u64, SEED_BLOCKS * SEED_TRANSACTIONS_PER_BLOCK + 3);
        }
    }
}
