//! Constant folding for the checker of `lang.rs`: the values an operator
//! of the language can be known to have without running the program.

use std::borrow::Cow;

use super::ast::{BinOp, UnOp};

/// A value known at compile time.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value<'a> {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Cow<'a, str>),
}

impl<'a> Value<'a> {
    fn truthy(&self) -> bool {
        !matches!(self, Value::Nil | Value::Bool(false))
    }

    fn number(&self) -> Option<f64> {
        match *self {
            Value::Int(n) => Some(n as f64),
            Value::Float(x) => Some(x),
            _ => None,
        }
    }

    fn text(&self) -> Option<Cow<'a, str>> {
        match self {
            Value::Str(s) => Some(s.clone()),
            Value::Int(n) => Some(Cow::Owned(n.to_string())),
            Value::Float(x) => Some(Cow::Owned(format!("{x:?}"))),
            _ => None,
        }
    }

    pub(crate) fn unary(op: UnOp, v: Value<'a>) -> Option<Value<'a>> {
        Some(match (op, v) {
            (UnOp::Not, v) => Value::Bool(!v.truthy()),
            (UnOp::Neg, Value::Int(n)) => Value::Int(n.wrapping_neg()),
            (UnOp::Neg, Value::Float(x)) => Value::Float(-x),
            (UnOp::Len, Value::Str(s)) => Value::Int(s.len() as i64),
            _ => return None,
        })
    }

    /// Lua's semantics, but for what only runs (a comparison of a number
    /// with a string, arithmetic on a string, integer division by zero):
    /// those are not folded.
    pub(crate) fn binary(op: BinOp, a: Value<'a>, b: Value<'a>) -> Option<Value<'a>> {
        use std::cmp::Ordering;
        let order = || match (&a, &b) {
            (Value::Str(x), Value::Str(y)) => Some(x.cmp(y)),
            _ => a.number()?.partial_cmp(&b.number()?),
        };
        Some(match op {
            BinOp::Or => match a.truthy() {
                true => a,
                false => b,
            },
            BinOp::And => match a.truthy() {
                true => b,
                false => a,
            },
            BinOp::Eq | BinOp::Ne => {
                let equal = match (a.number(), b.number()) {
                    (Some(x), Some(y)) => x == y,
                    _ => a == b,
                };
                Value::Bool(equal == (op == BinOp::Eq))
            }
            BinOp::Lt => Value::Bool(order()? == Ordering::Less),
            BinOp::Gt => Value::Bool(order()? == Ordering::Greater),
            BinOp::Le => Value::Bool(order()? != Ordering::Greater),
            BinOp::Ge => Value::Bool(order()? != Ordering::Less),
            BinOp::Concat => {
                let mut text = a.text()?.into_owned();
                text.push_str(&b.text()?);
                Value::Str(Cow::Owned(text))
            }
            _ => match (a, b) {
                (Value::Int(x), Value::Int(y)) => Value::Int(match op {
                    BinOp::Add => x.wrapping_add(y),
                    BinOp::Sub => x.wrapping_sub(y),
                    BinOp::Mul => x.wrapping_mul(y),
                    BinOp::IDiv if y == 0 => return None,
                    BinOp::IDiv => x.wrapping_sub(floor_rem(x, y)).wrapping_div(y),
                    BinOp::Mod if y == 0 => return None,
                    BinOp::Mod => floor_rem(x, y),
                    _ => return Value::float(op, x as f64, y as f64),
                }),
                (a, b) => return Value::float(op, a.number()?, b.number()?),
            },
        })
    }

    fn float(op: BinOp, x: f64, y: f64) -> Option<Value<'a>> {
        Some(Value::Float(match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div => x / y,
            BinOp::IDiv => (x / y).floor(),
            BinOp::Mod => x - (x / y).floor() * y,
            BinOp::Pow => x.powf(y),
            _ => return None,
        }))
    }
}

/// Lua's `%` on integers (`y` not 0): the remainder takes the divisor's
/// sign.
fn floor_rem(x: i64, y: i64) -> i64 {
    let rem = x.wrapping_rem(y);
    match rem != 0 && (rem < 0) != (y < 0) {
        true => rem + y,
        false => rem,
    }
}
