//! Reading PTX files and turning them into IR, with errors that name the file.

use anyhow::{Context, Result};
use std::path::Path;

/// A PTX file read from disk, with its display name for diagnostics.
pub struct PtxSource {
    pub name: String,
    pub text: String,
}

impl PtxSource {
    pub fn read(path: &Path) -> Result<PtxSource> {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        // PTX is ASCII; a stray non-UTF-8 byte becomes U+FFFD and the parser reports it
        // at its position instead of us refusing the whole file.
        let text = String::from_utf8_lossy(&bytes).into_owned();
        Ok(PtxSource {
            name: path.display().to_string(),
            text,
        })
    }
}

/// Writes `text` and a newline to stdout. A closed pipe (`regsim ... | head`) ends the
/// program quietly, as Unix tools do, instead of panicking like `println!`; another
/// failure (a full disk) is an error naming stdout.
pub fn print_stdout(text: &str) -> Result<()> {
    write_stdout(&format!("{text}\n"))
}

/// Writes `text` to stdout, as [`print_stdout`] without the newline.
pub fn write_stdout(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(e).context("cannot write to stdout"),
    }
}

/// Whether `a` and `b` name the same existing file (device and inode), links and other
/// spellings included.
pub fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}
