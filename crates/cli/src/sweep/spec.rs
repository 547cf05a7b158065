//! The sweep specification (`SPEC.toml`) and its expansion into run points.
//!
//! ```toml
//! [sweep]
//! workloads = ["saxpy", "bfs --large", { program = "./my_app", args = ["-n", "4"] }]
//! configs = ["gtx480", "qv100"]           # names in configs/, or paths of TOML configs
//! designs = ["baseline", "ideal"]         # values of register_file.design
//! functional = false                      # optional: `regsim run --functional`
//! run_args = ["--max-registers", "32"]    # optional: more `regsim run` flags, every point
//! timeout_seconds = 600                   # optional: a run stops there, as `timeout`
//!
//! [sweep.set]                              # optional grid: the cartesian product
//! "sm.scheduler" = ["lrr", "gto"]
//! "register_file.bank_latency" = [1, 2, 4]
//!
//! [[sweep.points]]                         # optional explicit points (added to the grid)
//! "sm.scheduler" = "two_level"
//! "register_file.bank_latency" = 8
//! ```
//!
//! A spec whose designs sweep different keys is several groups: `[[sweep]]` tables, each
//! with every key above (and its own `[sweep.set]` and `[[sweep.points]]`, written after
//! it) and optionally `name = "..."`, which messages use:
//!
//! ```toml
//! [[sweep]]
//! name = "baseline"
//! workloads = ["*"]
//! configs = ["gtx480"]
//! designs = ["baseline"]
//!
//! [[sweep]]
//! name = "rfc"
//! workloads = ["*"]
//! configs = ["gtx480"]
//! designs = ["rfc"]
//! [sweep.set]                              # this group's grid
//! "register_file.rfc.entries_per_thread" = [1, 2, 4, 8]
//! ```
//!
//! A workload is a built-in name (a program in the repository's `workloads/bin/`, run
//! without arguments), `"*"` (every built-in workload), or a program path (it contains a
//! `/`; relative paths are relative to the spec file's directory), each optionally followed
//! by arguments separated by blanks; the table form takes arguments containing blanks.
//! Config paths are relative to the spec's directory too.
//!
//! A group's points are configs × designs × set combinations × workloads, where the set
//! combinations are the grid's product plus the explicit points (or the one empty
//! combination when there are neither); the spec's points are its groups' in order. A
//! point's key is a hash of what it runs *as written* (workload and arguments, config,
//! design, sets, mode, run arguments; not the group), so it is stable across machines and
//! rebuilds: a store is resumed, not redone, after either, and a point two groups (or one
//! group twice) write runs once. Every group's (config, design, set combination) is
//! loaded and validated when the spec is expanded, so a bad key or value stops the sweep
//! before anything runs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use timing::config::{find_configs_dir, GpuConfig, Override};

/// Environment variable naming the directory of built-in workload programs.
pub const WORKLOADS_DIR_ENV: &str = "REGSIM_WORKLOADS";

/// The override key a design sets.
const DESIGN_KEY: &str = "register_file.design";

/// A parsed sweep specification: its groups, in spec order.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepSpec {
    /// The spec file (absolute), or a description of where the text came from.
    pub origin: PathBuf,
    /// Relative program and config paths are relative to this directory.
    pub base_dir: PathBuf,
    /// One group for a `[sweep]` table, one per table of `[[sweep]]`; never empty.
    pub groups: Vec<SweepGroup>,
}

/// One `[sweep]` or `[[sweep]]` table: workloads × configs × designs × set combinations.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepGroup {
    /// Its index among `[[sweep]]` tables (`None` for a single `[sweep]` table).
    pub position: Option<usize>,
    /// The optional `name = "..."`.
    pub name: Option<String>,
    /// Workloads, in spec order (`"*"` still unexpanded).
    pub workloads: Vec<Workload>,
    /// Config names or paths, as written.
    pub configs: Vec<String>,
    /// Register-file designs.
    pub designs: Vec<String>,
    /// `set`: key and its values, keys sorted.
    pub grid: Vec<(String, Vec<String>)>,
    /// `points`: each a list of key and value, keys sorted.
    pub points: Vec<Vec<(String, String)>>,
    /// Run with `regsim run --functional`.
    pub functional: bool,
    /// More `regsim run` arguments for every point.
    pub run_args: Vec<String>,
    /// A run is stopped after this long (`regsim run --timeout`, its statistics so far
    /// kept) and recorded as `timeout`.
    pub timeout_seconds: Option<f64>,
}

/// One workload entry: a program and its arguments.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Workload {
    /// The program as written: a built-in name or a path.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
}

impl Workload {
    /// `true` for a built-in name (no path separator).
    pub fn is_builtin(&self) -> bool {
        !self.program.contains('/')
    }

    /// The program and its arguments, blank-separated (the `workload` column).
    pub fn label(&self) -> String {
        std::iter::once(self.program.as_str())
            .chain(self.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// One simulation of a sweep: what `regsim run` is given.
#[derive(Clone, Debug, PartialEq)]
pub struct RunPoint {
    /// Position in the expansion.
    pub index: usize,
    /// Stable identity (hex of a SHA-256 over what the point runs, as written).
    pub key: String,
    /// The workload as written.
    pub workload: Workload,
    /// The program to execute (absolute).
    pub program: PathBuf,
    /// Config as written.
    pub config: String,
    /// The config file (absolute).
    pub config_path: PathBuf,
    /// Register-file design.
    pub design: String,
    /// Config overrides besides the design, keys sorted.
    pub sets: Vec<(String, String)>,
    /// `regsim run --functional`.
    pub functional: bool,
    /// More `regsim run` arguments.
    pub run_args: Vec<String>,
    /// The fully resolved GPU config (after the design and the sets).
    pub resolved_config: serde_json::Value,
    /// Kill the run after this many seconds.
    pub timeout_seconds: Option<f64>,
}

impl RunPoint {
    /// A short human-readable description: `workload args | config | design | k=v ...`.
    pub fn label(&self) -> String {
        let mut parts = vec![
            self.workload.label(),
            self.config.clone(),
            self.design.clone(),
        ];
        parts.extend(self.sets.iter().map(|(k, v)| format!("{k}={v}")));
        if self.functional {
            parts.push("functional".into());
        }
        parts.join(" | ")
    }

    /// The `--set` overrides, design first.
    pub fn overrides(&self) -> Vec<String> {
        std::iter::once(format!("{DESIGN_KEY}={}", self.design))
            .chain(self.sets.iter().map(|(k, v)| format!("{k}={v}")))
            .collect()
    }

    /// The arguments of `regsim ARGS` that run this point, writing statistics to `stats`.
    pub fn regsim_args(&self, stats: &Path) -> Vec<std::ffi::OsString> {
        let mut args: Vec<std::ffi::OsString> = vec!["run".into()];
        if self.functional {
            args.push("--functional".into());
        }
        args.push("--gpu".into());
        args.push(self.config_path.clone().into());
        for o in self.overrides() {
            args.push("--set".into());
            args.push(o.into());
        }
        args.push("--stats".into());
        args.push(stats.into());
        // The spec's time limit goes to `regsim run`, which stops the simulation there and
        // keeps its statistics ("complete": false); the runner's kill is the backstop for a
        // program that never stops. A `--timeout` of the spec's own `run_args` wins.
        if let Some(limit) = self.timeout_seconds {
            if !self
                .run_args
                .iter()
                .any(|a| a == "--timeout" || a.starts_with("--timeout="))
            {
                args.push("--timeout".into());
                args.push(limit.to_string().into());
            }
        }
        // The sweep runs one simulation per core: each steps its SMs on one thread,
        // unless the spec's own `run_args` say otherwise.
        if !self
            .run_args
            .iter()
            .any(|a| a == "--threads" || a.starts_with("--threads="))
        {
            args.push("--threads".into());
            args.push("1".into());
        }
        args.extend(self.run_args.iter().map(Into::into));
        args.push("--".into());
        args.push(self.program.clone().into());
        args.extend(self.workload.args.iter().map(Into::into));
        args
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepTable {
    workloads: Vec<WorkloadEntry>,
    configs: Vec<String>,
    designs: Vec<String>,
    #[serde(default)]
    set: BTreeMap<String, toml::Value>,
    #[serde(default)]
    points: Vec<BTreeMap<String, toml::Value>>,
    #[serde(default)]
    functional: bool,
    #[serde(default)]
    run_args: Vec<String>,
    timeout_seconds: Option<f64>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum WorkloadEntry {
    Text(String),
    Table(WorkloadTable),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkloadTable {
    program: String,
    #[serde(default)]
    args: Vec<String>,
}

/// A set value as it goes on the command line: strings as they are, other scalars in
/// TOML syntax (`4`, `1.5`, `true`).
fn scalar_text(v: &toml::Value, place: &str) -> Result<String> {
    match v {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(_) | toml::Value::Float(_) | toml::Value::Boolean(_) => {
            Ok(v.to_string())
        }
        other => bail!(
            "{place}: expected a string, number or boolean, found {}",
            other.type_str()
        ),
    }
}

fn check_set_key(key: &str, place: &str) -> Result<()> {
    if key == DESIGN_KEY {
        bail!("{place}: `{DESIGN_KEY}` is swept by `designs`, not by a set");
    }
    if key.is_empty() || key.split('.').any(str::is_empty) || key.contains('=') {
        bail!("{place}: `{key}` is not a config key (key.path)");
    }
    Ok(())
}

impl SweepSpec {
    /// Reads and checks a spec file.
    pub fn parse(path: &Path) -> Result<SweepSpec> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the sweep spec {}", path.display()))?;
        let origin =
            std::path::absolute(path).with_context(|| format!("resolving {}", path.display()))?;
        let base_dir = origin
            .parent()
            .map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
        SweepSpec::from_text(&text, &origin, &base_dir)
    }

    /// Parses spec text; `origin` names it in errors, `base_dir` anchors relative paths.
    pub fn from_text(text: &str, origin: &Path, base_dir: &Path) -> Result<SweepSpec> {
        let place = origin.display().to_string();
        let doc: toml::Table = toml::from_str(text).map_err(|e| anyhow!("{place}: {e}"))?;
        let tables: Vec<(Option<usize>, &toml::Value)> = match doc.get("sweep") {
            Some(table @ toml::Value::Table(_)) => vec![(None, table)],
            Some(toml::Value::Array(tables)) if !tables.is_empty() => tables
                .iter()
                .enumerate()
                .map(|(i, t)| (Some(i), t))
                .collect(),
            Some(other) => bail!(
                "{place}: `sweep` must be a [sweep] table or [[sweep]] tables, found {}",
                if other.is_array() {
                    "an empty list"
                } else {
                    other.type_str()
                }
            ),
            None => bail!("{place}: no [sweep] table (or [[sweep]] tables)"),
        };
        let mut groups: Vec<SweepGroup> = Vec::new();
        for (position, value) in tables {
            let group = SweepGroup::from_value(position, value, &place)?;
            if let Some(name) = &group.name {
                if let Some(other) = groups.iter().find(|g| g.name.as_ref() == Some(name)) {
                    bail!(
                        "{place}: {} has the same name as {}",
                        group.label(),
                        other.label()
                    );
                }
            }
            groups.push(group);
        }
        Ok(SweepSpec {
            origin: origin.to_path_buf(),
            base_dir: base_dir.to_path_buf(),
            groups,
        })
    }

    /// Every run point: the groups in spec order, each with configs outermost and
    /// workloads innermost; a point whose key an earlier one has (the same point written
    /// twice, in one group or in two) is dropped. Loads and validates every GPU config a
    /// point uses; with `regsim` the executable whose repository holds `configs/` and
    /// `workloads/bin/`.
    pub fn expand_with(&self, regsim: Option<&Path>) -> Result<Vec<RunPoint>> {
        let configs_dir = find_configs_dir(regsim);
        let builtin_dir = find_workloads_dir(regsim);
        let mut points = Vec::new();
        let mut seen = BTreeSet::new();
        for group in &self.groups {
            let place = group.place(&self.origin);
            let count = group.point_count();
            if count > MAX_POINTS {
                bail!(
                    "{place}: expands to {count} points (workloads x configs x designs x set \
                     combinations), over the limit of {MAX_POINTS}; split it"
                );
            }
            let workloads = self.resolve_workloads(group, &builtin_dir)?;
            for config in &group.configs {
                let config_path = self.config_path(config, &configs_dir);
                for design in &group.designs {
                    for sets in group.set_combinations() {
                        let resolved = resolve_config(
                            &config_path,
                            &configs_dir,
                            config,
                            design,
                            &sets,
                            &place,
                        )?;
                        for (workload, program) in &workloads {
                            let key = point_key(
                                workload,
                                config,
                                design,
                                &sets,
                                group.functional,
                                &group.run_args,
                            );
                            if !seen.insert(key.clone()) {
                                continue;
                            }
                            points.push(RunPoint {
                                index: points.len(),
                                key,
                                workload: workload.clone(),
                                program: program.clone(),
                                config: config.clone(),
                                config_path: config_path.clone(),
                                design: design.clone(),
                                sets: sets.clone(),
                                functional: group.functional,
                                run_args: group.run_args.clone(),
                                resolved_config: resolved.clone(),
                                timeout_seconds: group.timeout_seconds,
                            });
                        }
                    }
                }
            }
        }
        Ok(points)
    }

    /// [`SweepSpec::expand_with`] for the running executable.
    pub fn expand(&self) -> Result<Vec<RunPoint>> {
        self.expand_with(std::env::current_exe().ok().as_deref())
    }

    /// A config as written to the file `regsim run --gpu` gets: names in the configs
    /// directory, paths relative to the spec's directory.
    pub fn config_path(&self, config: &str, configs_dir: &Path) -> PathBuf {
        let is_path = config.contains('/') || config.ends_with(".toml");
        if is_path {
            self.base_dir.join(config)
        } else {
            configs_dir.join(format!("{config}.toml"))
        }
    }

    /// A group's workloads with `*` expanded, each with its program's absolute path.
    fn resolve_workloads(
        &self,
        group: &SweepGroup,
        builtin_dir: &Path,
    ) -> Result<Vec<(Workload, PathBuf)>> {
        let place = group.place(&self.origin);
        let mut out = Vec::new();
        for w in &group.workloads {
            if w.program == "*" {
                let names = builtin_workloads(builtin_dir);
                if names.is_empty() {
                    bail!(
                        "{place}: `*` names every built-in workload, but {} has none",
                        builtin_dir.display()
                    );
                }
                for name in names {
                    let program = builtin_dir.join(&name);
                    out.push((
                        Workload {
                            program: name,
                            args: Vec::new(),
                        },
                        program,
                    ));
                }
            } else if w.is_builtin() {
                let program = builtin_dir.join(&w.program);
                if !program.is_file() {
                    bail!(
                        "{place}: `{}` is neither a built-in workload in {} (available: {}) \
                         nor a path (write ./{} for a program beside the spec)",
                        w.program,
                        builtin_dir.display(),
                        builtin_workloads(builtin_dir).join(", "),
                        w.program
                    );
                }
                out.push((w.clone(), program));
            } else {
                let program = self.base_dir.join(&w.program);
                if !program.is_file() {
                    bail!("{place}: workload program {} not found", program.display());
                }
                let program = std::path::absolute(&program)
                    .with_context(|| format!("resolving {}", program.display()))?;
                out.push((w.clone(), program));
            }
        }
        Ok(out)
    }
}

/// Loads the GPU config of one (config, design, set combination), refusing a bad key or
/// value with the place and the overrides, and returns it resolved, as JSON.
fn resolve_config(
    config_path: &Path,
    configs_dir: &Path,
    config: &str,
    design: &str,
    sets: &[(String, String)],
    place: &str,
) -> Result<serde_json::Value> {
    let mut overrides = vec![format!("{DESIGN_KEY}={design}")];
    overrides.extend(sets.iter().map(|(k, v)| format!("{k}={v}")));
    let parsed = overrides
        .iter()
        .map(|o| Override::parse(o).map_err(|e| anyhow!("{place}: {e}")))
        .collect::<Result<Vec<_>>>()?;
    let selector = config_path.to_string_lossy();
    let gpu = GpuConfig::load(&selector, configs_dir, &parsed).map_err(|e| {
        anyhow!(
            "{place}: config `{config}` with {}: {e}",
            overrides.join(" ")
        )
    })?;
    serde_json::to_value(&gpu).context("serializing the resolved GPU config")
}

impl SweepGroup {
    /// Parses and checks one `[sweep]` (`position` `None`) or `[[sweep]]` table of the
    /// spec `place`.
    fn from_value(position: Option<usize>, value: &toml::Value, place: &str) -> Result<SweepGroup> {
        // The name first, so that every message, a malformed table's included, names
        // the group.
        let name = match value.get("name") {
            None => None,
            Some(toml::Value::String(n)) if !n.trim().is_empty() => Some(n.clone()),
            Some(_) => {
                let at = SweepGroup::unnamed(position).label();
                bail!("{place}: {at}: `name` must be a non-empty string");
            }
        };
        let at = SweepGroup {
            name,
            ..SweepGroup::unnamed(position)
        };
        let mut value = value.clone();
        if let Some(t) = value.as_table_mut() {
            t.remove("name");
        }
        let table: SweepTable = value
            .try_into()
            .map_err(|e| anyhow!("{place}: {}: {e}", at.label()))?;
        let field = |what: &str| format!("{place}: {}", at.field(what));
        let mut workloads = Vec::new();
        for (i, entry) in table.workloads.into_iter().enumerate() {
            let where_ = field(&format!("workloads[{i}]"));
            let w = match entry {
                WorkloadEntry::Text(text) => {
                    let mut words = text.split_whitespace().map(str::to_owned);
                    let program = words
                        .next()
                        .ok_or_else(|| anyhow!("{where_}: empty workload"))?;
                    Workload {
                        program,
                        args: words.collect(),
                    }
                }
                WorkloadEntry::Table(t) => {
                    if t.program.trim().is_empty() {
                        bail!("{where_}: empty program");
                    }
                    Workload {
                        program: t.program,
                        args: t.args,
                    }
                }
            };
            if w.program == "*" && !w.args.is_empty() {
                bail!("{where_}: `*` (every built-in workload) takes no arguments");
            }
            workloads.push(w);
        }
        let nonempty = |list: &[String], what: &str| -> Result<()> {
            if list.is_empty() {
                bail!("{} is empty", field(what));
            }
            if let Some(blank) = list.iter().find(|s| s.trim().is_empty()) {
                bail!("{} has an empty entry {blank:?}", field(what));
            }
            Ok(())
        };
        if workloads.is_empty() {
            bail!("{} is empty", field("workloads"));
        }
        nonempty(&table.configs, "configs")?;
        nonempty(&table.designs, "designs")?;
        let mut grid = Vec::new();
        for (key, value) in table.set {
            let where_ = field(&format!("set.\"{key}\""));
            check_set_key(&key, &where_)?;
            let values = match &value {
                toml::Value::Array(items) => items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| scalar_text(v, &format!("{where_}[{i}]")))
                    .collect::<Result<Vec<_>>>()?,
                scalar => vec![scalar_text(scalar, &where_)?],
            };
            if values.is_empty() {
                bail!("{where_}: no values (an empty list would make the sweep empty)");
            }
            grid.push((key, values));
        }
        let mut points = Vec::new();
        for (i, point) in table.points.into_iter().enumerate() {
            let mut sets = Vec::new();
            for (key, value) in point {
                let where_ = field(&format!("points[{i}].\"{key}\""));
                check_set_key(&key, &where_)?;
                sets.push((key, scalar_text(&value, &where_)?));
            }
            points.push(sets);
        }
        if let Some(t) = table.timeout_seconds {
            if !(t > 0.0 && t.is_finite()) {
                bail!(
                    "{} must be a positive number of seconds",
                    field("timeout_seconds")
                );
            }
        }
        if table.run_args.iter().any(|a| a == "--") {
            bail!(
                "{} must not contain `--` (the program follows it)",
                field("run_args")
            );
        }
        Ok(SweepGroup {
            workloads,
            configs: table.configs,
            designs: table.designs,
            grid,
            points,
            functional: table.functional,
            run_args: table.run_args,
            timeout_seconds: table.timeout_seconds,
            ..at
        })
    }

    fn unnamed(position: Option<usize>) -> SweepGroup {
        SweepGroup {
            position,
            name: None,
            workloads: Vec::new(),
            configs: Vec::new(),
            designs: Vec::new(),
            grid: Vec::new(),
            points: Vec::new(),
            functional: false,
            run_args: Vec::new(),
            timeout_seconds: None,
        }
    }

    /// Where the group is in the spec: `sweep`, `sweep[1]` or `sweep[1] ("rfc")`.
    pub fn label(&self) -> String {
        let mut s = match self.position {
            Some(i) => format!("sweep[{i}]"),
            None => "sweep".to_string(),
        };
        if let Some(name) = &self.name {
            s.push_str(&format!(" ({name:?})"));
        }
        s
    }

    /// A key of the group in messages: `sweep.designs` for an unnamed `[sweep]` table,
    /// `sweep[1] ("rfc"): designs` otherwise.
    fn field(&self, what: &str) -> String {
        if self.position.is_none() && self.name.is_none() {
            format!("sweep.{what}")
        } else {
            format!("{}: {what}", self.label())
        }
    }

    /// How messages about the group's points start: the spec, then the group unless the
    /// spec is one unnamed `[sweep]` table.
    fn place(&self, origin: &Path) -> String {
        if self.position.is_none() && self.name.is_none() {
            origin.display().to_string()
        } else {
            format!("{}: {}", origin.display(), self.label())
        }
    }

    /// Points the group expands to before duplicates are dropped (saturating).
    pub fn point_count(&self) -> u64 {
        let grid = if self.grid.is_empty() {
            0
        } else {
            self.grid
                .iter()
                .fold(1u64, |n, (_, v)| n.saturating_mul(v.len() as u64))
        };
        let combos = grid.saturating_add(self.points.len() as u64).max(1);
        [self.workloads.len(), self.configs.len(), self.designs.len()]
            .iter()
            .fold(combos, |n, &k| n.saturating_mul(k as u64))
    }

    /// The set combinations: the grid's cartesian product (keys sorted, the last key
    /// varying fastest) followed by the explicit points; one empty combination if there
    /// are neither.
    pub fn set_combinations(&self) -> Vec<Vec<(String, String)>> {
        let mut combos: Vec<Vec<(String, String)>> = Vec::new();
        if !self.grid.is_empty() {
            combos.push(Vec::new());
            for (key, values) in &self.grid {
                combos = combos
                    .into_iter()
                    .flat_map(|c| {
                        values.iter().map(move |v| {
                            let mut c = c.clone();
                            c.push((key.clone(), v.clone()));
                            c
                        })
                    })
                    .collect();
            }
        }
        combos.extend(self.points.iter().cloned());
        if combos.is_empty() {
            combos.push(Vec::new());
        }
        combos
    }
}

/// The most points one group of a spec may expand to: each is a `regsim run`, and the
/// expansion itself holds them all in memory.
pub const MAX_POINTS: u64 = 1_000_000;

/// The stable identity of a point: SHA-256 over a canonical JSON of what it runs, as
/// written, in hex (the first 20 digits; 80 bits).
pub fn point_key(
    workload: &Workload,
    config: &str,
    design: &str,
    sets: &[(String, String)],
    functional: bool,
    run_args: &[String],
) -> String {
    let mut sorted = sets.to_vec();
    sorted.sort();
    // An array, not an object: its order cannot depend on serde_json's map features.
    let canonical = serde_json::json!([
        "regsim-sweep-point-v1",
        workload.program,
        workload.args,
        config,
        design,
        sorted,
        functional,
        run_args,
    ]);
    let digest = Sha256::digest(canonical.to_string().as_bytes());
    digest.iter().take(10).map(|b| format!("{b:02x}")).collect()
}

/// Where built-in workload programs are, first match wins: `$REGSIM_WORKLOADS`, if set and
/// non-empty; `workloads/bin/` of the repository the `regsim` executable was built in
/// (`<repo>/target/<profile>/regsim`); `workloads/bin/` of this source tree. The same
/// order as `timing::config::find_configs_dir`.
pub fn find_workloads_dir(executable: Option<&Path>) -> PathBuf {
    if let Some(dir) = std::env::var_os(WORKLOADS_DIR_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    executable
        .and_then(|exe| Some(exe.parent()?.parent()?.parent()?.join("workloads/bin")))
        .filter(|d| d.is_dir())
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads/bin"))
}

/// The built-in workload names in `dir` (executable files), sorted.
pub fn builtin_workloads(dir: &Path) -> Vec<String> {
    use std::os::unix::fs::PermissionsExt;
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            e.metadata()
                .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                .unwrap_or(false)
        })
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> Result<SweepSpec> {
        SweepSpec::from_text(text, Path::new("test.toml"), Path::new("/nowhere"))
    }

    const BASIC: &str = r#"
        [sweep]
        workloads = ["saxpy", "bfs --large", { program = "./app", args = ["a b", "c"] }]
        configs = ["gtx480", "qv100"]
        designs = ["baseline", "ideal"]
        [sweep.set]
        "sm.scheduler" = ["lrr", "gto"]
        "register_file.bank_latency" = [1, 2, 4]
        [[sweep.points]]
        "sm.scheduler" = "two_level"
        "register_file.bank_latency" = 8
    "#;

    #[test]
    fn parses_workloads_grid_and_points() {
        let s = spec(BASIC).unwrap();
        assert_eq!(s.groups[0].workloads.len(), 3);
        assert_eq!(s.groups[0].workloads[1].program, "bfs");
        assert_eq!(s.groups[0].workloads[1].args, vec!["--large"]);
        assert_eq!(s.groups[0].workloads[2].args, vec!["a b", "c"]);
        assert!(s.groups[0].workloads[0].is_builtin() && !s.groups[0].workloads[2].is_builtin());
        // Keys sorted; integers in TOML syntax.
        assert_eq!(s.groups[0].grid[0].0, "register_file.bank_latency");
        assert_eq!(s.groups[0].grid[0].1, vec!["1", "2", "4"]);
        let combos = s.groups[0].set_combinations();
        assert_eq!(combos.len(), 3 * 2 + 1);
        assert_eq!(
            combos[1],
            vec![
                ("register_file.bank_latency".to_string(), "1".to_string()),
                ("sm.scheduler".to_string(), "gto".to_string())
            ]
        );
        assert_eq!(combos[6][1].1, "two_level");
        assert_eq!(combos[6][0].1, "8");
    }

    #[test]
    fn no_sets_is_one_empty_combination() {
        let s =
            spec("[sweep]\nworkloads=['saxpy']\nconfigs=['gtx480']\ndesigns=['ideal']").unwrap();
        assert_eq!(s.groups[0].set_combinations(), vec![Vec::new()]);
    }

    #[test]
    fn rejects_bad_specs_naming_the_place() {
        let err = |t: &str| spec(t).unwrap_err().to_string();
        assert!(err("[other]\nx=1").contains("no [sweep] table"));
        assert!(
            err("[sweep]\nworkloads=[]\nconfigs=['gtx480']\ndesigns=['ideal']")
                .contains("sweep.workloads is empty")
        );
        assert!(
            err("[sweep]\nworkloads=['a']\nconfigs=['gtx480']\ndesigns=[]")
                .contains("sweep.designs is empty")
        );
        let e = err("[sweep]\nworkloads=['a']\nconfigs=['x']\ndesigns=['y']\nbogus=1");
        assert!(e.contains("test.toml") && e.contains("bogus"), "{e}");
        let e = err("[sweep]\nworkloads=['a']\nconfigs=['x']\ndesigns=['y']\n\
             [sweep.set]\n'register_file.design'=['ideal']");
        assert!(e.contains("designs"), "{e}");
        let e = err(
            "[sweep]\nworkloads=['a']\nconfigs=['x']\ndesigns=['y']\n[sweep.set]\n'sm.x'=[[1]]",
        );
        assert!(e.contains("sweep.set.\"sm.x\"[0]"), "{e}");
        let e = err("[sweep]\nworkloads=['a']\nconfigs=['x']\ndesigns=['y']\n[sweep.set]\n'a'=[]");
        assert!(e.contains("no values"), "{e}");
        let e = err("[sweep]\nworkloads=['* x']\nconfigs=['x']\ndesigns=['y']");
        assert!(e.contains("takes no arguments"), "{e}");
        let e = err("[sweep]\nworkloads=['a']\nconfigs=['x']\ndesigns=['y']\ntimeout_seconds=0");
        assert!(e.contains("timeout_seconds"), "{e}");
    }

    #[test]
    fn key_is_stable_and_sensitive_to_every_part() {
        let w = Workload {
            program: "saxpy".into(),
            args: vec![],
        };
        let sets = vec![("sm.scheduler".to_string(), "gto".to_string())];
        let k = point_key(&w, "gtx480", "baseline", &sets, false, &[]);
        // A known answer (Python: hashlib.sha256 of the compact JSON
        // ["regsim-sweep-point-v1","saxpy",[],"gtx480","baseline",[["sm.scheduler","gto"]],
        // false,[]]): changing the hashing orphans every store, so it must be deliberate.
        assert_eq!(k, point_key(&w, "gtx480", "baseline", &sets, false, &[]));
        assert_eq!(k.len(), 20);
        assert_eq!(k, "0f4c88eaebab7a6065ee");
        let w2 = Workload {
            program: "saxpy".into(),
            args: vec!["--large".into()],
        };
        let others = [
            point_key(&w2, "gtx480", "baseline", &sets, false, &[]),
            point_key(&w, "qv100", "baseline", &sets, false, &[]),
            point_key(&w, "gtx480", "ideal", &sets, false, &[]),
            point_key(&w, "gtx480", "baseline", &[], false, &[]),
            point_key(&w, "gtx480", "baseline", &sets, true, &[]),
            point_key(
                &w,
                "gtx480",
                "baseline",
                &sets,
                false,
                &["--summary".into()],
            ),
        ];
        for o in &others {
            assert_ne!(&k, o);
        }
        // Set order does not matter.
        let two = vec![
            ("a.b".to_string(), "1".to_string()),
            ("c.d".to_string(), "2".to_string()),
        ];
        let rev: Vec<_> = two.iter().rev().cloned().collect();
        assert_eq!(
            point_key(&w, "g", "d", &two, false, &[]),
            point_key(&w, "g", "d", &rev, false, &[])
        );
    }

    #[test]
    fn expands_builtins_and_validates_configs() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        for name in ["alpha", "beta"] {
            let p = bin.join(name);
            std::fs::write(&p, "#!/bin/sh\n").unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        // Not executable: not a workload.
        std::fs::write(bin.join("README"), "x").unwrap();
        assert_eq!(builtin_workloads(&bin), vec!["alpha", "beta"]);

        let text = r#"
            [sweep]
            workloads = ["*", "./bin/alpha x"]
            configs = ["gtx480"]
            designs = ["baseline", "ideal"]
            [sweep.set]
            "sm.scheduler" = ["lrr", "gto"]
        "#;
        let s = SweepSpec::from_text(text, &dir.path().join("s.toml"), dir.path()).unwrap();
        // `*` via $REGSIM_WORKLOADS would race with other tests; resolve by hand.
        let mut s_builtin = s.clone();
        s_builtin.groups[0].workloads.remove(0);
        s_builtin.groups[0].workloads.insert(
            0,
            Workload {
                program: "./bin/beta".into(),
                args: vec![],
            },
        );
        let points = s_builtin.expand_with(None).unwrap();
        assert_eq!(points.len(), 2 * 2 * 2);
        assert_eq!(points[0].workload.program, "./bin/beta");
        assert_eq!(points[1].workload.args, vec!["x"]);
        assert_eq!(points[0].program, bin.join("beta"));
        assert_eq!(points[0].design, "baseline");
        assert_eq!(points[0].sets[0].1, "lrr");
        assert_eq!(points[2].sets[0].1, "gto");
        assert_eq!(points[4].design, "ideal");
        assert_eq!(points[7].index, 7);
        assert_eq!(
            points[5].resolved_config["register_file"]["design"],
            serde_json::json!("ideal")
        );
        assert_eq!(
            points[5].resolved_config["sm"]["scheduler"],
            serde_json::json!("lrr")
        );
        let keys: BTreeSet<_> = points.iter().map(|p| &p.key).collect();
        assert_eq!(keys.len(), 8);
        let args = points[1].regsim_args(Path::new("/tmp/s.json"));
        let args: Vec<String> = args.iter().map(|a| a.to_string_lossy().into()).collect();
        let dashdash = args.iter().position(|a| a == "--").unwrap();
        assert_eq!(args[dashdash + 2], "x");
        assert!(args.contains(&"register_file.design=baseline".to_string()));
        assert!(args.contains(&"sm.scheduler=lrr".to_string()));
        assert!(!args.contains(&"--timeout".to_string()));

        // The spec's time limit reaches `regsim run` (which keeps the statistics up to the
        // stop), unless the spec's own run_args set one.
        let timed = |run_args: &[&str]| -> Vec<String> {
            let mut t = s_builtin.clone();
            t.groups[0].timeout_seconds = Some(2.5);
            t.groups[0].run_args = run_args.iter().map(|a| a.to_string()).collect();
            let points = t.expand_with(None).unwrap();
            let args = points[0].regsim_args(Path::new("/tmp/s.json"));
            args.iter().map(|a| a.to_string_lossy().into()).collect()
        };
        let args = timed(&[]);
        let at = args.iter().position(|a| a == "--timeout").unwrap();
        assert_eq!(args[at + 1], "2.5");
        assert!(at < args.iter().position(|a| a == "--").unwrap());
        let args = timed(&["--timeout", "9"]);
        assert_eq!(args.iter().filter(|a| *a == "--timeout").count(), 1);
        assert!(args.contains(&"9".to_string()));

        // Each simulation steps its SMs on one thread (the sweep runs one per core),
        // unless the spec's own run_args ask for more.
        let args = timed(&[]);
        let at = args.iter().position(|a| a == "--threads").unwrap();
        assert_eq!(args[at + 1], "1");
        assert!(at < args.iter().position(|a| a == "--").unwrap());
        let args = timed(&["--threads", "4"]);
        assert_eq!(args.iter().filter(|a| *a == "--threads").count(), 1);
        assert!(args.contains(&"4".to_string()));

        // A bad value is refused when expanding, naming the spec and the override.
        let mut bad = s_builtin.clone();
        bad.groups[0].grid[0].1.push("fastest".into());
        let e = bad.expand_with(None).unwrap_err().to_string();
        assert!(
            e.contains("s.toml") && e.contains("sm.scheduler=fastest"),
            "{e}"
        );
        let mut bad = s_builtin.clone();
        bad.groups[0].designs.push("no_such_design".into());
        let e = bad.expand_with(None).unwrap_err().to_string();
        assert!(e.contains("no_such_design"), "{e}");
        // A missing program is refused.
        let mut bad = s_builtin;
        bad.groups[0].workloads[0].program = "./bin/gamma".into();
        let e = bad.expand_with(None).unwrap_err().to_string();
        assert!(e.contains("gamma") && e.contains("not found"), "{e}");
        // An unknown built-in lists the available ones.
        let mut bad = s.clone();
        bad.groups[0].workloads = vec![Workload {
            program: "no_such_workload".into(),
            args: vec![],
        }];
        let e = bad.expand_with(None).unwrap_err().to_string();
        assert!(e.contains("no_such_workload") && e.contains("saxpy"), "{e}");
    }

    #[test]
    fn duplicate_points_run_once() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("prog");
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        let text = r#"
            [sweep]
            workloads = ["./prog", "./prog"]
            configs = ["gtx480"]
            designs = ["ideal"]
            [sweep.set]
            "sm.scheduler" = ["gto"]
            [[sweep.points]]
            "sm.scheduler" = "gto"
        "#;
        let s = SweepSpec::from_text(text, &dir.path().join("s.toml"), dir.path()).unwrap();
        assert_eq!(s.groups[0].set_combinations().len(), 2);
        assert_eq!(s.expand_with(None).unwrap().len(), 1);
    }

    /// A directory with an executable `prog` for specs that name `./prog`.
    fn dir_with_program() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("prog");
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        dir
    }

    const GROUPS: &str = r#"
        [[sweep]]
        name = "base"
        workloads = ["./prog", "./prog x"]
        configs = ["gtx480"]
        designs = ["baseline"]
        [sweep.set]
        "sm.scheduler" = ["gto"]

        [[sweep]]
        name = "rfc"
        workloads = ["./prog"]
        configs = ["gtx480"]
        designs = ["baseline", "rfc"]
        [sweep.set]
        "sm.scheduler" = ["gto"]
        "register_file.rfc.entries_per_thread" = [2, 6]
        [[sweep.points]]
        "sm.scheduler" = "gto"

        [[sweep]]
        workloads = ["./prog"]
        configs = ["gtx480"]
        designs = ["ideal"]
        functional = true
    "#;

    #[test]
    fn groups_expand_in_order_and_a_point_in_two_groups_runs_once() {
        let dir = dir_with_program();
        let s = SweepSpec::from_text(GROUPS, &dir.path().join("s.toml"), dir.path()).unwrap();
        assert_eq!(s.groups.len(), 3);
        assert_eq!(s.groups[1].label(), "sweep[1] (\"rfc\")");
        assert_eq!(s.groups[2].label(), "sweep[2]");
        assert_eq!(s.groups[1].set_combinations().len(), 2 + 1);
        let points = s.expand_with(None).unwrap();
        let labels: Vec<String> = points
            .iter()
            .map(|p| format!("{} {} {:?}", p.workload.label(), p.design, p.sets))
            .collect();
        let gto = r#"("sm.scheduler", "gto")"#;
        let rfc = |n: u32| format!(r#"("register_file.rfc.entries_per_thread", "{n}")"#);
        assert_eq!(
            labels,
            vec![
                format!("./prog baseline [{gto}]"),
                format!("./prog x baseline [{gto}]"),
                // Group rfc: baseline at each entry count, then its explicit point,
                // which is group base's first point and is left out.
                format!("./prog baseline [{}, {gto}]", rfc(2)),
                format!("./prog baseline [{}, {gto}]", rfc(6)),
                format!("./prog rfc [{}, {gto}]", rfc(2)),
                format!("./prog rfc [{}, {gto}]", rfc(6)),
                format!("./prog rfc [{gto}]"),
                "./prog ideal []".to_string(),
            ]
        );
        assert!(points.iter().enumerate().all(|(i, p)| p.index == i));
        assert!(points[7].functional && !points[6].functional);
        // Keys are the points' as written, whatever group holds them: the same as a
        // single-table spec's.
        let one = SweepSpec::from_text(
            "[sweep]\nworkloads=['./prog']\nconfigs=['gtx480']\ndesigns=['baseline']\n\
             [sweep.set]\n'sm.scheduler'=['gto']",
            &dir.path().join("one.toml"),
            dir.path(),
        )
        .unwrap();
        assert_eq!(one.groups[0].position, None);
        assert_eq!(one.expand_with(None).unwrap()[0].key, points[0].key);
        // One [[sweep]] table is the [sweep] table.
        let one_group = SweepSpec::from_text(
            "[[sweep]]\nworkloads=['./prog']\nconfigs=['gtx480']\ndesigns=['baseline']\n\
             [sweep.set]\n'sm.scheduler'=['gto']",
            &dir.path().join("one.toml"),
            dir.path(),
        )
        .unwrap();
        assert_eq!(one_group.expand_with(None).unwrap()[0].key, points[0].key);
    }

    #[test]
    fn errors_name_the_group() {
        let err = |t: &str| spec(t).unwrap_err().to_string();
        let ok = "[[sweep]]\nworkloads=['a']\nconfigs=['x']\ndesigns=['y']\n";
        let e = err(&format!(
            "{ok}[[sweep]]\nname='rfc'\nworkloads=[]\nconfigs=['x']\ndesigns=['y']"
        ));
        assert!(
            e.contains("test.toml: sweep[1] (\"rfc\"): workloads is empty"),
            "{e}"
        );
        let e = err(&format!(
            "{ok}[[sweep]]\nworkloads=['a']\nconfigs=['x']\ndesigns=['y']\nbogus=1"
        ));
        assert!(e.contains("sweep[1]: ") && e.contains("bogus"), "{e}");
        let e = err(&format!(
            "{ok}[[sweep]]\nname='rfc'\nworkloads=['a']\nconfigs=['x']\ndesigns=['y']\n\
             [sweep.set]\n'sm.x'=[[1]]"
        ));
        assert!(e.contains("sweep[1] (\"rfc\"): set.\"sm.x\"[0]"), "{e}");
        let e = err(&format!(
            "{ok}name='a'\n[[sweep]]\nname='a'\nworkloads=['a']\nconfigs=['x']\ndesigns=['y']"
        ));
        assert!(
            e.contains("sweep[1] (\"a\") has the same name as sweep[0] (\"a\")"),
            "{e}"
        );
        let e = err(&format!("{ok}name=3"));
        assert!(
            e.contains("sweep[0]: `name` must be a non-empty string"),
            "{e}"
        );
        assert!(err("sweep = []").contains("an empty list"));
        assert!(err("sweep = 3").contains("[[sweep]] tables"));
    }

    #[test]
    fn a_bad_value_in_a_later_group_stops_the_expansion_naming_it() {
        let dir = dir_with_program();
        let text = "[[sweep]]\nworkloads=['./prog']\nconfigs=['gtx480']\ndesigns=['baseline']\n\
                    [[sweep]]\nname='fast'\nworkloads=['./prog']\nconfigs=['gtx480']\n\
                    designs=['ideal']\n[sweep.set]\n'sm.scheduler'=['gto', 'fastest']\n";
        let s = SweepSpec::from_text(text, &dir.path().join("s.toml"), dir.path()).unwrap();
        let e = s.expand_with(None).unwrap_err().to_string();
        assert!(
            e.contains("s.toml: sweep[1] (\"fast\"): config `gtx480` with")
                && e.contains("sm.scheduler=fastest"),
            "{e}"
        );
        let mut missing = s.clone();
        missing.groups[1].workloads[0].program = "./gone".into();
        let e = missing.expand_with(None).unwrap_err().to_string();
        assert!(
            e.contains("sweep[1] (\"fast\"): workload program") && e.contains("gone"),
            "{e}"
        );
    }
}
