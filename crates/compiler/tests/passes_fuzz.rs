//! The register-file passes on random kernels: random mixes of ALU, SFU, global and shared
//! loads, stores, guarded instructions, barriers and forward and backward branches. No
//! pass may panic, and every ORF/LRF allocation, under several configurations, must pass
//! the independent checker.

use proptest::prelude::*;

use compiler::orf_lrf::{check, LrfMode, OrfLrfConfig};

/// One random statement: an instruction template with register and label numbers.
#[derive(Clone, Debug)]
enum Stmt {
    Label,
    Inst(u8, [u8; 3], u8),
}

fn stmt() -> impl Strategy<Value = Stmt> {
    prop_oneof![
        1 => Just(Stmt::Label),
        8 => (0u8..14, [0u8..6, 0u8..6, 0u8..6], 0u8..8).prop_map(|(t, r, l)| Stmt::Inst(t, r, l)),
    ]
}

/// Turns the statements into a kernel; branch targets are taken modulo the labels there
/// are (a branch with no label to go to becomes an add).
fn kernel(stmts: &[Stmt]) -> String {
    let labels = stmts.iter().filter(|s| matches!(s, Stmt::Label)).count();
    let mut body = String::new();
    let mut next_label = 0;
    for s in stmts {
        match s {
            Stmt::Label => {
                body += &format!("L{next_label}:\n");
                next_label += 1;
            }
            Stmt::Inst(t, [a, b, c], l) => {
                let target = (labels > 0).then(|| format!("L{}", usize::from(*l) % labels));
                let (a, b, c) = (a % 6, b % 6, c % 6);
                let (pa, pb) = (a % 3, b % 3);
                body += &match (t, target) {
                    (0, _) => format!("add.s32 %r{a}, %r{b}, %r{c};"),
                    (1, _) => format!("mul.lo.s32 %r{a}, %r{b}, %r{c};"),
                    (2, _) => format!("ld.global.u32 %r{a}, [%rd{pb}];"),
                    (3, _) => format!("st.global.u32 [%rd{pa}], %r{b};"),
                    (4, _) => format!("setp.lt.s32 %p{pa}, %r{b}, %r{c};"),
                    (5, Some(t)) => format!("@%p{pa} bra {t};"),
                    (6, Some(t)) => format!("bra.uni {t};"),
                    (7, _) => format!("@%p{pa} add.s32 %r{b}, %r{b}, %r{c};"),
                    (8, _) => format!("sqrt.rn.f32 %f{a}, %f{b};"),
                    (9, _) => format!("fma.rn.f32 %f{a}, %f{b}, %f{c}, %f{a};"),
                    (10, _) => format!("mul.wide.s32 %rd{pa}, %r{b}, 4;"),
                    (11, _) => format!("ld.shared.u32 %r{a}, [%rd{pb}];"),
                    (12, _) => "bar.sync 0;".to_string(),
                    _ => format!("add.s64 %rd{pa}, %rd{pb}, 8;"),
                };
                body.push('\n');
            }
        }
    }
    format!(
        ".version 7.8\n.target sm_70\n.address_size 64\n\
         .visible .entry k(.param .u64 a)\n{{\n\
         .reg .pred %p<3>;\n.reg .b32 %r<6>;\n.reg .f32 %f<6>;\n.reg .b64 %rd<3>;\n\
         ld.param.u64 %rd0, [a];\n{body}ret;\n}}\n"
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn passes_survive_random_kernels(stmts in prop::collection::vec(stmt(), 1..40)) {
        let src = kernel(&stmts);
        let module = ptx::parse("fuzz.ptx", &src).map_err(|e| TestCaseError::fail(format!("{e}\n{src}")))?;
        let program = ir::lower(&module, "fuzz.ptx", &src).map_err(|e| TestCaseError::fail(format!("{e}\n{src}")))?;
        let f = &program.functions[0];
        let _ = compiler::strands::StrandsReport::new(&program, &Default::default()).to_string();
        let _ = compiler::reuse_distance::ReuseDistanceReport::new(&program, &Default::default()).to_string();
        let _ = compiler::register_profile::StaticRegisterProfile::new(&program).to_string();
        for (orf_entries, lrf) in [(3, LrfMode::Split), (1, LrfMode::Unified), (8, LrfMode::None)] {
            let config = OrfLrfConfig { orf_entries, lrf, ..OrfLrfConfig::default() };
            let a = compiler::orf_lrf::allocate(f, &config);
            if let Err(errors) = check(f, &a, &config) {
                return Err(TestCaseError::fail(format!("{errors:?}\n{src}")));
            }
        }
        let report = compiler::orf_lrf::OrfLrfReport::new(&program, &OrfLrfConfig::default())
            .map_err(|e| TestCaseError::fail(format!("{e}\n{src}")))?;
        prop_assert!(report.static_counts.energy_pj <= report.static_counts.baseline_energy_pj + 1e-9);
    }
}
