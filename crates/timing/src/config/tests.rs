use super::*;
use crate::memory::hashing::IndexFunction;

fn load(name: &str, overrides: &[&str]) -> Result<GpuConfig, ConfigError> {
    let o: Vec<Override> = overrides
        .iter()
        .map(|s| Override::parse(s))
        .collect::<Result<_, _>>()?;
    GpuConfig::load(name, &default_configs_dir(), &o)
}

fn err_of(name: &str, overrides: &[&str]) -> ConfigError {
    match load(name, overrides) {
        Ok(_) => panic!("{overrides:?} was accepted"),
        Err(e) => e,
    }
}

#[test]
fn every_opcode_class_refines_one_of_the_eight_coarse_ones_as_its_timing_falls_back() {
    use OpClass::*;
    // With only the coarse classes given, a finer one takes its coarse class's timing.
    let g = load("gtx480", &[]).unwrap();
    let coarse_only = ClassTimings {
        int_simple: None,
        int_min_max: None,
        int_mad: None,
        fp32_min_max: None,
        fp32_fma: None,
        fp32_div: None,
        fp64_div: None,
        shuffle: None,
        fp32_simple: None,
        fp64_simple: None,
        cvt: None,
        cvt64: None,
        ..g.pipeline.classes
    };
    for (c, _, _) in coarse_only.iter() {
        assert!((c.coarse() as usize) < OpClass::COARSE, "{c:?}");
        assert_eq!(c.coarse().coarse(), c.coarse());
        assert_eq!(coarse_only.get(c), coarse_only.get(c.coarse()), "{c:?}");
    }
    // Conversions fall back to the classes they were timed with before they had
    // their own: fp32_simple (itself falling back to fp32) and fp64.
    let with_simple = ClassTimings {
        fp32_simple: Some(g.pipeline.classes.sfu),
        ..coarse_only
    };
    assert_eq!(with_simple.get(Convert), &g.pipeline.classes.sfu);
    assert_eq!(coarse_only.get(Convert64), &g.pipeline.classes.fp64);
    assert_eq!(coarse_only.get(Fp64Simple), &g.pipeline.classes.fp64);
}

/// Results per clock per SM of an opcode class: its units times 32 lanes over its
/// initiation interval.
fn results_per_clock(g: &GpuConfig, class: OpClass) -> (UnitKind, u32) {
    let t = g.pipeline.classes.get(class);
    let units = g.pipeline.units.get(t.unit);
    (t.unit, units * 32 / t.initiation_interval.get() as u32)
}

#[test]
fn conversions_fp64_and_sfu_run_at_the_programming_guides_rates_per_compute_capability() {
    use OpClass::*;
    use UnitKind as U;
    // The CUDA C Programming Guide's arithmetic-instruction throughput table (results
    // per clock per multiprocessor): rows "32-bit floating-point reciprocal, ...
    // sine, cosine" (Sfu), "64-bit floating-point add, multiply, multiply-add"
    // (Fp64), "type conversions from and to 64-bit types" (Convert64), "all other
    // type conversions" (Convert), for the compute capability of each papers' GPU.
    // gtx480's FP64 is the GeForce GTX 480's 1/8 of FP32 (4), not the table's 16 for
    // compute capability 2.0, which is the Tesla part's.
    type Row = (OpClass, UnitKind, u32);
    let table: [(&str, [Row; 4]); 6] = [
        (
            "gtx480", // 2.0
            [
                (Sfu, U::Sfu, 4),
                (Fp64, U::Dp, 4),
                (Convert64, U::Sp, 16),
                (Convert, U::Sp, 16),
            ],
        ),
        (
            "maxwell-ltrf", // 5.2
            [
                (Sfu, U::Sfu, 32),
                (Fp64, U::Dp, 4),
                (Convert64, U::Dp, 4),
                (Convert, U::Sfu, 32),
            ],
        ),
        (
            "qv100", // 7.0
            [
                (Sfu, U::Sfu, 16),
                (Fp64, U::Dp, 32),
                (Convert64, U::Dp, 16),
                (Convert, U::Sfu, 16),
            ],
        ),
        (
            "rtx2060-scaled", // 7.5
            [
                (Sfu, U::Sfu, 16),
                (Fp64, U::Dp, 2),
                (Convert64, U::Dp, 2),
                (Convert, U::Sfu, 16),
            ],
        ),
        (
            "rtx-a6000", // 8.6
            [
                (Sfu, U::Sfu, 16),
                (Fp64, U::Dp, 2),
                (Convert64, U::Dp, 2),
                (Convert, U::Sfu, 16),
            ],
        ),
        (
            "h100", // 9.0
            [
                (Sfu, U::Sfu, 16),
                (Fp64, U::Dp, 64),
                (Convert64, U::Dp, 16),
                (Convert, U::Sfu, 16),
            ],
        ),
    ];
    for (name, rows) in table {
        let g = load(name, &[]).unwrap();
        for (class, unit, rate) in rows {
            assert_eq!(
                results_per_clock(&g, class),
                (unit, rate),
                "{name} {class:?}"
            );
        }
        // f64 compares, selects, abs and neg run on the FP64 unit at its rate.
        assert_eq!(
            results_per_clock(&g, Fp64Simple),
            results_per_clock(&g, Fp64),
            "{name}"
        );
    }
    // GPGPU-Sim's transcriptions: cvt of any type and the f64 compares are ALU
    // operations of latency 1 issued every cycle on the SP units; f64 arithmetic is
    // its DP_OP (on the SFU when the config has no DP unit).
    for (name, fp64_unit) in [("gpgpusim-gtx480", U::Sfu), ("gpgpusim-qv100", U::Dp)] {
        let g = load(name, &[]).unwrap();
        for class in [Convert, Convert64, Fp64Simple] {
            let t = g.pipeline.classes.get(class);
            assert_eq!(
                (t.unit, t.latency, t.initiation_interval),
                (U::Sp, Cycles::new(1), Cycles::new(1)),
                "{name} {class:?}"
            );
        }
        assert_eq!(g.pipeline.classes.get(Fp64).unit, fp64_unit, "{name}");
    }
}

#[test]
fn the_modern_configs_load_with_their_published_values() {
    let a = load("rtx-a6000", &[]).unwrap();
    assert_eq!(
        (a.gpu.num_sms, a.sm.max_warps, a.sm.max_threads),
        (84, 48, 1536)
    );
    assert_eq!(a.sm.dependence, Dependence::ControlBits);
    assert_eq!(a.register_file.banks / a.sm.schedulers, 2);
    for c in [&a, &load("h100", &[]).unwrap()] {
        assert_eq!(c.sm.core, Core::Modern);
        assert_eq!(c.sm.scheduler, SchedulerPolicy::Gty);
        assert_eq!(c.register_file.design, RegisterFileDesign::ReuseCache);
    }
    // qv100 moved to the modern core (Volta's values); its collector core is a preset.
    let q = load("qv100", &[]).unwrap();
    assert_eq!(q.sm.core, Core::Modern);
    assert_eq!(q.register_file.design, RegisterFileDesign::ReuseCache);
    assert_eq!(q.register_file.banks / q.sm.schedulers, 2);
    assert_eq!(
        load("qv100", &["sm.core=collector"]).unwrap().sm.core,
        Core::Collector
    );
    assert_eq!(u64::from(a.l2.slices) * a.l2.slice.size_bytes, 6 << 20);
    let h = load("h100", &[]).unwrap();
    assert_eq!(
        (h.gpu.num_sms, h.sm.max_warps, h.sm.max_threads),
        (132, 64, 2048)
    );
    assert_eq!(u64::from(h.l2.slices) * h.l2.slice.size_bytes, 50 << 20);
    assert_eq!(h.sm.shared_memory_bytes, 228 << 10);
    // The collector core stays the default: a config that does not say is unchanged.
    assert_eq!(
        load("gtx480", &[]).unwrap().sm.dependence,
        Dependence::Scoreboard
    );
    assert_eq!(
        load("qv100", &["sm.core=collector"]).unwrap().sm.dependence,
        Dependence::StallCounter
    );
}

/// `--set sm.core=collector` on qv100 applies its `sm.collector` list: the config it had
/// before it moved to the modern core; the user's own `--set`s still win; the list may
/// not name the core; and it is not applied while the core stays modern.
#[test]
fn qv100s_collector_preset_restores_its_collector_core() {
    let c = load("qv100", &["sm.core=collector"]).unwrap();
    assert_eq!(c.sm.scheduler, SchedulerPolicy::Gto);
    assert_eq!(c.register_file.design, RegisterFileDesign::Baseline);
    assert_eq!(
        (
            c.register_file.read_ports_per_bank,
            c.register_file.collector_units
        ),
        (1, 8)
    );
    assert!(c.sm.memory_buffer.is_none() && !c.sm.constant_operands);
    assert_eq!(c.sm.l0_stream_buffer, 0);
    assert!(!c.register_file.result_queue);
    assert_eq!(c.pipeline.timing(OpClass::Mem).initiation_interval.get(), 4);
    let m = load("qv100", &[]).unwrap();
    assert_eq!(m.sm.scheduler, SchedulerPolicy::Gty);
    assert_eq!(m.register_file.read_ports_per_bank, 2);
    let mine = load("qv100", &["sm.core=collector", "sm.scheduler=lrr"]).unwrap();
    assert_eq!(mine.sm.scheduler, SchedulerPolicy::Lrr);
    let e = err_of(
        "qv100",
        &["sm.core=collector", "sm.collector=[\"sm.core=modern\"]"],
    );
    assert_eq!(e.key(), Some("sm.collector"), "{e}");
    let e = err_of(
        "qv100",
        &["sm.core=collector", "sm.collector=[\"sm.warpz=1\"]"],
    );
    assert_eq!(e.key(), Some("sm.warpz"), "{e}");
}

#[test]
fn the_paper_memory_model_restores_the_papers_simplified_mechanisms() {
    // gtx480 and qv100 use their GPUs' mechanisms by default ...
    let g = load("gtx480", &[]).unwrap();
    assert_eq!(g.memory.model, MemoryModel::Hardware);
    assert_eq!(g.l1d.fetch, FetchGranularity::Line);
    assert_ne!(g.l1d.set_index, IndexFunction::default());
    assert!(g.l1d.invalidate_between_kernels && g.l2.fill_on_host_copy);
    assert!(g.dram.address_mapping.is_some());
    let q = load("qv100", &[]).unwrap();
    assert_eq!((q.l1d.size_bytes, q.l1d.ways), (131072, 256));
    assert_eq!(q.l1d.shared_carveouts.last(), Some(&98304));
    assert_ne!(q.l2.slice.set_index, IndexFunction::default());
    // ... and the papers' simplified memory system on request, with the papers'
    // parameters unchanged.
    let gp = load("gtx480", &["memory.model=paper"]).unwrap();
    assert_eq!(gp.memory.model, MemoryModel::Paper);
    assert_eq!(gp.l1d.fetch, FetchGranularity::Sector);
    assert_eq!(gp.l1d.set_index, IndexFunction::default());
    assert!(!gp.l1d.invalidate_between_kernels && !gp.l2.fill_on_host_copy);
    assert_eq!(
        (gp.dram.address_mapping.as_ref(), gp.dram.row_bytes),
        (None, 2048)
    );
    assert_eq!(
        (gp.l1d.size_bytes, gp.l1d.latency),
        (g.l1d.size_bytes, g.l1d.latency)
    );
    let qp = load("qv100", &["memory.model=paper"]).unwrap();
    assert_eq!((qp.l1d.size_bytes, qp.l1d.ways), (32768, 4));
    assert!(qp.l1d.shared_carveouts.is_empty());
    assert_eq!(qp.l2.slice.set_index, IndexFunction::default());
    assert!(qp.dram.address_mapping.is_none());
    // The user's own settings win over the paper's.
    let mixed = load("gtx480", &["memory.model=paper", "l1d.fetch=line"]).unwrap();
    assert_eq!(mixed.l1d.fetch, FetchGranularity::Line);
}

#[test]
fn a_bad_memory_model_or_paper_list_is_refused_naming_the_key() {
    let e = err_of("gtx480", &["memory.model=simplified"]);
    assert_eq!(e.key(), Some("memory.model"), "{e}");
    // A config without the papers' list cannot select it.
    let e = err_of("gpgpusim-gtx480", &["memory.model=paper"]);
    assert_eq!(e.key(), Some("memory.paper"), "{e}");
    for bad in [
        "memory.paper=[\"l1d.ways\"]",
        "memory.paper=[3]",
        "memory.paper=[\"unset l1d..ways\"]",
        "memory.paper=[\"memory.model=hardware\"]",
    ] {
        let e = err_of("gtx480", &["memory.model=paper", bad]);
        assert_eq!(e.key(), Some("memory.paper"), "{bad}: {e}");
    }
    // A setting naming a key that does not exist is the ordinary unknown-key error.
    let e = err_of(
        "gtx480",
        &["memory.model=paper", "memory.paper=[\"l1d.wayz=4\"]"],
    );
    assert_eq!(e.key(), Some("l1d.wayz"), "{e}");
}

#[test]
fn the_four_configs_load_with_their_papers_values() {
    let names = available_configs(&default_configs_dir());
    for n in ["gtx480", "maxwell-ltrf", "qv100", "rtx2060-scaled"] {
        assert!(names.iter().any(|x| x == n), "{n} missing from {names:?}");
    }
    let g = load("gtx480", &[]).unwrap();
    assert_eq!(
        (
            g.gpu.num_sms,
            g.sm.max_warps,
            g.sm.max_threads,
            g.sm.max_ctas
        ),
        (15, 48, 1536, 8)
    );
    assert_eq!(g.sm.registers * 4, 128 * 1024);
    assert_eq!(g.l1d.size_bytes, 16 * 1024);
    assert_eq!(g.sm.shared_memory_bytes, 48 * 1024);
    assert_eq!(g.l2.slice.size_bytes * u64::from(g.l2.slices), 768 * 1024);

    let m = load("maxwell-ltrf", &[]).unwrap();
    assert_eq!(
        (m.gpu.num_sms, m.gpu.core_clock_mhz, m.sm.max_warps),
        (24, 1137, 64)
    );
    assert_eq!(
        (m.register_file.banks, m.sm.registers * 4),
        (16, 256 * 1024)
    );
    assert_eq!((m.l1d.size_bytes, m.l1d.ways), (16 * 1024, 4));
    assert_eq!(
        (
            m.l2.slice.size_bytes * u64::from(m.l2.slices),
            m.l2.slice.ways
        ),
        (2 << 20, 8)
    );
    assert_eq!(
        (m.dram.channels, m.dram.scheduler),
        (8, DramSchedulerPolicy::FrFcfs)
    );
    assert_eq!(m.sm.scheduler, SchedulerPolicy::TwoLevel);

    let r = load("rtx2060-scaled", &[]).unwrap();
    assert_eq!(
        (r.gpu.num_sms, r.sm.max_warps, r.sm.max_threads),
        (10, 32, 1024)
    );
    assert_eq!(
        (r.sm.registers * 4, r.sm.scheduler),
        (256 * 1024, SchedulerPolicy::Gto)
    );
    assert_eq!(r.l2.slice.size_bytes * u64::from(r.l2.slices), 1 << 20);
    assert_eq!(
        u64::from(r.sm.shared_memory_bytes) + r.l1d.size_bytes,
        64 * 1024
    );

    let v = load("qv100", &[]).unwrap();
    assert_eq!(
        (
            v.gpu.num_sms,
            v.sm.max_warps,
            v.sm.schedulers,
            v.sm.registers
        ),
        (80, 64, 4, 65536)
    );
    // One 128 KB L1D/shared array; shared memory takes up to 96 KB of it per launch.
    assert_eq!(v.l1d.size_bytes, 128 * 1024);
    assert_eq!(
        v.l1d.shared_carveouts.last(),
        Some(&u64::from(v.sm.shared_memory_bytes))
    );
    assert_eq!(v.l2.slice.size_bytes * u64::from(v.l2.slices), 6 << 20);
    assert_eq!(v.pipeline.timing(OpClass::Fp64).latency, Cycles::new(8));
}

#[test]
fn a_config_survives_a_serialization_round_trip() {
    let g = load("qv100", &[]).unwrap();
    let text = toml::to_string(&g).unwrap();
    let mut back = GpuConfig::from_toml(&text, "round trip", &[]).unwrap();
    // Every energy is now written in the config, so each one's source says so.
    assert!(back
        .energy
        .sources
        .values()
        .all(|s| s == energy::sized::EXPLICIT_SOURCE));
    back.energy.sources = g.energy.sources.clone();
    assert_eq!(back, g);
}

#[test]
fn compute_capability_is_a_key_with_a_sm_70_default() {
    assert_eq!(load("gtx480", &[]).unwrap().gpu.compute_capability, 70);
    let a = load("gtx480", &["gpu.compute_capability=86"]).unwrap();
    assert_eq!(a.gpu.compute_capability, 86);
    let e = load("gtx480", &["gpu.compute_capability=860"]).unwrap_err();
    assert!(e.to_string().contains("gpu.compute_capability"), "{e}");
    // The default is not written out, so existing statistics files stay as they were.
    let text = toml::to_string(&load("gtx480", &[]).unwrap()).unwrap();
    assert!(!text.contains("compute_capability"), "{text}");
}

#[test]
fn overrides_set_values_by_dotted_path() {
    let g = load(
        "gtx480",
        &[
            "l1d.ways=2",
            "sm.scheduler=two_level",
            "register_file.bank_latency = 6",
            "pipeline.classes.fp32.latency=7",
        ],
    )
    .unwrap();
    assert_eq!(g.l1d.ways, 2);
    assert_eq!(g.l1d.sets(), 64);
    assert_eq!(g.sm.scheduler, SchedulerPolicy::TwoLevel);
    assert_eq!(g.register_file.bank_latency, Cycles::new(6));
    assert_eq!(g.pipeline.timing(OpClass::Fp32).latency, Cycles::new(7));
    let i = load(
        "gtx480",
        &[
            "register_file.design=\"ideal\"",
            "register_file.ideal_capacity_registers=262144",
        ],
    )
    .unwrap();
    assert_eq!(i.register_capacity(), 262144);
    // Without a capacity, the ideal design has the baseline's: equal occupancy.
    let base = load("gtx480", &[]).unwrap();
    let i = load("gtx480", &["register_file.design=\"ideal\""]).unwrap();
    assert_eq!(i.register_capacity(), base.register_capacity());
    assert_eq!(base.register_capacity(), u64::from(base.sm.registers));
    let u = load("gtx480", &["register_file.design=\"ideal-unlimited\""]).unwrap();
    assert_eq!(u.register_capacity(), u64::MAX);
}

#[test]
fn mrf_energy_follows_the_technology_unless_overridden() {
    let one = load("gtx480", &[]).unwrap().energy;
    let mrf = |e: &energy::EnergyConfig, access| e.kind("mrf", access).unwrap().pj;
    // LTRF Table 2's power column, #1…#7.
    for (tech, power) in [
        (1, 1.0),
        (2, 8.0),
        (3, 8.0),
        (4, 3.2),
        (5, 3.2),
        (6, 1.05),
        (7, 0.65),
    ] {
        let t = format!("register_file.technology={tech}");
        let e = load("gtx480", &[&t]).unwrap().energy;
        assert_eq!(e.mrf_technology_scale, Some(power), "#{tech}");
        assert_eq!(mrf(&e, "read"), power * mrf(&one, "read"), "#{tech}");
        assert_eq!(mrf(&e, "write"), power * mrf(&one, "write"), "#{tech}");
        // Only the MRF: the cache LTRF puts in front of it keeps its energy.
        assert_eq!(e.ltrf_cache_read_pj, one.ltrf_cache_read_pj);
    }
    // An explicit factor wins, whichever override comes first.
    for overrides in [
        [
            "register_file.technology=6",
            "energy.mrf_technology_scale=0.5",
        ],
        [
            "energy.mrf_technology_scale=0.5",
            "register_file.technology=6",
        ],
    ] {
        let e = load("gtx480", &overrides).unwrap().energy;
        assert_eq!(e.mrf_technology_scale, Some(0.5));
        assert_eq!(mrf(&e, "read"), 0.5 * mrf(&one, "read"));
    }
    let e = err_of("gtx480", &["energy.mrf_technology_scale=-1"]);
    assert_eq!(e.key(), Some("energy.mrf_technology_scale"), "{e}");
}

#[test]
fn sized_energies_follow_the_configured_sizes_unless_set() {
    let orf = |n: u8, more: &[&str]| {
        let mut o = vec![
            "register_file.design=\"orf-lrf\"".to_owned(),
            format!("register_file.orf_lrf.orf_entries={n}"),
        ];
        o.extend(more.iter().map(|s| (*s).to_owned()));
        let o: Vec<&str> = o.iter().map(String::as_str).collect();
        load("gtx480", &o).unwrap().energy
    };
    let three = orf(3, &[]);
    let six = orf(6, &[]);
    // Gebhart MICRO'11 Table 3: 6 entries 2.0 pJ per 128 bits against 3 entries' 1.2.
    assert!((six.orf_read_pj - (8.0 * 2.0 + 12.16)).abs() < 1e-9);
    assert!(six.orf_read_pj > three.orf_read_pj);
    assert_eq!(
        six.sources["orf_read_pj"],
        "Gebhart MICRO'11 Table 3, 6-entry row"
    );
    // The RFC follows its own key, whatever the design.
    let rfc = load("gtx480", &["register_file.rfc.entries_per_thread=4"])
        .unwrap()
        .energy;
    assert!((rfc.rfc_write_pj - (8.0 * 6.1 + 12.16)).abs() < 1e-9);
    // An explicit value wins, from an override or the config's own table.
    let set = orf(6, &["energy.orf_read_pj=7.5"]);
    assert_eq!(set.orf_read_pj, 7.5);
    assert_eq!(set.orf_write_pj, six.orf_write_pj);
    assert_eq!(set.sources["orf_read_pj"], energy::sized::EXPLICIT_SOURCE);
    let text = std::fs::read_to_string(default_configs_dir().join("gtx480.toml")).unwrap();
    let own = GpuConfig::from_toml(
        &format!("{text}\n[energy]\nrfc_read_pj = 3.0\n"),
        "inline",
        &[],
    )
    .unwrap();
    assert_eq!(own.energy.rfc_read_pj, 3.0);
    // A size no table covers is refused for the design that uses it, naming the key
    // and the energies that would price it; set, they are accepted.
    let cerf = [
        "register_file.design=\"cerf\"",
        "register_file.cerf.size_bytes=65536",
    ];
    let e = err_of("gtx480", &cerf);
    assert_eq!(e.key(), Some("register_file.cerf.size_bytes"), "{e}");
    assert!(e.to_string().contains("energy.cerf_tag_lookup_pj"), "{e}");
    let mut priced = cerf.to_vec();
    priced.extend([
        "energy.cerf_data_read_pj=40",
        "energy.cerf_data_write_pj=50",
        "energy.cerf_tag_lookup_pj=8",
    ]);
    assert_eq!(
        load("gtx480", &priced).unwrap().energy.cerf_data_read_pj,
        40.0
    );
    let wir = [
        "register_file.design=\"wir\"",
        "register_file.wir.verify_cache_entries=16",
    ];
    let e = err_of("gtx480", &wir);
    assert_eq!(
        e.key(),
        Some("register_file.wir.verify_cache_entries"),
        "{e}"
    );
    // Another design does not use the WIR tables: not refused.
    assert!(load("gtx480", &wir[1..]).is_ok());
}

#[test]
fn energy_keys_override_and_unknown_ones_are_named() {
    let c = load("gtx480", &[]).unwrap();
    // Every default, with technology #1's factor on the MRF filled in.
    assert_eq!(
        c.energy,
        energy::EnergyConfig {
            mrf_technology_scale: Some(1.0),
            ..energy::EnergyConfig::default()
        }
    );
    let c = load("gtx480", &["energy.mrf_read_pj=12.5"]).unwrap();
    assert_eq!(c.energy.mrf_read_pj, 12.5);
    assert_eq!(
        c.energy.orf_read_pj,
        energy::EnergyConfig::default().orf_read_pj
    );
    assert_eq!(
        err_of("gtx480", &["energy.mrf_raed_pj=1"]).key(),
        Some("energy.mrf_raed_pj")
    );
    let e = err_of("gtx480", &["energy.l2_read_pj=-3"]);
    assert_eq!(e.key(), Some("energy.l2_read_pj"), "{e}");
}

#[test]
fn cache_energies_follow_each_configs_capacities() {
    // CERF Table III on our scale: pJ × 64 / 4.62.
    let cerf = |pj: f64| pj / 4.62 * 64.0;
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9 * b;
    let gtx = load("gtx480", &[]).unwrap().energy;
    assert!(close(gtx.l1d_read_pj, cerf(0.72 + 0.47)));
    assert!(close(gtx.l2_read_pj, cerf(5.52 + 1.05)));
    // 48 KB of shared memory beside a 16 KB L1D: sqrt(3) of the L1D data row.
    assert!(close(gtx.shared_memory_access_pj, cerf(0.72) * 3f64.sqrt()));
    // H100: a 256 KB L1D/shared array (16× Table III's L1D), priced at Table I's 4 ways
    // (`energy.l1d_priced_ways`: its 256 ways are a modelling device), and 640 KB 20-way
    // L2 slices: the data row × sqrt(10), the tag row × 20/8 ways × sqrt(10) (ten times
    // the lines).
    let h100 = load("h100", &[]).unwrap().energy;
    assert!(close(h100.l1d_read_pj, 4.0 * gtx.l1d_read_pj));
    assert!(close(h100.shared_memory_access_pj, 4.0 * cerf(0.72)));
    let ten = 10f64.sqrt();
    assert!(close(
        h100.l2_write_pj,
        cerf(3.95) * ten + cerf(1.91) * 2.5 * ten
    ));
    assert!(
        h100.sources["l2_write_pj"].contains("20 ways, 128-byte lines"),
        "{}",
        h100.sources["l2_write_pj"]
    );
    // The L1D priced at its configured 256 ways is refused, naming the key.
    for config in ["qv100", "rtx-a6000", "h100", "gpgpusim-qv100"] {
        let e = err_of(config, &["energy.l1d_priced_ways=256"]);
        assert_eq!(e.key(), Some("energy.l1d_priced_ways"), "{config}: {e}");
        assert_eq!(load(config, &[]).unwrap().energy.l1d_priced_ways, Some(4));
    }
    // Associativity and line size: a 32 KB 8-way L1D (32 sets, as gtx480's hashed index
    // needs) pays twice the tag row on top of the capacity; 64-byte lines (every level's,
    // lines moving whole) sense half the data and hold twice the tags.
    let two = 2f64.sqrt();
    let eight = load("gtx480", &["l1d.ways=8", "l1d.size_bytes=32768"])
        .unwrap()
        .energy;
    assert!(close(
        eight.l1d_read_pj,
        cerf(0.72) * two + 2.0 * two * cerf(0.47)
    ));
    let lines = [
        "l1d.line_bytes=64",
        "l2.slice.line_bytes=64",
        "constant_cache.line_bytes=64",
        "icache.line_bytes=64",
        "texture_cache.line_bytes=64",
    ];
    let short = load("gtx480", &lines).unwrap().energy;
    assert!(close(
        short.l1d_read_pj,
        0.5 * cerf(0.72) + two * cerf(0.47)
    ));
    assert!(close(short.l2_read_pj, 0.5 * cerf(5.52) + two * cerf(1.05)));
    // Beyond 16× the row: refused, naming the key, unless the energies are set.
    let big = ["l1d.size_bytes=524288"];
    let e = err_of("gtx480", &big);
    assert_eq!(e.key(), Some("l1d.size_bytes"), "{e}");
    assert!(e.to_string().contains("energy.l1d_write_pj"), "{e}");
    let set = load(
        "gtx480",
        &[big[0], "energy.l1d_read_pj=80", "energy.l1d_write_pj=90"],
    )
    .unwrap()
    .energy;
    assert_eq!(set.l1d_read_pj, 80.0);
    assert_eq!(set.sources["l1d_read_pj"], energy::sized::EXPLICIT_SOURCE);
}

#[test]
fn loading_by_path_works_and_unknown_names_list_the_available_ones() {
    let p = default_configs_dir().join("qv100.toml");
    assert_eq!(load(&p.display().to_string(), &[]).unwrap().gpu.num_sms, 80);
    let e = err_of("gtx48", &[]).to_string();
    assert!(
        e.contains("gtx48") && e.contains("gtx480") && e.contains("qv100"),
        "{e}"
    );
}

#[test]
fn unknown_keys_are_named_with_their_full_path() {
    let e = err_of("gtx480", &["l1d.wayz=4"]);
    assert_eq!(e.key(), Some("l1d.wayz"), "{e}");
    let e = err_of("gtx480", &["pipeline.classes.fp32.latncy=4"]);
    assert_eq!(e.key(), Some("pipeline.classes.fp32.latncy"), "{e}");
    let e = err_of("gtx480", &["gpu.frequency=4"]);
    assert!(
        e.to_string().contains("gpu.frequency: unknown field"),
        "{e}"
    );
    let e = err_of("gtx480", &["nosuchsection.x=1"]);
    assert_eq!(e.key(), Some("nosuchsection"), "{e}");
}

#[test]
fn wrong_types_and_missing_keys_are_named() {
    let e = err_of("gtx480", &["l2.slice.ways=\"eight\""]);
    assert_eq!(e.key(), Some("l2.slice.ways"), "{e}");
    let e = err_of("gtx480", &["sm.scheduler=fifo"]);
    assert_eq!(e.key(), Some("sm.scheduler"), "{e}");
    let text = std::fs::read_to_string(default_configs_dir().join("gtx480.toml")).unwrap();
    let without = text.replace("mshrs = 64", "");
    let e = GpuConfig::from_toml(&without, "edited", &[]).unwrap_err();
    assert_eq!(e.key(), Some("l1d.mshrs"), "{e}");
    let e = GpuConfig::from_toml("[gpu]\nnum_sms = 1\n", "tiny", &[]).unwrap_err();
    assert!(
        e.to_string().contains("gpu.core_clock_mhz") || e.to_string().contains("missing"),
        "{e}"
    );
}

#[test]
fn impossible_values_are_rejected_naming_the_key() {
    let cases: &[(&str, &str, &str)] = &[
        ("gpu.num_sms=0", "gpu.num_sms", "at least 1"),
        ("l1d.ways=3", "l1d.ways", "must divide size_bytes"),
        ("l1d.size_bytes=12288", "l1d.size_bytes", "power of two"),
        ("l1d.latency=0", "l1d.latency", "at least 1 cycle"),
        ("l1d.sector_bytes=24", "l1d.sector_bytes", "power of two"),
        (
            "l1d.line_bytes=64",
            "l1d.line_bytes",
            "must equal l2.slice.line_bytes",
        ),
        ("l2.slice.mshrs=0", "l2.slice.mshrs", "at least 1"),
        ("l2.slices=7", "l2.slices", "dram.channels"),
        ("sm.max_threads=4096", "sm.max_threads", "sm.max_warps"),
        (
            "register_file.bank_latency=0",
            "register_file.bank_latency",
            "at least 1",
        ),
        (
            "register_file.collectors=\"specialised\"",
            "register_file.specialised_collectors",
            "required",
        ),
        (
            "pipeline.classes.int.unit=\"int\"",
            "pipeline.classes.int.unit",
            "none",
        ),
        ("dram.row_bytes=3000", "dram.row_bytes", "power of two"),
        (
            "interconnect.bytes_per_cycle=0",
            "interconnect.bytes_per_cycle",
            "at least 1",
        ),
    ];
    for &(o, key, fragment) in cases {
        let e = err_of("gtx480", &[o]);
        assert_eq!(e.key(), Some(key), "{o}: {e}");
        let text = e.to_string();
        assert!(
            text.starts_with(&format!("{key}: ")) && text.contains(fragment),
            "{o}: {text}"
        );
    }
}

#[test]
fn configs_are_found_in_the_repository_of_the_executable() {
    if std::env::var_os(CONFIGS_DIR_ENV).is_some() {
        // The variable wins over everything below; nothing else to check here.
        assert_eq!(
            find_configs_dir(None),
            PathBuf::from(std::env::var_os(CONFIGS_DIR_ENV).unwrap())
        );
        return;
    }
    let repo = std::env::temp_dir().join(format!("regsim-configs-{}", std::process::id()));
    std::fs::create_dir_all(repo.join("configs")).unwrap();
    let exe = repo.join("target/release/regsim");
    assert_eq!(find_configs_dir(Some(&exe)), repo.join("configs"));
    // No configs/ there: fall back to the source tree's.
    let elsewhere = repo.join("configs/target/release/regsim");
    assert_eq!(find_configs_dir(Some(&elsewhere)), source_configs_dir());
    assert_eq!(find_configs_dir(None), source_configs_dir());
    assert!(source_configs_dir().join("gtx480.toml").is_file());
    std::fs::remove_dir_all(&repo).unwrap();
}

#[test]
fn malformed_overrides_are_rejected() {
    assert!(Override::parse("l1d.ways").is_err());
    assert!(Override::parse("l1d..ways=4").is_err());
    assert!(Override::parse("l1d.ways=").is_err());
    let e = Override::parse("sm.scheduler=\"gto\"\nsm.max_warps=1").unwrap_err();
    assert!(e.to_string().contains("line break"), "{e}");
    let e = err_of("gtx480", &["l1d.ways.x=4"]);
    assert!(matches!(e, ConfigError::Override { .. }), "{e}");
}

#[test]
fn the_gpgpusim_transcriptions_carry_their_options() {
    let g = load("gpgpusim-gtx480", &[]).unwrap();
    // -gpgpu_cache:dl1 N:32:128:4,L:L:m:N:H and -gpgpu_l1_latency 35.
    assert_eq!((g.l1d.sets(), g.l1d.ways, g.l1d.latency.get()), (32, 4, 35));
    assert_eq!(g.l1d.fetch, FetchGranularity::Line);
    assert_eq!(
        g.l1d.set_index,
        IndexFunction::Xor {
            bits: vec![13, 14, 15, 17, 19]
        }
    );
    assert_eq!(g.l1d.local_write_policy, Some(WritePolicy::WriteBack));
    // -gpgpu_dram_timing_opt, -gpgpu_l2_rop_latency, -dram_latency.
    let d = &g.dram;
    assert_eq!(
        [d.t_ccd, d.t_rrd, d.t_rcd, d.t_ras, d.t_rp, d.t_rc, d.t_cl, d.t_wl].map(|t| t.get()),
        [2, 6, 12, 28, 12, 40, 12, 4]
    );
    assert_eq!((g.l2.slice.latency.get(), d.latency.get()), (120, 100));
    assert_eq!(g.l2.slices, 12);
    assert_eq!(g.pipeline.timing(OpClass::IntDiv).latency.get(), 145);
    assert_eq!(g.pipeline.timing(OpClass::Fp64).unit, UnitKind::Sfu);

    let v = load("gpgpusim-qv100", &[]).unwrap();
    assert_eq!(v.gpu.kernel_launch_latency.get(), 5000);
    assert_eq!(v.sm.scheduler, SchedulerPolicy::Lrr);
    assert!(v.pipeline.sub_core && v.register_file.partition_by_scheduler);
    assert_eq!(
        v.l2.slice.set_index,
        IndexFunction::Polynomial { polynomial: 37 }
    );
    assert_eq!(v.l1d.shared_carveouts.last(), Some(&98304));
    assert!(v.icache.perfect && v.constant_cache.perfect);
    assert_eq!(v.pipeline.timing(OpClass::Sfu).latency.get(), 100);
    // The optional classes fall back where a config does not set them.
    let q = load("qv100", &[]).unwrap();
    assert_eq!(
        q.pipeline.timing(OpClass::IntSimple),
        q.pipeline.timing(OpClass::Int)
    );
    assert_eq!(
        q.pipeline.timing(OpClass::Fp32Div),
        q.pipeline.timing(OpClass::Sfu)
    );
}

#[test]
fn new_mechanism_keys_are_checked() {
    let e = err_of(
        "gpgpusim-gtx480",
        &["l1d.set_index={ function = \"polynomial\", polynomial = 19 }"],
    );
    assert_eq!(e.key(), Some("l1d.set_index"), "{e}");
    let e = err_of("gpgpusim-gtx480", &["dram.bank_groups=3"]);
    assert_eq!(e.key(), Some("dram.bank_groups"), "{e}");
    let e = err_of("gpgpusim-gtx480", &["dram.address_mapping.pattern=RRBBCC"]);
    assert_eq!(e.key(), Some("dram.address_mapping.pattern"), "{e}");
    let e = err_of("gpgpusim-qv100", &["l1d.shared_carveouts=[0, 100]"]);
    assert_eq!(e.key(), Some("l1d.shared_carveouts"), "{e}");
}

/// CERF's array takes none of a unified L1's shared-memory carve-outs, so the design
/// loads on every shipped config (qv100, rtx-a6000 and h100 refused it before).
#[test]
fn cerf_loads_on_every_shipped_config() {
    for name in available_configs(&default_configs_dir()) {
        let c = load(&name, &["register_file.design=\"cerf\""])
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(c.l1d_array().shared_carveouts.is_empty(), "{name}");
    }
}

#[test]
fn the_modern_core_needs_stall_counts() {
    let e = err_of("rtx-a6000", &["sm.dependence=scoreboard"]).to_string();
    assert!(e.contains("sm.core") && e.contains("stall_counter"), "{e}");
    assert!(load("gtx480", &["sm.core=modern", "sm.dependence=stall_counter"]).is_ok());
    assert!(load("rtx-a6000", &["sm.dependence=stall_counter"]).is_ok());
    // Control bits are the modern core's.
    let e = err_of(
        "qv100",
        &["sm.core=collector", "sm.dependence=control_bits"],
    )
    .to_string();
    assert!(e.contains("sm.dependence") && e.contains("modern"), "{e}");
    let e = err_of("gtx480", &["sm.core=modern_core"]).to_string();
    assert!(e.contains("sm.core"), "{e}");
}

#[test]
fn the_reuse_schedule_is_read_by_the_reuse_cache_and_the_modern_baseline_only() {
    let c = load("rtx-a6000", &[]).unwrap();
    let rc = c.register_file.reuse_cache;
    assert_eq!(rc.schedule, None);
    assert_eq!(
        rc.schedule_for(RegisterFileDesign::ReuseCache),
        ReuseSchedule::Reuse
    );
    assert_eq!(
        rc.schedule_for(RegisterFileDesign::Baseline),
        ReuseSchedule::Program
    );
    let c = load(
        "rtx-a6000",
        &[
            "register_file.design=\"baseline\"",
            "register_file.reuse_cache.schedule=\"reuse\"",
        ],
    )
    .unwrap();
    assert_eq!(
        c.register_file
            .reuse_cache
            .schedule_for(c.register_file.design),
        ReuseSchedule::Reuse
    );
    let e = err_of(
        "gtx480",
        &["register_file.reuse_cache.schedule=\"program\""],
    )
    .to_string();
    assert!(e.contains("register_file.reuse_cache.schedule"), "{e}");
    let e = err_of("h100", &["register_file.reuse_cache.schedule=\"ptxas\""]).to_string();
    assert!(e.contains("schedule"), "{e}");
    // Absent, the section is not printed: configs that never name it serialise as before.
    let printed = toml::to_string(&load("h100", &[]).unwrap()).unwrap();
    assert!(
        !printed.contains("[register_file.reuse_cache]"),
        "{printed}"
    );
}

/// The shipped configs other than the GPGPU-Sim transcriptions.
const PAPER_CONFIGS: [&str; 6] = [
    "gtx480",
    "qv100",
    "h100",
    "maxwell-ltrf",
    "rtx-a6000",
    "rtx2060-scaled",
];

#[test]
fn only_the_gpgpusim_transcriptions_block_at_the_head_of_the_interconnects_queues() {
    for name in ["gpgpusim-gtx480", "gpgpusim-qv100"] {
        assert!(
            load(name, &[]).unwrap().interconnect.head_of_line_blocking,
            "{name}"
        );
    }
    for name in PAPER_CONFIGS {
        let g = load(name, &[]).unwrap();
        assert!(!g.interconnect.head_of_line_blocking, "{name}");
    }
    let off = load(
        "gpgpusim-gtx480",
        &["interconnect.head_of_line_blocking=false"],
    )
    .unwrap();
    assert!(!off.interconnect.head_of_line_blocking);
    let e = err_of("gtx480", &["interconnect.head_of_line_blocking=3"]);
    assert!(
        e.to_string().contains("interconnect.head_of_line_blocking"),
        "{e}"
    );
}

/// `get` is `transcriptions` on both GPGPU-Sim transcriptions and `papers` on every
/// paper config.
fn transcriptions_and_papers_have<T: PartialEq + std::fmt::Debug>(
    get: impl Fn(&GpuConfig) -> T,
    transcriptions: T,
    papers: T,
) {
    for name in ["gpgpusim-gtx480", "gpgpusim-qv100"] {
        assert_eq!(get(&load(name, &[]).unwrap()), transcriptions, "{name}");
    }
    for name in PAPER_CONFIGS {
        assert_eq!(get(&load(name, &[]).unwrap()), papers, "{name}");
    }
}

#[test]
fn only_the_gpgpusim_transcriptions_hold_the_miss_queue_for_a_full_injection_buffer() {
    transcriptions_and_papers_have(
        |g| g.interconnect.injection_backpressure,
        InjectionBackpressure::MissQueue,
        InjectionBackpressure::Issue,
    );
    let e = err_of(
        "gtx480",
        &["interconnect.injection_backpressure=\"miss_queue\""],
    );
    assert!(
        e.to_string()
            .contains("interconnect.injection_backpressure")
            && e.to_string().contains("l1d.miss_queue_entries"),
        "{e}"
    );
    let e = err_of(
        "gtx480",
        &["interconnect.injection_backpressure=\"sometimes\""],
    );
    assert!(
        e.to_string()
            .contains("interconnect.injection_backpressure"),
        "{e}"
    );
}

#[test]
fn the_gpgpusim_transcriptions_bound_the_l2_slices_queues_and_the_others_do_not() {
    // -gpgpu_dram_partition_queues 64:64:64:64 in both transcriptions.
    // -gpgpu_dram_return_queue_size 116 (SM2_GTX480) and 192 (SM7_QV100).
    for (name, returns) in [("gpgpusim-gtx480", 116), ("gpgpusim-qv100", 192)] {
        let g = load(name, &[]).unwrap();
        assert_eq!(
            (
                g.l2.input_queue_entries,
                g.l2.output_queue_entries,
                g.l2.dram_queue_entries,
                g.dram.return_queue_entries
            ),
            (64, 64, 64, returns),
            "{name}"
        );
    }
    for name in PAPER_CONFIGS {
        let g = load(name, &[]).unwrap();
        assert_eq!(
            (
                g.l2.input_queue_entries,
                g.l2.output_queue_entries,
                g.l2.dram_queue_entries,
                g.dram.return_queue_entries
            ),
            (0, 0, 0, 0),
            "{name}"
        );
    }
    for key in ["l2.dram_queue_entries", "dram.return_queue_entries"] {
        let e = err_of("gtx480", &[&format!("{key}=-1")]);
        assert!(e.to_string().contains(key), "{e}");
    }
    // A sector-lookup slice's packet takes up to a line's sectors: a queue shorter than
    // that could never take it.
    let e = err_of("gpgpusim-gtx480", &["l2.input_queue_entries=3"]);
    assert!(
        e.to_string().contains("l2.input_queue_entries") && e.to_string().contains("at least 4"),
        "{e}"
    );
    assert!(load("gpgpusim-gtx480", &["l2.input_queue_entries=4"]).is_ok());
    assert!(load(
        "gtx480",
        &["memory.model=paper", "l2.input_queue_entries=1"]
    )
    .is_ok());
    let e = err_of("gtx480", &["l2.output_queue_entries=-1"]);
    assert!(e.to_string().contains("l2.output_queue_entries"), "{e}");
}

#[test]
fn only_the_gpgpusim_transcriptions_lay_local_memory_out_gpu_wide() {
    transcriptions_and_papers_have(
        |g| g.memory.local_interleave,
        LocalInterleave::Gpu,
        LocalInterleave::WarpSlot,
    );
    let g = load(
        "gpgpusim-gtx480",
        &["memory.local_interleave=\"warp_slot\""],
    )
    .unwrap();
    assert_eq!(g.memory.local_interleave, LocalInterleave::WarpSlot);
    let e = err_of("gtx480", &["memory.local_interleave=\"thread\""]);
    assert!(e.to_string().contains("local_interleave"), "{e}");
}

#[test]
fn a_flit_too_wide_for_the_input_buffer_is_refused_by_name() {
    // Every shipped config's flits fit its input buffer.
    for name in [
        "gtx480",
        "gpgpusim-gtx480",
        "gpgpusim-qv100",
        "qv100",
        "h100",
    ] {
        load(name, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let e = err_of("gpgpusim-gtx480", &["interconnect.flit_bytes=4294967295"]);
    assert_eq!(e.key(), Some("interconnect.flit_bytes"), "{e}");
    assert!(e.to_string().contains("input_buffer_bytes"), "{e}");
    // A flit as wide as the buffer still lets the largest packet cross.
    let g = load("gpgpusim-gtx480", &[]).unwrap();
    let fits = format!(
        "interconnect.flit_bytes={}",
        g.interconnect.input_buffer_bytes
    );
    load("gpgpusim-gtx480", &[fits.as_str()]).unwrap();
}

#[test]
fn only_gpgpusim_qv100_banks_its_l1d_and_bad_bank_keys_are_refused_by_name() {
    let g = load("gpgpusim-qv100", &[]).unwrap();
    assert_eq!((g.l1d.banks, g.l1d.bank_interleave_bytes), (4, 32));
    for name in PAPER_CONFIGS.iter().chain(&["gpgpusim-gtx480"]) {
        assert_eq!(load(name, &[]).unwrap().l1d.banks, 0, "{name}");
    }
    for (set, key) in [
        ("l1d.banks=3", "l1d.banks"),
        ("l1d.banks=128", "l1d.banks"),
        ("l1d.bank_interleave_bytes=48", "l1d.bank_interleave_bytes"),
        ("l1d.bank_interleave_bytes=0", "l1d.bank_interleave_bytes"),
        (
            "l1d.bank_index={ function = \"polynomial\", polynomial = 37 }",
            "l1d.bank_index",
        ),
    ] {
        let e = err_of("gpgpusim-qv100", &[set]);
        assert!(e.to_string().contains(key), "{set}: {e}");
    }
    // A bank count the index function fits is taken (x^2 + x + 1 over four banks).
    let g = load(
        "gpgpusim-qv100",
        &["l1d.bank_index={ function = \"polynomial\", polynomial = 7 }"],
    )
    .unwrap();
    assert_eq!(g.l1d.banks, 4);
}
