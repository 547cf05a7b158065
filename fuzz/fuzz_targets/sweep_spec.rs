//! A sweep spec's text: parsing, validation and expansion into points (every config
//! loaded with its sets) must not panic, abort or hang.
#![no_main]

use libfuzzer_sys::fuzz_target;
use regsim::sweep::SweepSpec;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    if let Ok(spec) = SweepSpec::from_text(&text, &dir.join("fuzz.toml"), dir) {
        let _ = spec.expand_with(None);
    }
});
