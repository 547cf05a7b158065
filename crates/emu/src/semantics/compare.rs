//! Comparisons of `setp`, `set`, `slct` and `selp`-style boolean combination (ISA §9.7.6).

use ir::op::{BoolOp, CmpOp};

use super::float::{flush, Float};
use super::int::IntType;

/// `a op b` for the boolean that combines a comparison with a predicate operand
/// (`setp.lt.and`).
#[inline]
pub fn apply_bool(op: BoolOp, a: bool, b: bool) -> bool {
    match op {
        BoolOp::And => a && b,
        BoolOp::Or => a || b,
        BoolOp::Xor => a != b,
    }
}

/// Integer comparison. `Lt/Le/Gt/Ge` follow the type's signedness; unordered and NaN
/// tests do not apply to integers and compare as their ordered forms (`Num` is true).
#[inline]
pub fn cmp_int(t: IntType, a: u64, b: u64, op: CmpOp) -> bool {
    use std::cmp::Ordering::*;
    let ord = t.value(a).cmp(&t.value(b));
    let uord = t.wrap(a).cmp(&t.wrap(b));
    match op {
        CmpOp::Eq | CmpOp::Equ => ord == Equal,
        CmpOp::Ne | CmpOp::Neu => ord != Equal,
        CmpOp::Lt | CmpOp::Ltu => ord == Less,
        CmpOp::Le | CmpOp::Leu => ord != Greater,
        CmpOp::Gt | CmpOp::Gtu => ord == Greater,
        CmpOp::Ge | CmpOp::Geu => ord != Less,
        CmpOp::Lo => uord == Less,
        CmpOp::Ls => uord != Greater,
        CmpOp::Hi => uord == Greater,
        CmpOp::Hs => uord != Less,
        CmpOp::Num => true,
        CmpOp::Nan => false,
    }
}

/// Floating-point comparison (`.ftz` flushes subnormal operands first; −0 equals +0).
#[inline]
pub fn cmp_float<F: Float>(a: F, b: F, op: CmpOp, ftz: bool) -> bool {
    let (a, b) = (flush(a, ftz), flush(b, ftz));
    let unordered = a.is_nan() || b.is_nan();
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => !unordered && a != b,
        CmpOp::Lt | CmpOp::Lo => a < b,
        CmpOp::Le | CmpOp::Ls => a <= b,
        CmpOp::Gt | CmpOp::Hi => a > b,
        CmpOp::Ge | CmpOp::Hs => a >= b,
        CmpOp::Equ => unordered || a == b,
        CmpOp::Neu => a != b,
        CmpOp::Ltu => unordered || a < b,
        CmpOp::Leu => unordered || a <= b,
        CmpOp::Gtu => unordered || a > b,
        CmpOp::Geu => unordered || a >= b,
        CmpOp::Num => !unordered,
        CmpOp::Nan => unordered,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_signedness_and_unsigned_forms() {
        let m1 = 0xFFFF_FFFFu64;
        assert!(cmp_int(IntType::S32, m1, 1, CmpOp::Lt));
        assert!(!cmp_int(IntType::U32, m1, 1, CmpOp::Lt));
        assert!(cmp_int(IntType::S32, m1, 1, CmpOp::Hi));
        assert!(cmp_int(IntType::S32, 1, 1, CmpOp::Ls));
        assert!(cmp_int(IntType::S64, u64::MAX, 0, CmpOp::Lt));
        assert!(cmp_int(IntType::U16, 0x1_0000, 0, CmpOp::Eq));
    }

    #[test]
    fn ordered_and_unordered_float() {
        let n = f32::NAN;
        for op in [
            CmpOp::Eq,
            CmpOp::Ne,
            CmpOp::Lt,
            CmpOp::Le,
            CmpOp::Gt,
            CmpOp::Ge,
            CmpOp::Num,
        ] {
            assert!(!cmp_float(n, 1.0, op, false), "{op:?}");
        }
        for op in [
            CmpOp::Equ,
            CmpOp::Neu,
            CmpOp::Ltu,
            CmpOp::Leu,
            CmpOp::Gtu,
            CmpOp::Geu,
            CmpOp::Nan,
        ] {
            assert!(cmp_float(1.0, n, op, false), "{op:?}");
        }
        assert!(cmp_float(-0.0f64, 0.0, CmpOp::Eq, false));
        assert!(!cmp_float(1.0f32, 2.0, CmpOp::Gtu, false));
        assert!(cmp_float(1.0f32, 2.0, CmpOp::Ne, false));
        let sub = f32::from_bits(5);
        assert!(cmp_float(sub, 0.0, CmpOp::Gt, false));
        assert!(cmp_float(sub, 0.0, CmpOp::Eq, true));
        assert!(apply_bool(BoolOp::Xor, true, false) && !apply_bool(BoolOp::And, true, false));
    }
}
