//! The parser never panics or hangs: arbitrary bytes, token soup and mutated real PTX all
//! either parse (and then round-trip) or fail with located errors. Bounded to a few
//! seconds; the cargo-fuzz target in `fuzz/` explores the same property without a bound.

mod common;

use proptest::prelude::*;

/// Parses `text`; on success checks the round-trip contract, on failure that every
/// diagnostic is located inside the text.
fn check(text: &str) -> Result<(), TestCaseError> {
    match ptx::parse("fuzz.ptx", text) {
        Ok(mut first) => {
            let printed = ptx::print(&first);
            let mut second = ptx::parse("printed.ptx", &printed).map_err(|e| {
                TestCaseError::fail(format!("printed form does not parse:\n{e}\n---\n{printed}"))
            })?;
            first.erase_spans();
            second.erase_spans();
            prop_assert_eq!(
                first,
                second,
                "round trip differs for:\n{}\n--- printed ---\n{}",
                text,
                printed
            );
        }
        Err(e) => {
            prop_assert!(!e.diagnostics.is_empty());
            prop_assert!(e.diagnostics.len() <= ptx::MAX_ERRORS);
            let lines = text.split('\n').count() as u32;
            for d in &e.diagnostics {
                prop_assert!(
                    d.line >= 1 && d.line <= lines,
                    "line {} of {}",
                    d.line,
                    lines
                );
                prop_assert!(d.column >= 1);
                prop_assert!(d.span.end as usize <= text.len());
                prop_assert!(!d.to_string().is_empty());
            }
        }
    }
    Ok(())
}

/// Words that real PTX is made of, so random sequences reach deep into the grammar.
const VOCABULARY: &[&str] = &[
    ".version",
    "7.8",
    ".target",
    "sm_70",
    ".address_size",
    "64",
    ".visible",
    ".entry",
    ".func",
    ".extern",
    ".weak",
    ".param",
    ".reg",
    ".shared",
    ".global",
    ".const",
    ".local",
    ".align",
    "8",
    ".b8",
    ".b32",
    ".u64",
    ".f32",
    ".pred",
    ".v4",
    ".ptr",
    ".texref",
    ".attribute",
    ".managed",
    ".noreturn",
    ".maxntid",
    ".reqntid",
    ".pragma",
    "\"nounroll\"",
    ".loc",
    ".file",
    "\"a.cu\"",
    ".section",
    ".debug_info",
    ".callprototype",
    ".branchtargets",
    ".calltargets",
    "k",
    "_",
    "%r1",
    "%r<4>",
    "%p",
    "%tid",
    ".x",
    "$L__BB0_1",
    "generic",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ",",
    ";",
    ":",
    "@",
    "!",
    "+",
    "-",
    "|",
    "<",
    ">",
    "=",
    "add",
    "mov",
    "ld",
    "st",
    "call",
    "bra",
    "setp",
    "tex",
    "ret",
    ".uni",
    ".lt",
    "0",
    "-1",
    "0x10",
    "0f3F800000",
    "0d3FF0000000000000",
    "1.5",
    "010",
    "0b11",
    "4U",
    "\n",
    "//c\n",
    "/*c*/",
];

fn token_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(VOCABULARY), 0..60).prop_map(|words| words.join(" "))
}

fn real_ptx() -> Vec<String> {
    common::ptx_files(&common::data_dir())
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect()
}

#[derive(Clone, Debug)]
enum Mutation {
    Delete { at: usize, len: usize },
    Insert { at: usize, bytes: Vec<u8> },
    InsertWord { at: usize, word: &'static str },
    Duplicate { at: usize, len: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1usize..40).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
        (any::<usize>(), prop::sample::select(VOCABULARY))
            .prop_map(|(at, word)| Mutation::InsertWord { at, word }),
        (any::<usize>(), 1usize..200).prop_map(|(at, len)| Mutation::Duplicate { at, len }),
    ]
}

fn apply(text: &[u8], m: &Mutation) -> Vec<u8> {
    let mut out = text.to_vec();
    let n = out.len().max(1);
    match m {
        Mutation::Delete { at, len } => {
            let at = at % n;
            let end = (at + len).min(out.len());
            out.drain(at.min(end)..end);
        }
        Mutation::Insert { at, bytes } => {
            let at = at % (out.len() + 1);
            out.splice(at..at, bytes.iter().copied());
        }
        Mutation::InsertWord { at, word } => {
            let at = at % (out.len() + 1);
            out.splice(at..at, word.bytes());
        }
        Mutation::Duplicate { at, len } => {
            let at = at % n;
            let end = (at + len).min(out.len());
            let slice = out.get(at..end).unwrap_or(&[]).to_vec();
            out.splice(at..at, slice);
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        check(&String::from_utf8_lossy(&bytes))?;
    }

    #[test]
    fn token_soup_never_panics(text in token_soup()) {
        check(&text)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn mutated_real_ptx_never_panics(
        file in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(mutation(), 1..6),
    ) {
        let files = real_ptx();
        prop_assert!(!files.is_empty());
        let mut bytes = files[file.index(files.len())].as_bytes().to_vec();
        for m in &mutations {
            bytes = apply(&bytes, m);
        }
        check(&String::from_utf8_lossy(&bytes))?;
    }
}

#[test]
fn pathological_inputs_return_promptly() {
    let inputs = [
        "{".repeat(200_000),
        "}".repeat(200_000),
        "(".repeat(200_000),
        format!(".entry k() {{ mov.u32 %r1, {}; }}", "{".repeat(100_000)),
        format!(".entry k() {{ call {}; }}", "(".repeat(100_000)),
        format!(".entry k() {{ ld.u32 %r1, {}; }}", "[".repeat(100_000)),
        format!(".global .b8 x[1] = {};", "{".repeat(100_000)),
        "\"".repeat(100_001),
        "/*".to_string(),
        format!("mov.u32 %r1, {};", "9".repeat(10_000)),
        format!(".global .b8 x[{}];", "9".repeat(10_000)),
        ".section .debug_info {".repeat(10_000),
        "\u{FFFD}".repeat(50_000),
        "@".repeat(100_000),
        "a:".repeat(100_000),
    ];
    for text in &inputs {
        let start = std::time::Instant::now();
        let _ = ptx::parse("p.ptx", text);
        assert!(
            start.elapsed().as_secs() < 5,
            "slow on {:?}",
            text.chars().take(20).collect::<String>()
        );
    }
}
