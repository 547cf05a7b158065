//! The Gebhart sweep specs parse and expand into valid points (every config, design and
//! setting loads): one spec per design family.

use regsim::sweep::SweepSpec;

#[test]
fn the_gebhart_specs_expand_into_valid_points() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let count = |name: &str| {
        let path = std::path::PathBuf::from(format!("{root}/experiments/{name}.toml"));
        let spec = SweepSpec::parse(&path).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        let points = spec.expand().unwrap_or_else(|e| panic!("{name}: {e:#}"));
        points.len()
    };
    let workloads = count("gebhart");
    assert!(workloads > 0);
    assert_eq!(count("gebhart-rfc"), workloads * 8 * 2);
    assert_eq!(count("gebhart-orf-lrf"), workloads * 8 * 3);
}
