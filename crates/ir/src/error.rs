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

#[cfg(test)]
mod tests {
    use super::*;

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
