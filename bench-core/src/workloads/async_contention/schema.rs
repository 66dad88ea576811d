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
