//! What a transaction returned, as one number: every statement's rows (each value with its
//! type) and rows affected, hashed in order (XXH3). Two backends that replay the same seed
//! must agree transaction by transaction; the first that does not is shown.

use std::hash::Hasher;

use twox_hash::XxHash3_64;

/// One value of a result row, as SQLite types it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(&'a str),
    Blob(&'a [u8]),
}

/// The running hash of one transaction's results.
pub struct Digest {
    h: XxHash3_64,
    rows: u64,
}

impl Default for Digest {
    fn default() -> Self {
        Digest {
            h: XxHash3_64::with_seed(0),
            rows: 0,
        }
    }
}

impl Digest {
    pub fn cell(&mut self, c: Cell<'_>) {
        match c {
            Cell::Null => self.h.write_u8(0),
            Cell::Int(i) => {
                self.h.write_u8(1);
                self.h.write_i64(i);
            }
            Cell::Real(r) => {
                self.h.write_u8(2);
                // -0.0 and 0.0 are one value; every NaN is one value.
                let bits = if r == 0.0 {
                    0
                } else if r.is_nan() {
                    f64::NAN.to_bits()
                } else {
                    r.to_bits()
                };
                self.h.write_u64(bits);
            }
            Cell::Text(t) => {
                self.h.write_u8(3);
                self.h.write_u64(t.len() as u64);
                self.h.write(t.as_bytes());
            }
            Cell::Blob(b) => {
                self.h.write_u8(4);
                self.h.write_u64(b.len() as u64);
                self.h.write(b);
            }
        }
    }

    /// Ends a row.
    pub fn row(&mut self) {
        self.h.write_u8(0xfe);
        self.rows += 1;
    }

    /// Ends a statement that changed `changed` rows (0 for reads).
    pub fn statement(&mut self, changed: u64) {
        self.h.write_u8(0xff);
        self.h.write_u64(changed);
    }

    /// Rows returned so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    pub fn finish(&self) -> u64 {
        self.h.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(rows: &[&[Cell<'_>]], changed: u64) -> u64 {
        let mut d = Digest::default();
        for r in rows {
            for c in *r {
                d.cell(*c);
            }
            d.row();
        }
        d.statement(changed);
        d.finish()
    }

    #[test]
    fn types_rows_and_changes_all_count() {
        let base = digest(&[&[Cell::Int(1), Cell::Text("a")]], 0);
        assert_eq!(base, digest(&[&[Cell::Int(1), Cell::Text("a")]], 0));
        // The same figures typed differently, split differently, or another count changed.
        assert_ne!(base, digest(&[&[Cell::Real(1.0), Cell::Text("a")]], 0));
        assert_ne!(base, digest(&[&[Cell::Int(1)], &[Cell::Text("a")]], 0));
        assert_ne!(base, digest(&[&[Cell::Int(1), Cell::Blob(b"a")]], 0));
        assert_ne!(base, digest(&[&[Cell::Int(1), Cell::Text("a")]], 1));
        assert_ne!(
            digest(&[&[Cell::Text("ab"), Cell::Text("")]], 0),
            digest(&[&[Cell::Text("a"), Cell::Text("b")]], 0)
        );
        assert_eq!(
            digest(&[&[Cell::Real(0.0)]], 0),
            digest(&[&[Cell::Real(-0.0)]], 0)
        );
    }

    /// Two values of one type and length differ: the digest reads the values, not only
    /// their type tags and lengths.
    #[test]
    fn values_of_one_type_and_length_differ() {
        let pairs: [(Cell<'_>, Cell<'_>); 5] = [
            (Cell::Int(1), Cell::Int(2)),
            (Cell::Int(-1), Cell::Int(1)),
            (Cell::Real(1.5), Cell::Real(2.5)),
            (Cell::Text("ab"), Cell::Text("ba")),
            (Cell::Blob(b"\x00\x01"), Cell::Blob(b"\x01\x00")),
        ];
        for (a, b) in pairs {
            assert_ne!(digest(&[&[a]], 0), digest(&[&[b]], 0), "{a:?} {b:?}");
        }
        // Every NaN is one value; rows counted.
        assert_eq!(
            digest(&[&[Cell::Real(f64::NAN)]], 0),
            digest(&[&[Cell::Real(-f64::NAN)]], 0)
        );
        let mut d = Digest::default();
        d.cell(Cell::Null);
        d.row();
        d.row();
        assert_eq!(d.rows(), 2);
    }
}
