//! Byte-level lexer: source text → tokens with byte spans, one at a time.
//!
//! The lexer never allocates per token and never fails: a byte it cannot place becomes a
//! recorded error and is skipped, so the parser always sees a well-formed token stream
//! ending in [`TokenKind::Eof`] (repeated forever). Token text is recovered by slicing the source with the
//! token's span, which is why every span starts and ends on a `char` boundary.

use crate::ast::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TokenKind {
    /// `foo`, `%r1`, `$L__BB0_2`, `_`.
    Ident,
    /// `.word` or `.word::sub`: a directive, a modifier, a type or a vector component.
    Dot,
    /// Anything that starts with a digit: `42`, `0x1F`, `0f3F800000`, `1.5e-3`, `7.8`.
    /// Whether it is a *valid* number is for the parser to decide.
    Number,
    /// `"..."`, including the quotes.
    String,
    LBrace,
    RBrace,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Semi,
    Colon,
    At,
    Bang,
    Plus,
    Minus,
    Pipe,
    Lt,
    Gt,
    Eq,
    Eof,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Token {
    pub kind: TokenKind,
    /// A line break (possibly inside a comment) separates this token from the previous
    /// one. `.loc` and `.file` end at the end of their line, so the parser needs this.
    pub newline_before: bool,
    pub start: u32,
    pub end: u32,
}

impl Token {
    pub fn span(&self) -> Span {
        Span::new(self.start, self.end)
    }
}

/// A problem found while lexing, reported with the parser's errors.
#[derive(Clone, Debug)]
pub(crate) struct LexError {
    pub span: Span,
    pub message: String,
    pub expected: Option<String>,
    pub found: String,
}

const IDENT_START: u8 = 1;
const IDENT_CONTINUE: u8 = 2;
const DIGIT: u8 = 4;
const HEX: u8 = 8;

/// Character classes of ASCII bytes; every byte ≥ 0x80 is class 0.
static CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0usize;
    while b < 128 {
        let c = b as u8;
        let mut class = 0;
        if c.is_ascii_alphabetic() || c == b'_' || c == b'$' {
            class |= IDENT_START | IDENT_CONTINUE;
        }
        if c.is_ascii_digit() {
            class |= IDENT_CONTINUE | DIGIT;
        }
        if c.is_ascii_hexdigit() {
            class |= HEX;
        }
        table[b] = class;
        b += 1;
    }
    table
};

#[inline]
fn is_ident_continue(b: u8) -> bool {
    CLASS[b as usize] & IDENT_CONTINUE != 0
}

#[inline]
fn is_digit(b: u8) -> bool {
    CLASS[b as usize] & DIGIT != 0
}

/// Produces tokens one at a time, so the token stream is never materialised.
pub(crate) struct Lexer<'a> {
    source: &'a str,
    pos: usize,
    pub errors: Vec<LexError>,
}

impl<'a> Lexer<'a> {
    /// The caller guarantees `source.len() < u32::MAX`.
    pub fn new(source: &'a str) -> Self {
        Lexer {
            source,
            pos: 0,
            errors: Vec::new(),
        }
    }

    /// The next token; [`TokenKind::Eof`] forever once the input is exhausted.
    pub fn next_token(&mut self) -> Token {
        let source = self.source;
        let bytes = source.as_bytes();
        let n = bytes.len();
        let mut i = self.pos;
        let mut newline_before = false;
        while i < n {
            let b = bytes[i];
            let start = i;
            let kind = match b {
                b'\n' => {
                    newline_before = true;
                    i += 1;
                    continue;
                }
                b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c' => {
                    i += 1;
                    continue;
                }
                b'/' if bytes.get(i + 1) == Some(&b'/') => {
                    while i < n && bytes[i] != b'\n' {
                        i += 1;
                    }
                    continue;
                }
                b'/' if bytes.get(i + 1) == Some(&b'*') => {
                    i += 2;
                    let mut closed = false;
                    while i < n {
                        match bytes[i] {
                            b'\n' => newline_before = true,
                            b'*' if bytes.get(i + 1) == Some(&b'/') => {
                                i += 2;
                                closed = true;
                                break;
                            }
                            _ => {}
                        }
                        i += 1;
                    }
                    if !closed {
                        push_error(
                            &mut self.errors,
                            LexError {
                                span: Span::new(start as u32, (start + 2) as u32),
                                message:
                                    "unterminated block comment: expected '*/' before end of file"
                                        .to_string(),
                                expected: Some("'*/'".to_string()),
                                found: "/*".to_string(),
                            },
                        );
                    }
                    continue;
                }
                b'%' => {
                    if i + 1 < n && is_ident_continue(bytes[i + 1]) {
                        i += 2;
                        while i < n && is_ident_continue(bytes[i]) {
                            i += 1;
                        }
                        TokenKind::Ident
                    } else {
                        i += 1;
                        push_error(
                            &mut self.errors,
                            unexpected(source, start, i, "a register name after '%'"),
                        );
                        continue;
                    }
                }
                b'.' => {
                    if i + 1 < n && is_ident_continue(bytes[i + 1]) {
                        i += 2;
                        loop {
                            while i < n && is_ident_continue(bytes[i]) {
                                i += 1;
                            }
                            // `.shared::cta`, `.L2::cache_hint`: `::` joins the parts of one word.
                            if i + 2 < n
                                && bytes[i] == b':'
                                && bytes[i + 1] == b':'
                                && is_ident_continue(bytes[i + 2])
                            {
                                i += 2;
                            } else {
                                break;
                            }
                        }
                        TokenKind::Dot
                    } else {
                        i += 1;
                        push_error(
                            &mut self.errors,
                            unexpected(source, start, i, "a directive or modifier name after '.'"),
                        );
                        continue;
                    }
                }
                b'"' => {
                    i += 1;
                    let mut closed = false;
                    while i < n {
                        match bytes[i] {
                            b'"' => {
                                i += 1;
                                closed = true;
                                break;
                            }
                            b'\n' => break,
                            b'\\' if i + 1 < n && bytes[i + 1] != b'\n' => i += 2,
                            _ => i += 1,
                        }
                    }
                    // A backslash may precede a multi-byte character; stay on a char boundary.
                    while i < n && !source.is_char_boundary(i) {
                        i += 1;
                    }
                    if !closed {
                        push_error(
                            &mut self.errors,
                            LexError {
                                span: Span::new(start as u32, i as u32),
                                message: "unterminated string: expected '\"' before end of line"
                                    .to_string(),
                                expected: Some("'\"'".to_string()),
                                found: "\"".to_string(),
                            },
                        );
                    }
                    TokenKind::String
                }
                b'0'..=b'9' => {
                    i = lex_number(bytes, i);
                    TokenKind::Number
                }
                b'{' => punct(&mut i, TokenKind::LBrace),
                b'}' => punct(&mut i, TokenKind::RBrace),
                b'(' => punct(&mut i, TokenKind::LParen),
                b')' => punct(&mut i, TokenKind::RParen),
                b'[' => punct(&mut i, TokenKind::LBracket),
                b']' => punct(&mut i, TokenKind::RBracket),
                b',' => punct(&mut i, TokenKind::Comma),
                b';' => punct(&mut i, TokenKind::Semi),
                b':' => punct(&mut i, TokenKind::Colon),
                b'@' => punct(&mut i, TokenKind::At),
                b'!' => punct(&mut i, TokenKind::Bang),
                b'+' => punct(&mut i, TokenKind::Plus),
                b'-' => punct(&mut i, TokenKind::Minus),
                b'|' => punct(&mut i, TokenKind::Pipe),
                b'<' => punct(&mut i, TokenKind::Lt),
                b'>' => punct(&mut i, TokenKind::Gt),
                b'=' => punct(&mut i, TokenKind::Eq),
                _ if CLASS[b as usize] & IDENT_START != 0 => {
                    i += 1;
                    while i < n && is_ident_continue(bytes[i]) {
                        i += 1;
                    }
                    TokenKind::Ident
                }
                _ => {
                    // Skip one whole character so that spans stay on char boundaries.
                    i += 1;
                    while i < n && !source.is_char_boundary(i) {
                        i += 1;
                    }
                    push_error(&mut self.errors, unexpected(source, start, i, ""));
                    continue;
                }
            };
            self.pos = i;
            return Token {
                kind,
                newline_before,
                start: start as u32,
                end: i as u32,
            };
        }
        self.pos = n;
        Token {
            kind: TokenKind::Eof,
            newline_before,
            start: n as u32,
            end: n as u32,
        }
    }
}

/// Lexes the whole source at once (for tests).
#[cfg(test)]
pub(crate) fn lex(source: &str) -> (Vec<Token>, Vec<LexError>) {
    let mut lexer = Lexer::new(source);
    let mut tokens = Vec::new();
    loop {
        let t = lexer.next_token();
        tokens.push(t);
        if t.kind == TokenKind::Eof {
            return (tokens, lexer.errors);
        }
    }
}

/// Records a lexer error, up to the error limit (a file of garbage bytes must not
/// produce millions of diagnostics).
fn push_error(errors: &mut Vec<LexError>, e: LexError) {
    if errors.len() < crate::parser::MAX_ERRORS {
        errors.push(e);
    }
}

#[inline]
fn punct(i: &mut usize, kind: TokenKind) -> TokenKind {
    *i += 1;
    kind
}

fn unexpected(source: &str, start: usize, end: usize, expected: &str) -> LexError {
    let text = source.get(start..end).unwrap_or("?");
    let message = if expected.is_empty() {
        format!("unexpected character '{}'", text.escape_debug())
    } else {
        format!("expected {expected}, found '{}'", text.escape_debug())
    };
    LexError {
        span: Span::new(start as u32, end as u32),
        message,
        expected: (!expected.is_empty()).then(|| expected.to_string()),
        found: text.to_string(),
    }
}

/// Scans a numeric literal starting at `i` (a digit) and returns its end. Accepts more
/// than PTX allows (`12abc`); the parser rejects such tokens with a located error.
fn lex_number(bytes: &[u8], mut i: usize) -> usize {
    let n = bytes.len();
    let prefixed = bytes[i] == b'0'
        && i + 1 < n
        && matches!(
            bytes[i + 1],
            b'x' | b'X' | b'b' | b'B' | b'f' | b'F' | b'd' | b'D'
        );
    if prefixed {
        i += 2;
        while i < n && is_ident_continue(bytes[i]) {
            i += 1;
        }
        return i;
    }
    while i < n && is_digit(bytes[i]) {
        i += 1;
    }
    if i + 1 < n && bytes[i] == b'.' && is_digit(bytes[i + 1]) {
        i += 1;
        while i < n && is_digit(bytes[i]) {
            i += 1;
        }
    }
    if i < n && (bytes[i] == b'e' || bytes[i] == b'E') {
        let mut j = i + 1;
        if j < n && (bytes[j] == b'+' || bytes[j] == b'-') {
            j += 1;
        }
        if j < n && is_digit(bytes[j]) {
            i = j;
            while i < n && is_digit(bytes[i]) {
                i += 1;
            }
        }
    }
    // A `U` suffix, or junk the parser will reject as a whole.
    while i < n && is_ident_continue(bytes[i]) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(TokenKind, &str)> {
        let (toks, errs) = lex(src);
        assert!(errs.is_empty(), "{errs:?}");
        toks.iter()
            .map(|t| (t.kind, &src[t.start as usize..t.end as usize]))
            .collect()
    }

    #[test]
    fn splits_special_register_component_and_modifiers() {
        use TokenKind::*;
        assert_eq!(
            kinds("mov.u32 %r1, %tid.x; // c\n"),
            vec![
                (Ident, "mov"),
                (Dot, ".u32"),
                (Ident, "%r1"),
                (Comma, ","),
                (Ident, "%tid"),
                (Dot, ".x"),
                (Semi, ";"),
                (Eof, "")
            ]
        );
    }

    #[test]
    fn numbers_keep_their_whole_spelling() {
        use TokenKind::*;
        assert_eq!(
            kinds("0f3F800000 1.5e-3 7.8 0x1FU 1e5 010"),
            vec![
                (Number, "0f3F800000"),
                (Number, "1.5e-3"),
                (Number, "7.8"),
                (Number, "0x1FU"),
                (Number, "1e5"),
                (Number, "010"),
                (Eof, "")
            ]
        );
    }

    #[test]
    fn double_colon_joins_modifier_parts() {
        use TokenKind::*;
        assert_eq!(
            kinds("ld.global.L2::cache_hint [a], b;")[..3],
            [(Ident, "ld"), (Dot, ".global"), (Dot, ".L2::cache_hint")]
        );
        // A label colon after a word is not joined.
        assert_eq!(
            kinds("a: .b")[..3],
            [(Ident, "a"), (Colon, ":"), (Dot, ".b")]
        );
    }

    #[test]
    fn records_errors_and_keeps_going() {
        let (toks, errs) = lex("a # b /* open");
        assert_eq!(errs.len(), 2);
        assert_eq!(errs[0].span, Span::new(2, 3));
        assert_eq!(errs[1].span, Span::new(6, 8));
        assert_eq!(toks.len(), 3); // a, b, Eof
    }

    #[test]
    fn newline_flag_survives_comments() {
        let (toks, _) = lex("a /* x\n */ b // y\n c d");
        let flags: Vec<bool> = toks.iter().map(|t| t.newline_before).collect();
        assert_eq!(flags, vec![false, true, true, false, false]);
    }
}
