//! `mma.sync.aligned.{m8n8k4,m16n8k4,m16n8k8,m16n8k16}.row.col.f64.f64.f64.f64`: every
//! shape bit for bit against a CPU f64 FMA chain (`d = c`, then `d = fma(a_k, b_k, d)` for
//! k = 0..K-1, the definition docs/tensor-cores.md gives), with fragments laid out by the
//! PTX ISA's tables written here independently of the emulator ("Matrix Fragments for
//! mma.m8n8k4 / m16n8k4 / m16n8k8 / m16n8k16 with .f64"); the sm_90 `.target` rule of the
//! m16n8 shapes at the instruction's line.

use emu::{Emulator, LaunchConfig};

/// `(row, column)` of element `i` of lane `lane`'s f64 fragment, as the ISA tabulates it.
fn isa_coords(shape: &str, frag: char, lane: u32, i: u32) -> (u32, u32) {
    let (g, t) = (lane >> 2, lane % 4);
    match (shape, frag) {
        ("m8n8k4", 'a') => (g, t),
        ("m8n8k4", 'b') => (t, g),
        ("m8n8k4", 'c') => (g, 2 * t + i),
        ("m16n8k4", 'a') => (if i == 0 { g } else { g + 8 }, t),
        ("m16n8k4", 'b') => (t, g),
        // a0, a2, a4, a6: row groupID; a1, a3, ...: groupID + 8; columns threadID_in_group
        // + 4 per pair.
        ("m16n8k8" | "m16n8k16", 'a') => {
            (if i.is_multiple_of(2) { g } else { g + 8 }, t + 4 * (i / 2))
        }
        ("m16n8k8" | "m16n8k16", 'b') => (t + 4 * i, g),
        (_, 'c') => (if i < 2 { g } else { g + 8 }, 2 * t + (i & 1)),
        _ => unreachable!(),
    }
}

fn dims(shape: &str) -> (u32, u32, u32) {
    match shape {
        "m8n8k4" => (8, 8, 4),
        "m16n8k4" => (16, 8, 4),
        "m16n8k8" => (16, 8, 8),
        "m16n8k16" => (16, 8, 16),
        _ => unreachable!(),
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }
    /// A value with a full 53-bit mantissa and an exponent in -6..6, either sign: sums of
    /// products of these round at every step.
    fn value(&mut self) -> f64 {
        let m = (self.next() & ((1 << 52) - 1)) as f64 / (1u64 << 52) as f64 + 1.0;
        let e = (self.next() % 13) as i32 - 6;
        let s = if self.next().is_multiple_of(2) {
            1.0
        } else {
            -1.0
        };
        s * m * 2f64.powi(e)
    }
}

fn kernel(shape: &str) -> String {
    let (m, n, k) = dims(shape);
    let (na, nb, nc) = (m * k / 32, k * n / 32, m * n / 32);
    let mut s = format!(
        ".version 7.8\n.target sm_90\n.address_size 64\n\
         .visible .entry mma(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{{\n\
         .reg .b32 %r<4>;\n.reg .b64 %rd<20>;\n.reg .f64 %fa<{na}>;\n.reg .f64 %fb<{nb}>;\n\
         .reg .f64 %fc<{nc}>;\n.reg .f64 %fd<{nc}>;\nmov.u32 %r1, %tid.x;\n"
    );
    for (i, (p, regs, cnt)) in [
        ("pa", "fa", na),
        ("pb", "fb", nb),
        ("pc", "fc", nc),
        ("pd", "fd", nc),
    ]
    .iter()
    .enumerate()
    {
        s += &format!(
            "ld.param.u64 %rd{i}, [{p}];\nmul.wide.u32 %rd1{i}, %r1, {};\nadd.s64 %rd{i}, %rd{i}, %rd1{i};\n",
            8 * cnt
        );
        if *regs != "fd" {
            for e in 0..*cnt {
                s += &format!("ld.global.f64 %{regs}{e}, [%rd{i}+{}];\n", 8 * e);
            }
        }
    }
    let list = |r: &str, c: u32| {
        (0..c)
            .map(|e| format!("%{r}{e}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    s += &format!(
        "mma.sync.aligned.{shape}.row.col.f64.f64.f64.f64 {{{}}}, {{{}}}, {{{}}}, {{{}}};\n",
        list("fd", nc),
        list("fa", na),
        list("fb", nb),
        list("fc", nc)
    );
    for e in 0..nc {
        s += &format!("st.global.f64 [%rd3+{}], %fd{e};\n", 8 * e);
    }
    s + "ret;\n}\n"
}

fn alloc(emu: &mut Emulator, v: &[f64]) -> u64 {
    let a = emu
        .memory
        .alloc(8 * v.len() as u64, emu::AllocKind::Device)
        .unwrap();
    for (i, x) in v.iter().enumerate() {
        emu.memory
            .write(a + 8 * i as u64, &x.to_bits().to_le_bytes())
            .unwrap();
    }
    a
}

fn check(shape: &str, seed: u64) {
    let (m, n, k) = dims(shape);
    let (mu, nu, ku) = (m as usize, n as usize, k as usize);
    let mut rng = Rng(seed);
    let a: Vec<f64> = (0..mu * ku).map(|_| rng.value()).collect();
    let b: Vec<f64> = (0..ku * nu).map(|_| rng.value()).collect();
    let c: Vec<f64> = (0..mu * nu).map(|_| rng.value()).collect();
    let (na, nb, nc) = (mu * ku / 32, ku * nu / 32, mu * nu / 32);
    // Per-lane register images from the ISA's layouts.
    let mut fa = vec![0f64; 32 * na];
    let mut fb = vec![0f64; 32 * nb];
    let mut fc = vec![0f64; 32 * nc];
    for lane in 0..32u32 {
        let l = lane as usize;
        for i in 0..na {
            let (r, col) = isa_coords(shape, 'a', lane, i as u32);
            fa[l * na + i] = a[r as usize * ku + col as usize];
        }
        for i in 0..nb {
            let (r, col) = isa_coords(shape, 'b', lane, i as u32);
            fb[l * nb + i] = b[r as usize * nu + col as usize];
        }
        for i in 0..nc {
            let (r, col) = isa_coords(shape, 'c', lane, i as u32);
            fc[l * nc + i] = c[r as usize * nu + col as usize];
        }
    }
    let mut emu = Emulator::new();
    let module = emu
        .load_ptx("mma_f64.ptx", &kernel(shape))
        .unwrap_or_else(|e| panic!("{shape}: {e}"));
    let kref = emu.kernel(module, "mma").unwrap();
    let pa = alloc(&mut emu, &fa);
    let pb = alloc(&mut emu, &fb);
    let pc = alloc(&mut emu, &fc);
    let pd = alloc(&mut emu, &vec![0.0; 32 * nc]);
    let mut p = Vec::new();
    for v in [pa, pb, pc, pd] {
        p.extend_from_slice(&v.to_le_bytes());
    }
    emu.run(kref, LaunchConfig::linear(1, 32), &p)
        .unwrap_or_else(|e| panic!("{shape}: {e}"));
    let mut fused_differs_from_unfused = false;
    for lane in 0..32u32 {
        for i in 0..nc {
            let (r, col) = isa_coords(shape, 'c', lane, i as u32);
            let (r, col) = (r as usize, col as usize);
            let want = (0..ku).fold(c[r * nu + col], |d, kk| {
                a[r * ku + kk].mul_add(b[kk * nu + col], d)
            });
            let unfused = (0..ku).fold(c[r * nu + col], |d, kk| {
                d + a[r * ku + kk] * b[kk * nu + col]
            });
            fused_differs_from_unfused |= unfused.to_bits() != want.to_bits();
            let at = pd + 8 * (lane as u64 * nc as u64 + i as u64);
            let got = f64::from_bits(emu.memory.read_uint(at, 8).unwrap());
            assert_eq!(
                got.to_bits(),
                want.to_bits(),
                "{shape} seed {seed}: lane {lane} d{i} (row {r}, column {col}): {got:e} vs {want:e}"
            );
        }
    }
    // The inputs round: a product summed without fusing would differ somewhere.
    assert!(fused_differs_from_unfused, "{shape} seed {seed}");
}

#[test]
fn f64_products_match_the_isa_layouts_bit_for_bit() {
    for shape in ["m8n8k4", "m16n8k4", "m16n8k8", "m16n8k16"] {
        for seed in 1..4 {
            check(shape, seed);
        }
    }
}

fn decode(target: &str, body: &str) -> Result<(), String> {
    let text = format!(
        ".version 7.8\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\n\
         .reg .f64 %fd<40>;\n{body}\nret;\n}}\n"
    );
    Emulator::new()
        .load_ptx("d.ptx", &text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn the_m16n8_f64_shapes_need_sm_90_and_their_register_counts() {
    let k4 = "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%fd0,%fd1,%fd2,%fd3}, {%fd4,%fd5}, {%fd6}, {%fd7,%fd8,%fd9,%fd10};";
    let k8 = "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%fd0,%fd1,%fd2,%fd3}, {%fd4,%fd5,%fd6,%fd7}, {%fd8,%fd9}, {%fd10,%fd11,%fd12,%fd13};";
    let k16 = "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%fd0,%fd1,%fd2,%fd3}, {%fd4,%fd5,%fd6,%fd7,%fd8,%fd9,%fd10,%fd11}, {%fd12,%fd13,%fd14,%fd15}, {%fd16,%fd17,%fd18,%fd19};";
    for inst in [k4, k8, k16] {
        decode("sm_90", inst).unwrap_or_else(|e| panic!("{inst}: {e}"));
        decode("sm_90a", inst).unwrap_or_else(|e| panic!("{inst}: {e}"));
        let e = decode("sm_80", inst).unwrap_err();
        assert!(
            e.contains("d.ptx:7:")
                && e.contains(
                    "mma.m16n8k4/m16n8k8/m16n8k16 with .f64 requires .target sm_90 or higher; \
                     the module's .target is sm_80"
                ),
            "{e}"
        );
    }
    // m8n8k4 stays an sm_80 shape.
    decode(
        "sm_80",
        "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd0,%fd1}, {%fd2}, {%fd3}, {%fd4,%fd5};",
    )
    .unwrap();
    // Wrong fragment sizes and other f64 shapes are refused at the line.
    for (inst, want) in [
        (
            "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%fd0,%fd1,%fd2,%fd3}, {%fd4,%fd5,%fd6,%fd7}, {%fd12,%fd13,%fd14,%fd15}, {%fd16,%fd17,%fd18,%fd19};",
            "vector",
        ),
        (
            "mma.sync.aligned.m16n8k32.row.col.f64.f64.f64.f64 {%fd0,%fd1,%fd2,%fd3}, {%fd4,%fd5}, {%fd6}, {%fd7,%fd8,%fd9,%fd10};",
            "with .f64 inputs does not support .m16n8k32",
        ),
        (
            "mma.sync.aligned.m16n8k8.row.col.f32.f64.f64.f32 {%fd0,%fd1,%fd2,%fd3}, {%fd4,%fd5,%fd6,%fd7}, {%fd8,%fd9}, {%fd10,%fd11,%fd12,%fd13};",
            "does not support .f32 D",
        ),
    ] {
        let e = decode("sm_90", inst).unwrap_err();
        assert!(e.contains(want) && e.contains("d.ptx:7:"), "{inst}: {e}");
    }
}
