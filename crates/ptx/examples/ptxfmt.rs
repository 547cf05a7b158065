//! Prints a PTX file in canonical form: `ptxfmt FILE`.
fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: ptxfmt FILE");
        std::process::exit(2);
    };
    let text = match std::fs::read(&path) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    match ptx::parse(&path, &text) {
        Ok(m) => print!("{}", ptx::print(&m)),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
