//! Parses PTX files and reports errors or a round-trip mismatch: `ptxcheck FILE...`.
fn main() {
    let mut failed = false;
    for path in std::env::args().skip(1) {
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{path}: {e}");
                failed = true;
                continue;
            }
        };
        let text = String::from_utf8_lossy(&bytes);
        match ptx::parse(&path, &text) {
            Ok(mut module) => {
                let printed = ptx::print(&module);
                match ptx::parse(&format!("{path} (printed)"), &printed) {
                    Ok(mut again) => {
                        module.erase_spans();
                        again.erase_spans();
                        if module != again {
                            eprintln!("{path}: round trip changed the tree");
                            failed = true;
                        }
                    }
                    Err(e) => {
                        eprintln!("{e}");
                        failed = true;
                    }
                }
            }
            Err(e) => {
                eprintln!("{e}");
                failed = true;
            }
        }
    }
    std::process::exit(i32::from(failed));
}
