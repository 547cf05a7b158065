use super::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1e-30)
}

fn ev<'a>(structure: &'a str, access: &'a str, count: u64) -> Event<'a> {
    Event {
        structure,
        access,
        count,
    }
}

#[test]
fn defaults_follow_the_papers_tables() {
    let c = EnergyConfig::default();
    // Gebhart Table 4: MRF 8 pJ per 128 bits, eight clusters per warp register.
    assert!(close(c.mrf_read_pj, 64.0));
    // 11 pJ × 8 plus 32 words × 1.9 pJ/mm × 1 mm of wire back to the bank.
    assert!(close(c.mrf_write_pj, 88.0 + 60.8));
    assert!(close(c.crossbar_transfer_pj, 60.8));
    // Table 3 row three (1.2 / 4.4 pJ) plus 0.2 mm (12.16 pJ per warp register).
    assert!(close(c.orf_read_pj, 9.6 + 12.16));
    assert!(close(c.orf_write_pj, 35.2 + 12.16));
    // LRF: 0.7 / 2.0 pJ plus 0.05 mm (3.04 pJ).
    assert!(close(c.lrf_read_pj, 5.6 + 3.04));
    assert!(close(c.lrf_write_pj, 16.0 + 3.04));
    // RFC: six-entry row (2.0 / 6.7 pJ).
    assert!(close(c.rfc_write_pj, 53.6 + 12.16));
    // CERF Table III: tag 0.75 pJ against the RF's 4.62 pJ, on the MRF's 64 pJ.
    assert!(close(c.cerf_tag_lookup_pj, 0.75 / 4.62 * 64.0));
    assert!(close(c.cerf_data_write_pj, c.mrf_write_pj));
    assert!(close(c.l2_read_pj, (5.52 + 1.05) / 4.62 * 64.0));
    // WIR Table III, absolute.
    assert!(close(c.wir_rename_table_read_pj, 3.50));
    assert!(close(c.wir_vsb_lookup_pj, 9.81));
    assert!(close(c.wir_verify_cache_lookup_pj, 2.93));
    c.validate().unwrap();
}

#[test]
fn totals_are_events_times_energy_per_event() {
    let c = EnergyConfig::default();
    let events = [
        ev("mrf", "read", 1000),
        ev("mrf", "write", 400),
        ev("collector", "write", 1000),
        ev("orf", "read", 7),
        ev("mrf", "read", 24), // repeated kinds add up
        ev("l2", "write", 3),
        ev("dram", "read_byte", 128),
        ev("execute", "fp32", 32 * 50),
    ];
    let r = c.account(events).unwrap();
    let pj = 1024.0 * c.mrf_read_pj
        + 400.0 * c.mrf_write_pj
        + 1000.0 * c.collector_write_pj
        + 7.0 * c.orf_read_pj
        + 3.0 * c.l2_write_pj
        + 128.0 * c.dram_read_byte_pj
        + 1600.0 * c.execute_fp32_pj;
    assert!(
        close(r.total_joules, pj * 1e-12),
        "{} vs {}",
        r.total_joules,
        pj
    );
    let rf = 1024.0 * c.mrf_read_pj
        + 400.0 * c.mrf_write_pj
        + 1000.0 * c.collector_write_pj
        + 7.0 * c.orf_read_pj;
    assert!(close(r.register_file_joules, rf * 1e-12));
    assert!(close(
        r.memory_joules,
        (3.0 * c.l2_write_pj + 128.0 * c.dram_read_byte_pj) * 1e-12
    ));
    assert!(close(
        r.execution_joules,
        1600.0 * c.execute_fp32_pj * 1e-12
    ));
    // Sorted by structure, accesses sorted within.
    let names: Vec<&str> = r.structures.iter().map(|s| s.structure.as_str()).collect();
    assert_eq!(names, ["collector", "dram", "execute", "l2", "mrf", "orf"]);
    let mrf = &r.structures[4];
    assert_eq!(mrf.accesses[0].access, "read");
    assert_eq!(mrf.accesses[0].count, 1024);
    assert!(close(
        mrf.joules,
        (1024.0 * 64.0 + 400.0 * c.mrf_write_pj) * 1e-12
    ));
    assert!(close(
        r.structure_joules("orf"),
        7.0 * c.orf_read_pj * 1e-12
    ));
    assert_eq!(r.structure_joules("rfc"), 0.0);
}

#[test]
fn unknown_structures_and_accesses_are_errors_naming_them() {
    let c = EnergyConfig::default();
    let e = c.account([ev("mfr", "read", 1)]).unwrap_err();
    assert!(matches!(&e, EnergyError::UnknownStructure { structure, .. } if structure == "mfr"));
    assert!(e.to_string().contains("`mfr`"), "{e}");
    assert!(e.to_string().contains("wir_verify_cache"), "{e}");
    let e = c.account([ev("cerf_tag", "read", 1)]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "energy: structure `cerf_tag` has no access kind `read` (known: lookup)"
    );
    // Zero counts of an unknown kind are still errors: a typo is never silently zero.
    assert!(c.account([ev("rcf", "read", 0)]).is_err());
}

#[test]
fn every_design_structure_name_is_known() {
    // DESIGN-HELPERS.md's energy structure names, verbatim.
    let c = EnergyConfig::default();
    for (s, a) in [
        ("mrf", "read"),
        ("mrf", "write"),
        ("collector", "write"),
        ("collector", "read"),
        ("crossbar", "transfer"),
        ("rfc", "read"),
        ("rfc_tag", "lookup"),
        ("orf", "write"),
        ("lrf", "read"),
        ("ltrf_cache", "read"),
        ("ltrf_cache", "write"),
        ("cerf_data", "read"),
        ("cerf_data", "write"),
        ("cerf_tag", "lookup"),
        ("ccu", "read"),
        ("ccu", "write"),
        ("arbiter", "request"),
        ("bow_window", "read"),
        ("bow_window", "write"),
        ("wir_reuse_buffer", "lookup"),
        ("wir_reuse_buffer", "write"),
        ("wir_rename_table", "read"),
        ("wir_rename_table", "write"),
        ("wir_vsb", "lookup"),
        ("wir_vsb", "write"),
        ("wir_verify_cache", "lookup"),
        ("wir_verify_read", "read"),
    ] {
        let k = c.kind(s, a).unwrap();
        assert_eq!(k.group, Group::RegisterFile, "{s}.{a}");
        assert!(k.pj > 0.0, "{s}.{a}");
    }
}

#[test]
fn overrides_apply_and_unknown_keys_are_rejected() {
    let c: EnergyConfig = toml::from_str("mrf_read_pj = 10.0\norf_write_pj = 1.5\n").unwrap();
    assert_eq!(c.mrf_read_pj, 10.0);
    assert_eq!(c.orf_write_pj, 1.5);
    // Others keep their defaults.
    assert_eq!(c.lrf_read_pj, EnergyConfig::default().lrf_read_pj);
    let r = c
        .account([ev("mrf", "read", 3), ev("orf", "write", 2)])
        .unwrap();
    assert!(close(r.total_joules, 33.0e-12));

    let e = toml::from_str::<EnergyConfig>("mrf_raed_pj = 1.0\n").unwrap_err();
    assert!(e.to_string().contains("mrf_raed_pj"), "{e}");

    // The LTRF technology factor scales the MRF (and only the MRF).
    let c: EnergyConfig = toml::from_str("mrf_technology_scale = 0.65\n").unwrap();
    let d = EnergyConfig::default();
    assert_eq!(c.mrf_technology_scale, Some(0.65));
    assert!(close(
        c.kind("mrf", "read").unwrap().pj,
        0.65 * d.mrf_read_pj
    ));
    assert!(close(
        c.kind("mrf", "write").unwrap().pj,
        0.65 * d.mrf_write_pj
    ));
    assert!(close(c.kind("orf", "read").unwrap().pj, d.orf_read_pj));
    // The report says which factor it priced the MRF with.
    let r = c.account([ev("mrf", "read", 10)]).unwrap();
    assert_eq!(r.mrf_technology_scale, 0.65);
    assert!(close(r.total_joules, 10.0 * 0.65 * d.mrf_read_pj * 1e-12));
    assert!(close(
        c.single_level_mrf_joules(10, 0) - d.single_level_mrf_joules(10, 0),
        10.0 * (0.65 - 1.0) * d.mrf_read_pj * 1e-12
    ));
    // Absent: configuration #1's factor 1, and the key stays absent when written out (a
    // GPU config fills in its technology's power; it must be able to tell).
    assert_eq!(d.mrf_technology_scale, None);
    assert_eq!(d.mrf_scale(), 1.0);
    assert_eq!(d.account([]).unwrap().mrf_technology_scale, 1.0);
    let written = toml::to_string(&d).unwrap();
    assert!(!written.contains("mrf_technology_scale"), "{written}");
    let bad = EnergyConfig {
        mrf_technology_scale: Some(-0.5),
        ..EnergyConfig::default()
    };
    let e = bad.validate().unwrap_err();
    assert!(
        e.to_string().starts_with("energy.mrf_technology_scale:"),
        "{e}"
    );

    let bad = EnergyConfig {
        l2_read_pj: -1.0,
        ..EnergyConfig::default()
    };
    let e = bad.validate().unwrap_err();
    assert!(e.to_string().starts_with("energy.l2_read_pj:"), "{e}");
}

#[test]
fn single_level_normalization() {
    let c = EnergyConfig::default();
    // 10 reads, 4 writes of a baseline MRF, all through the arbiter, banks, crossbar and
    // collectors.
    let single = c.single_level_mrf_joules(10, 4);
    let baseline = c
        .account([
            ev("arbiter", "request", 14),
            ev("mrf", "read", 10),
            ev("crossbar", "transfer", 10),
            ev("collector", "write", 10),
            ev("collector", "read", 10),
            ev("mrf", "write", 4),
        ])
        .unwrap();
    assert!(close(single, baseline.register_file_joules));
}

#[test]
fn on_chip_and_off_chip_add_up_to_the_total_and_placeholders_are_counted() {
    let c = EnergyConfig::default();
    let events = [
        ev("mrf", "read", 10),
        ev("orf", "write", 3),
        ev("l1d", "read", 4),
        ev("shared_memory", "access", 2),
        ev("dram", "read_byte", 128),
        ev("dram", "write_byte", 32),
        ev("execute", "int", 64),
    ];
    let r = c.account(events).unwrap();
    let dram = 160.0 * c.dram_read_byte_pj * 1e-12;
    assert!(close(r.off_chip_joules, dram));
    assert!(close(r.on_chip_joules + r.off_chip_joules, r.total_joules));
    assert!(close(
        r.on_chip_joules,
        r.register_file_joules + r.execution_joules + r.memory_joules - dram
    ));
    // DRAM bytes and execution lanes are priced at placeholders; nothing else is.
    assert!(close(
        r.placeholder_joules,
        dram + 64.0 * c.execute_int_pj * 1e-12
    ));
    // The report carries where each sized energy came from.
    assert_eq!(
        r.sources["orf_write_pj"],
        "Gebhart MICRO'11 Table 3, 3-entry row"
    );
    // A placeholder the user set is not a placeholder any more.
    let mut set = EnergyConfig::default();
    set.fill_sized(&sized::StructureSizes::default(), |k| {
        k.starts_with("dram_")
    })
    .unwrap();
    let r = set.account(events).unwrap();
    assert!(close(r.placeholder_joules, 64.0 * c.execute_int_pj * 1e-12));
}
