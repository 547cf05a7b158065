//! Functional SIMT execution of PTX kernels.
//!
//! Invariant: the emulator knows nothing of time. It executes one warp instruction when
//! asked ([`exec::Launch::execute`]) and reports what it did (active lanes, addresses,
//! values, next PC) in a [`exec::WarpStep`]; the timing model decides when.
//!
//! Layers, bottom up: [`semantics`] (pure numeric functions per PTX instruction),
//! [`memory`] (global allocation table and flat spaces), [`module`] (a lowered program
//! laid out in memory, operands resolved), [`exec`] (warps, SIMT stack, barriers, calls)
//! and [`Emulator`], the handle the CUDA runtime and the CLI hold.

pub mod control_slice;
pub mod error;
pub mod exec;
pub mod memory;
pub mod module;
pub mod semantics;
pub mod tensor_map;
pub mod tensor_map_im2col;
pub mod texture;

use std::io::Write;

pub use error::{ErrorKind, ExecError, Location};
pub use exec::{
    is_cta_private, is_deferrable_access, AccessKind, Cta, DeferredAccess, DeviceStandIn,
    FunctionalStop, Launch, LaunchConfig, Limits, LiveWarp, MemInfo, MemSpace, RunBound, RunStats,
    StepEvent, StepObserver, StopCause, WarpStatus, WarpStep,
};
pub use memory::{AllocKind, GlobalMemory, MemError, StrayAccess, StrayPolicy, StrayWarning};
pub use module::LoadedModule;
pub use texture::{TextureBinding, TextureTable};

/// A loaded module's handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ModuleId(pub usize);

/// A kernel of a loaded module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelRef {
    pub module: ModuleId,
    pub func: ir::FuncId,
}

/// Errors loading PTX text.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{0}")]
    Parse(String),
    #[error("{0}")]
    Lower(String),
    #[error("{0}")]
    Memory(#[from] MemError),
}

/// The simulated device: its memory, loaded modules, texture bindings and printf sink.
pub struct Emulator {
    pub memory: GlobalMemory,
    modules: Vec<Option<LoadedModule>>,
    pub textures: TextureTable,
    /// Where device `printf` output goes (host stdout by default).
    pub printf_sink: Box<dyn Write + Send>,
    /// Sees every warp instruction of every launch (`None`: nothing watches, the
    /// default; the per-instruction cost is then one branch).
    pub step_observer: Option<Box<dyn StepObserver>>,
    pub limits: Limits,
}

impl Default for Emulator {
    fn default() -> Self {
        Self::new()
    }
}

impl Emulator {
    pub fn new() -> Self {
        Emulator {
            memory: GlobalMemory::new(),
            modules: Vec::new(),
            textures: TextureTable::default(),
            printf_sink: Box::new(std::io::stdout()),
            step_observer: None,
            limits: Limits::default(),
        }
    }

    /// Parses, lowers and loads PTX text.
    pub fn load_ptx(&mut self, file_name: &str, source: &str) -> Result<ModuleId, LoadError> {
        let ast = ptx::parse(file_name, source).map_err(|e| LoadError::Parse(e.to_string()))?;
        let program =
            ir::lower(&ast, file_name, source).map_err(|e| LoadError::Lower(e.to_string()))?;
        self.load_program(program)
    }

    /// Loads an already lowered program.
    pub fn load_program(&mut self, program: ir::Program) -> Result<ModuleId, LoadError> {
        let m = LoadedModule::load(program, &mut self.memory)?;
        self.modules.push(Some(m));
        Ok(ModuleId(self.modules.len() - 1))
    }

    /// Frees a module's variables; its kernels can no longer be launched.
    pub fn unload(&mut self, id: ModuleId) {
        if let Some(slot) = self.modules.get_mut(id.0) {
            if let Some(m) = slot.take() {
                m.unload(&mut self.memory);
            }
        }
    }

    pub fn module(&self, id: ModuleId) -> Option<&LoadedModule> {
        self.modules.get(id.0).and_then(|m| m.as_ref())
    }

    /// The kernel named `name` (mangled) in module `id`.
    pub fn kernel(&self, id: ModuleId, name: &str) -> Option<KernelRef> {
        let m = self.module(id)?;
        let func = m.program.func_by_name(name)?;
        (m.program.function(func).kind == ir::FunctionKind::Kernel)
            .then_some(KernelRef { module: id, func })
    }

    /// The kernel's parameters (offsets and sizes for laying out a raw parameter buffer).
    pub fn kernel_params(&self, k: KernelRef) -> Option<&[ir::Param]> {
        Some(&self.module(k.module)?.program.function(k.func).params)
    }

    /// Address and size of a module `.global`/`.const` variable (`cudaMemcpyToSymbol`).
    pub fn symbol_address(&self, id: ModuleId, name: &str) -> Option<(u64, u64)> {
        self.module(id)?.symbol_address(name)
    }

    /// Starts a launch for step-by-step execution. `params` is the kernel's parameter
    /// buffer laid out at the offsets of [`Emulator::kernel_params`].
    pub fn launch(
        &mut self,
        k: KernelRef,
        config: LaunchConfig,
        params: &[u8],
    ) -> Result<Launch<'_>, ExecError> {
        let module = self
            .modules
            .get(k.module.0)
            .and_then(|m| m.as_ref())
            .ok_or_else(|| {
                ExecError::new(
                    ErrorKind::Launch(format!("module {} is not loaded", k.module.0)),
                    Location::default(),
                )
            })?;
        Launch::new(
            &mut self.memory,
            module,
            &mut *self.printf_sink,
            &self.textures,
            self.step_observer
                .as_deref_mut()
                .map(|o| o as &mut dyn StepObserver),
            k.func,
            config,
            params,
            self.limits,
        )
    }

    /// Runs a whole grid functionally.
    pub fn run(
        &mut self,
        k: KernelRef,
        config: LaunchConfig,
        params: &[u8],
    ) -> Result<RunStats, ExecError> {
        let mut launch = self.launch(k, config, params)?;
        launch.run_functional()
    }

    /// Runs a whole grid functionally until `bound` stops it (`Ok(Err(stop))`: the counts
    /// so far and where the live warps are; [`exec::run_bound`]).
    pub fn run_bounded(
        &mut self,
        k: KernelRef,
        config: LaunchConfig,
        params: &[u8],
        bound: &RunBound,
    ) -> Result<Result<RunStats, FunctionalStop>, ExecError> {
        let mut launch = self.launch(k, config, params)?;
        launch.run_functional_bounded(bound)
    }

    /// Runs a whole grid functionally, executing only `slice`'s instructions and
    /// stepping over the rest: every warp executes the instruction stream, with the lanes,
    /// of [`Emulator::run`], for what watches the steps ([`Emulator::step_observer`]), but
    /// stepped-over instructions write no registers and no memory
    /// ([`crate::control_slice`]).
    pub fn run_control_slice(
        &mut self,
        k: KernelRef,
        config: LaunchConfig,
        params: &[u8],
        slice: &control_slice::ControlSlice,
    ) -> Result<RunStats, ExecError> {
        let mut launch = self.launch(k, config, params)?;
        launch.step_over = Some(slice);
        launch.run_functional()
    }

    /// [`Emulator::run_control_slice`] until `bound` stops it (`Ok(Err(stop))`), as
    /// [`Emulator::run_bounded`] stops a whole run.
    pub fn run_control_slice_bounded(
        &mut self,
        k: KernelRef,
        config: LaunchConfig,
        params: &[u8],
        slice: &control_slice::ControlSlice,
        bound: &RunBound,
    ) -> Result<Result<RunStats, FunctionalStop>, ExecError> {
        let mut launch = self.launch(k, config, params)?;
        launch.step_over = Some(slice);
        launch.run_functional_bounded(bound)
    }
}
