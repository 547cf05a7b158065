//! The ideal register file (LTRF's "Ideal"): the baseline's access latency without bank
//! conflicts. Its capacity only changes occupancy
//! ([`crate::config::GpuConfig::register_capacity`]): `ideal` has the baseline's unless
//! `register_file.ideal_capacity_registers` is set (LTRF's Ideal is 8x), so that by
//! default it differs from the baseline in bank conflicts alone; `ideal-unlimited` has no
//! register limit on occupancy. docs/results/notes/ideal-vs-baseline.md measures `ideal`
//! against the baseline on every built-in workload.
//!
//! It is the baseline organisation ([`crate::rf::baseline`]) with unlimited ports on every
//! bank: the same operand collector units (count and kinds), arbitration order, dispatch
//! order and latencies, but every read is granted in the first arbitration after
//! acceptance (operands at `t + 1 + bank_latency` for an instruction accepted at `t`) and
//! every write at once (done `bank_latency` later). So it differs from the baseline only
//! in what a register-file study varies — capacity and bank conflicts — and, at equal
//! occupancy, is an upper bound on it up to timing noise: where conflicts are rare (gtx480)
//! a one-cycle change of DRAM latency moves either design by more than they cost (the
//! note measures it). (Unlimited collector units as well would not be:
//! the collectors are also the instruction window in front of the execution units, and
//! without that limit the schedulers run ahead and dispatch becomes oldest-first across
//! warps, which made such an "ideal" up to 12% slower than the baseline on
//! `warp_intrinsics` and `stencil2d`.) Reads and writes are counted per bank (under the
//! configured mapping), so the figures compare with the baseline's.

use crate::config::GpuConfig;
use crate::rf::baseline::Baseline;
use crate::rf::ledger::Ledger;
use crate::rf::{
    Candidate, IssuedInst, RegisterFile, RfCycle, RfStall, RfStats, WarpLaunch, WarpSlot,
    WriteRequest,
};
use crate::time::Cycle;

/// See the module docs.
pub struct Ideal {
    inner: Baseline,
    name: &'static str,
}

impl Ideal {
    /// The design for a validated config.
    pub fn new(cfg: &GpuConfig) -> Self {
        let name = match cfg.register_file.design {
            crate::config::RegisterFileDesign::IdealUnlimited => "ideal-unlimited",
            _ => "ideal",
        };
        Ideal {
            inner: Baseline::with_unlimited_ports(cfg, name),
            name,
        }
    }
}

impl RegisterFile for Ideal {
    fn name(&self) -> &'static str {
        self.name
    }

    fn warp_launched(&mut self, w: WarpLaunch) {
        self.inner.warp_launched(w);
    }

    fn warp_exited(&mut self, warp: WarpSlot) {
        self.inner.warp_exited(warp);
    }

    fn can_accept(&mut self, c: &Candidate<'_>, now: Cycle) -> Result<(), RfStall> {
        self.inner.can_accept(c, now)
    }

    fn accept(&mut self, i: IssuedInst<'_>, now: Cycle) {
        self.inner.accept(i, now);
    }

    fn request_write(&mut self, w: WriteRequest<'_>, now: Cycle) {
        self.inner.request_write(w, now);
    }

    fn skip_to(&mut self, now: Cycle) {
        self.inner.skip_to(now);
    }

    fn cycle(&mut self, c: &mut RfCycle<'_>) {
        self.inner.cycle(c);
    }

    fn next_event(&self, now: Cycle) -> Option<Cycle> {
        self.inner.next_event(now)
    }

    fn is_idle(&self) -> bool {
        self.inner.is_idle()
    }

    fn stats(&self, now: Cycle) -> RfStats {
        self.inner.stats(now)
    }

    fn ledger(&self) -> Ledger {
        self.inner.ledger()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{default_configs_dir, OpClass, UnitKind};
    use crate::kernel_info::{InstHint, OperandHint, RegFileKind, RegOperand};
    use crate::memory::{MemorySystem, SmId};
    use crate::rf::{Dispatch, DispatchPort, InstToken};

    struct Units(Vec<(InstToken, u64)>, u64);
    impl DispatchPort for Units {
        fn try_dispatch(&mut self, d: Dispatch) -> bool {
            self.0.push((d.token, self.1));
            true
        }
    }

    /// Eight instructions reading three registers of one bank each: the baseline's single
    /// read port takes 24 cycles for them; the ideal design reads them all at once, at
    /// the baseline latency, and keeps the baseline's collector limit.
    #[test]
    fn one_bank_reads_do_not_conflict_and_collectors_still_limit_issue() {
        let cfg = GpuConfig::load("gtx480", &default_configs_dir(), &[]).unwrap();
        let mut mem = MemorySystem::new(&cfg);
        let mut rf = Ideal::new(&cfg);
        let op = |reg| RegOperand {
            file: RegFileKind::General,
            reg,
            width: 1,
            hint: OperandHint::default(),
        };
        let srcs = [op(0), op(8), op(16)];
        let step = emu::WarpStep::default();
        let c = Candidate {
            warp: WarpSlot(0),
            scheduler: 0,
            unit: UnitKind::Sp,
            class: OpClass::Fp32,
            srcs: &srcs,
            dsts: &[],
            hint: InstHint::default(),
        };
        let units = cfg.register_file.collector_units;
        for t in 0..units {
            assert!(rf.can_accept(&c, Cycle::new(0)).is_ok());
            rf.accept(
                IssuedInst {
                    token: InstToken(t),
                    inst: c,
                    step: &step,
                },
                Cycle::new(0),
            );
        }
        assert_eq!(
            rf.can_accept(&c, Cycle::new(0)),
            Err(RfStall::NoFreeCollector)
        );
        let mut dispatched = Units(Vec::new(), 0);
        for t in 1..4 {
            dispatched.1 = t;
            let mut w = Vec::new();
            rf.cycle(&mut RfCycle {
                now: Cycle::new(t),
                sm: SmId(0),
                memory: mem.port(SmId(0)),
                dispatch: &mut dispatched,
                writes_done: &mut w,
            });
        }
        assert_eq!(dispatched.0.len(), units as usize);
        assert!(
            dispatched.0.iter().all(|&(_, t)| t == 2),
            "1 + bank latency 1: {:?}",
            dispatched.0
        );
        let s = rf.stats(Cycle::new(4));
        assert_eq!(s.design, "ideal");
        assert_eq!((s.reads, s.read_bank_conflicts), (3 * u64::from(units), 0));
        assert_eq!(s.reads_per_bank[0], 3 * u64::from(units));
    }
}
