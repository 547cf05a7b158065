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
    /// 1-based, in characters.
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

/// Byte offsets of line starts, to turn spans into 1-based line and column numbers.
pub(crate) struct LineIndex {
    starts: Vec<u32>,
}

impl LineIndex {
    pub(crate) fn new(source: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(
            source
                .bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i as u32 + 1),
        );
        LineIndex { starts }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub(crate) fn line_col(&self, source: &str, offset: u32) -> (u32, u32) {
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts[line - 1] as usize;
        let end = (offset as usize).min(source.len());
        let column = source
            .get(start..end)
            .map_or(end.saturating_sub(start), |s| s.chars().count());
        (line as u32, column as u32 + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_is_one_based() {
        let src = "ab\ncd\n\nx";
        let idx = LineIndex::new(src);
        assert_eq!(idx.line_col(src, 0), (1, 1));
        assert_eq!(idx.line_col(src, 1), (1, 2));
        assert_eq!(idx.line_col(src, 3), (2, 1));
        assert_eq!(idx.line_col(src, 7), (4, 1));
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
