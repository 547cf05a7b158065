//! A GPU config as TOML text, then (after a line `---`) one `--set` override per line:
//! loading, overriding and validating must not panic, abort or hang, and a config that
//! passes must build the timing model when its estimated memory is small (larger ones are
//! the limits' business, tested in `timing::limits`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use timing::{GpuConfig, Override, TimingSimulator};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (toml, sets) = text.split_once("\n---\n").unwrap_or((&text, ""));
    let mut overrides = Vec::new();
    for line in sets.lines() {
        match Override::parse(line) {
            Ok(o) => overrides.push(o),
            Err(_) => return,
        }
    }
    if let Ok(config) = GpuConfig::from_toml(toml, "fuzz.toml", &overrides) {
        let _ = timing::rf::required_passes(&config);
        if timing::limits::host_memory_estimate(&config) < 64 << 20 {
            drop(TimingSimulator::new(config));
        }
    }
});
