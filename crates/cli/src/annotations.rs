//! `regsim compile FILE.ptx --emit annotations [--rf DESIGN] [--gpu NAME] [--set K=V]...`:
//! the load-time pipeline's output exactly as `regsim run` builds it for the timing model —
//! the program after any rewrite, every instruction's architectural operands and the
//! hints the selected register-file design's passes put on them.

use anyhow::{anyhow, Result};
use compiler::pipeline::{compile, LoadOptions, PassSet};
use ir::{FuncId, InstId, Program};
use serde_json::{json, Value};
use std::fmt::Write as _;
use timing::kernel_info::{HierarchyLevel, InstHint, OperandHint, RegFileKind, RegOperand};
use timing::{GpuConfig, KernelInfo};

/// The pipeline options `regsim run` would use for `config` with an optional cap: the
/// cap under the config's register budget (`compiler.max_registers_per_thread`, as the
/// runtime applies it: `cudart::transforms::ProgramTransforms::under_budget`), and the
/// design's passes.
pub fn load_options(config: &GpuConfig, max_registers: Option<u32>) -> LoadOptions {
    let budget = timing::register_budget::budget(config).registers;
    LoadOptions {
        max_registers: compiler::pipeline::cap_under_limit(max_registers, budget),
        passes: timing::rf::required_passes(config),
    }
}

/// Compiles `program` as the runtime would and prints the kernels selected by `only`
/// (all kernels when `None`), as text or JSON; with `control_bits`, also the control
/// bits the compiler sets under `config`'s latencies ([`timing::control_bits`]).
pub fn emit(
    program: &Program,
    config: &GpuConfig,
    max_registers: Option<u32>,
    only: Option<&str>,
    as_json: bool,
    control_bits: bool,
) -> Result<String> {
    let options = load_options(config, max_registers);
    let compiled = compile(program, &options).map_err(|e| anyhow!("{e}"))?;
    let p = &compiled.program;
    let kernels: Vec<FuncId> = p
        .kernels()
        .map(|(k, _)| k)
        .filter(|&k| only.is_none_or(|n| p.function(k).name == n))
        .collect();
    if kernels.is_empty() {
        return Err(match only {
            Some(n) => anyhow!("no kernel named {n}"),
            None => anyhow!("the file has no kernel"),
        });
    }
    let mut text = format!(
        "design {} (passes: {}{})\n",
        design_name(config),
        pass_names(&options.passes),
        if control_bits { ", control-bits" } else { "" }
    );
    let mut all = Vec::new();
    for k in kernels {
        let mut info = KernelInfo::from_compiled(p, &compiled.functions, k)
            .map_err(|e| anyhow!("{}: {e}", p.function(k).name))?;
        if config.sm.constant_operands {
            timing::constant_operands::attach(&mut info, p, |f| {
                compiled
                    .functions
                    .get(f.index())
                    .and_then(Option::as_ref)
                    .map(|c| &c.allocation)
            });
        }
        if control_bits {
            timing::control_bits::attach(&mut info, p, &config.pipeline, |f| {
                compiled
                    .functions
                    .get(f.index())
                    .and_then(Option::as_ref)
                    .map(|c| &c.allocation)
            });
        }
        if as_json {
            all.push(kernel_json(p, &info, k));
        } else {
            kernel_text(&mut text, p, &info, k);
        }
    }
    if as_json {
        Ok(serde_json::to_string_pretty(&json!({
            "design": design_name(config),
            "passes": pass_names(&options.passes),
            "kernels": all,
        }))?)
    } else {
        Ok(text)
    }
}

fn design_name(config: &GpuConfig) -> String {
    serde_json::to_value(config.register_file.design)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn pass_names(p: &PassSet) -> String {
    let names: Vec<&str> = [
        (p.ltrf_renumber.is_some(), "ltrf-renumber"),
        (p.liveness_bits, "liveness-bits"),
        (p.strands.is_some(), "strands"),
        (p.orf_lrf.is_some(), "orf-lrf"),
        (p.intervals.is_some(), "ltrf-intervals"),
        (p.reuse_distance.is_some(), "reuse-distance"),
        (p.reuse_bits, "reuse-bits"),
    ]
    .into_iter()
    .filter_map(|(on, n)| on.then_some(n))
    .collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

fn reg_name(o: &RegOperand) -> String {
    match (o.file, o.width) {
        (RegFileKind::Predicate, _) => format!("P{}", o.reg),
        (RegFileKind::General, 1) => format!("R{}", o.reg),
        (RegFileKind::General, w) => format!("R{}:R{}", o.reg, o.reg + u16::from(w) - 1),
    }
}

fn level_name(l: HierarchyLevel) -> &'static str {
    match l {
        HierarchyLevel::Main => "mrf",
        HierarchyLevel::Operand => "orf",
        HierarchyLevel::LastResult => "lrf",
    }
}

/// The hints of one operand as short words (`dead`, `orf`, `+mrf`, `fill`, `reuse=3`;
/// `fill`: a source read from the MRF also loads the ORF).
fn hint_words(h: &OperandHint) -> Vec<String> {
    let mut w = Vec::new();
    if h.level != HierarchyLevel::Main {
        w.push(level_name(h.level).to_string());
    }
    if h.also_main {
        w.push("+mrf".into());
    }
    if h.fills_orf {
        w.push("fill".into());
    }
    if h.dead_after {
        w.push("dead".into());
    }
    if let Some(d) = h.reuse_distance {
        w.push(format!("reuse={d}"));
    }
    if h.reuse {
        w.push(".reuse".into());
    }
    w
}

fn operand_text(o: &RegOperand) -> String {
    let w = hint_words(&o.hint);
    if w.is_empty() {
        reg_name(o)
    } else {
        format!("{}[{}]", reg_name(o), w.join(","))
    }
}

fn inst_words(h: &InstHint, control_bits: bool) -> String {
    let mut w = Vec::new();
    if h.folded {
        // `sm.constant_operands`: not an instruction of the machine program.
        w.push("constant operand of its consumers, not issued".to_string());
    } else if control_bits {
        w.push(h.control.to_text());
    }
    if let Some(c) = h.constant {
        w.push(format!("constant operand in slot {}", c.slot));
    }
    if let Some(n) = h.interval_entry {
        w.push(format!("enters interval {n}"));
    }
    if h.strand_end {
        w.push("strand end".to_string());
    }
    w.join(", ")
}

/// Functions of the kernel's call tree with instructions, kernel first.
fn functions(info: &KernelInfo, k: FuncId, p: &Program) -> Vec<FuncId> {
    let mut out = vec![k];
    out.extend(
        (0..p.functions.len())
            .map(FuncId::new)
            .filter(|&f| f != k && info.function(f).is_some_and(|fi| !fi.is_empty())),
    );
    out
}

fn kernel_text(out: &mut String, p: &Program, info: &KernelInfo, k: FuncId) {
    let _ = writeln!(
        out,
        "\nkernel {}: {} registers, {} predicates",
        info.name, info.registers_per_thread, info.predicates_per_thread
    );
    for f in functions(info, k, p) {
        let func = p.function(f);
        if f != k {
            let _ = writeln!(out, "function {}:", func.name);
        }
        for (i, inst) in func.insts.iter().enumerate() {
            let ii = info.inst(f, InstId::new(i));
            let srcs: Vec<String> = info.srcs(f, ii).iter().map(operand_text).collect();
            let dsts: Vec<String> = info.dsts(f, ii).iter().map(operand_text).collect();
            let extra = inst_words(&ii.hint, info.control_bits);
            let _ = writeln!(
                out,
                "  {i:4}  {:<44} dst {:<22} src {}{}",
                ir::print::inst_to_string(Some(p), func, inst),
                dsts.join(" "),
                srcs.join(" "),
                if extra.is_empty() {
                    String::new()
                } else {
                    format!("  ; {extra}")
                }
            );
        }
        if let Some(fi) = info.function(f) {
            for (n, w) in fi.intervals.iter().enumerate() {
                let regs: Vec<String> = w.working_set.iter().map(|r| format!("R{r}")).collect();
                let _ = writeln!(out, "  interval {n}: working set {{{}}}", regs.join(" "));
            }
        }
    }
}

fn operand_json(o: &RegOperand) -> Value {
    json!({
        "reg": reg_name(o),
        "level": level_name(o.hint.level),
        "also_main": o.hint.also_main,
        "fills_orf": o.hint.fills_orf,
        "dead_after": o.hint.dead_after,
        "reuse_distance": o.hint.reuse_distance,
        "reuse_bit": o.hint.reuse,
    })
}

fn kernel_json(p: &Program, info: &KernelInfo, k: FuncId) -> Value {
    let funcs: Vec<Value> = functions(info, k, p)
        .into_iter()
        .map(|f| {
            let func = p.function(f);
            let insts: Vec<Value> = func
                .insts
                .iter()
                .enumerate()
                .map(|(i, inst)| {
                    let ii = info.inst(f, InstId::new(i));
                    let c = ii.hint.control;
                    let control = info.control_bits.then(|| {
                        json!({
                            "stall": c.stall,
                            "yield": c.yield_,
                            "write_counter": c.write_counter,
                            "wait_mask": c.wait_mask,
                        })
                    });
                    let mut v = json!({
                        "inst": i,
                        "text": ir::print::inst_to_string(Some(p), func, inst),
                        "strand_end": ii.hint.strand_end,
                        "interval_entry": ii.hint.interval_entry,
                        "srcs": info.srcs(f, ii).iter().map(operand_json).collect::<Vec<_>>(),
                        "dsts": info.dsts(f, ii).iter().map(operand_json).collect::<Vec<_>>(),
                        "control": control,
                    });
                    // `sm.constant_operands` only: other configs' output is unchanged.
                    if ii.hint.folded {
                        v["folded"] = json!(true);
                    }
                    if let Some(c) = ii.hint.constant {
                        v["constant_operand"] = json!({ "slot": c.slot, "width": c.width });
                    }
                    v
                })
                .collect();
            let intervals: Vec<&[u16]> = info
                .function(f)
                .map(|fi| fi.intervals.iter().map(|w| &w.working_set[..]).collect())
                .unwrap_or_default();
            json!({ "name": func.name, "instructions": insts, "intervals": intervals })
        })
        .collect();
    json!({
        "name": info.name,
        "registers": info.registers_per_thread,
        "predicates": info.predicates_per_thread,
        "functions": funcs,
    })
}
