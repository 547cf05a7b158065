//! Any bytes: `ptx::parse` must not panic, and whatever it accepts must print to text that
//! parses back to the same tree.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(mut module) = ptx::parse("fuzz.ptx", &text) {
        let printed = ptx::print(&module);
        let mut again = match ptx::parse("printed.ptx", &printed) {
            Ok(m) => m,
            Err(e) => panic!("printed form does not parse:\n{e}\n--- printed ---\n{printed}"),
        };
        module.erase_spans();
        again.erase_spans();
        assert!(module == again, "round trip changed the tree:\n{printed}");
    }
});
