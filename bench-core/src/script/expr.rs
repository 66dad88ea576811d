//! `\set` expressions: pgbench's arithmetic over integers and doubles, `:var` references and
//! the functions of the documented subset (`random` and its three skewed forms, `abs`,
//! `least`, `greatest`, `int`, `double`, `sqrt`). Parsed once, evaluated per transaction.

use rand::Rng;
use rand_distr::{Distribution, Normal, Zipf};

use super::error::{At, ScriptError};

/// A variable's value: pgbench's two numeric kinds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Int(i64),
    Double(f64),
}

impl Value {
    fn as_f64(self) -> f64 {
        match self {
            Value::Int(i) => i as f64,
            Value::Double(d) => d,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Double(d) => write!(f, "{d}"),
        }
    }
}

/// Parses a value given on the command line (`-D name=value`).
pub fn parse_value(text: &str) -> Option<Value> {
    let t = text.trim();
    t.parse::<i64>().map(Value::Int).ok().or_else(|| {
        t.parse::<f64>()
            .ok()
            .filter(|d| d.is_finite())
            .map(Value::Double)
    })
}

/// The functions of the subset, with their arity.
pub const FUNCTIONS: &[(&str, usize)] = &[
    ("random", 2),
    ("random_gaussian", 3),
    ("random_exponential", 3),
    ("random_zipfian", 3),
    ("abs", 1),
    ("least", 2),
    ("greatest", 2),
    ("int", 1),
    ("double", 1),
    ("sqrt", 1),
];

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

/// A parsed expression. Variables are resolved to slots when the script is parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Const(Value),
    Var {
        slot: usize,
        at: At,
    },
    Neg(Box<Expr>, At),
    Bin(Op, Box<Expr>, Box<Expr>, At),
    Call {
        name: &'static str,
        args: Vec<Expr>,
        at: At,
    },
}

/// Where evaluation failed and why (division by zero, a random range upside down).
#[derive(Debug, Clone, PartialEq)]
pub struct EvalError {
    pub at: At,
    pub message: String,
}

type Rng64 = rand_chacha::ChaCha8Rng;

impl Expr {
    /// The value of the expression for one client's variables and random stream.
    pub fn eval(&self, vars: &[Option<Value>], rng: &mut Rng64) -> Result<Value, EvalError> {
        Ok(match self {
            Expr::Const(v) => *v,
            Expr::Var { slot, at } => vars[*slot].ok_or_else(|| EvalError {
                at: *at,
                message: "variable used before any \\set gave it a value".into(),
            })?,
            Expr::Neg(e, at) => match e.eval(vars, rng)? {
                Value::Int(i) => Value::Int(i.checked_neg().ok_or_else(|| EvalError {
                    at: *at,
                    message: out_of_range(format!("-({i})")),
                })?),
                Value::Double(d) => Value::Double(-d),
            },
            Expr::Bin(op, a, b, at) => binary(*op, a.eval(vars, rng)?, b.eval(vars, rng)?, *at)?,
            Expr::Call { name, args, at } => {
                let mut v = Vec::with_capacity(args.len());
                for a in args {
                    v.push(a.eval(vars, rng)?);
                }
                call(name, &v, rng).map_err(|message| EvalError { at: *at, message })?
            }
        })
    }
}

/// What pgbench says of integer arithmetic past 64 bits, with the operation.
fn out_of_range(what: String) -> String {
    format!(
        "bigint out of range: {what} (allowed: integers from {} to {}; pgbench stops here too)",
        i64::MIN,
        i64::MAX
    )
}

fn binary(op: Op, a: Value, b: Value, at: At) -> Result<Value, EvalError> {
    let err = |m: &str| EvalError {
        at,
        message: m.to_string(),
    };
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => {
            let (checked, sign) = match op {
                Op::Add => (x.checked_add(y), "+"),
                Op::Sub => (x.checked_sub(y), "-"),
                Op::Mul => (x.checked_mul(y), "*"),
                Op::Div if y == 0 => return Err(err("division by zero")),
                Op::Div => (x.checked_div(y), "/"),
                Op::Mod if y == 0 => return Err(err("modulo by zero")),
                // As pgbench: anything modulo -1 is 0 (i64::MIN % -1 included).
                Op::Mod if y == -1 => (Some(0), "%"),
                Op::Mod => (x.checked_rem(y), "%"),
            };
            checked
                .map(Value::Int)
                .ok_or_else(|| err(&out_of_range(format!("{x} {sign} {y}"))))
        }
        _ => {
            let (x, y) = (a.as_f64(), b.as_f64());
            Ok(Value::Double(match op {
                Op::Add => x + y,
                Op::Sub => x - y,
                Op::Mul => x * y,
                Op::Div if y == 0.0 => return Err(err("division by zero")),
                Op::Div => x / y,
                Op::Mod => return Err(err("% takes integers only")),
            }))
        }
    }
}

fn int_arg(name: &str, v: Value, which: &str) -> Result<i64, String> {
    match v {
        Value::Int(i) => Ok(i),
        Value::Double(d) => Err(format!("{name}: {which} must be an integer, got {d}")),
    }
}

/// A draw in `[lo, hi]` from `r` in `[0, 1)`.
fn scale(lo: i64, hi: i64, r: f64) -> i64 {
    let width = (hi as i128 - lo as i128 + 1) as f64;
    let off = ((width * r) as i128).min(hi as i128 - lo as i128);
    (lo as i128 + off) as i64
}

fn call(name: &str, a: &[Value], rng: &mut Rng64) -> Result<Value, String> {
    let bounds = || -> Result<(i64, i64), String> {
        let lo = int_arg(name, a[0], "the lower bound")?;
        let hi = int_arg(name, a[1], "the upper bound")?;
        if lo > hi {
            return Err(format!(
                "{name}: the lower bound {lo} is above the upper bound {hi}"
            ));
        }
        Ok((lo, hi))
    };
    Ok(match name {
        "random" => {
            let (lo, hi) = bounds()?;
            Value::Int(rng.random_range(lo..=hi))
        }
        "random_gaussian" => {
            let (lo, hi) = bounds()?;
            let p = a[2].as_f64();
            if p.is_nan() || p < 2.0 {
                return Err(format!("random_gaussian: parameter {p} is below 2.0"));
            }
            // A standard normal draw kept within +-p, mapped onto [lo, hi].
            let n = Normal::new(0.0, 1.0).expect("a valid normal");
            let x = loop {
                let x: f64 = n.sample(rng);
                if x.abs() < p {
                    break x;
                }
            };
            Value::Int(scale(lo, hi, (x + p) / (2.0 * p)))
        }
        "random_exponential" => {
            let (lo, hi) = bounds()?;
            let p = a[2].as_f64();
            if p.is_nan() || p <= 0.0 {
                return Err(format!("random_exponential: parameter {p} is not above 0"));
            }
            // Inverse transform of the exponential density cut at 1.
            let cut = (-p).exp();
            let u: f64 = 1.0 - rng.random::<f64>();
            let r = -(cut + (1.0 - cut) * u).ln() / p;
            Value::Int(scale(lo, hi, r.clamp(0.0, 1.0 - f64::EPSILON)))
        }
        "random_zipfian" => {
            let (lo, hi) = bounds()?;
            let s = a[2].as_f64();
            if !(1.001..=1000.0).contains(&s) {
                return Err(format!(
                    "random_zipfian: parameter {s} is outside 1.001..=1000"
                ));
            }
            let n = (hi as i128 - lo as i128 + 1) as f64;
            let z = Zipf::new(n, s).map_err(|e| format!("random_zipfian: {e}"))?;
            let k: f64 = z.sample(rng);
            Value::Int(lo + (k as i64 - 1))
        }
        "abs" => match a[0] {
            Value::Int(i) => Value::Int(
                i.checked_abs()
                    .ok_or_else(|| out_of_range(format!("abs({i})")))?,
            ),
            Value::Double(d) => Value::Double(d.abs()),
        },
        "least" | "greatest" => {
            let pick_first = (a[0].as_f64() <= a[1].as_f64()) == (name == "least");
            let (x, y) = if pick_first {
                (a[0], a[1])
            } else {
                (a[1], a[0])
            };
            match (x, y) {
                (Value::Int(_), Value::Int(_)) => x,
                _ => Value::Double(x.as_f64()),
            }
        }
        "int" => {
            let d = a[0].as_f64();
            // i64::MAX as a double rounds up to 2^63, which is out of range.
            if !(d.is_finite() && d >= i64::MIN as f64 && d < i64::MAX as f64) {
                return Err(out_of_range(format!("int({d})")));
            }
            Value::Int(d as i64)
        }
        "double" => Value::Double(a[0].as_f64()),
        "sqrt" => {
            let x = a[0].as_f64();
            if x < 0.0 {
                return Err(format!("sqrt: {x} is negative"));
            }
            Value::Double(x.sqrt())
        }
        _ => unreachable!("functions are checked when parsed"),
    })
}

/// Parses an expression of a `\set` line; `col0` is the column the text starts at.
pub(super) struct ExprParser<'a, 'v> {
    chars: Vec<char>,
    pos: usize,
    line: usize,
    col0: usize,
    file: &'a str,
    /// Resolves a variable name to its slot, or says why it cannot be used.
    resolve: &'v mut dyn FnMut(&str) -> Result<usize, String>,
    /// Parentheses, signs and calls open around the place being read.
    open: usize,
}

/// How deep an expression may nest: parentheses, signs and calls around a place, and
/// operators one after another (`1 + 1 + ... + 1` nests as deep as its terms). Evaluating
/// and dropping an expression recurse as deep as it nests.
pub const MAX_DEPTH: usize = 100;

const ALLOWED: &str = "numbers, :variables, + - * / %, parentheses and the functions random, \
random_gaussian, random_exponential, random_zipfian, abs, least, greatest, int, double, sqrt";

impl<'a, 'v> ExprParser<'a, 'v> {
    pub(super) fn new(
        text: &str,
        file: &'a str,
        line: usize,
        col0: usize,
        resolve: &'v mut dyn FnMut(&str) -> Result<usize, String>,
    ) -> Self {
        ExprParser {
            chars: text.chars().collect(),
            pos: 0,
            line,
            col0,
            file,
            resolve,
            open: 0,
        }
    }

    fn too_deep(&self, at: At) -> ScriptError {
        self.error(
            at,
            format!("an expression nested more than {MAX_DEPTH} deep"),
            &format!(
                "at most {MAX_DEPTH} levels of parentheses, signs, calls and operators one after another"
            ),
        )
    }

    fn at(&self) -> At {
        At {
            line: self.line,
            col: self.col0 + self.pos,
        }
    }

    fn error(&self, at: At, found: String, allowed: &str) -> ScriptError {
        ScriptError::new(self.file, at, found, allowed)
    }

    fn skip_ws(&mut self) {
        while self.pos < self.chars.len() && self.chars[self.pos].is_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.chars.get(self.pos).copied()
    }

    fn found(&self) -> String {
        match self.chars.get(self.pos) {
            None => "the end of the line".to_string(),
            Some(_) => {
                let rest: String = self.chars[self.pos..].iter().take(12).collect();
                format!("{:?}", rest.split_whitespace().next().unwrap_or(&rest))
            }
        }
    }

    /// The whole text as one expression.
    pub(super) fn parse(mut self) -> Result<Expr, ScriptError> {
        if self.peek().is_none() {
            return Err(self.error(self.at(), "no expression".into(), ALLOWED));
        }
        let (e, _) = self.sum()?;
        if self.peek().is_some() {
            return Err(self.error(
                self.at(),
                format!("{} after the expression", self.found()),
                ALLOWED,
            ));
        }
        Ok(e)
    }

    /// An expression and how deep it nests.
    fn sum(&mut self) -> Result<(Expr, usize), ScriptError> {
        let (mut e, mut depth) = self.product()?;
        loop {
            let op = match self.peek() {
                Some('+') => Op::Add,
                Some('-') => Op::Sub,
                _ => return Ok((e, depth)),
            };
            let at = self.at();
            self.pos += 1;
            let (r, d) = self.product()?;
            depth = depth.max(d) + 1;
            if depth > MAX_DEPTH {
                return Err(self.too_deep(at));
            }
            e = Expr::Bin(op, Box::new(e), Box::new(r), at);
        }
    }

    fn product(&mut self) -> Result<(Expr, usize), ScriptError> {
        let (mut e, mut depth) = self.unary()?;
        loop {
            let op = match self.peek() {
                Some('*') => Op::Mul,
                Some('/') => Op::Div,
                Some('%') => Op::Mod,
                _ => return Ok((e, depth)),
            };
            let at = self.at();
            self.pos += 1;
            let (r, d) = self.unary()?;
            depth = depth.max(d) + 1;
            if depth > MAX_DEPTH {
                return Err(self.too_deep(at));
            }
            e = Expr::Bin(op, Box::new(e), Box::new(r), at);
        }
    }

    fn unary(&mut self) -> Result<(Expr, usize), ScriptError> {
        let at = self.at();
        self.open += 1;
        if self.open > MAX_DEPTH {
            return Err(self.too_deep(at));
        }
        let r = match self.peek() {
            Some('-') => {
                let at = self.at();
                self.pos += 1;
                self.unary()
                    .map(|(e, d)| (Expr::Neg(Box::new(e), at), d + 1))
            }
            Some('+') => {
                self.pos += 1;
                self.unary()
            }
            _ => self.atom(),
        };
        self.open -= 1;
        r
    }

    fn ident(&mut self) -> String {
        let start = self.pos;
        while self
            .chars
            .get(self.pos)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
        {
            self.pos += 1;
        }
        self.chars[start..self.pos].iter().collect()
    }

    fn atom(&mut self) -> Result<(Expr, usize), ScriptError> {
        let at = self.at();
        match self.peek() {
            Some('(') => {
                self.pos += 1;
                let e = self.sum()?;
                if self.peek() != Some(')') {
                    return Err(self.error(
                        self.at(),
                        format!("{} where ) closes", self.found()),
                        ALLOWED,
                    ));
                }
                self.pos += 1;
                Ok(e)
            }
            Some(':') => {
                self.pos += 1;
                let name = self.ident();
                if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
                    return Err(self.error(at, "\":\" without a variable name".into(), ALLOWED));
                }
                let slot = (self.resolve)(&name).map_err(|allowed| {
                    self.error(at, format!("undefined variable :{name}"), &allowed)
                })?;
                Ok((Expr::Var { slot, at }, 1))
            }
            Some(c) if c.is_ascii_digit() || c == '.' => {
                let start = self.pos;
                while self
                    .chars
                    .get(self.pos)
                    .is_some_and(|c| c.is_ascii_digit() || *c == '.' || *c == 'e' || *c == 'E')
                {
                    self.pos += 1;
                }
                let text: String = self.chars[start..self.pos].iter().collect();
                let v = if text.contains(['.', 'e', 'E']) {
                    text.parse::<f64>()
                        .ok()
                        .filter(|d| d.is_finite())
                        .map(Value::Double)
                } else {
                    text.parse::<i64>().ok().map(Value::Int)
                };
                v.map(|v| (Expr::Const(v), 1)).ok_or_else(|| {
                    self.error(
                        at,
                        format!("{text:?}, not a number"),
                        "integers and decimals",
                    )
                })
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let name = self.ident();
                let known = FUNCTIONS
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(&name));
                let Some(&(fname, arity)) = known else {
                    return Err(self.error(
                        at,
                        format!("{name:?}, not a function of the subset"),
                        ALLOWED,
                    ));
                };
                if self.peek() != Some('(') {
                    return Err(self.error(
                        self.at(),
                        format!("{} after {fname}", self.found()),
                        "( and its arguments",
                    ));
                }
                self.pos += 1;
                let mut args = Vec::new();
                let mut depth = 1;
                if self.peek() != Some(')') {
                    loop {
                        let (e, d) = self.sum()?;
                        depth = depth.max(d + 1);
                        if depth > MAX_DEPTH {
                            return Err(self.too_deep(at));
                        }
                        args.push(e);
                        match self.peek() {
                            Some(',') => self.pos += 1,
                            Some(')') => break,
                            _ => {
                                return Err(self.error(
                                    self.at(),
                                    format!("{} in the arguments of {fname}", self.found()),
                                    ", or )",
                                ));
                            }
                        }
                    }
                }
                self.pos += 1;
                if args.len() != arity {
                    return Err(self.error(
                        at,
                        format!(
                            "{fname} with {} argument{}",
                            args.len(),
                            if args.len() == 1 { "" } else { "s" }
                        ),
                        &format!("{fname} takes {arity}"),
                    ));
                }
                Ok((
                    Expr::Call {
                        name: fname,
                        args,
                        at,
                    },
                    depth,
                ))
            }
            _ => Err(self.error(at, self.found(), ALLOWED)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn parse(text: &str) -> Result<Expr, ScriptError> {
        let names = ["n".to_string()];
        ExprParser::new(text, "t.sql", 3, 10, &mut |name| {
            names
                .iter()
                .position(|n| n == name)
                .ok_or_else(|| "n".to_string())
        })
        .parse()
    }

    fn eval(text: &str) -> Result<Value, EvalError> {
        let mut rng = Rng64::seed_from_u64(1);
        parse(text).unwrap().eval(&[Some(Value::Int(7))], &mut rng)
    }

    #[test]
    fn arithmetic_follows_pgbench_kinds_and_precedence() {
        assert_eq!(eval("1 + 2 * 3").unwrap(), Value::Int(7));
        assert_eq!(eval("(1 + 2) * 3").unwrap(), Value::Int(9));
        assert_eq!(eval("7 / 2").unwrap(), Value::Int(3));
        assert_eq!(eval("7.0 / 2").unwrap(), Value::Double(3.5));
        assert_eq!(eval("-:n % 4").unwrap(), Value::Int(-3));
        assert_eq!(eval(":n * 100000").unwrap(), Value::Int(700_000));
        assert_eq!(eval("greatest(:n, 9)").unwrap(), Value::Int(9));
        assert_eq!(eval("least(:n, 9.5)").unwrap(), Value::Double(7.0));
        assert_eq!(eval("int(sqrt(50))").unwrap(), Value::Int(7));
        assert_eq!(eval("abs(-3)").unwrap(), Value::Int(3));
    }

    #[test]
    fn integer_arithmetic_past_64_bits_stops_as_pgbench_does() {
        let big = i64::MAX.to_string();
        for (text, shown) in [
            (format!("{big} + 1"), format!("{big} + 1")),
            (format!("-{big} - 2"), format!("-{big} - 2")),
            (format!("{big} * 2"), format!("{big} * 2")),
            (format!("(-{big} - 1) / -1"), format!("{} / -1", i64::MIN)),
            (format!("-(-{big} - 1)"), format!("-({})", i64::MIN)),
            (format!("abs(-{big} - 1)"), format!("abs({})", i64::MIN)),
            (
                "int(1e19)".to_string(),
                "int(10000000000000000000)".to_string(),
            ),
        ] {
            let e = eval(&text).unwrap_err();
            assert!(
                e.message.starts_with(&format!(
                    "bigint out of range: {shown} (allowed: integers from"
                )),
                "{text}: {}",
                e.message
            );
        }
        // At the edges, and what pgbench gives for % -1.
        assert_eq!(
            eval(&format!("{big} - 1 + 1")).unwrap(),
            Value::Int(i64::MAX)
        );
        assert_eq!(eval(&format!("(-{big} - 1) % -1")).unwrap(), Value::Int(0));
        assert_eq!(eval("int(-9.9)").unwrap(), Value::Int(-9));
    }

    #[test]
    fn expressions_nest_at_most_max_depth_and_deeper_is_refused_not_a_crash() {
        let ok = format!(
            "{}1{}",
            "(".repeat(MAX_DEPTH - 1),
            ")".repeat(MAX_DEPTH - 1)
        );
        assert_eq!(eval(&ok).unwrap(), Value::Int(1));
        let chain = vec!["1"; MAX_DEPTH].join(" + ");
        assert_eq!(eval(&chain).unwrap(), Value::Int(MAX_DEPTH as i64));
        // What overflowed the stack before: 10,000 levels of each kind.
        for deep in [
            format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000)),
            format!("{}1", "-".repeat(10_000)),
            vec!["1"; 10_000].join(" + "),
            vec!["2"; 10_000].join(" * "),
            format!("{}1{}", "abs(".repeat(10_000), ")".repeat(10_000)),
            format!("{}1", "- + ".repeat(10_000)),
        ] {
            let e = parse(&deep).unwrap_err().to_string();
            assert!(
                e.contains(&format!("nested more than {MAX_DEPTH} deep")),
                "{e}"
            );
        }
        let e = parse(&vec!["1"; MAX_DEPTH + 1].join(" + ")).unwrap_err();
        assert!(e.to_string().contains("at most 100 levels"), "{e}");
    }

    /// Each kind of nesting at the limit is taken and one more is refused: a product chain,
    /// negations under a product, a function's argument, and many terms side by side (which
    /// nest nothing: the count of open levels goes down as each closes).
    #[test]
    fn every_kind_of_nesting_stops_exactly_at_the_limit() {
        let refused = |text: &str| {
            let e = parse(text).unwrap_err().to_string();
            assert!(
                e.contains("at most 100 levels") || e.contains("nested more than"),
                "{e}"
            );
        };
        // A chain of 100 factors is 100 deep; 101 is not taken.
        let product = vec!["1"; MAX_DEPTH].join(" * ");
        assert_eq!(eval(&product).unwrap(), Value::Int(1));
        refused(&vec!["1"; MAX_DEPTH + 1].join(" * "));
        // 98 negations are 99 deep, times 1 is 100; 99 of them make 101.
        let negated = format!("1 * {}1", "-".repeat(MAX_DEPTH - 2));
        assert_eq!(eval(&negated).unwrap(), Value::Int(1));
        refused(&format!("1 * {}1", "-".repeat(MAX_DEPTH - 1)));
        // A function's argument 99 deep is 100 with the call; 100 deep is refused.
        let call = format!("abs({})", vec!["1"; MAX_DEPTH - 1].join(" + "));
        assert_eq!(eval(&call).unwrap(), Value::Int(MAX_DEPTH as i64 - 1));
        refused(&format!("abs({})", vec!["1"; MAX_DEPTH].join(" + ")));
        // 128 terms in a balanced tree are 8 deep: taken, however many terms there are.
        fn balanced(k: u32) -> String {
            if k == 0 {
                "1".into()
            } else {
                format!("({} + {})", balanced(k - 1), balanced(k - 1))
            }
        }
        assert_eq!(eval(&balanced(7)).unwrap(), Value::Int(128));
    }

    #[test]
    fn signs_names_and_stray_characters_read_as_pgbench_reads_them() {
        assert_eq!(eval("+3").unwrap(), Value::Int(3));
        assert_eq!(eval("- +3").unwrap(), Value::Int(-3));
        let err = |text: &str| parse(text).unwrap_err().to_string();
        assert!(
            err(":").contains("\":\" without a variable name"),
            "{}",
            err(":")
        );
        assert!(
            err(":1x").contains("\":\" without a variable name"),
            "{}",
            err(":1x")
        );
        // A name may start with `_`: then it is a name that is not a function.
        assert!(
            err("_abs(1)").contains("\"_abs\", not a function of the subset"),
            "{}",
            err("_abs(1)")
        );
        // Anything else is named as found.
        let e = err("3 + #");
        assert!(e.contains("\"#\"") && !e.contains("not a function"), "{e}");
    }

    #[test]
    fn arithmetic_with_a_double_is_a_double() {
        // Each operator gives a different value here, so none passes for another.
        assert_eq!(eval("1.5 + 2").unwrap(), Value::Double(3.5));
        assert_eq!(eval("1.5 - 2").unwrap(), Value::Double(-0.5));
        assert_eq!(eval("1.5 * 2").unwrap(), Value::Double(3.0));
        assert_eq!(eval("3 / 2.0").unwrap(), Value::Double(1.5));
        assert_eq!(
            eval("5.0 % 2").unwrap_err().message,
            "% takes integers only"
        );
    }

    #[test]
    fn a_value_is_written_in_messages_as_its_number() {
        assert_eq!(Value::Int(-42).to_string(), "-42");
        assert_eq!(Value::Double(0.5).to_string(), "0.5");
        assert_eq!(Value::Double(3.0).to_string(), "3");
    }

    /// `scale` by hand: the width of `[lo, hi]` is `hi - lo + 1`, the offset `width * r`
    /// rounded down (at most `hi - lo`), the draw `lo + offset`.
    #[test]
    fn a_draw_in_zero_to_one_is_scaled_onto_the_range() {
        assert_eq!(scale(1, 100, 0.0), 1);
        assert_eq!(scale(1, 100, 0.5), 51); // 100 * 0.5 = 50
        assert_eq!(scale(1, 100, 0.999_999), 100); // 99.9999 -> 99
        assert_eq!(scale(-5, 5, 0.5), 0); // 11 * 0.5 = 5.5 -> 5
        assert_eq!(scale(-5, 5, 0.0), -5);
        assert_eq!(scale(7, 7, 0.9), 7);
        // The whole of i64: a width of 2^64 does not overflow.
        assert_eq!(scale(i64::MIN, i64::MAX, 0.5), 0);
        assert_eq!(scale(i64::MIN, i64::MAX, 0.0), i64::MIN);
    }

    #[test]
    fn runtime_errors_say_where_and_why() {
        let e = eval("1 / (:n - 7)").unwrap_err();
        assert_eq!(e.message, "division by zero");
        assert_eq!(e.at, At { line: 3, col: 12 });
        assert_eq!(eval("7 % (:n - 7)").unwrap_err().message, "modulo by zero");
        // A double divided by zero is refused too, not infinity.
        assert_eq!(eval("7.0 / 0").unwrap_err().message, "division by zero");
        assert_eq!(eval("7 / 0.0").unwrap_err().message, "division by zero");
        let e = eval("random(5, 1)").unwrap_err();
        assert_eq!(
            e.message,
            "random: the lower bound 5 is above the upper bound 1"
        );
        let e = eval("random_gaussian(1, 10, 1.5)").unwrap_err();
        assert_eq!(e.message, "random_gaussian: parameter 1.5 is below 2.0");
        let e = eval("random_zipfian(1, 10, 0.5)").unwrap_err();
        assert_eq!(
            e.message,
            "random_zipfian: parameter 0.5 is outside 1.001..=1000"
        );
    }

    #[test]
    fn bad_expressions_name_the_place_and_what_is_allowed() {
        let e = parse("random(1, 10) > 3").unwrap_err().to_string();
        assert!(
            e.starts_with("t.sql:3:24: \">\" after the expression; allowed: numbers"),
            "{e}"
        );
        let e = parse("rand(1, 10)").unwrap_err().to_string();
        assert!(
            e.starts_with("t.sql:3:10: \"rand\", not a function of the subset"),
            "{e}"
        );
        let e = parse("random(1)").unwrap_err().to_string();
        assert_eq!(
            e,
            "t.sql:3:10: random with 1 argument; allowed: random takes 2"
        );
        let e = parse(":m + 1").unwrap_err().to_string();
        assert_eq!(e, "t.sql:3:10: undefined variable :m; allowed: n");
        let e = parse("").unwrap_err().to_string();
        assert!(e.starts_with("t.sql:3:10: no expression"), "{e}");
    }

    /// Each draw stays within its bounds, and the skewed ones lean the way their names say:
    /// exponential and zipfian towards the low end, gaussian towards the middle.
    #[test]
    fn random_draws_stay_in_bounds_and_lean_as_named() {
        let mut rng = Rng64::seed_from_u64(42);
        let vars = [Some(Value::Int(0))];
        let draws = |text: &str, rng: &mut Rng64| -> Vec<i64> {
            let e = parse(text).unwrap();
            (0..20_000)
                .map(|_| match e.eval(&vars, rng).unwrap() {
                    Value::Int(i) => i,
                    v => panic!("{v:?}"),
                })
                .collect()
        };
        let low_share = |d: &[i64]| d.iter().filter(|&&x| x <= 10).count() as f64 / d.len() as f64;
        let mid_share = |d: &[i64]| {
            d.iter().filter(|&&x| (41..=60).contains(&x)).count() as f64 / d.len() as f64
        };
        let u = draws("random(1, 100)", &mut rng);
        let g = draws("random_gaussian(1, 100, 2.5)", &mut rng);
        let x = draws("random_exponential(1, 100, 5)", &mut rng);
        let z = draws("random_zipfian(1, 100, 1.5)", &mut rng);
        for d in [&u, &g, &x, &z] {
            assert!(d.iter().all(|v| (1..=100).contains(v)));
        }
        // Uniform: about 10% in 1..=10 and 20% in 41..=60.
        assert!((0.08..0.12).contains(&low_share(&u)), "{}", low_share(&u));
        assert!((0.17..0.23).contains(&mid_share(&u)), "{}", mid_share(&u));
        // Gaussian with p = 2.5 puts about 38% within 41..=60.
        assert!(mid_share(&g) > 0.33, "{}", mid_share(&g));
        // Exponential with p = 5: 1 - e^-0.5 of the mass (about 39%) in the first tenth.
        assert!((0.35..0.44).contains(&low_share(&x)), "{}", low_share(&x));
        // Zipfian s = 1.5: most draws are small.
        assert!(low_share(&z) > 0.6, "{}", low_share(&z));
        assert!(u.contains(&1) && u.contains(&100));
    }

    /// The draws' shapes against values derived by hand (beside each), many draws each so that
    /// a wrong constant moves the figure well outside its window.
    #[test]
    fn skewed_draws_match_their_densities() {
        let mut rng = Rng64::seed_from_u64(7);
        let vars = [Some(Value::Int(0))];
        let mut draws = |text: &str, n: usize| -> Vec<i64> {
            let e = parse(text).unwrap();
            (0..n)
                .map(|_| match e.eval(&vars, &mut rng).unwrap() {
                    Value::Int(i) => i,
                    v => panic!("{v:?}"),
                })
                .collect()
        };
        // Gaussian, p = 5 on [1, 100]: x in (-5, 5) maps to r = (x + 5) / 10, symmetric about
        // 1/2, so the mean is 50.5; x's sd (about 1) makes a value's sd about 10, the mean of
        // 20,000 draws' sd 0.07.
        let g = draws("random_gaussian(1, 100, 5)", 20_000);
        let mean = g.iter().sum::<i64>() as f64 / g.len() as f64;
        assert!((49.5..51.5).contains(&mean), "{mean}");
        // Exponential, p = 5 on [1, 100]: the value 1 is r < 0.01, whose share is
        // (1 - e^-0.05) / (1 - e^-5) = 0.04877 / 0.99326 = 0.0491; 200,000 draws give it
        // within 0.0005 (one sd).
        let x = draws("random_exponential(1, 100, 5)", 200_000);
        let ones = x.iter().filter(|&&v| v == 1).count() as f64 / x.len() as f64;
        assert!((0.046..0.052).contains(&ones), "{ones}");
        // Zipfian, s = 1.5 on [1, 3]: 3 has 3^-1.5 / (1 + 2^-1.5 + 3^-1.5) = 0.124 of the
        // draws, 1 has 0.646.
        let z = draws("random_zipfian(1, 3, 1.5)", 20_000);
        let share = |k: i64| z.iter().filter(|&&v| v == k).count() as f64 / z.len() as f64;
        assert!((0.11..0.14).contains(&share(3)), "{}", share(3));
        assert!((0.63..0.66).contains(&share(1)), "{}", share(1));
    }

    #[test]
    fn bounds_and_parameters_at_their_edges() {
        assert_eq!(eval("random(5, 5)").unwrap(), Value::Int(5));
        // pgbench's smallest gaussian parameter is 2.0 itself.
        assert!(matches!(
            eval("random_gaussian(1, 10, 2.0)").unwrap(),
            Value::Int(1..=10)
        ));
        assert_eq!(
            eval("random_exponential(1, 10, 0)").unwrap_err().message,
            "random_exponential: parameter 0 is not above 0"
        );
        // 2^63 does not fit an integer (i64::MAX as a double rounds up to it).
        assert!(
            eval("int(9223372036854775807.0)")
                .unwrap_err()
                .message
                .starts_with("bigint out of range: int(9223372036854776000)")
        );
        assert_eq!(eval("double(3)").unwrap(), Value::Double(3.0));
        assert_eq!(eval("sqrt(0)").unwrap(), Value::Double(0.0));
        assert_eq!(
            eval("sqrt(-4)").unwrap_err().message,
            "sqrt: -4 is negative"
        );
        // A draw of exactly 1 lands on the upper bound, not past it.
        assert_eq!(scale(1, 100, 1.0), 100);
    }

    #[test]
    fn the_same_seed_draws_the_same_sequence() {
        let e = parse("random_zipfian(1, 1000, 1.2) + random(1, 10)").unwrap();
        let run = |seed| {
            let mut rng = Rng64::seed_from_u64(seed);
            (0..50)
                .map(|_| e.eval(&[None], &mut rng).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
    }

    #[test]
    fn command_line_values_are_integers_or_doubles() {
        assert_eq!(parse_value(" 42 "), Some(Value::Int(42)));
        assert_eq!(parse_value("0.5"), Some(Value::Double(0.5)));
        assert_eq!(parse_value("ten"), None);
        assert_eq!(parse_value("inf"), None);
    }
}
