//! Decoding of the bulk copies that reach other CTAs of a cluster (PTX ISA 8.0, sm_90):
//! `.multicast::cluster` copies from global memory (a 16-bit ctaMask operand after the
//! mbarrier) and `.shared::cluster.shared::cta` copies into another CTA's shared memory.

use crate::exec_class::{exec_class, ExecClass};
use crate::op::*;
use crate::print::inst_to_string;
use crate::{lower, Program};

fn lower_body(body: &str) -> Result<Program, String> {
    let src = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{{\n\
         .reg .b16 %h<4>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n{body}\n  ret;\n}}\n"
    );
    let module = ptx::parse("t.ptx", &src).map_err(|e| format!("parse: {e}"))?;
    lower(&module, "t.ptx", &src).map_err(|e| e.to_string())
}

fn roundtrip(inst: &str) -> (String, Op) {
    let p = lower_body(inst).unwrap_or_else(|e| panic!("{inst}: {e}"));
    let f = &p.functions[0];
    crate::verify(f).unwrap_or_else(|e| panic!("{inst}: {e:?}"));
    (
        inst_to_string(Some(&p), f, &f.insts[0]),
        f.insts[0].op.clone(),
    )
}

fn error_of(inst: &str) -> String {
    match lower_body(inst) {
        Ok(_) => panic!("{inst}: lowered without error"),
        Err(e) => e,
    }
}

#[test]
fn multicast_and_peer_copies_decode_and_print_back() {
    for (inst, want, direction) in [
        (
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r1], [%rd1], 64, [%r2], %h1;",
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r1], [%rd1], 64, [%r2], %h1;",
            BulkCopyDirection::GlobalToShared { cluster: true, multicast: true },
        ),
        (
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint [%r1], [%rd1], %r3, [%r2], 5, %rd2;",
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint [%r1], [%rd1], %r3, [%r2], 5, %rd2;",
            BulkCopyDirection::GlobalToShared { cluster: true, multicast: true },
        ),
        (
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%r1], [%rd1, {%r2, %r3}], [%r4], %h1;",
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%r1], [%rd1, {%r2, %r3}], [%r4], %h1;",
            BulkCopyDirection::GlobalToShared { cluster: true, multicast: true },
        ),
        (
            "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r1], [%r2], 64, [%r3];",
            "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r1], [%r2], 64, [%r3];",
            BulkCopyDirection::SharedToCluster,
        ),
    ] {
        let (text, op) = roundtrip(inst);
        assert_eq!(text, want);
        let d = match op {
            Op::CpAsyncBulk(c) => c.direction,
            Op::CpAsyncBulkTensor(c) => c.direction,
            other => panic!("{inst}: {other:?}"),
        };
        assert_eq!(d, direction, "{inst}");
        assert_eq!(exec_class(&op), ExecClass::Load, "{inst}");
    }
}

#[test]
fn bad_cluster_copies_are_located_errors() {
    for (inst, want) in [
        // The mask is 16 bits.
        (
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r1], [%rd1], 64, [%r2], 65536;",
            "16-bit",
        ),
        // The mask operand is missing.
        (
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r1], [%rd1], 64, [%r2];",
            "operands",
        ),
        // Multicast only from global memory into .shared::cluster.
        (
            "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes.multicast::cluster [%r1], [%rd1], 64, [%r2], %h1;",
            "with .multicast::cluster copies .shared::cluster.global",
        ),
        (
            "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.multicast::cluster [%r1], [%r2], 64, [%r3], %h1;",
            "with .multicast::cluster copies .shared::cluster.global",
        ),
        // A peer copy completes on an mbarrier, and has no tensor form.
        (
            "cp.async.bulk.shared::cluster.shared::cta.bulk_group [%r1], [%r2], 64;",
            ".shared::cluster.shared::cta with .mbarrier::complete_tx::bytes",
        ),
        (
            "cp.async.bulk.tensor.1d.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2}], [%r3];",
            "copies .shared::cluster.global",
        ),
        (
            "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.L2::cache_hint [%r1], [%r2], 32, [%r3], %rd1;",
            "takes no cache hint",
        ),
        (
            "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r1], [%r2], 24, [%r3];",
            "positive multiple of 16",
        ),
    ] {
        let e = error_of(inst);
        assert!(e.contains(want), "{inst}: {e}");
    }
}
