//! How many CTAs of a kernel fit on one SM: the CUDA occupancy calculator's rules.
//!
//! A CTA of `T` threads takes `W = ceil(T / 32)` warp slots and `32 W` thread slots. Its
//! registers are allocated per warp: `registers_per_thread x 32` rounded up to a multiple
//! of `sm.register_allocation_unit`, times `W`, against the register capacity
//! ([`GpuConfig::register_capacity`]: `sm.registers`, or the ideal design's capacity).
//! Shared memory is the kernel's static shared memory plus the launch's dynamic shared
//! memory. CTAs per SM is the minimum over threads, warps, the CTA limit, shared memory
//! and registers — exact, because enlarging the register file (LTRF, Ideal) is studied
//! through it.

use crate::config::{GpuConfig, WARP_SIZE};
use crate::stats::{Limiter, OccupancyStats};

/// A CTA's demands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CtaShape {
    /// Threads per CTA.
    pub threads: u32,
    /// Architectural registers per thread.
    pub registers_per_thread: u32,
    /// Shared memory bytes per CTA.
    pub shared_bytes: u64,
}

impl CtaShape {
    /// Warps per CTA.
    pub fn warps(&self) -> u32 {
        self.threads.div_ceil(WARP_SIZE)
    }
}

/// Registers one warp is allocated.
pub fn registers_per_warp(cfg: &GpuConfig, registers_per_thread: u32) -> u64 {
    let unit = u64::from(cfg.sm.register_allocation_unit.max(1));
    (u64::from(registers_per_thread) * u64::from(WARP_SIZE)).div_ceil(unit) * unit
}

/// The occupancy limits of `shape` on one SM (achieved figures zero).
pub fn occupancy(cfg: &GpuConfig, shape: CtaShape) -> OccupancyStats {
    let sm = &cfg.sm;
    let warps = shape.warps().max(1);
    let clamp = |x: u64| x.min(u64::from(u32::MAX)) as u32;
    let by_threads = sm.max_threads / (warps * WARP_SIZE);
    let by_warps = sm.max_warps / warps;
    let by_ctas = sm.max_ctas;
    let by_shared = u64::from(sm.shared_memory_bytes)
        .checked_div(shape.shared_bytes)
        .map_or(u32::MAX, clamp);
    let per_warp = registers_per_warp(cfg, shape.registers_per_thread);
    let capacity = cfg.register_capacity();
    let by_registers = if per_warp == 0 || capacity == u64::MAX {
        u32::MAX
    } else {
        clamp(capacity / (per_warp * u64::from(warps)))
    };
    let limits = [
        (by_threads, Limiter::Threads),
        (by_warps, Limiter::Warps),
        (by_ctas, Limiter::Ctas),
        (by_shared, Limiter::SharedMemory),
        (by_registers, Limiter::Registers),
    ];
    let (ctas, limited_by) =
        limits
            .iter()
            .copied()
            .fold((u32::MAX, Limiter::Threads), |best, l| {
                if l.0 < best.0 {
                    l
                } else {
                    best
                }
            });
    OccupancyStats {
        ctas_by_threads: by_threads,
        ctas_by_warps: by_warps,
        ctas_by_ctas: by_ctas,
        ctas_by_shared_memory: by_shared,
        ctas_by_registers: by_registers,
        ctas_per_sm: ctas,
        warps_per_cta: warps,
        theoretical_warps_per_sm: ctas.saturating_mul(warps),
        limited_by,
        registers_per_thread: shape.registers_per_thread,
        registers_per_warp: clamp(per_warp),
        shared_bytes_per_cta: shape.shared_bytes,
        peak_warps_per_sm: 0,
        achieved_warps_per_sm: 0.0,
        achieved_occupancy: 0.0,
        spill_slots: 0,
        before_budget: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::default_configs_dir;

    fn cfg(name: &str, overrides: &[&str]) -> GpuConfig {
        let o: Vec<_> = overrides
            .iter()
            .map(|s| crate::Override::parse(s).unwrap())
            .collect();
        GpuConfig::load(name, &default_configs_dir(), &o).unwrap()
    }

    fn shape(threads: u32, regs: u32, shared: u64) -> CtaShape {
        CtaShape {
            threads,
            registers_per_thread: regs,
            shared_bytes: shared,
        }
    }

    #[test]
    fn calculator_cases_on_volta() {
        // qv100: 65536 registers, 64 warps, 2048 threads, 32 CTAs, unit 256.
        let c = cfg("qv100", &[]);
        // 32 regs x 256 threads: 1024 regs/warp x 8 warps = 8192 per CTA -> 8 CTAs; threads
        // also allow 8: threads win the tie (declared first).
        let o = occupancy(&c, shape(256, 32, 0));
        assert_eq!((o.ctas_per_sm, o.limited_by), (8, Limiter::Threads));
        // 33 regs round to 1280 per warp (5 units): 65536 / (1280 x 8) = 6.
        let o = occupancy(&c, shape(256, 33, 0));
        assert_eq!((o.ctas_per_sm, o.limited_by), (6, Limiter::Registers));
        assert_eq!(o.registers_per_warp, 1280);
        // 255 regs: 8192 per warp (rounded from 8160), one warp per CTA: 8 CTAs.
        let o = occupancy(&c, shape(32, 255, 0));
        assert_eq!((o.ctas_per_sm, o.theoretical_warps_per_sm), (8, 8));
        // Shared memory: 96 KB / 40 KB = 2.
        let o = occupancy(&c, shape(64, 8, 40 * 1024));
        assert_eq!((o.ctas_per_sm, o.limited_by), (2, Limiter::SharedMemory));
        // Tiny CTAs hit the CTA limit.
        let o = occupancy(&c, shape(32, 8, 0));
        assert_eq!((o.ctas_per_sm, o.limited_by), (32, Limiter::Ctas));
    }

    #[test]
    fn fermi_allocates_registers_in_units_of_64_and_partial_warps_take_whole_slots() {
        let c = cfg("gtx480", &[]);
        // 21 regs x 32 = 672 -> 704 per warp; 100 threads = 4 warps -> 2816 per CTA;
        // 32768 / 2816 = 11, CTA limit 8.
        let o = occupancy(&c, shape(100, 21, 0));
        assert_eq!((o.ctas_per_sm, o.limited_by), (8, Limiter::Ctas));
        assert_eq!(o.registers_per_warp, 704);
        // 63 regs: 2048 per warp x 16 warps = 32768 -> exactly 1 CTA of 512 threads.
        let o = occupancy(&c, shape(512, 63, 0));
        assert_eq!((o.ctas_per_sm, o.limited_by), (1, Limiter::Registers));
        // 64 regs: also 2048 per warp -> still 1.
        assert_eq!(occupancy(&c, shape(512, 64, 0)).ctas_per_sm, 1);
        // 65 regs: 2112 per warp -> 0: the kernel does not fit.
        assert_eq!(occupancy(&c, shape(512, 65, 0)).ctas_per_sm, 0);
    }

    #[test]
    fn the_ideal_design_changes_only_the_register_limit() {
        let base = cfg("gtx480", &[]);
        let ideal = cfg("gtx480", &["register_file.design=\"ideal\""]);
        let unlimited = cfg("gtx480", &["register_file.design=\"ideal-unlimited\""]);
        let big = cfg(
            "gtx480",
            &[
                "register_file.design=\"ideal\"",
                "register_file.ideal_capacity_registers=65536",
            ],
        );
        let s = shape(256, 40, 0);
        // 40 x 32 = 1280 per warp x 8 warps = 10240 per CTA.
        assert_eq!(occupancy(&base, s).ctas_per_sm, 3);
        assert_eq!(occupancy(&big, s).ctas_per_sm, 6);
        // Without a capacity, `ideal` has the baseline's occupancy.
        assert_eq!(occupancy(&ideal, s), occupancy(&base, s));
        let o = occupancy(&unlimited, s);
        assert_eq!((o.ctas_per_sm, o.limited_by), (6, Limiter::Threads));
        assert_eq!(o.ctas_by_registers, u32::MAX);
    }
}
