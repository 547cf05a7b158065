//! Golden-file tests of the compiler passes (Cranelift filetests, ZLUDA's pass tests).
//!
//! Each `tests/golden/<pass>/*.ptx` is a PTX input, optional `// options: key=value …`
//! lines (fields of the pass's config struct; values are JSON or bare strings), then the
//! marker line and the expected text report of `regsim compile FILE --pass <pass>` as
//! `//` comment lines, so every golden file stays valid PTX. The directory name picks the
//! pass in [`run_pass`]; a directory no pass claims fails the test.
//!
//! `REGSIM_BLESS=1 cargo test -p compiler --test golden` rewrites the expected output
//! (and adds the marker to a new file). Without it, any difference fails the test and
//! names the file. `REGSIM_GOLDEN=strands,orf-lrf` limits a run (and a bless) to those
//! passes, so blessing one pass never rewrites another's expectations.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

const MARKER: &str = "// ==== expected output (REGSIM_BLESS=1 to update) ====";

type Options = Vec<(String, String)>;

/// Runs pass `pass` on `program` and returns its text report.
fn run_pass(pass: &str, program: &ir::Program, options: &Options) -> Result<String, String> {
    match pass {
        "ltrf" => {
            let config: compiler::ltrf::LtrfConfig = config_from(options)?;
            compiler::ltrf::ltrf(program, &config)
                .map(|r| r.to_string())
                .map_err(|e| e.to_string())
        }
        "liveness-bits" => {
            let config: compiler::liveness_bits::LivenessBitsConfig = config_from(options)?;
            compiler::liveness_bits::liveness_bits(program, &config)
                .map(|r| r.to_string())
                .map_err(|e| e.to_string())
        }
        "strands" => {
            let config: compiler::strands::StrandConfig = config_from(options)?;
            Ok(compiler::strands::StrandsReport::new(program, &config).to_string())
        }
        "orf-lrf" => {
            let config: compiler::orf_lrf::OrfLrfConfig = config_from(options)?;
            compiler::orf_lrf::OrfLrfReport::new(program, &config)
                .map(|r| r.to_string())
                .map_err(|e| e.to_string())
        }
        "reuse-distance" => {
            let config: compiler::reuse_distance::ReuseDistanceConfig = config_from(options)?;
            Ok(compiler::reuse_distance::ReuseDistanceReport::new(program, &config).to_string())
        }
        "register-profile" => {
            if let Some((key, _)) = options.first() {
                return Err(format!("register-profile takes no options, got {key}"));
            }
            Ok(compiler::register_profile::StaticRegisterProfile::new(program).to_string())
        }
        other => Err(format!("no pass named '{other}' in tests/golden.rs")),
    }
}

/// A config struct from `key=value` options, through serde (unknown keys are errors when
/// the struct denies them).
fn config_from<T: DeserializeOwned>(options: &Options) -> Result<T, String> {
    let mut map = serde_json::Map::new();
    for (key, value) in options {
        let parsed = serde_json::from_str(value)
            .unwrap_or_else(|_| serde_json::Value::String(value.clone()));
        map.insert(key.clone(), parsed);
    }
    serde_json::from_value(serde_json::Value::Object(map)).map_err(|e| format!("options: {e}"))
}

fn golden_files() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut out = Vec::new();
    let Ok(dirs) = std::fs::read_dir(&root) else {
        return out;
    };
    let mut dirs: Vec<PathBuf> = dirs.filter_map(|e| e.ok().map(|e| e.path())).collect();
    dirs.sort();
    for dir in dirs.into_iter().filter(|d| d.is_dir()) {
        let pass = dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let Ok(files) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = files.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for file in files
            .into_iter()
            .filter(|f| f.extension().is_some_and(|e| e == "ptx"))
        {
            out.push((pass.clone(), file));
        }
    }
    out
}

/// Splits a golden file into its input and its expected output (`None` without a marker).
fn split(text: &str) -> (&str, Option<String>) {
    match text.find(MARKER) {
        None => (text, None),
        Some(at) => {
            let expected = text[at + MARKER.len()..]
                .lines()
                .skip(1)
                .map(|l| {
                    l.strip_prefix("// ")
                        .or_else(|| l.strip_prefix("//"))
                        .unwrap_or(l)
                })
                .collect::<Vec<_>>()
                .join("\n");
            (&text[..at], Some(expected))
        }
    }
}

fn options_of(input: &str) -> Options {
    input
        .lines()
        .filter_map(|l| l.trim().strip_prefix("// options:"))
        .flat_map(|rest| rest.split_whitespace())
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn golden_files_match() {
    let files = golden_files();
    assert!(
        !files.is_empty(),
        "no golden files under {}/tests/golden",
        env!("CARGO_MANIFEST_DIR")
    );
    let bless = std::env::var_os("REGSIM_BLESS").is_some();
    let only: Option<Vec<String>> = std::env::var("REGSIM_GOLDEN")
        .ok()
        .map(|v| v.split(',').map(|p| p.trim().to_string()).collect());
    let files: Vec<_> = files
        .into_iter()
        .filter(|(pass, _)| only.as_ref().is_none_or(|o| o.contains(pass)))
        .collect();
    assert!(
        !files.is_empty(),
        "no golden files for the passes in REGSIM_GOLDEN"
    );
    let mut failures = Vec::new();
    for (pass, path) in &files {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (input, expected) = split(&text);
        let output = ptx::parse(&name, input)
            .map_err(|e| e.to_string())
            .and_then(|m| ir::lower(&m, &name, input).map_err(|e| e.to_string()))
            .and_then(|program| run_pass(pass, &program, &options_of(input)));
        let output = match output {
            Ok(o) => o.trim_end().to_string(),
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        if bless {
            let mut blessed = format!("{}\n{MARKER}\n", input.trim_end());
            for line in output.lines() {
                blessed += &if line.is_empty() {
                    "//\n".to_string()
                } else {
                    format!("// {line}\n")
                };
            }
            std::fs::write(path, blessed).unwrap_or_else(|e| panic!("{name}: {e}"));
        } else if expected.as_deref().map(str::trim_end) != Some(output.as_str()) {
            let got = output.lines().count();
            let first_diff = expected
                .as_deref()
                .unwrap_or("")
                .lines()
                .zip(output.lines())
                .position(|(a, b)| a != b)
                .map_or_else(
                    || "a trailing line".to_string(),
                    |i| format!("line {}", i + 1),
                );
            failures.push(format!(
                "{name}: output ({got} lines) differs at {first_diff}:\n{output}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} golden files fail (REGSIM_BLESS=1 to accept):\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}
