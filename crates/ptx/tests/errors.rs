//! Bad input: each error names the file, line and column, what was found and what was
//! expected, and rendering shows the source line with a caret.

use ptx::{parse, Diagnostic, ParseError};

fn errors(text: &str) -> ParseError {
    match parse("kernel.ptx", text) {
        Ok(m) => panic!("expected an error, parsed {m:?}"),
        Err(e) => e,
    }
}

fn first(text: &str) -> Diagnostic {
    errors(text).first().clone()
}

/// `file:line:col: error: message` of the first error.
fn headline(text: &str) -> String {
    let d = first(text);
    format!("{}:{}:{}: error: {}", d.file, d.line, d.column, d.message)
}

const HEADER: &str = ".version 7.8\n.target sm_70\n.address_size 64\n";

fn kernel(body: &str) -> String {
    format!("{HEADER}.entry k()\n{{\n{body}\n}}\n")
}

#[test]
fn missing_comma_between_operands() {
    let text = kernel("\tadd.s32 %r1, %r2 %r3;");
    let d = first(&text);
    assert_eq!(
        headline(&text),
        "kernel.ptx:6:19: error: expected ',' or ';' after operand, found '%r3'"
    );
    assert_eq!(d.found, "%r3");
    assert_eq!(d.expected.as_deref(), Some("',' or ';' after operand"));
    assert_eq!(d.source_line, "\tadd.s32 %r1, %r2 %r3;");
    assert_eq!(
        d.to_string(),
        "kernel.ptx:6:19: error: expected ',' or ';' after operand, found '%r3'\n \
         6 | \tadd.s32 %r1, %r2 %r3;\n   | \t                 ^~~"
    );
}

#[test]
fn missing_semicolon_reports_the_next_statement() {
    let text = kernel("\tmov.u32 %r1, 1\n\tret;");
    assert_eq!(
        headline(&text),
        "kernel.ptx:7:2: error: expected ',' or ';' after operand, found 'ret'"
    );
}

#[test]
fn unknown_opcode() {
    let text = kernel("\tfrobnicate.u32 %r1, %r2;");
    let d = first(&text);
    assert_eq!(
        headline(&text),
        "kernel.ptx:6:2: error: unknown opcode 'frobnicate'"
    );
    assert_eq!(d.found, "frobnicate");
}

#[test]
fn bad_register_range() {
    assert_eq!(
        headline(&kernel("\t.reg .b32 %r<x>;")),
        "kernel.ptx:6:15: error: expected a register count inside '<…>', found 'x'"
    );
    assert_eq!(
        headline(&kernel("\t.reg .b32 %r<4294967296>;")),
        "kernel.ptx:6:15: error: a register count 4294967296 does not fit in 32 bits"
    );
    assert_eq!(
        headline(&kernel("\t.reg .b32 %r<4;")),
        "kernel.ptx:6:16: error: expected '>' after the register count, found ';'"
    );
}

#[test]
fn unterminated_block_comment() {
    let text = format!("{HEADER}/* never closed\n.entry k() {{ ret; }}\n");
    assert_eq!(
        headline(&text),
        "kernel.ptx:4:1: error: unterminated block comment: expected '*/' before end of file"
    );
}

#[test]
fn unterminated_string() {
    let text = kernel("\t.pragma \"nounroll;\n\tret;");
    assert_eq!(
        headline(&text),
        "kernel.ptx:6:10: error: unterminated string: expected '\"' before end of line"
    );
}

#[test]
fn garbage_bytes() {
    let text = kernel("\tmov.u32 %r1, # 1;");
    assert_eq!(
        headline(&text),
        "kernel.ptx:6:15: error: unexpected character '#'"
    );
    let text = format!("{HEADER}\u{FFFD}\u{FFFD}\n");
    assert_eq!(
        headline(&text),
        "kernel.ptx:4:1: error: unexpected character '\u{FFFD}'"
    );
    assert_eq!(errors(&text).diagnostics.len(), 2);
}

#[test]
fn unclosed_function_body_points_at_the_open_brace() {
    let text = format!("{HEADER}.entry k()\n{{\n\tret;\n");
    assert_eq!(
        headline(&text),
        "kernel.ptx:5:1: error: unclosed '{': expected '}' before end of file"
    );
}

#[test]
fn bad_literals() {
    assert_eq!(
        headline(&kernel("\tmov.f32 %f1, 0f3F80;")),
        "kernel.ptx:6:15: error: '0f3F80': a 0f float literal takes exactly 8 hex digits"
    );
    assert_eq!(
        headline(&kernel("\tmov.u32 %r1, 0x1FFFFFFFFFFFFFFFF;")),
        "kernel.ptx:6:15: error: integer literal '0x1FFFFFFFFFFFFFFFF' does not fit in 64 bits"
    );
    assert_eq!(
        headline(&kernel("\tmov.u32 %r1, 12abc;")),
        "kernel.ptx:6:15: error: invalid number literal '12abc'"
    );
    assert_eq!(
        headline(&kernel("\tmov.u32 %r1, 09;")),
        "kernel.ptx:6:15: error: invalid number literal '09'"
    );
}

#[test]
fn bad_vector_component() {
    assert_eq!(
        headline(&kernel("\tmov.u32 %r1, %tid.q;")),
        "kernel.ptx:6:19: error: expected a vector component ('.x', '.y', '.z' or '.w'), found '.q'"
    );
}

/// `[tex, ]` is neither an address nor a texture operand: accepting it as a one-element
/// texture operand made the canonical print `[tex]` parse to a different tree (found by
/// the `parse` fuzz target).
#[test]
fn texture_operand_with_nothing_after_the_comma() {
    assert_eq!(
        headline(&kernel("\tld.global.s8 %r1, [gm, ];")),
        "kernel.ptx:6:25: error: expected an operand after ',' in the texture operand, found ']'"
    );
}

#[test]
fn module_level_junk() {
    assert_eq!(
        headline(&format!("{HEADER}add.s32 %r1, %r2, %r3;\n")),
        "kernel.ptx:4:1: error: expected a directive ('.version', '.entry', '.func', a variable, …), found 'add'"
    );
    assert_eq!(
        headline(".version seven\n"),
        "kernel.ptx:1:10: error: expected a version number 'major.minor', found 'seven'"
    );
    assert_eq!(
        headline(".version 7.8\n.version 7.8\n"),
        "kernel.ptx:2:1: error: duplicate '.version' directive"
    );
    assert_eq!(
        headline(".global .align 3 .b32 x;"),
        "kernel.ptx:1:16: error: alignment 3 is not a power of two"
    );
}

#[test]
fn recovers_and_reports_every_bad_statement() {
    let text = kernel("\tfoo %r1;\n\tadd.s32 %r1 %r2;\n\tret;\n\tbar.sync;\n\tbaz;");
    let e = errors(&text);
    let lines: Vec<(u32, &str)> = e
        .diagnostics
        .iter()
        .map(|d| (d.line, d.message.as_str()))
        .collect();
    assert_eq!(
        lines,
        vec![
            (6, "unknown opcode 'foo'"),
            (7, "expected ',' or ';' after operand, found '%r2'"),
            (10, "unknown opcode 'baz'"),
        ]
    );
    // The rendering lists them all, first first.
    let rendered = e.to_string();
    assert!(rendered.starts_with("kernel.ptx:6:2: error: unknown opcode 'foo'\n"));
    assert_eq!(rendered.matches(": error: ").count(), 3);
}

#[test]
fn recovery_continues_after_a_bad_function() {
    let text = format!(
        "{HEADER}.entry bad(.param .q32 x)\n{{\n\tret;\n}}\n.entry good()\n{{\n\tnope;\n}}\n"
    );
    let e = errors(&text);
    assert_eq!(e.diagnostics.len(), 2);
    assert_eq!(e.diagnostics[0].line, 4);
    assert_eq!(e.diagnostics[1].message, "unknown opcode 'nope'");
    assert_eq!(e.diagnostics[1].line, 10);
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let depth = 100_000;
    let text = format!(
        "{HEADER}.entry k()\n{}{}",
        "{".repeat(depth),
        "}".repeat(depth)
    );
    let d = first(&text);
    assert!(
        d.message.starts_with("nesting too deep (limit 64 levels)"),
        "{}",
        d.message
    );
    let text = kernel(&format!("\tnot.pred %p1, {}%p2;", "!".repeat(depth)));
    assert!(first(&text).message.starts_with("nesting too deep"));
    let text = format!(
        ".global .b32 x[1] = {}1{};",
        "{".repeat(depth),
        "}".repeat(depth)
    );
    assert!(first(&text).message.starts_with("nesting too deep"));
}

#[test]
fn error_count_is_capped() {
    let text = "#".repeat(1_000_000);
    assert_eq!(errors(&text).diagnostics.len(), ptx::MAX_ERRORS);
    let text = kernel(&"\tfoo;\n".repeat(10_000));
    assert_eq!(errors(&text).diagnostics.len(), ptx::MAX_ERRORS);
}

#[test]
fn parse_error_is_a_std_error() {
    let e: Box<dyn std::error::Error> = Box::new(errors("}"));
    assert!(e.to_string().starts_with("kernel.ptx:1:1: error:"));
}
