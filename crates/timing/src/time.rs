//! Typed simulated time, gem5 style: a point in time and a duration are different types,
//! and each clock domain has its own pair, so core cycles and DRAM command-clock cycles
//! cannot be mixed by accident.
//!
//! - [`Cycle`] / [`Cycles`]: the SM core clock (`gpu.core_clock_mhz`). The interconnect
//!   and the L2 run on this clock too (a simplification: real parts have their own).
//! - [`MemCycle`] / [`MemCycles`]: the DRAM command clock (`gpu.memory_clock_mhz`).
//!
//! Conversions between domains go through [`ClockRatio`], which rounds towards the
//! later edge: an event is never seen earlier than it happens.

use crate::bits::Divisor;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Add, AddAssign, Mul, Sub};

/// A clock domain marker. Only the two domains below exist.
pub trait ClockDomain: Copy + Eq + Ord + fmt::Debug + Default + 'static {
    /// Unit name used when printing.
    const UNIT: &'static str;
}

/// The SM core clock (also used by the interconnect and the L2).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Core;
impl ClockDomain for Core {
    const UNIT: &'static str = "cycles";
}

/// The DRAM command clock.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Mem;
impl ClockDomain for Mem {
    const UNIT: &'static str = "mem cycles";
}

/// A point in time in clock domain `D`, counted in cycles since the start of simulation.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant<D: ClockDomain>(u64, PhantomData<D>);

/// A number of cycles in clock domain `D`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration<D: ClockDomain>(u64, PhantomData<D>);

/// A point on the core clock.
pub type Cycle = Instant<Core>;
/// A number of core cycles.
pub type Cycles = Duration<Core>;
/// A point on the DRAM command clock.
pub type MemCycle = Instant<Mem>;
/// A number of DRAM command-clock cycles.
pub type MemCycles = Duration<Mem>;

impl<D: ClockDomain> Instant<D> {
    /// Time zero.
    pub const ZERO: Self = Self(0, PhantomData);
    /// Later than any time a simulation reaches; used as "never".
    pub const NEVER: Self = Self(u64::MAX, PhantomData);

    /// The instant `n` cycles after time zero.
    pub const fn new(n: u64) -> Self {
        Self(n, PhantomData)
    }
    /// Cycles since time zero.
    pub const fn get(self) -> u64 {
        self.0
    }
    /// Time elapsed since `earlier`, or zero if `earlier` is later than `self`.
    pub fn saturating_since(self, earlier: Self) -> Duration<D> {
        Duration::new(self.0.saturating_sub(earlier.0))
    }
}

impl<D: ClockDomain> Duration<D> {
    /// No time.
    pub const ZERO: Self = Self(0, PhantomData);

    /// `n` cycles.
    pub const fn new(n: u64) -> Self {
        Self(n, PhantomData)
    }
    /// The number of cycles.
    pub const fn get(self) -> u64 {
        self.0
    }
    /// Whether this is no time (for `skip_serializing_if`).
    pub fn is_zero(&self) -> bool {
        self.0 == 0
    }
}

impl<D: ClockDomain> Add<Duration<D>> for Instant<D> {
    type Output = Self;
    fn add(self, rhs: Duration<D>) -> Self {
        Self::new(self.0.saturating_add(rhs.0))
    }
}
impl<D: ClockDomain> AddAssign<Duration<D>> for Instant<D> {
    fn add_assign(&mut self, rhs: Duration<D>) {
        *self = *self + rhs;
    }
}
impl<D: ClockDomain> Sub for Instant<D> {
    type Output = Duration<D>;
    /// Panics (in debug builds) if `rhs` is later than `self`: a negative duration is a bug.
    fn sub(self, rhs: Self) -> Duration<D> {
        debug_assert!(self.0 >= rhs.0, "negative duration: {self:?} - {rhs:?}");
        Duration::new(self.0.saturating_sub(rhs.0))
    }
}
impl<D: ClockDomain> Add for Duration<D> {
    type Output = Self;
    fn add(self, rhs: Self) -> Self {
        Self::new(self.0.saturating_add(rhs.0))
    }
}
impl<D: ClockDomain> AddAssign for Duration<D> {
    fn add_assign(&mut self, rhs: Self) {
        *self = *self + rhs;
    }
}
impl<D: ClockDomain> Mul<u64> for Duration<D> {
    type Output = Self;
    fn mul(self, rhs: u64) -> Self {
        Self::new(self.0.saturating_mul(rhs))
    }
}

impl<D: ClockDomain> fmt::Debug for Instant<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "@{} {}", self.0, D::UNIT)
    }
}
impl<D: ClockDomain> fmt::Display for Instant<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
impl<D: ClockDomain> fmt::Debug for Duration<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.0, D::UNIT)
    }
}
impl<D: ClockDomain> fmt::Display for Duration<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

// Durations appear in configs as plain integers and instants in statistics as plain
// integers; the domain is carried by the field's type, not the text.
impl<D: ClockDomain> Serialize for Duration<D> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}
impl<'de, D: ClockDomain> Deserialize<'de> for Duration<D> {
    fn deserialize<De: Deserializer<'de>>(d: De) -> Result<Self, De::Error> {
        u64::deserialize(d).map(Self::new)
    }
}
impl<D: ClockDomain> Serialize for Instant<D> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

/// The ratio between the core clock and the DRAM command clock, for converting
/// instants between the two domains. Conversions round up to the next edge of the
/// target clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockRatio {
    /// The two frequencies in lowest terms, as divisors (conversions divide by one and
    /// multiply by the other).
    core: Divisor,
    mem: Divisor,
}

impl ClockRatio {
    /// A ratio from the two frequencies in MHz; both must be non-zero (the config
    /// validator guarantees it).
    pub fn new(core_mhz: u32, mem_mhz: u32) -> Self {
        assert!(
            core_mhz > 0 && mem_mhz > 0,
            "clock frequencies must be non-zero"
        );
        // In lowest terms, so that conversions of realistic times stay in 64 bits.
        let g = gcd(u64::from(core_mhz), u64::from(mem_mhz));
        Self {
            core: Divisor::new(u64::from(core_mhz) / g),
            mem: Divisor::new(u64::from(mem_mhz) / g),
        }
    }

    /// The first DRAM clock edge at or after core cycle `c`.
    pub fn to_mem(self, c: Cycle) -> MemCycle {
        MemCycle::new(mul_div_ceil(c.get(), self.mem.divisor(), &self.core))
    }

    /// The first core clock edge at or after DRAM cycle `m`.
    pub fn to_core(self, m: MemCycle) -> Cycle {
        Cycle::new(mul_div_ceil(m.get(), self.core.divisor(), &self.mem))
    }

    /// A DRAM-clock duration expressed in core cycles, rounded up.
    pub fn duration_to_core(self, d: MemCycles) -> Cycles {
        Cycles::new(mul_div_ceil(d.get(), self.core.divisor(), &self.mem))
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[inline]
fn mul_div_ceil(x: u64, num: u64, den: &Divisor) -> u64 {
    if x == u64::MAX {
        return u64::MAX;
    }
    if let Some(p) = x.checked_mul(num) {
        // The common case: no 128-bit division (a memory-bound run converts millions
        // of DRAM times).
        return den.div_ceil(p);
    }
    let p = u128::from(x) * u128::from(num);
    let q = p.div_ceil(u128::from(den.divisor()));
    u64::try_from(q).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instant_plus_duration_and_difference() {
        let t = Cycle::new(10) + Cycles::new(5);
        assert_eq!(t, Cycle::new(15));
        assert_eq!(t - Cycle::new(3), Cycles::new(12));
        assert_eq!(Cycle::new(3).saturating_since(t), Cycles::ZERO);
        assert_eq!(Cycles::new(4) * 3, Cycles::new(12));
        assert_eq!(Cycle::NEVER + Cycles::new(1), Cycle::NEVER);
    }

    #[test]
    fn clock_conversion_rounds_up_to_the_next_edge() {
        // GTX 480: 700 MHz core, 924 MHz GDDR5 command clock.
        let r = ClockRatio::new(700, 924);
        assert_eq!(r.to_mem(Cycle::new(0)), MemCycle::new(0));
        // 1 core cycle = 1.32 mem cycles -> edge 2.
        assert_eq!(r.to_mem(Cycle::new(1)), MemCycle::new(2));
        assert_eq!(r.to_mem(Cycle::new(700)), MemCycle::new(924));
        assert_eq!(r.to_core(MemCycle::new(924)), Cycle::new(700));
        assert_eq!(r.to_core(MemCycle::new(925)), Cycle::new(701));
        assert_eq!(r.duration_to_core(MemCycles::new(12)), Cycles::new(10)); // 9.09 -> 10
                                                                             // A round trip never goes back in time.
        for c in 0..2000 {
            let c = Cycle::new(c);
            assert!(r.to_core(r.to_mem(c)) >= c);
        }
    }
}
