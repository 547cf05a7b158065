//! The ideal register file (LTRF's "Ideal"): any capacity, the baseline's access latency,
//! and no structural hazards — unlimited ports and collector units, so no bank conflicts
//! and no collector stalls. Its capacity (`register_file.ideal_capacity_registers`,
//! unlimited when absent) only changes occupancy ([`crate::config::GpuConfig::register_capacity`]).
//!
//! Timing matches an uncontended baseline: an instruction accepted at `t` has its operands
//! at `t + 1 + bank_latency` (the arbitration cycle plus the access) and is then offered
//! to the execution units every cycle until one takes it; a write requested at `t`
//! completes at `t + bank_latency`. Reads and writes are still counted per bank (under the
//! configured mapping) so the figures compare with the baseline's.

use crate::config::GpuConfig;
use crate::kernel_info::{RegFileKind, RegOperand};
use crate::rf::{
    BankMap, Candidate, Dispatch, EnergyEvent, InstToken, IssuedInst, RegisterFile, RfCycle,
    RfStall, RfStats, WarpLaunch, WarpSlot, WriteRequest,
};
use crate::time::{Cycle, Cycles};

#[derive(Clone, Copy, Debug)]
struct Waiting {
    token: InstToken,
    dispatch: Dispatch,
    ready_at: Cycle,
}

/// See the module docs.
pub struct Ideal {
    map: BankMap,
    latency: Cycles,
    waiting: Vec<Waiting>,
    writes: Vec<(InstToken, Cycle)>,
    stats: RfStats,
    last_integrated: Cycle,
}

impl Ideal {
    /// The design for a validated config.
    pub fn new(cfg: &GpuConfig) -> Self {
        let banks = cfg.register_file.banks as usize;
        Ideal {
            map: BankMap::new(cfg),
            latency: cfg.register_file.bank_latency,
            waiting: Vec::with_capacity(64),
            writes: Vec::with_capacity(64),
            stats: RfStats {
                design: "ideal".into(),
                reads_per_bank: vec![0; banks],
                writes_per_bank: vec![0; banks],
                ..RfStats::default()
            },
            last_integrated: Cycle::ZERO,
        }
    }

    fn count(&mut self, ops: &[RegOperand], warp: WarpSlot, scheduler: u16, write: bool) {
        for op in ops.iter().filter(|o| o.file == RegFileKind::General) {
            for r in op.regs() {
                let b = self.map.bank(r, warp, scheduler);
                if write {
                    self.stats.writes_per_bank[b] += 1;
                    self.stats.writes += 1;
                } else {
                    self.stats.reads_per_bank[b] += 1;
                    self.stats.reads += 1;
                }
            }
        }
    }

    fn integrate(&mut self, now: Cycle) {
        if now > self.last_integrated {
            let dt = (now - self.last_integrated).get();
            self.stats.collector_busy_cycles += self.waiting.len() as u64 * dt;
            self.last_integrated = now;
        }
    }
}

impl RegisterFile for Ideal {
    fn name(&self) -> &'static str {
        "ideal"
    }

    fn warp_launched(&mut self, _w: WarpLaunch) {}

    fn warp_exited(&mut self, _warp: WarpSlot) {}

    fn can_accept(&mut self, _c: &Candidate<'_>, _now: Cycle) -> Result<(), RfStall> {
        Ok(())
    }

    fn accept(&mut self, i: IssuedInst<'_>, now: Cycle) {
        self.integrate(now);
        self.count(i.inst.srcs, i.inst.warp, i.inst.scheduler, false);
        self.waiting.push(Waiting {
            token: i.token,
            dispatch: Dispatch {
                token: i.token,
                unit: i.inst.unit,
                bypass_execution: false,
            },
            ready_at: now + Cycles::new(1) + self.latency,
        });
    }

    fn request_write(&mut self, w: WriteRequest<'_>, now: Cycle) {
        self.count(w.dsts, w.warp, w.scheduler, true);
        self.writes.push((w.token, now + self.latency));
    }

    fn cycle(&mut self, c: &mut RfCycle<'_>) {
        let now = c.now;
        self.integrate(now);
        let mut i = 0;
        while i < self.writes.len() {
            if self.writes[i].1 <= now {
                c.writes_done.push(self.writes[i].0);
                self.writes.remove(i);
            } else {
                i += 1;
            }
        }
        // Oldest first.
        let mut i = 0;
        while i < self.waiting.len() {
            let w = self.waiting[i];
            if w.ready_at <= now && c.dispatch.try_dispatch(w.dispatch) {
                debug_assert_eq!(w.token, w.dispatch.token);
                self.waiting.remove(i);
            } else {
                i += 1;
            }
        }
    }

    fn next_event(&self, now: Cycle) -> Option<Cycle> {
        let soon = now + Cycles::new(1);
        self.waiting
            .iter()
            .map(|w| w.ready_at.max(soon))
            .chain(self.writes.iter().map(|w| w.1.max(soon)))
            .min()
    }

    fn is_idle(&self) -> bool {
        self.waiting.is_empty() && self.writes.is_empty()
    }

    fn stats(&self, now: Cycle) -> RfStats {
        let mut s = self.stats.clone();
        if now > self.last_integrated {
            s.collector_busy_cycles +=
                self.waiting.len() as u64 * (now - self.last_integrated).get();
        }
        s
    }

    fn energy_events(&self) -> Vec<EnergyEvent> {
        vec![
            EnergyEvent {
                structure: "mrf",
                access: "read",
                count: self.stats.reads,
            },
            EnergyEvent {
                structure: "mrf",
                access: "write",
                count: self.stats.writes,
            },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{default_configs_dir, OpClass, UnitKind};
    use crate::kernel_info::{InstHint, OperandHint};
    use crate::memory::{MemorySystem, SmId};
    use crate::rf::DispatchPort;

    struct Units(Vec<(InstToken, u64)>, u64);
    impl DispatchPort for Units {
        fn try_dispatch(&mut self, d: Dispatch) -> bool {
            self.0.push((d.token, self.1));
            true
        }
    }

    #[test]
    fn no_conflicts_and_no_collector_limit_at_the_baseline_latency() {
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
        for t in 0..20 {
            let c = Candidate {
                warp: WarpSlot(0),
                scheduler: 0,
                unit: UnitKind::Sp,
                class: OpClass::Fp32,
                srcs: &srcs,
                dsts: &[],
                hint: InstHint::default(),
            };
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
        let mut units = Units(Vec::new(), 0);
        for t in 1..4 {
            units.1 = t;
            let mut w = Vec::new();
            rf.cycle(&mut RfCycle {
                now: Cycle::new(t),
                sm: SmId(0),
                memory: &mut mem,
                dispatch: &mut units,
                writes_done: &mut w,
            });
        }
        assert_eq!(units.0.len(), 20);
        assert!(units.0.iter().all(|&(_, t)| t == 2), "1 + bank latency 1");
        let s = rf.stats(Cycle::new(4));
        assert_eq!((s.reads, s.read_bank_conflicts), (60, 0));
    }
}
