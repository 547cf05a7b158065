//! What kind of hardware operation an instruction is: one classification that every
//! consumer projects onto its own granularity (the compiler's datapaths for ORF/LRF
//! placement, the timing model's opcode classes for latency and execution units).
//!
//! The classes follow how GPUs execute PTX: simple integer operations (moves, logic,
//! shifts, compares, selects) apart from integer adds, multiplies and multiply-adds;
//! minimum/maximum apart; FP32 add, multiply, fused multiply-add and division;
//! transcendentals on the special-function unit; each FP64 group; warp-wide shuffles
//! apart from votes; loads, stores, atomics, prefetches, texture operations and fences
//! on the memory pipeline; branches, calls, returns and barriers as control.

use crate::op::{
    BulkCopyDirection, CpAsyncBulk, CpAsyncBulkTensor, MbarrierKind, Op, Rounding, ScalarType,
};

/// The hardware class of an operation (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ExecClass {
    /// Integer moves, logic, shifts, bit manipulation, compares, selects, integer
    /// conversions, address conversions.
    IntSimple,
    /// Integer add, subtract, absolute value, negation.
    IntAdd,
    /// Integer minimum and maximum.
    IntMinMax,
    /// Integer multiply (`mul`, `mul24`).
    IntMul,
    /// Integer multiply-add and its relatives (`mad`, `mad24`, `sad`, `dp4a`, `dp2a`).
    IntMad,
    /// Integer divide and remainder.
    IntDiv,
    /// FP32 (and FP16) add and subtract.
    FloatAdd,
    /// FP32 (and FP16) absolute value, negation, sign copy, class tests, compares and
    /// selects.
    FloatSimple,
    /// Conversions with a floating-point side, both sides at most 32 bits (`cvt` between
    /// f32, f16 and 8- to 32-bit integers; the CUDA C Programming Guide's "all other type
    /// conversions" row of its arithmetic-instruction throughput table).
    FloatConvert,
    /// FP32 minimum and maximum.
    FloatMinMax,
    /// FP32 multiply.
    FloatMul,
    /// FP32 fused multiply-add.
    FloatFma,
    /// FP32 division.
    FloatDiv,
    /// Reciprocal, square root, reciprocal square root, sine, cosine, base-2 logarithm
    /// and exponential, hyperbolic tangent (FP32).
    Transcendental,
    /// FP64 add and subtract.
    DoubleAdd,
    /// FP64 absolute value, negation, sign copy, class tests, compares and selects.
    DoubleSimple,
    /// Conversions with a floating-point side and a 64-bit side (`cvt` to or from f64,
    /// and between f32/f16 and 64-bit integers; the throughput table's "type conversions
    /// from and to 64-bit types" row). Integer-to-integer conversions are
    /// [`ExecClass::IntSimple`]: hardware widens and narrows integers with moves.
    DoubleConvert,
    /// FP64 minimum and maximum.
    DoubleMinMax,
    /// FP64 multiply.
    DoubleMul,
    /// FP64 fused multiply-add.
    DoubleFma,
    /// FP64 division, reciprocal, square root and reciprocal square root.
    DoubleDiv,
    /// `shfl`: lanes exchange registers.
    Shuffle,
    /// Warp-wide votes and reductions (`vote`, `match`, `redux`, `activemask`).
    WarpVote,
    /// Loads (`ld`, `ldu`).
    Load,
    /// Stores.
    Store,
    /// Atomics and reductions to memory (`atom`, `red`).
    Atomic,
    /// `prefetch`.
    Prefetch,
    /// Texture fetches and queries (`tex`, `tld4`, `txq`).
    Texture,
    /// Memory fences.
    Fence,
    /// Branches.
    Branch,
    /// Calls.
    Call,
    /// Returns and exits.
    Return,
    /// Barriers (`bar`, `bar.warp.sync`).
    Barrier,
    /// `trap`, `brkpt`, `nanosleep`.
    Misc,
    /// Warp-level matrix multiply-accumulate on the tensor cores (`wmma.mma`,
    /// `mma.sync`): every lane's result reads other lanes' registers.
    Tensor,
}

impl ExecClass {
    /// Whether the memory pipeline (LD/ST or texture unit) executes it.
    pub fn is_memory(self) -> bool {
        matches!(
            self,
            ExecClass::Load
                | ExecClass::Store
                | ExecClass::Atomic
                | ExecClass::Prefetch
                | ExecClass::Texture
                | ExecClass::Fence
        )
    }
    /// Whether it changes control flow or synchronises (no datapath result).
    pub fn is_control(self) -> bool {
        matches!(
            self,
            ExecClass::Branch
                | ExecClass::Call
                | ExecClass::Return
                | ExecClass::Barrier
                | ExecClass::Misc
        )
    }
}

fn by_float_width(ty: ScalarType, single: ExecClass, double: ExecClass) -> ExecClass {
    if ty == ScalarType::F64 {
        double
    } else {
        single
    }
}

/// The class of `op`.
pub fn exec_class(op: &Op) -> ExecClass {
    use ExecClass as E;
    let compare = |ty: ScalarType| {
        if ty == ScalarType::F64 {
            E::DoubleSimple
        } else if ty.is_float() {
            E::FloatSimple
        } else {
            E::IntSimple
        }
    };
    match op {
        Op::And { .. }
        | Op::Or { .. }
        | Op::Xor { .. }
        | Op::Not { .. }
        | Op::Cnot { .. }
        | Op::Lop3 { .. }
        | Op::Shl { .. }
        | Op::Shr { .. }
        | Op::Shf { .. }
        | Op::Bfe { .. }
        | Op::Bfi { .. }
        | Op::Bfind { .. }
        | Op::Popc { .. }
        | Op::Clz { .. }
        | Op::Brev { .. }
        | Op::Prmt { .. }
        | Op::Selp { .. }
        | Op::Mov { .. }
        | Op::Pack { .. }
        | Op::Unpack { .. }
        | Op::Cvta { .. }
        | Op::Isspacep { .. }
        | Op::CreatePolicy(_) => E::IntSimple,
        Op::Add { .. } | Op::Sub { .. } | Op::Abs { .. } | Op::Neg { .. } => E::IntAdd,
        Op::Min { .. } | Op::Max { .. } => E::IntMinMax,
        Op::Mul { .. } | Op::Mul24 { .. } => E::IntMul,
        Op::Mad { .. } | Op::Mad24 { .. } | Op::Sad { .. } | Op::Dp4a { .. } | Op::Dp2a { .. } => {
            E::IntMad
        }
        Op::Div { .. } | Op::Rem { .. } => E::IntDiv,
        Op::FAdd { ty, .. } | Op::FSub { ty, .. } => by_float_width(*ty, E::FloatAdd, E::DoubleAdd),
        Op::FAbs { ty, .. } | Op::FNeg { ty, .. } | Op::Copysign { ty } | Op::Testp { ty, .. } => {
            by_float_width(*ty, E::FloatSimple, E::DoubleSimple)
        }
        Op::FMin { ty, .. } | Op::FMax { ty, .. } => {
            by_float_width(*ty, E::FloatMinMax, E::DoubleMinMax)
        }
        Op::FMul { ty, .. } => by_float_width(*ty, E::FloatMul, E::DoubleMul),
        Op::Fma { ty, .. } => by_float_width(*ty, E::FloatFma, E::DoubleFma),
        Op::FDiv { ty, .. } => by_float_width(*ty, E::FloatDiv, E::DoubleDiv),
        Op::Rcp { ty, .. } | Op::Sqrt { ty, .. } | Op::Rsqrt { ty, .. } => {
            by_float_width(*ty, E::Transcendental, E::DoubleDiv)
        }
        Op::Sin { .. } | Op::Cos { .. } | Op::Lg2 { .. } | Op::Ex2 { .. } | Op::Tanh { .. } => {
            E::Transcendental
        }
        Op::Setp { ty, .. } | Op::Set { ty, .. } | Op::Slct { ty, .. } => compare(*ty),
        // cvt.rna.tf32.f32 is integer arithmetic on the bits on sm_80/sm_90 (ptxas: an
        // FSETP, an IADD and a LOP3); .rn/.rz are one conversion (sm_90's F2FP.TF32).
        Op::Cvt {
            dst: ScalarType::Tf32,
            rounding: Some(Rounding::Rna),
            ..
        } => E::IntSimple,
        Op::Cvt { dst, src, .. } => {
            if !dst.is_float() && !src.is_float() {
                E::IntSimple
            } else if dst.bits() == 64 || src.bits() == 64 {
                E::DoubleConvert
            } else {
                E::FloatConvert
            }
        }
        // movmatrix moves 16-bit halves between lanes as a shuffle moves words.
        Op::Shfl { .. } | Op::Movmatrix => E::Shuffle,
        Op::Vote { .. } | Op::Match { .. } | Op::Redux { .. } | Op::Activemask | Op::Elect => {
            E::WarpVote
        }
        // An mbarrier is a word of shared memory that each lane updates atomically; a wait
        // reads it; the pending count only decodes a register.
        Op::Mbarrier(b) => match b.kind {
            MbarrierKind::Wait { .. } => E::Load,
            MbarrierKind::PendingCount => E::IntSimple,
            _ => E::Atomic,
        },
        Op::Stmatrix(_) => E::Store,
        // A cluster is one CTA: the mapped address is the address.
        Op::Mapa { .. } | Op::Getctarank { .. } => E::IntSimple,
        Op::FenceProxy(_) => E::Fence,
        Op::GridDepControl { .. } => E::Misc,
        Op::Ld(_) | Op::Ldu(_) | Op::CpAsync(_) | Op::WmmaLoad(_) | Op::Ldmatrix(_) => E::Load,
        Op::Mma(_) | Op::Wgmma(_) => E::Tensor,
        // The commit and the wait order the warp's wgmma groups, as cp.async's do copies.
        Op::WgmmaFence | Op::WgmmaCommit | Op::WgmmaWait { .. } => E::Fence,
        Op::WmmaStore(_) => E::Store,
        Op::CpAsyncCommit | Op::CpAsyncWait { .. } => E::Fence,
        Op::CpAsyncBulk(CpAsyncBulk { direction, .. })
        | Op::CpAsyncBulkTensor(CpAsyncBulkTensor { direction, .. }) => match direction {
            BulkCopyDirection::GlobalToShared { .. } | BulkCopyDirection::SharedToCluster => {
                E::Load
            }
            BulkCopyDirection::SharedToGlobal => E::Store,
        },
        Op::CpAsyncBulkCommit | Op::CpAsyncBulkWait { .. } => E::Fence,
        Op::St(_) => E::Store,
        Op::Atom(_) | Op::Red(_) => E::Atomic,
        Op::Prefetch { .. } => E::Prefetch,
        Op::Tex(_) | Op::Txq { .. } => E::Texture,
        Op::Fence { .. } => E::Fence,
        Op::Bra { .. } => E::Branch,
        Op::Call(_) => E::Call,
        Op::Ret { .. } | Op::Exit => E::Return,
        // setmaxnreg waits, as a barrier does, until its CTA's pool can give the registers.
        Op::Bar { .. } | Op::BarWarpSync | Op::Setmaxnreg { .. } => E::Barrier,
        Op::Trap | Op::Brkpt | Op::Nanosleep => E::Misc,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(body: &str) -> Vec<ExecClass> {
        let src = format!(
            ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n\
             .reg .pred %p<3>;\n.reg .b32 %r<8>;\n.reg .f32 %f<8>;\n.reg .f64 %fd<8>;\n\
             .reg .b64 %rd<4>;\n{body}\nret;\n}}\n"
        );
        let ast = ptx::parse("t.ptx", &src).unwrap();
        let p = crate::lower(&ast, "t.ptx", &src).unwrap();
        let (_, f) = p.kernels().next().unwrap();
        f.insts.iter().map(|i| exec_class(&i.op)).collect()
    }

    #[test]
    fn arithmetic_splits_by_operation_and_width() {
        let c = classes(
            "mov.u32 %r1, %r2;\nadd.s32 %r1, %r1, %r2;\nmin.s32 %r1, %r1, %r2;\n\
             mul.lo.s32 %r1, %r1, %r2;\nmad.lo.s32 %r1, %r1, %r2, %r3;\n\
             div.s32 %r1, %r1, %r2;\nfma.rn.f32 %f1, %f2, %f3, %f4;\n\
             div.rn.f32 %f1, %f2, %f3;\nrsqrt.approx.f32 %f1, %f2;\n\
             add.f64 %fd1, %fd2, %fd3;\nsqrt.rn.f64 %fd1, %fd2;\n\
             setp.lt.f32 %p1, %f1, %f2;\nsetp.lt.s32 %p1, %r1, %r2;\n\
             cvt.rn.f32.s32 %f1, %r1;\nadd.f32 %f1, %f2, %f3;\n\
             cvt.f64.f32 %fd1, %f1;\ncvt.rn.f32.f64 %f1, %fd1;\ncvt.rn.f64.s32 %fd1, %r1;\n\
             cvt.rn.f32.s64 %f1, %rd1;\ncvt.u64.u32 %rd1, %r1;\nsetp.lt.f64 %p1, %fd1, %fd2;\n\
             abs.f64 %fd1, %fd2;",
        );
        use ExecClass as E;
        assert_eq!(
            c[..14],
            [
                E::IntSimple,
                E::IntAdd,
                E::IntMinMax,
                E::IntMul,
                E::IntMad,
                E::IntDiv,
                E::FloatFma,
                E::FloatDiv,
                E::Transcendental,
                E::DoubleAdd,
                E::DoubleDiv,
                E::FloatSimple,
                E::IntSimple,
                E::FloatConvert,
            ]
        );
        // Conversions touching a 64-bit type (on either side, with a float) are the
        // throughput table's 64-bit conversions; integer widening is a move.
        assert_eq!(
            c[14..],
            [
                E::FloatAdd,
                E::DoubleConvert,
                E::DoubleConvert,
                E::DoubleConvert,
                E::DoubleConvert,
                E::IntSimple,
                E::DoubleSimple,
                E::DoubleSimple,
                E::Return
            ]
        );
    }

    #[test]
    fn memory_warp_and_control_classes() {
        let c = classes(
            "ld.param.u64 %rd1, [p];\nst.global.u32 [%rd1], %r1;\n\
             atom.global.add.u32 %r1, [%rd1], 1;\nmembar.gl;\n\
             shfl.sync.bfly.b32 %r1, %r2, 1, 31, -1;\nvote.sync.ballot.b32 %r1, %p1, -1;\n\
             bar.sync 0;",
        );
        use ExecClass as E;
        assert_eq!(
            c[..7],
            [
                E::Load,
                E::Store,
                E::Atomic,
                E::Fence,
                E::Shuffle,
                E::WarpVote,
                E::Barrier
            ]
        );
        assert!(E::Fence.is_memory() && E::Texture.is_memory() && !E::Shuffle.is_memory());
        assert!(E::Call.is_control() && !E::Load.is_control());
    }
}
