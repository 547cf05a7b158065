//! `regsim paper X --results DIR`: the results page `DIR/<paper>.md` (every figure's
//! headline, per-workload and per-class tables) and its figures `DIR/<paper>/<id>.svg`,
//! generated from the runs rather than pasted, and stamped with what produced them: the
//! commit (`git rev-parse HEAD` of the current directory, and whether the sources had
//! uncommitted changes), the date and the mode (full or `--quick`). The hand-written
//! `DIR/notes/<paper>.md`, which explains each difference from the paper's numbers, is
//! included at the end.
//!
//! The stamp is also one machine-readable line,
//! `<!-- regsim-results paper=P commit=C dirty=D mode=M -->`, which a test reads to
//! refuse results older than the register-file and energy code ([`parse_stamp`]).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};

use super::classes::Classes;
use super::figures::{compute, figure_defs};
use crate::report_html::svg::{self, Series};
use crate::report_html::{Arrangement, Point};

/// What the page is generated from.
pub struct Run<'a> {
    pub paper: &'a str,
    pub points: &'a [Point],
    /// Points that failed (left out of the tables).
    pub failures: usize,
    pub quick: bool,
    /// The workloads a `--quick` run left out (`figures.toml`'s `[quick]`, for this paper).
    pub left_out: &'a [String],
    pub classes: &'a Classes,
}

/// Where the results came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Stamp {
    /// The commit (`unknown` outside a git checkout).
    pub commit: String,
    /// Whether the simulator's sources (crates, configs, experiments, workloads) had
    /// uncommitted changes.
    pub dirty: bool,
    /// `YYYY-MM-DD HH:MM UTC`.
    pub date: String,
}

/// The sources whose uncommitted changes make results dirty.
const SOURCES: [&str; 4] = ["crates", "configs", "experiments", "workloads"];

/// The papers' full references.
fn reference(paper: &str) -> &'static str {
    match paper {
        "gebhart" => {
            "Gebhart, Keckler and Dally, \"A Compile-Time Managed Multi-Level Register File \
             Hierarchy\", MICRO 2011"
        }
        "ltrf" => {
            "Sadrosadati et al., \"LTRF: Enabling High-Capacity Register Files for GPUs via \
             Hardware/Software Cooperative Register Prefetching\", ASPLOS 2018"
        }
        "cerf" => {
            "Jing et al., \"Integrated Register File and Cache (cache-emulated register \
             file)\", MICRO 2016"
        }
        "malekeh" => {
            "Abaie Shoushtary et al., \"Lightweight Register File Caching in Collector Units \
             for GPUs\""
        }
        "modern-core" => {
            "Huerta, Abaie Shoushtary, Cruz and González, \"Dissecting and Modeling the \
             Architecture of Modern GPU Cores\", MICRO 2025 (arXiv:2503.20481)"
        }
        "wir" => "Kim and Ro, \"WIR: Warp Instruction Reuse to Minimize Repeated Computations in GPUs\", HPCA 2018",
        _ => "",
    }
}

/// The current commit and whether the sources differ from it (run in the current
/// directory).
pub fn current_stamp() -> Stamp {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let mut status = vec!["status", "--porcelain", "--"];
    status.extend(SOURCES);
    let dirty = git(&status).is_some_and(|s| !s.is_empty());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Stamp {
        commit,
        dirty,
        date: utc(now),
    }
}

/// `YYYY-MM-DD HH:MM UTC` of Unix seconds (the proleptic Gregorian calendar).
pub fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let (h, m) = ((secs % 86_400) / 3600, (secs % 3600) / 60);
    // Days since 1970-01-01 to a civil date, in 400-year eras of 146 097 days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{d:02} {h:02}:{m:02} UTC")
}

/// The page and its figures (SVG file stem, SVG text).
pub fn page(
    run: &Run,
    stamp: &Stamp,
    notes: Option<&str>,
) -> Result<(String, Vec<(String, String)>)> {
    let p = run.paper;
    let mode = if run.quick { "quick" } else { "full" };
    let a = Arrangement::new(run.points, "baseline");
    let mut md = format!("# {p}: regsim against the paper\n\n");
    md.push_str(&format!(
        "<!-- regsim-results paper={p} commit={} dirty={} mode={mode} -->\n",
        stamp.commit, stamp.dirty
    ));
    md.push_str(&format!("{}.\n\n", reference(p)));
    md.push_str(&format!(
        "Generated by `regsim paper {p}{} --results DIR`; do not edit by hand (the notes at \
         the end come from `notes/{p}.md`).\n\n",
        if run.quick { " --quick" } else { "" }
    ));
    md.push_str(&format!(
        "- commit: `{}`{}\n- date: {}\n- mode: {mode}{}\n- runs: {} ({} workloads){}\n",
        stamp.commit,
        if stamp.dirty {
            " with uncommitted changes to the sources"
        } else {
            ""
        },
        stamp.date,
        if run.quick {
            format!(
                " (`--quick`: every workload{}, and of each swept setting only the values \
                 the figures below name)",
                if run.left_out.is_empty() {
                    String::new()
                } else {
                    format!(" but {}", run.left_out.join(", "))
                }
            )
        } else {
            " (every point of the paper's experiment)".to_string()
        },
        run.points.len(),
        a.workloads.len(),
        if run.failures > 0 {
            format!("; {} failed and are left out", run.failures)
        } else {
            String::new()
        }
    ));
    let mut svgs = Vec::new();
    for f in figure_defs()?.iter().filter(|f| f.paper == p) {
        let c = compute(f, &a, run.classes);
        md.push_str(&format!("\n## {}\n\n", f.title));
        md.push_str(&format!(
            "Paper: {}. Normalized: {}. Summary over workloads: {}.",
            f.source,
            f.divided_by(),
            f.summary.name()
        ));
        if let Some(cl) = c.classes {
            md.push_str(&format!(
                " Classes (`workloads/classes.toml`): {}; measured by {}.",
                cl.criterion, cl.measured
            ));
        }
        md.push_str("\n\n");
        md.push_str(&c.headline().render(true));
        if c.workloads.is_empty() {
            continue;
        }
        let mut categories = c.workloads.clone();
        categories.push(f.summary.name().to_string());
        let series: Vec<Series> = c
            .columns
            .iter()
            .filter_map(|col| {
                let name = col.label.clone()?;
                let mut values: Vec<Option<f64>> = c
                    .workloads
                    .iter()
                    .map(|w| col.values.get(w).copied())
                    .collect();
                values.push(
                    f.summary
                        .of(&col.values.values().copied().collect::<Vec<_>>()),
                );
                Some(Series { name, values })
            })
            .collect();
        let svg = svg::grouped_bars(
            &f.title,
            if f.normalize_to.is_some() {
                "normalized"
            } else {
                "ratio"
            },
            &categories,
            &series,
            f.normalize_to.as_ref().map(|_| 1.0),
        );
        md.push_str(&format!("\n![{}]({p}/{}.svg)\n\n", f.title, f.id));
        md.push_str("Per workload:\n\n");
        md.push_str(&c.per_workload().render(true));
        svgs.push((f.id.clone(), svg));
    }
    md.push_str("\n## Differences from the paper\n\n");
    match notes {
        Some(n) => md.push_str(n.trim_end()),
        None => md.push_str(&format!("No notes yet (`notes/{p}.md`).")),
    }
    md.push('\n');
    Ok((md, svgs))
}

/// Writes `dir/<paper>.md` and `dir/<paper>/<id>.svg`; returns the page's path.
pub fn write(dir: &Path, run: &Run) -> Result<PathBuf> {
    let notes_path = dir.join("notes").join(format!("{}.md", run.paper));
    let notes = match std::fs::read_to_string(&notes_path) {
        Ok(n) => Some(n),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", notes_path.display())),
    };
    let (md, svgs) = page(run, &current_stamp(), notes.as_deref())?;
    let fig_dir = dir.join(run.paper);
    std::fs::create_dir_all(&fig_dir).with_context(|| format!("creating {}", fig_dir.display()))?;
    for (id, svg) in svgs {
        let path = fig_dir.join(format!("{id}.svg"));
        std::fs::write(&path, svg).with_context(|| format!("writing {}", path.display()))?;
    }
    let path = dir.join(format!("{}.md", run.paper));
    std::fs::write(&path, md).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The machine-readable stamp line of a results page: (paper, commit, dirty, mode).
    fn parse_stamp(page: &str) -> Option<(String, String, bool, String)> {
        let line = page
            .lines()
            .find_map(|l| l.trim().strip_prefix("<!-- regsim-results "))?;
        let field = |k: &str| {
            line.split_whitespace()
                .find_map(|f| f.strip_prefix(k)?.strip_prefix('='))
                .map(str::to_string)
        };
        Some((
            field("paper")?,
            field("commit")?,
            field("dirty")? == "true",
            field("mode")?,
        ))
    }

    fn git(root: &Path, args: &[&str]) -> Option<String> {
        Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    }

    /// Every page under docs/results names a committed state (no uncommitted changes)
    /// that already has the last change to the register-file designs and the energy
    /// model: results older than that code fail here until regenerated with
    /// `regsim paper all --quick --results docs/results` (or without --quick). Outside a
    /// git checkout, or in a shallow clone (no history to compare), it says so and
    /// checks only the stamps' form.
    #[test]
    fn docs_results_are_not_older_than_the_register_file_and_energy_code() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let dir = root.join("docs/results");
        let mut pages: Vec<PathBuf> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .collect();
        pages.sort();
        let history =
            git(&root, &["rev-parse", "--is-shallow-repository"]).as_deref() == Some("false");
        let last = git(
            &root,
            &[
                "log",
                "-1",
                "--format=%H",
                "--",
                "crates/timing/src/rf",
                "crates/energy",
            ],
        )
        .filter(|c| !c.is_empty());
        if !history || last.is_none() {
            println!("SKIPPED the commit-age check: no git history here");
        }
        for page in &pages {
            let text = std::fs::read_to_string(page).unwrap();
            let stem = page.file_stem().unwrap().to_string_lossy().into_owned();
            let (paper, commit, dirty, mode) =
                parse_stamp(&text).unwrap_or_else(|| panic!("{}: no stamp line", page.display()));
            assert_eq!(paper, stem, "{}", page.display());
            assert!(
                mode == "quick" || mode == "full",
                "{}: mode {mode}",
                page.display()
            );
            assert!(
                !dirty,
                "{}: generated from uncommitted sources; regenerate from a commit",
                page.display()
            );
            let (true, Some(last)) = (history, &last) else {
                continue;
            };
            assert!(
                git(&root, &["cat-file", "-e", &format!("{commit}^{{commit}}")]).is_some(),
                "{}: names commit {commit}, which this repository does not have; regenerate \
                 with `regsim paper all --quick --results docs/results`",
                page.display()
            );
            assert!(
                git(&root, &["merge-base", "--is-ancestor", last, &commit]).is_some(),
                "{}: generated at {commit}, older than the last change to \
                 crates/timing/src/rf or crates/energy ({last}); regenerate with \
                 `regsim paper all --quick --results docs/results`",
                page.display()
            );
        }
    }

    #[test]
    fn dates_are_utc_civil_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        // 2000-02-29 12:34 UTC (a leap day of a leap century).
        assert_eq!(utc(951_827_640), "2000-02-29 12:34 UTC");
        assert_eq!(utc(1_798_761_599), "2026-12-31 23:59 UTC");
    }

    #[test]
    fn the_stamp_line_reads_back() {
        let run = Run {
            paper: "malekeh",
            points: &[],
            failures: 0,
            quick: true,
            left_out: &["atomics_cas".to_string()],
            classes: &Classes::default(),
        };
        let stamp = Stamp {
            commit: "abc123".into(),
            dirty: false,
            date: utc(0),
        };
        let (md, svgs) = page(&run, &stamp, Some("A note.\n")).unwrap();
        assert_eq!(
            parse_stamp(&md),
            Some(("malekeh".into(), "abc123".into(), false, "quick".into()))
        );
        assert!(md.contains("A note.") && md.contains("1970-01-01"), "{md}");
        assert!(md.contains("every workload but atomics_cas,"), "{md}");
        // A quick run that keeps every workload (modern-core) says so.
        let all = Run {
            left_out: &[],
            ..run
        };
        let (md_all, _) = page(&all, &stamp, None).unwrap();
        assert!(
            md_all.contains("(`--quick`: every workload, and of each swept"),
            "{md_all}"
        );
        // No runs: the headlines say "not run" and no figure is drawn.
        assert!(md.contains("not run") && svgs.is_empty(), "{md}");
    }
}
