//! Upper bounds of the GPU config: what [`GpuConfig::validate`] checks before the timing
//! model allocates anything, so that an absurd value is an error naming the key, the value
//! and the limit instead of an aborted allocation or minutes of set-up.
//!
//! Three rules:
//! - every size-like key (a count of SMs, warps, CTAs, units, banks, collectors, cache
//!   lines, MSHRs, table entries) has an upper bound in [`LIMITS`] or [`CACHE_LIMITS`],
//!   each far above any GPU built to date (the largest shipped config, `qv100`, uses at
//!   most an eighth of each);
//! - every other integer of the config (latencies, clocks, widths) is at most
//!   [`MAX_VALUE`], so sums of cycles cannot overflow;
//! - the host memory the model will allocate, estimated from the config
//!   ([`host_memory_estimate`]), is at most [`MAX_HOST_BYTES`], which catches
//!   combinations of keys each within its bound (1024 SMs of 128 MiB L1Ds).

use crate::config::{invalid, CacheConfig, ConfigError, GpuConfig};
use crate::memory::cache::Cache;
use crate::memory::dram::DramChannel;
use crate::sm::Sm;

/// One bounded key: its dotted path, its largest accepted value, and how to read it.
pub struct Limit {
    /// Dotted key path, as `--set` takes it.
    pub key: &'static str,
    /// The largest accepted value.
    pub max: u64,
    value: fn(&GpuConfig) -> u64,
}

const fn limit(key: &'static str, max: u64, value: fn(&GpuConfig) -> u64) -> Limit {
    Limit { key, max, value }
}

/// The size-like keys outside the caches and their bounds.
pub const LIMITS: &[Limit] = &[
    limit("gpu.num_sms", 2048, |c| c.gpu.num_sms.into()),
    limit("sm.max_warps", 1024, |c| c.sm.max_warps.into()),
    limit("sm.max_ctas", 1024, |c| c.sm.max_ctas.into()),
    limit("sm.schedulers", 64, |c| c.sm.schedulers.into()),
    limit("sm.active_warps", 1024, |c| c.sm.active_warps.into()),
    limit("sm.issue_width", 64, |c| c.sm.issue_width.into()),
    limit("sm.ibuffer_entries", 255, |c| c.sm.ibuffer_entries.into()),
    // 4 Mi 32-bit registers (16 MiB) per SM: 64x a 256 KB file, 8x LTRF's 8x file. WIR
    // keeps a value per physical warp register, so the file's size is host memory.
    limit("sm.registers", 1 << 22, |c| c.sm.registers.into()),
    // Registers per warp allocation; also at most `sm.registers` (checked with the SM).
    limit("sm.register_allocation_unit", 1 << 22, |c| {
        c.sm.register_allocation_unit.into()
    }),
    limit("register_file.ideal_capacity_registers", 1 << 22, |c| {
        c.register_file.ideal_capacity_registers.unwrap_or(0)
    }),
    limit("register_file.banks", 1024, |c| {
        c.register_file.banks.into()
    }),
    limit("register_file.read_ports_per_bank", 1024, |c| {
        c.register_file.read_ports_per_bank.into()
    }),
    limit("register_file.write_ports_per_bank", 1024, |c| {
        c.register_file.write_ports_per_bank.into()
    }),
    limit("register_file.collector_units", 1024, |c| {
        c.register_file.collector_units.into()
    }),
    limit("register_file.operands_per_collector", 64, |c| {
        c.register_file.operands_per_collector.into()
    }),
    limit("register_file.wir.reuse_buffer_entries", 1 << 16, |c| {
        c.register_file.wir.reuse_buffer_entries.into()
    }),
    limit("register_file.wir.vsb_entries", 1 << 16, |c| {
        c.register_file.wir.vsb_entries.into()
    }),
    limit("register_file.wir.verify_cache_entries", 1 << 16, |c| {
        c.register_file.wir.verify_cache_entries.into()
    }),
    limit("register_file.wir.retry_queue_entries", 1 << 16, |c| {
        c.register_file.wir.retry_queue_entries.into()
    }),
    limit("register_file.cerf.tag_banks", 1024, |c| {
        c.register_file.cerf.tag_banks.into()
    }),
    limit("register_file.wir.front_stages", 64, |c| {
        c.register_file.wir.front_stages.into()
    }),
    limit("register_file.wir.allocation_stages", 64, |c| {
        c.register_file.wir.allocation_stages.into()
    }),
    limit("pipeline.units.sp", 1024, |c| c.pipeline.units.sp.into()),
    limit("pipeline.units.int", 1024, |c| c.pipeline.units.int.into()),
    limit("pipeline.units.sfu", 1024, |c| c.pipeline.units.sfu.into()),
    limit("pipeline.units.dp", 1024, |c| c.pipeline.units.dp.into()),
    limit("pipeline.units.mem", 1024, |c| c.pipeline.units.mem.into()),
    limit("shared_memory.banks", 1024, |c| {
        c.shared_memory.banks.into()
    }),
    limit("l2.slices", 1024, |c| c.l2.slices.into()),
    limit("dram.channels", 1024, |c| c.dram.channels.into()),
    limit("dram.banks", 1024, |c| c.dram.banks.into()),
    limit("dram.queue_window", 4096, |c| c.dram.queue_window.into()),
];

/// A bounded key of one cache: its name in the cache's section, its largest value, how to
/// read it.
pub type CacheLimit = (&'static str, u64, fn(&CacheConfig) -> u64);

/// One cache's bounded keys (`l1d`, `constant_cache`, `icache`, `l2.slice` and CERF's
/// array), relative to its section.
pub const CACHE_LIMITS: &[CacheLimit] = &[
    // 128 MiB, and at most 2^20 lines (below).
    ("size_bytes", 1 << 27, |c| c.size_bytes),
    ("mshrs", 4096, |c| c.mshrs.into()),
    ("mshr_max_merge", 1024, |c| c.mshr_max_merge.into()),
];

/// Lines (`size_bytes / line_bytes`) of one cache.
pub const MAX_CACHE_LINES: u64 = 1 << 20;

/// Every other integer of the config: 2^32 (cycles, bytes per cycle, clocks in MHz).
pub const MAX_VALUE: u64 = 1 << 32;

/// Integer keys exempt from [`MAX_VALUE`]: seeds take any value.
const UNBOUNDED: &[&str] = &["register_file.malekeh.seed"];

/// The host memory one simulation may allocate for the model's structures: 16 GiB.
pub const MAX_HOST_BYTES: u64 = 16 << 30;

fn over(key: &str, value: u64, max: u64, unit: &str) -> ConfigError {
    invalid(
        key,
        format_args!("{value} is over the limit of {max}{unit} (regsim's bound for this key)"),
    )
}

/// Checks the bounds of every key of `cfg` (see the module documentation).
pub fn check(cfg: &GpuConfig) -> Result<(), ConfigError> {
    for l in LIMITS {
        let v = (l.value)(cfg);
        if v > l.max {
            return Err(over(l.key, v, l.max, ""));
        }
    }
    for (prefix, c) in [
        ("l1d", &cfg.l1d),
        ("constant_cache", &cfg.constant_cache),
        ("icache", &cfg.icache),
        ("l2.slice", &cfg.l2.slice),
    ]
    .into_iter()
    .chain(cfg.texture_cache.as_ref().map(|t| ("texture_cache", t)))
    {
        check_cache(prefix, c)?;
    }
    // Every integer leaf of the config, found through its serialized form so that a key
    // added later is bounded too.
    if let Ok(toml::Value::Table(doc)) = toml::Value::try_from(cfg) {
        check_integers(&mut String::new(), &doc)?;
    }
    Ok(())
}

fn check_integers(path: &mut String, table: &toml::Table) -> Result<(), ConfigError> {
    for (k, v) in table {
        let len = path.len();
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(k);
        match v {
            toml::Value::Table(t) => check_integers(path, t)?,
            toml::Value::Integer(i) if !UNBOUNDED.contains(&path.as_str()) => {
                let i = u64::try_from(*i).unwrap_or(u64::MAX);
                if i > MAX_VALUE {
                    return Err(over(path, i, MAX_VALUE, ""));
                }
            }
            _ => {}
        }
        path.truncate(len);
    }
    Ok(())
}

/// Checks one cache's bounds; keys are prefixed by `prefix`. Runs before its geometry is
/// checked, so that a huge size is named as such.
pub fn check_cache(prefix: &str, c: &CacheConfig) -> Result<(), ConfigError> {
    for (key, max, value) in CACHE_LIMITS {
        let v = value(c);
        if v > *max {
            return Err(over(&format!("{prefix}.{key}"), v, *max, ""));
        }
    }
    let lines = c.size_bytes / u64::from(c.line_bytes.max(1));
    if lines > MAX_CACHE_LINES {
        return Err(invalid(
            format!("{prefix}.size_bytes"),
            format_args!(
                "{} bytes in lines of {} bytes are {lines} lines, over the limit of \
                 {MAX_CACHE_LINES} lines",
                c.size_bytes, c.line_bytes
            ),
        ));
    }
    Ok(())
}

/// An upper estimate of the bytes the timing model allocates for `cfg`: caches, MSHRs,
/// warp and CTA slots, units, DRAM banks (what grows with the config, not with the
/// workload).
pub fn host_memory_estimate(cfg: &GpuConfig) -> u64 {
    let sms = u64::from(cfg.gpu.num_sms);
    let per_sm = Sm::memory_estimate(cfg)
        .saturating_add(Cache::<u64>::memory_estimate(&cfg.l1d_array()))
        .saturating_add(Cache::<u64>::memory_estimate(&cfg.constant_cache))
        .saturating_add(Cache::<u64>::memory_estimate(&cfg.icache))
        .saturating_add(Cache::<u64>::memory_estimate(
            cfg.texture_cache.as_ref().unwrap_or(&cfg.constant_cache),
        ));
    let l2 = u64::from(cfg.l2.slices).saturating_mul(Cache::<u64>::memory_estimate(&cfg.l2.slice));
    let dram =
        u64::from(cfg.dram.channels).saturating_mul(DramChannel::<u64>::memory_estimate(&cfg.dram));
    sms.saturating_mul(per_sm)
        .saturating_add(l2)
        .saturating_add(dram)
}

/// Refuses a config whose [`host_memory_estimate`] is over [`MAX_HOST_BYTES`].
pub fn check_host_memory(cfg: &GpuConfig) -> Result<(), ConfigError> {
    let bytes = host_memory_estimate(cfg);
    if bytes > MAX_HOST_BYTES {
        return Err(invalid(
            "gpu",
            format_args!(
                "the model of this GPU would take about {} MiB of host memory ({} SMs), over \
                 the limit of {} MiB: make the SMs, caches or their MSHRs smaller",
                bytes >> 20,
                cfg.gpu.num_sms,
                MAX_HOST_BYTES >> 20
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{default_configs_dir, Override};

    fn load(name: &str, sets: &[&str]) -> Result<GpuConfig, ConfigError> {
        let o: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
        GpuConfig::load(name, &default_configs_dir(), &o)
    }

    #[test]
    fn shipped_configs_use_at_most_an_eighth_of_each_bound() {
        for name in crate::config::available_configs(&default_configs_dir()) {
            let c = load(&name, &[]).unwrap();
            for l in LIMITS {
                assert!((l.value)(&c) * 8 <= l.max, "{name}: {}", l.key);
            }
            assert!(host_memory_estimate(&c) * 8 <= MAX_HOST_BYTES, "{name}");
        }
    }

    #[test]
    fn each_bound_is_refused_one_above_and_named_with_value_and_limit() {
        for l in LIMITS {
            let e = load("gtx480", &[&format!("{}={}", l.key, l.max + 1)])
                .expect_err(l.key)
                .to_string();
            assert!(e.contains(l.key), "{e}");
            // The key's own bound, or a relation with another key it breaks first.
            if e.contains("over the limit") {
                assert!(e.contains(&format!("{}", l.max + 1)), "{e}");
                assert!(e.contains(&format!("limit of {}", l.max)), "{e}");
            }
        }
        let e = load("gtx480", &["l1d.size_bytes=1099511627776"])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "l1d.size_bytes: 1099511627776 is over the limit of 134217728 (regsim's bound for \
             this key)"
        );
        let e = load("gtx480", &["l2.slice.latency=4294967297"])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("l2.slice.latency: 4294967297 is over"), "{e}");
        let e = check_cache(
            "l1d",
            &CacheConfig {
                line_bytes: 32,
                ..load(
                    "gtx480",
                    &["l1d.size_bytes=67108864", PRICED_L1D_READ, PRICED_L1D_WRITE],
                )
                .unwrap()
                .l1d
            },
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("2097152 lines, over the limit of 1048576 lines"),
            "{e}"
        );
    }

    /// An L1D far outside the energy tables' sizes must be priced explicitly (the load
    /// error says so); these tests are about the size bounds, not the prices.
    const PRICED_L1D_READ: &str = "energy.l1d_read_pj=1000";
    const PRICED_L1D_WRITE: &str = "energy.l1d_write_pj=1000";

    #[test]
    fn combinations_within_each_bound_are_refused_by_their_memory_estimate() {
        let e = load(
            "gtx480",
            &[
                "gpu.num_sms=1024",
                "l1d.size_bytes=134217728",
                "l1d.ways=128",
            ],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("gpu: the model of this GPU would take about"),
            "{e}"
        );
        assert!(e.contains("limit of 16384 MiB"), "{e}");
        // Each alone is accepted.
        load("gtx480", &["gpu.num_sms=1024"]).unwrap();
        load(
            "gtx480",
            &[
                "l1d.size_bytes=134217728",
                "l1d.ways=128",
                PRICED_L1D_READ,
                PRICED_L1D_WRITE,
            ],
        )
        .unwrap();
    }

    /// WIR keeps a value per physical warp register: a large file on many SMs is refused
    /// by its memory estimate, the same file under the baseline (which allocates nothing
    /// per register) is not, and a file over the bound is refused under any design.
    #[test]
    fn wir_sizes_its_physical_registers_in_the_memory_estimate() {
        let big = ["gpu.num_sms=2048", "sm.registers=4194304"];
        let e = load("gtx480", &[big[0], big[1], "register_file.design=wir"])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("gpu: the model of this GPU would take about"),
            "{e}"
        );
        load("gtx480", &big).unwrap();
        let e = load("gtx480", &["sm.register_allocation_unit=2147483648"])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("sm.register_allocation_unit: 2147483648 is over the limit of 4194304"),
            "{e}"
        );
        let e = load("gtx480", &["sm.register_allocation_unit=65536"])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "sm.register_allocation_unit: 65536 is over the limit of 32768 (sm.registers"
            ),
            "{e}"
        );
        let e = load("gtx480", &["sm.registers=2147483648"])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("sm.registers: 2147483648 is over the limit of 4194304"),
            "{e}"
        );
    }
}
