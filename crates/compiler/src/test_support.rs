//! PTX text lowered for the unit tests, which write their kernels inline.

/// Parses and lowers `src`; panics if it does not, which in a test is the kernel's fault.
pub(crate) fn lower(src: &str) -> ir::Program {
    let module = ptx::parse("t.ptx", src).expect("parse");
    ir::lower(&module, "t.ptx", src).expect("lower")
}

/// The first function of `src`, lowered.
pub(crate) fn first_function(src: &str) -> ir::Function {
    lower(src).functions[0].clone()
}
