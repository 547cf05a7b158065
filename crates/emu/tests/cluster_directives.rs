//! The kernel directives that constrain clusters (PTX ISA "Cluster Dimension
//! Directives"): `.explicitcluster` without `.reqnctapercluster` needs a launch that gives
//! a cluster shape, `.maxclusterrank N` bounds the launch's cluster to N CTAs;
//! `.reqnctapercluster` with `.explicitcluster`, what nvcc 11.8 emits for
//! `__cluster_dims__`, runs under a plain launch with the declared shape.

use emu::{Emulator, LaunchConfig};

const PTX: &str = "\
.version 7.8
.target sm_90
.address_size 64
.visible .entry explicit(.param .u64 out)
.explicitcluster
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    mov.u32 %r1, %cluster_nctarank;
    ld.param.u64 %rd1, [out];
    st.global.u32 [%rd1], %r1;
    ret;
}
.visible .entry bounded(.param .u64 out)
.maxclusterrank 2
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    mov.u32 %r1, %cluster_nctarank;
    ld.param.u64 %rd1, [out];
    st.global.u32 [%rd1], %r1;
    ret;
}
.visible .entry declared(.param .u64 out)
.explicitcluster
.reqnctapercluster 2, 2, 1
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    mov.u32 %r1, %cluster_nctarank;
    ld.param.u64 %rd1, [out];
    st.global.u32 [%rd1], %r1;
    ret;
}
";

fn run(name: &str, grid: [u32; 3], cluster: Option<[u32; 3]>) -> Result<u32, String> {
    let mut emu = Emulator::new();
    let m = emu.load_ptx("c.ptx", PTX).unwrap_or_else(|e| panic!("{e}"));
    let k = emu.kernel(m, name).unwrap();
    let out = emu.memory.alloc(4, emu::AllocKind::Device).unwrap();
    emu.memory.memset(out, 0, 4).unwrap();
    let cfg = LaunchConfig {
        grid,
        block: [32, 1, 1],
        dynamic_shared: 0,
        cluster,
    };
    emu.run(k, cfg, &out.to_le_bytes())
        .map_err(|e| e.to_string())?;
    Ok(emu.memory.read_uint(out, 4).unwrap() as u32)
}

#[test]
fn explicitcluster_needs_a_cluster_shape_from_the_launch() {
    let e = run("explicit", [4, 1, 1], None).unwrap_err();
    assert!(
        e.contains(
            "the kernel declares .explicitcluster without .reqnctapercluster, so the launch \
             must give a cluster shape"
        ),
        "{e}"
    );
    assert_eq!(run("explicit", [4, 1, 1], Some([2, 1, 1])), Ok(2));
}

#[test]
fn maxclusterrank_bounds_the_launch_cluster() {
    assert_eq!(run("bounded", [4, 1, 1], Some([2, 1, 1])), Ok(2));
    assert_eq!(run("bounded", [4, 1, 1], None), Ok(1));
    let e = run("bounded", [4, 1, 1], Some([4, 1, 1])).unwrap_err();
    assert!(
        e.contains("a cluster of [4, 1, 1] = 4 CTAs, but the kernel declares .maxclusterrank 2"),
        "{e}"
    );
}

#[test]
fn a_declared_shape_runs_under_a_plain_launch() {
    assert_eq!(run("declared", [2, 4, 1], None), Ok(4));
    assert_eq!(run("declared", [2, 4, 1], Some([2, 2, 1])), Ok(4));
    let e = run("declared", [2, 4, 1], Some([4, 1, 1])).unwrap_err();
    assert!(e.contains(".reqnctapercluster [2, 2, 1]"), "{e}");
}
