//! Located parse errors, rendered the way compilers do:
//!
//! ```text
//! kernel.ptx:12:9: error: expected ',' or ';' after operand, found '%r3'
//!    12 |     add.s32 %r1 %r3;
//!       |                 ^~~
//! ```

use std::fmt;

use crate::ast::Span;

/// Maps byte offsets to 1-based line and column numbers.
///
/// Columns count bytes from the start of the line, plus one. PTX is ASCII, where that is
/// also the character column; a tab counts as one column.
#[derive(Clone, Debug)]
pub struct LineIndex {
    /// Byte offset at which each line starts; `line_starts[0] == 0`.
    line_starts: Vec<u32>,
    len: u32,
}

impl LineIndex {
    pub fn new(source: &str) -> Self {
        let mut line_starts = vec![0u32];
        for (i, b) in source.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(u32::try_from(i + 1).unwrap_or(u32::MAX));
            }
        }
        LineIndex {
            line_starts,
            len: u32::try_from(source.len()).unwrap_or(u32::MAX),
        }
    }

    /// `(line, column)`, both 1-based. Offsets past the end map to the end.
    pub fn line_col(&self, offset: u32) -> (u32, u32) {
        let offset = offset.min(self.len);
        // The last line start that is <= offset; line_starts[0] == 0 so this never underflows.
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let col = offset - self.line_starts[line];
        (line as u32 + 1, col + 1)
    }

    /// The byte range of 1-based `line`, without its line break.
    fn line_range(&self, source: &str, line: u32) -> (usize, usize) {
        let idx = (line as usize)
            .saturating_sub(1)
            .min(self.line_starts.len() - 1);
        let start = self.line_starts[idx] as usize;
        let mut end = self
            .line_starts
            .get(idx + 1)
            .map_or(source.len(), |&next| next as usize - 1);
        end = end.min(source.len()).max(start);
        if source.as_bytes().get(end.wrapping_sub(1)) == Some(&b'\r') && end > start {
            end -= 1;
        }
        (start, end)
    }
}

/// One located error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: String,
    /// 1-based.
    pub line: u32,
    /// 1-based, in bytes (see [`LineIndex`]).
    pub column: u32,
    pub span: Span,
    /// The whole sentence: `expected ',' or ';' after operand, found '%r3'`.
    pub message: String,
    /// What the parser wanted at this point (`',' or ';' after operand`), if it was
    /// looking for something in particular.
    pub expected: Option<String>,
    /// The text of the offending token (`%r3`), or `end of file`.
    pub found: String,
    /// The source line the error is on, without its line break. A line longer than
    /// [`MAX_SHOWN_LINE`] bytes is cut to a window around the error, marked with `…`.
    pub source_line: String,
    /// 1-based byte column of the error within `source_line` (equals `column` unless the
    /// line was cut).
    pub source_line_column: u32,
}

/// Longest source line a [`Diagnostic`] copies whole.
pub const MAX_SHOWN_LINE: usize = 160;

/// The part of `line` to show for an error at byte `col0` (0-based) of it, and the error's
/// 0-based column within that part.
fn shown_line(line: &str, col0: usize) -> (String, usize) {
    if line.len() <= MAX_SHOWN_LINE {
        return (line.to_string(), col0);
    }
    let floor = |mut i: usize| {
        i = i.min(line.len());
        while !line.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let start = floor(col0.saturating_sub(MAX_SHOWN_LINE / 2));
    let end = floor(start + MAX_SHOWN_LINE);
    let mut shown = String::new();
    let mut col = col0 - start;
    if start > 0 {
        shown.push('…');
        col += '…'.len_utf8();
    }
    shown.push_str(&line[start..end]);
    if end < line.len() {
        shown.push('…');
    }
    (shown, col)
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}:{}:{}: error: {}",
            self.file, self.line, self.column, self.message
        )?;
        let gutter = self.line.to_string();
        let pad = " ".repeat(gutter.len());
        writeln!(f, " {gutter} | {}", self.source_line)?;
        // Reproduce tabs so the caret lines up under the token however tabs render.
        let mut marker = String::new();
        let col0 = (self.source_line_column as usize).saturating_sub(1);
        for c in self.source_line.get(..col0).unwrap_or("").chars() {
            marker.push(if c == '\t' { '\t' } else { ' ' });
        }
        marker.push('^');
        let line_rest = self.source_line.len().saturating_sub(col0 + 1);
        let width = (self.span.end.saturating_sub(self.span.start) as usize).min(line_rest + 1);
        for _ in 1..width {
            marker.push('~');
        }
        write!(f, " {pad} | {marker}")
    }
}

/// Everything wrong with one file, first error first. Never empty.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ParseError {
    pub diagnostics: Vec<Diagnostic>,
}

impl ParseError {
    /// The first (earliest in the file) error.
    pub fn first(&self) -> &Diagnostic {
        // Constructed only by `from_raw`, which never builds an empty list.
        &self.diagnostics[0]
    }

    /// Builds the located diagnostics from raw errors. `None` if there are none.
    pub(crate) fn from_raw(file: &str, source: &str, mut raw: Vec<RawError>) -> Option<Self> {
        if raw.is_empty() {
            return None;
        }
        raw.sort_by_key(|e| e.span.start);
        raw.truncate(crate::MAX_ERRORS);
        let index = LineIndex::new(source);
        let diagnostics = raw
            .into_iter()
            .map(|e| {
                let (line, column) = index.line_col(e.span.start);
                let (start, end) = index.line_range(source, line);
                let (source_line, shown_column) = shown_line(
                    source.get(start..end).unwrap_or(""),
                    (column as usize).saturating_sub(1),
                );
                Diagnostic {
                    file: file.to_string(),
                    line,
                    column,
                    span: e.span,
                    message: e.message,
                    expected: e.expected,
                    found: e.found,
                    source_line,
                    source_line_column: shown_column as u32 + 1,
                }
            })
            .collect();
        Some(ParseError { diagnostics })
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

/// An error before line and column are known.
#[derive(Clone, Debug)]
pub(crate) struct RawError {
    pub span: Span,
    pub message: String,
    pub expected: Option<String>,
    pub found: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_is_one_based() {
        let idx = LineIndex::new("ab\ncd\n\nx");
        assert_eq!(idx.line_col(0), (1, 1));
        assert_eq!(idx.line_col(1), (1, 2));
        assert_eq!(idx.line_col(2), (1, 3)); // the '\n' itself
        assert_eq!(idx.line_col(3), (2, 1));
        assert_eq!(idx.line_col(6), (3, 1));
        assert_eq!(idx.line_col(7), (4, 1));
        assert_eq!(idx.line_col(100), (4, 2));
    }

    #[test]
    fn long_lines_are_cut_around_the_error() {
        let line = format!("{}add.s32 %r1 %r3;{}", "x".repeat(1000), "y".repeat(1000));
        let (shown, col) = shown_line(&line, 1012);
        assert!(shown.len() <= MAX_SHOWN_LINE + 6);
        assert!(shown.starts_with('…') && shown.ends_with('…'));
        assert_eq!(&shown[col..col + 3], "%r3");
        let (shown, col) = shown_line("short", 2);
        assert_eq!((shown.as_str(), col), ("short", 2));
    }

    #[test]
    fn renders_source_line_and_caret() {
        let src = "a\n\tadd.s32 %r1 %r3;\n";
        let err = ParseError::from_raw(
            "k.ptx",
            src,
            vec![RawError {
                span: Span::new(15, 18),
                message: "expected ',' or ';' after operand, found '%r3'".into(),
                expected: Some("',' or ';' after operand".into()),
                found: "%r3".into(),
            }],
        )
        .unwrap();
        assert_eq!(
            err.to_string(),
            "k.ptx:2:14: error: expected ',' or ';' after operand, found '%r3'\n \
             2 | \tadd.s32 %r1 %r3;\n   | \t            ^~~"
        );
    }
}
