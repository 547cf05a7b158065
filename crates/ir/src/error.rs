//! Located lowering errors: every error names the file, line and column, the function it
//! occurred in and the instruction's source text, so a user can find the problem without
//! a debugger.

use std::fmt;

use thiserror::Error;

/// One problem found while lowering a module.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub struct LowerError {
    pub file: String,
    /// 1-based.
    pub line: u32,
    /// 1-based, in bytes (as the parser's diagnostics count).
    pub column: u32,
    /// `kernel 'foo'` or `function 'bar'`; `None` for module-scope problems.
    pub function: Option<String>,
    /// The offending instruction or declaration as written (may be empty).
    pub text: String,
    pub message: String,
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: ", self.file, self.line, self.column)?;
        if let Some(func) = &self.function {
            write!(f, "in {func}: ")?;
        }
        f.write_str(&self.message)?;
        if !self.text.is_empty() {
            write!(f, " (in `{}`)", self.text)?;
        }
        Ok(())
    }
}

/// All errors of one lowering run, in source order.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub struct LowerErrors(pub Vec<LowerError>);

impl fmt::Display for LowerErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

/// A kernel or function name as a person reads it in a diagnostic: demangled without
/// parameters or return type, and, when that is still long (template kernels such as
/// CUTLASS's run to kilobytes), with the template arguments elided and the rest cut
/// to [`SHORT_NAME_CHARS`].
pub fn short_name(name: &str) -> String {
    let options = cpp_demangle::DemangleOptions::new()
        .no_params()
        .no_return_type();
    let full = cpp_demangle::Symbol::new(name)
        .ok()
        .and_then(|sym| sym.demangle_with_options(&options).ok())
        .unwrap_or_else(|| name.to_string());
    if full.chars().count() <= SHORT_NAME_CHARS {
        return full;
    }
    let mut out = String::new();
    let mut depth = 0u32;
    for c in full.chars() {
        match c {
            '<' => {
                if depth == 0 {
                    out.push_str("<…");
                }
                depth += 1;
            }
            '>' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    out.push('>');
                }
            }
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    if out.chars().count() > SHORT_NAME_CHARS {
        out = out.chars().take(SHORT_NAME_CHARS - 1).collect();
        out.push('…');
    }
    out
}

/// The longest name [`short_name`] returns, in characters.
pub const SHORT_NAME_CHARS: usize = 80;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_are_demangled_and_elide_long_template_arguments() {
        assert_eq!(short_name("_Z5saxpyifPKfPf"), "saxpy");
        assert_eq!(short_name("plain_kernel"), "plain_kernel");
        assert_eq!(short_name("_Z"), "_Z");
        let args = "N7cutlass4gemm6kernel4GemmINS0_11threadblock12MmaPipelinedINS0_9GemmShapeILi128ELi128ELi8EEEEEEE";
        let mangled = format!("_ZN7cutlass6KernelI{args}EEvNT_6ParamsE");
        let s = short_name(&mangled);
        assert_eq!(s, "cutlass::Kernel<…>");
        let long = "k".repeat(200);
        assert_eq!(short_name(&long).chars().count(), SHORT_NAME_CHARS);
    }

    #[test]
    fn display_names_place_function_and_text() {
        let e = LowerError {
            file: "k.ptx".into(),
            line: 3,
            column: 5,
            function: Some("kernel 'foo'".into()),
            text: "add.bar.s32 %r1, %r2, %r3;".into(),
            message: "unsupported modifier '.bar' on 'add'".into(),
        };
        assert_eq!(
            e.to_string(),
            "k.ptx:3:5: in kernel 'foo': unsupported modifier '.bar' on 'add' \
             (in `add.bar.s32 %r1, %r2, %r3;`)"
        );
    }
}
