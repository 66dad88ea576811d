//! One client's replay of a mix: its own random stream (the run's seed and its client id,
//! so that every backend replays the same sequence), its variables, and the next
//! transaction's steps with every `\set` evaluated and every parameter bound.
//!
//! A transaction's `\set`s are evaluated before its first statement runs: they depend on
//! variables and random draws only (the subset has no `\gset`), so the values are those of
//! pgbench's order, and the latency measured is the database path's alone.

use std::sync::Arc;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::expr::Value;
use super::model::{Command, Kind, Mix, SleepAmount};

/// One step of a transaction, ready to run.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A statement with its parameters' values, in placeholder order.
    Sql(Stmt, Vec<Value>),
    Sleep(Duration),
}

/// Which statement of the mix a step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stmt {
    /// The statement's number across the mix ([`super::model::Statement::index`]).
    pub index: usize,
    pub kind: Kind,
}

/// A client of a run: owns what it needs, so that it can run as a task of its own.
#[derive(Debug, Clone)]
pub struct Client {
    mix: Arc<Mix>,
    rng: ChaCha8Rng,
    vars: Vec<Option<Value>>,
    total: u64,
}

impl Client {
    /// Client `id` (0-based) of a run seeded with `seed`.
    pub fn new(mix: Arc<Mix>, seed: u64, id: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(id);
        let mut vars = mix.defaults.clone();
        vars[0] = Some(Value::Int(id as i64));
        let total = mix.total_weight();
        Client {
            mix,
            rng,
            vars,
            total,
        }
    }

    /// Picks the next script by weight and fills `steps` with its transaction; returns the
    /// script's index in the mix. An error names the file, line and column and why.
    pub fn next(&mut self, steps: &mut Vec<Step>) -> Result<usize, String> {
        steps.clear();
        let mut draw = if self.mix.scripts.len() == 1 {
            0
        } else {
            self.rng.random_range(0..self.total)
        };
        let mut pick = 0;
        for (i, s) in self.mix.scripts.iter().enumerate() {
            if draw < u64::from(s.weight) {
                pick = i;
                break;
            }
            draw -= u64::from(s.weight);
        }
        let script = &self.mix.scripts[pick];
        let fail = |at: super::error::At, m: &str| format!("{}: {m}", script.place(at));
        for c in &script.commands {
            match c {
                Command::Set { slot, expr } => {
                    let v = expr
                        .eval(&self.vars, &mut self.rng)
                        .map_err(|e| fail(e.at, &e.message))?;
                    self.vars[*slot] = Some(v);
                }
                Command::Sleep {
                    amount,
                    unit_us,
                    at,
                } => {
                    let n = match amount {
                        SleepAmount::Const(n) => *n,
                        SleepAmount::Var(slot) => match self.vars[*slot] {
                            Some(Value::Int(n)) if n >= 0 => n,
                            v => {
                                return Err(fail(
                                    *at,
                                    &format!(
                                        "\\sleep by :{} = {}, not a whole number at least 0",
                                        self.mix.vars[*slot],
                                        v.map_or("nothing".into(), |v| v.to_string())
                                    ),
                                ));
                            }
                        },
                    };
                    let us = (n as u64).saturating_mul(*unit_us);
                    steps.push(Step::Sleep(Duration::from_micros(us)));
                }
                Command::Sql(s) => {
                    let mut values = Vec::with_capacity(s.params.len());
                    for slot in &s.params {
                        values.push(self.vars[*slot].ok_or_else(|| {
                            fail(
                                s.at,
                                &format!("variable :{} has no value yet", self.mix.vars[*slot]),
                            )
                        })?);
                    }
                    steps.push(Step::Sql(
                        Stmt {
                            index: s.index,
                            kind: s.kind,
                        },
                        values,
                    ));
                }
            }
        }
        Ok(pick)
    }
}
