//! `regsim compile FILE.ptx --emit ast|cfg|dot|liveness|regalloc|annotations|control-bits
//! [--json]`: run
//! the front end and print one stage's view of every function in the file; `annotations`
//! runs the load-time pipeline as `regsim run` does for `--gpu`/`--rf`/`--set`
//! ([`crate::annotations`]).

use crate::passes::{self, Pass, PassOptions};
use crate::regalloc;
use crate::source::{print_stdout, PtxSource};
use anyhow::{anyhow, bail, Result};
use clap::{Args, ValueEnum};
use compiler::AllocConfig;
use ir::analysis::{Analyses, AnalysisKind, AnalysisSet, Namer};
use ir::{Function, Program};
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct CompileArgs {
    /// The PTX file.
    file: PathBuf,
    /// What to print.
    #[arg(long, value_enum, default_value_t = Emit::Cfg)]
    emit: Emit,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Only this function or kernel (by its PTX name).
    #[arg(long)]
    function: Option<String>,
    /// Register cap per thread for `--emit regalloc` (like nvcc's -maxrregcount); values
    /// that do not fit are spilled to local memory.
    #[arg(long, value_name = "N")]
    max_registers: Option<u32>,
    /// Run a register-file pass instead of printing a front-end stage.
    #[arg(long, value_enum, conflicts_with = "emit")]
    pass: Option<Pass>,
    /// With `--pass`: a pass option, `key=value` (repeatable; dotted keys reach nested
    /// options). With `--emit annotations`: a GPU config override, as in `regsim run`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<String>,
    /// With `--emit annotations` (default gtx480) or `control-bits` (default rtx-a6000):
    /// the simulated GPU config (name or path).
    #[arg(long, value_name = "NAME|PATH")]
    gpu: Option<String>,
    /// With `--emit annotations`: the register-file design whose passes run.
    #[arg(long, value_name = "DESIGN")]
    rf: Option<String>,
    /// LTRF: registers per register-interval (N).
    #[arg(long, value_name = "N", requires = "pass")]
    registers_per_interval: Option<u32>,
    /// LTRF: banks of the main register file (B).
    #[arg(long, value_name = "B", requires = "pass")]
    banks: Option<u32>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Emit {
    /// The syntax tree, printed back as canonical PTX.
    Ast,
    /// Blocks, edges and decoded instructions.
    Cfg,
    /// The control-flow graph in Graphviz format.
    Dot,
    /// Live-in/live-out sets and per-operand "dead after" bits.
    Liveness,
    /// Architectural register of every virtual register, registers per thread, spills;
    /// every allocation is proved by the checker before it is printed.
    Regalloc,
    /// What the timing model reads: every kernel after the load-time pipeline, with the
    /// architectural operands and the hints of the `--rf` design's passes.
    Annotations,
    /// The control bits regsim's compiler sets for the modern core (MICRO'25): per
    /// instruction the stall count, the yield bit, the dependence counter it writes and
    /// the counters it waits for (under `--gpu`'s latencies), beside the reuse bits of
    /// the register-file cache (`.reuse` on a source operand).
    ControlBits,
}

pub fn run(args: CompileArgs) -> Result<ExitCode> {
    let source = PtxSource::read(&args.file)?;
    let module = ptx::parse(&source.name, &source.text).map_err(|e| anyhow!("{e}"))?;
    if args.emit == Emit::Ast {
        if args.json {
            print_stdout(&serde_json::to_string_pretty(&module)?)?;
        } else {
            print_stdout(ptx::print(&module).trim_end())?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let program = ir::lower(&module, &source.name, &source.text).map_err(|e| anyhow!("{e}"))?;
    if let Some(pass) = args.pass {
        let options = PassOptions {
            sets: args.sets,
            registers_per_interval: args.registers_per_interval,
            banks: args.banks,
            max_registers: args.max_registers,
        };
        print_stdout(passes::run(pass, &program, &options, args.json)?.trim_end())?;
        return Ok(ExitCode::SUCCESS);
    }
    if matches!(args.emit, Emit::Annotations | Emit::ControlBits) {
        let control_bits = args.emit == Emit::ControlBits;
        let (rf, default_gpu) = if control_bits {
            (Some("reuse-cache"), "rtx-a6000")
        } else {
            (args.rf.as_deref(), "gtx480")
        };
        let (_, overrides) = crate::cmd_run::gpu_overrides(rf, &args.sets)?;
        let gpu = args.gpu.as_deref().unwrap_or(default_gpu);
        let (config, _) = crate::cmd_run::load_gpu(gpu, rf, &overrides)?;
        let out = crate::annotations::emit(
            &program,
            &config,
            args.max_registers,
            args.function.as_deref(),
            args.json,
            control_bits,
        )?;
        print_stdout(out.trim_end())?;
        return Ok(ExitCode::SUCCESS);
    }
    if !args.sets.is_empty() {
        bail!("--set needs --pass (pass options) or --emit annotations (GPU config overrides)");
    }
    let functions = selected_functions(&program, args.function.as_deref())?;
    let output = match (args.emit, args.json) {
        (Emit::Ast | Emit::Annotations | Emit::ControlBits, _) => unreachable!("handled above"),
        (Emit::Cfg, false) => functions
            .iter()
            .map(|f| ir::print::function_to_string(Some(&program), f))
            .collect::<Vec<_>>()
            .join("\n"),
        (Emit::Cfg, true) => {
            let cfgs: Vec<_> = functions
                .iter()
                .map(|f| ir::CfgJson::new(Some(&program), f))
                .collect();
            serde_json::to_string_pretty(&json!({ "functions": cfgs }))?
        }
        (Emit::Dot, false) => functions
            .iter()
            .map(|f| ir::to_dot(Some(&program), f))
            .collect::<Vec<_>>()
            .join("\n"),
        (Emit::Dot, true) => {
            let dots: Vec<_> = functions
                .iter()
                .map(|f| json!({ "name": f.name, "dot": ir::to_dot(Some(&program), f) }))
                .collect();
            serde_json::to_string_pretty(&json!({ "functions": dots }))?
        }
        (Emit::Liveness, false) => functions
            .iter()
            .map(|f| format!("function {}:\n{}", f.name, liveness_text(&program, f)))
            .collect::<Vec<_>>()
            .join("\n"),
        (Emit::Liveness, true) => {
            let all: Vec<_> = functions
                .iter()
                .map(|f| liveness_json(&program, f))
                .collect();
            serde_json::to_string_pretty(&json!({ "functions": all }))?
        }
        (Emit::Regalloc, json_output) => {
            let config = match args.max_registers {
                Some(n) => AllocConfig::with_max_registers(n),
                None => AllocConfig::default(),
            };
            let report = regalloc::report(&program, &functions, &config)?;
            if json_output {
                serde_json::to_string_pretty(&report.to_json())?
            } else {
                report.to_string()
            }
        }
    };
    print_stdout(output.trim_end())?;
    Ok(ExitCode::SUCCESS)
}

fn selected_functions<'p>(program: &'p Program, name: Option<&str>) -> Result<Vec<&'p Function>> {
    match name {
        None => Ok(program.functions.iter().collect()),
        Some(name) => program
            .func_by_name(name)
            .map(|id| vec![program.function(id)])
            .ok_or_else(|| anyhow!("no function or kernel named '{name}' in this file")),
    }
}

fn liveness_text(program: &Program, f: &Function) -> String {
    let block = |b: ir::BlockId| ir::print::block_name(f, b);
    let reg = |r: ir::RegId| f.reg(r).name.clone();
    let inst = |i: ir::InstId| ir::print::inst_to_string(Some(program), f, f.inst(i));
    let names = Namer {
        block: &block,
        reg: &reg,
        inst: &inst,
    };
    Analyses::new().dump(f, AnalysisSet::of(&[AnalysisKind::Liveness]), &names)
}

fn liveness_json(program: &Program, f: &Function) -> serde_json::Value {
    use ir::{ControlFlowGraph, RegisterEffects};
    let mut analyses = Analyses::new();
    let live = analyses.liveness(f);
    let reg_names = |set: &ir::analysis::bitset::BitSet<ir::RegId>| -> Vec<String> {
        set.iter().map(|r| f.reg(r).name.clone()).collect()
    };
    let blocks: Vec<_> = (0..f.num_blocks())
        .map(|b| {
            let b = ir::BlockId::new(b);
            let insts: Vec<_> = f
                .block_insts(b)
                .iter()
                .map(|&i| {
                    let uses: Vec<_> = f
                        .uses(i)
                        .iter()
                        .zip(live.dead_after_operands(i))
                        .map(|(&r, dead)| json!({ "reg": f.reg(r).name, "dead_after": dead }))
                        .collect();
                    json!({
                        "inst": ir::print::inst_to_string(Some(program), f, f.inst(i)),
                        "uses": uses,
                        "pressure": live.pressure_at(i),
                    })
                })
                .collect();
            json!({
                "block": ir::print::block_name(f, b),
                "live_in": reg_names(live.live_in(b)),
                "live_out": reg_names(live.live_out(b)),
                "instructions": insts,
            })
        })
        .collect();
    json!({ "name": f.name, "blocks": blocks })
}
