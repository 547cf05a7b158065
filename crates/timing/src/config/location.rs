//! Where configs live: the `configs/` folder next to the executable, in the source
//! tree, or named by `REGSIM_CONFIGS`.

use std::path::{Path, PathBuf};

/// Environment variable naming the directory that GPU configs are looked up in by name.
pub const CONFIGS_DIR_ENV: &str = "REGSIM_CONFIGS";

/// Where GPU configs are looked up by name when no executable is involved (libraries,
/// tests): `$REGSIM_CONFIGS`, else this source tree's `configs/`. See
/// [`find_configs_dir`].
pub fn default_configs_dir() -> PathBuf {
    find_configs_dir(None)
}

/// Where GPU configs are looked up by name, first match wins:
/// 1. `$REGSIM_CONFIGS`, if set and non-empty (even if it does not exist, so that the
///    error names the directory the user asked for);
/// 2. given the `regsim` executable, `configs/` of the repository it was built in
///    (`<repo>/target/<profile>/regsim` -> `<repo>/configs`), if that is a directory;
/// 3. `configs/` of this source tree, fixed at compile time.
///
/// A library loaded into someone else's program passes `None`: that program's location
/// says nothing about where regsim lives.
pub fn find_configs_dir(executable: Option<&Path>) -> PathBuf {
    if let Some(dir) = std::env::var_os(CONFIGS_DIR_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    executable
        .and_then(|exe| Some(exe.parent()?.parent()?.parent()?.join("configs")))
        .filter(|d| d.is_dir())
        .unwrap_or_else(source_configs_dir)
}

/// The `configs/` directory of this source tree, fixed at compile time.
pub fn source_configs_dir() -> PathBuf {
    // `<repo>/crates/timing` -> `<repo>/configs`, without `..` in what messages show.
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    crate_dir.parent().and_then(Path::parent).map_or_else(
        || crate_dir.join("../../configs"),
        |repo| repo.join("configs"),
    )
}

/// Names of the configs in `dir` (file stems of `*.toml`), sorted.
pub fn available_configs(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            (p.extension()? == "toml").then(|| p.file_stem()?.to_str().map(str::to_owned))?
        })
        .collect();
    names.sort();
    names
}
