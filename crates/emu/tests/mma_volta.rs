//! Volta's `mma.sync.aligned.m8n8k4.alayout.blayout.dtype.f16.f16.ctype` (PTX ISA 6.4,
//! sm_70): four 8 x 8 x 4 products per warp, one per quad pair, for every `.row`/`.col`
//! combination and every f16/f32 choice of D and C, bit for bit against a CPU f32 FMA
//! chain (`d = c`, `d = fma(a_k, b_k, d)` for k = 0..3, an f16 D rounded once; the
//! definition docs/tensor-cores.md gives) on fragments placed by the PTX ISA's tables
//! ("Matrix Fragments for mma.m8n8k4 with .f16 floating point type"), written here
//! independently of the emulator; the sm_70 `.target` rule.

use emu::{Emulator, LaunchConfig};

/// `(row, column)` of element `i` of lane `lane`'s fragment within its quad pair's
/// matrices, as the ISA tabulates it: A (8 x 4) and B (4 x 8) by layout, C/D by type.
fn isa_coords(frag: char, layout: &str, ty: &str, lane: u32, i: u32) -> (u32, u32) {
    let low = lane < 16;
    let tig = lane % 4; // %laneid % 4
    match (frag, layout, ty) {
        ('a', "row", _) => (if low { tig } else { tig + 4 }, i),
        ('a', "col", _) => (if low { i % 4 } else { i % 4 + 4 }, tig),
        ('b', "row", _) => (tig, if low { i } else { i + 4 }),
        ('b', "col", _) => (i % 4, if low { tig } else { tig + 4 }),
        ('c', _, "f16") => (if low { tig } else { tig + 4 }, i),
        ('c', _, "f32") => {
            let x = (tig & 1) + (i & 2);
            (if low { x } else { x + 4 }, (i & 4) + (tig & 2) + (i & 1))
        }
        _ => unreachable!(),
    }
}

fn f16_to_f32(h: u32) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = ((h >> 10) & 0x1F) as i32;
    let m = (h & 0x3FF) as f32 / 1024.0;
    if e == 0 {
        sign * m * 2f32.powi(-14)
    } else {
        sign * (1.0 + m) * 2f32.powi(e - 15)
    }
}

/// f32 to f16, round to nearest even (finite values inside f16's normal range here).
fn f32_to_f16(x: f32) -> u32 {
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = f64::from(x.abs());
    if a == 0.0 {
        return sign;
    }
    let e = (a.log2().floor() as i32).max(-14);
    let r = (a / 2f64.powi(e - 10)).round_ties_even();
    let (mut bits, mut exp) = (r as u32, e + 15);
    if bits >= 2048 {
        bits /= 2;
        exp += 1;
    }
    assert!(
        (1..=30).contains(&exp) && bits >= 1024,
        "{x} leaves f16's normal range"
    );
    sign | ((exp as u32) << 10) | (bits - 1024)
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
    /// An f16 with a full mantissa, exponent -3..3, either sign.
    fn f16(&mut self) -> u32 {
        let m = self.next() & 0x3FF;
        let e = 15 - 3 + self.next() % 7;
        let s = (self.next() & 1) << 15;
        s | (e << 10) | m
    }
}

fn kernel(al: &str, bl: &str, d: &str, c: &str) -> String {
    let nc = if c == "f32" { 8 } else { 4 };
    let nd = if d == "f32" { 8 } else { 4 };
    let reg = |ty: &str| if ty == "f32" { "f" } else { "h" };
    let list = |p: &str, n: usize| {
        (0..n)
            .map(|i| format!("%{p}{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (rc, rd) = (format!("c{}", reg(c)), format!("d{}", reg(d)));
    let mut s = format!(
        ".version 7.0\n.target sm_70\n.address_size 64\n\
         .visible .entry mma(.param .u64 pin, .param .u64 pout)\n{{\n\
         .reg .b32 %r<4>;\n.reg .b64 %rd<8>;\n.reg .b32 %a<2>;\n.reg .b32 %b<2>;\n\
         .reg .{} %{rc}<8>;\n.reg .{} %{rd}<8>;\n\
         ld.param.u64 %rd1, [pin];\nld.param.u64 %rd2, [pout];\nmov.u32 %r1, %tid.x;\n\
         mul.wide.u32 %rd3, %r1, 48;\nadd.s64 %rd1, %rd1, %rd3;\n\
         mul.wide.u32 %rd4, %r1, 32;\nadd.s64 %rd2, %rd2, %rd4;\n\
         ld.global.b32 %a0, [%rd1];\nld.global.b32 %a1, [%rd1+4];\n\
         ld.global.b32 %b0, [%rd1+8];\nld.global.b32 %b1, [%rd1+12];\n",
        if c == "f32" { "f32" } else { "b32" },
        if d == "f32" { "f32" } else { "b32" },
    );
    for i in 0..nc {
        s += &format!("ld.global.b32 %{rc}{i}, [%rd1+{}];\n", 16 + 4 * i);
    }
    s += &format!(
        "mma.sync.aligned.m8n8k4.{al}.{bl}.{d}.f16.f16.{c} {{{}}}, {{%a0, %a1}}, {{%b0, %b1}}, {{{}}};\n",
        list(&rd, nd),
        list(&rc, nc)
    );
    for i in 0..nd {
        s += &format!("st.global.b32 [%rd2+{}], %{rd}{i};\n", 4 * i);
    }
    s + "ret;\n}\n"
}

fn check(al: &str, bl: &str, d: &str, c: &str, seed: u64) {
    let mut rng = Rng(seed);
    // Per quad pair: A 8 x 4, B 4 x 8, C 8 x 8 (f16 codes, or f32 values for an f32 C).
    let mut am = [[[0u32; 4]; 8]; 4];
    let mut bm = [[[0u32; 8]; 4]; 4];
    let mut cm = [[[0f32; 8]; 8]; 4];
    for p in 0..4 {
        for r in 0..8 {
            for k in 0..4 {
                am[p][r][k] = rng.f16();
                bm[p][k][r] = rng.f16();
            }
            for v in cm[p][r].iter_mut() {
                *v = f16_to_f32(rng.f16());
            }
        }
    }
    // Each lane's 12 input words: a0, a1, b0, b1, c0..c7.
    let mut words = vec![0u32; 32 * 12];
    for lane in 0..32u32 {
        let p = ((lane / 4) % 4) as usize;
        let w = &mut words[12 * lane as usize..][..12];
        for i in 0..4 {
            let (r, k) = isa_coords('a', al, "", lane, i);
            w[(i / 2) as usize] |= am[p][r as usize][k as usize] << (16 * (i % 2));
            let (k, col) = isa_coords('b', bl, "", lane, i);
            w[2 + (i / 2) as usize] |= bm[p][k as usize][col as usize] << (16 * (i % 2));
        }
        for i in 0..8 {
            let (r, col) = isa_coords('c', "", c, lane, i);
            let v = cm[p][r as usize][col as usize];
            if c == "f32" {
                w[4 + i as usize] = v.to_bits();
            } else {
                w[4 + (i / 2) as usize] |= f32_to_f16(v) << (16 * (i % 2));
            }
        }
    }
    let mut emu = Emulator::new();
    let m = emu
        .load_ptx("volta.ptx", &kernel(al, bl, d, c))
        .unwrap_or_else(|e| panic!("{al}.{bl}.{d}.{c}: {e}"));
    let k = emu.kernel(m, "mma").unwrap();
    let pin = emu
        .memory
        .alloc(4 * words.len() as u64, emu::AllocKind::Device)
        .unwrap();
    for (i, w) in words.iter().enumerate() {
        emu.memory
            .write(pin + 4 * i as u64, &w.to_le_bytes())
            .unwrap();
    }
    let pout = emu.memory.alloc(32 * 32, emu::AllocKind::Device).unwrap();
    let mut params = pin.to_le_bytes().to_vec();
    params.extend_from_slice(&pout.to_le_bytes());
    emu.run(k, LaunchConfig::linear(1, 32), &params)
        .unwrap_or_else(|e| panic!("{al}.{bl}.{d}.{c}: {e}"));
    let mut rounded = false;
    for lane in 0..32u32 {
        let p = ((lane / 4) % 4) as usize;
        for i in 0..8 {
            let (r, col) = isa_coords('c', "", d, lane, i);
            let (r, col) = (r as usize, col as usize);
            let chain = (0..4).fold(cm[p][r][col], |acc, kk| {
                f16_to_f32(am[p][r][kk]).mul_add(f16_to_f32(bm[p][kk][col]), acc)
            });
            let exact: f64 = f64::from(cm[p][r][col])
                + (0..4)
                    .map(|kk| {
                        f64::from(f16_to_f32(am[p][r][kk])) * f64::from(f16_to_f32(bm[p][kk][col]))
                    })
                    .sum::<f64>();
            rounded |= f64::from(chain) != exact;
            let (want, got) = if d == "f32" {
                let at = pout + 32 * u64::from(lane) + 4 * u64::from(i);
                (chain.to_bits(), emu.memory.read_uint(at, 4).unwrap() as u32)
            } else {
                let at = pout + 32 * u64::from(lane) + 4 * u64::from(i / 2);
                let word = emu.memory.read_uint(at, 4).unwrap() as u32;
                (f32_to_f16(chain), (word >> (16 * (i % 2))) & 0xFFFF)
            };
            assert_eq!(
                got, want,
                "{al}.{bl}.{d}.{c} seed {seed}: lane {lane} (quad pair {p}) d{i} at ({r}, {col})"
            );
        }
    }
    assert!(rounded, "the inputs round somewhere");
}

#[test]
fn every_layout_and_accumulator_matches_the_isa_bit_for_bit() {
    for al in ["row", "col"] {
        for bl in ["row", "col"] {
            for d in ["f16", "f32"] {
                for c in ["f16", "f32"] {
                    for seed in 1..3 {
                        check(al, bl, d, c, seed);
                    }
                }
            }
        }
    }
}

#[test]
fn volta_m8n8k4_needs_sm_70_and_f64_keeps_row_col() {
    let inst = "mma.sync.aligned.m8n8k4.col.row.f32.f16.f16.f16 {%f0,%f1,%f2,%f3,%f4,%f5,%f6,%f7}, {%r0,%r1}, {%r2,%r3}, {%r4,%r5,%r6,%r7};";
    let text = |target: &str, body: &str| {
        format!(
            ".version 7.0\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\n\
             .reg .b32 %r<8>;\n.reg .f32 %f<8>;\n.reg .f64 %fd<8>;\n{body}\nret;\n}}\n"
        )
    };
    let load = |t: String| {
        Emulator::new()
            .load_ptx("d.ptx", &t)
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    load(text("sm_70", inst)).unwrap();
    let e = load(text("sm_60", inst)).unwrap_err();
    assert!(
        e.contains("d.ptx:9:")
            && e.contains("mma.m8n8k4 with .f16 requires .target sm_70 or higher; the module's .target is sm_60"),
        "{e}"
    );
    let e = load(text(
        "sm_80",
        "mma.sync.aligned.m8n8k4.col.col.f64.f64.f64.f64 {%fd0,%fd1}, {%fd2}, {%fd3}, {%fd4,%fd5};",
    ))
    .unwrap_err();
    assert!(
        e.contains("needs .row.col") && e.contains("d.ptx:9:"),
        "{e}"
    );
}
