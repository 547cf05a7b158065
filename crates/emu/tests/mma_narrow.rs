//! `mma.sync` with 4-bit integer and fp8 inputs (and the m8n8k16 8-bit shape): every
//! shape and type combination, bit for bit, against a CPU product whose fragment layouts
//! are written here from the PTX ISA's text ("Matrix Fragments for mma.m8n8k16",
//! "…m8n8k32", "…m16n8k16 with integer type", "…m16n8k32", "…m16n8k64"), one case per
//! shape, independently of the emulator's layout code; and the decoder's refusals.

use emu::{Emulator, LaunchConfig};

/// `(row, column)` of element `i` of lane `lane`'s fragment, as the ISA tabulates it.
/// `frag` is 'a', 'b' or 'c'; `bits` the input element width (8 or 4).
fn isa_coords(shape: &str, bits: u32, frag: char, lane: u32, i: u32) -> (u32, u32) {
    let (g, t) = (lane >> 2, lane % 4);
    match (shape, bits, frag) {
        // m8n8 accumulators: row groupID, col threadID_in_group * 2 + i.
        ("m8n8k16" | "m8n8k32", _, 'c') => (g, t * 2 + i),
        // m16n8 accumulators: row groupID for c0, c1, groupID + 8 for c2, c3.
        (_, _, 'c') => (if i < 2 { g } else { g + 8 }, t * 2 + (i & 1)),
        ("m8n8k16", 8, 'a') => (g, t * 4 + i),
        ("m8n8k16", 8, 'b') => (t * 4 + i, g),
        ("m8n8k32", 4, 'a') => (g, t * 8 + i),
        ("m8n8k32", 4, 'b') => (t * 8 + i, g),
        ("m16n8k16", 8, 'a') => (if i < 4 { g } else { g + 8 }, t * 4 + (i & 3)),
        ("m16n8k16", 8, 'b') => (t * 4 + i, g),
        ("m16n8k32", 8, 'a') => (
            if i < 4 || (8..12).contains(&i) {
                g
            } else {
                g + 8
            },
            t * 4 + (i & 3) + if i < 8 { 0 } else { 16 },
        ),
        ("m16n8k32", 8, 'b') => (t * 4 + (i & 3) + if i < 4 { 0 } else { 16 }, g),
        ("m16n8k32", 4, 'a') => (if i < 8 { g } else { g + 8 }, t * 8 + (i & 7)),
        ("m16n8k32", 4, 'b') => (t * 8 + i, g),
        ("m16n8k64", 4, 'a') => (
            if i < 8 || (16..24).contains(&i) {
                g
            } else {
                g + 8
            },
            t * 8 + (i & 7) + if i < 16 { 0 } else { 32 },
        ),
        ("m16n8k64", 4, 'b') => (t * 8 + (i & 7) + if i < 8 { 0 } else { 32 }, g),
        _ => panic!("no ISA layout for {shape} {bits}-bit {frag}"),
    }
}

fn dims(shape: &str) -> (u32, u32, u32) {
    match shape {
        "m8n8k16" => (8, 8, 16),
        "m8n8k32" => (8, 8, 32),
        "m16n8k16" => (16, 8, 16),
        "m16n8k32" => (16, 8, 32),
        "m16n8k64" => (16, 8, 64),
        _ => unreachable!(),
    }
}

fn type_bits(ty: &str) -> u32 {
    match ty {
        "s4" | "u4" => 4,
        "s8" | "u8" | "e4m3" | "e5m2" => 8,
        "f16" => 16,
        _ => 32,
    }
}

/// An fp8 code's value (PTX ISA "Alternate Floating Point Data Formats"): e4m3 bias 7,
/// e5m2 bias 15, subnormals at exponent 0. The generator never makes NaN or infinity.
fn fp8(code: u32, e5m2: bool) -> f32 {
    let (mbits, bias) = if e5m2 { (2, 15) } else { (3, 7) };
    let sign = if code & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = ((code >> mbits) & ((1 << (7 - mbits)) - 1)) as i32;
    let m = (code & ((1 << mbits) - 1)) as f32 / (1 << mbits) as f32;
    if e == 0 {
        sign * m * 2f32.powi(1 - bias)
    } else {
        sign * (1.0 + m) * 2f32.powi(e - bias)
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

/// f32 to f16, round to nearest even (finite inputs well inside f16's range here).
fn f32_to_f16(x: f32) -> u32 {
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    let a = x.abs() as f64;
    if a == 0.0 {
        return sign;
    }
    let e = a.log2().floor() as i32;
    let e = e.max(-14);
    // Units of the last place at exponent e: 2^(e-10).
    let q = a / 2f64.powi(e - 10);
    let r = q.round_ties_even();
    let mut bits = r as u32; // 1024..=2048 for normals, below 1024 for subnormals
    let mut exp = e + 15;
    if bits >= 2048 {
        bits /= 2;
        exp += 1;
    }
    if exp > 30 {
        return sign | 0x7C00; // overflow: infinity
    }
    if bits < 1024 {
        return sign | bits; // subnormal (exp field 0)
    }
    sign | ((exp as u32) << 10) | (bits - 1024)
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 16) as u32
    }
}

/// A random raw input code of `ty`, never an fp8 NaN or infinity.
fn random_code(rng: &mut Rng, ty: &str) -> u32 {
    loop {
        let v = rng.next() & ((1 << type_bits(ty)) - 1);
        let bad = match ty {
            "e4m3" => v & 0x7F == 0x7F,
            "e5m2" => (v >> 2) & 0x1F == 0x1F,
            _ => false,
        };
        if !bad {
            return v;
        }
    }
}

fn input_value(code: u32, ty: &str) -> f64 {
    match ty {
        "s4" => f64::from(((code << 28) as i32) >> 28),
        "u4" | "u8" => f64::from(code),
        "s8" => f64::from(code as u8 as i8),
        "e4m3" => f64::from(fp8(code, false)),
        "e5m2" => f64::from(fp8(code, true)),
        _ => unreachable!(),
    }
}

/// One case: `mma.sync.aligned.{shape}.row.col{sat}.{d}.{a}.{b}.{c}` on random inputs,
/// checked against the CPU product.
fn check(shape: &str, d_ty: &str, a_ty: &str, b_ty: &str, c_ty: &str, sat: bool, seed: u64) {
    let (m, n, k) = dims(shape);
    let (ab, bb) = (type_bits(a_ty), type_bits(b_ty));
    let (na, nb) = (m * k * ab / 32 / 32, k * n * bb / 32 / 32);
    let per_acc = |ty: &str| if ty == "f16" { 2 } else { 1 };
    let (nc, nd) = (m * n / 32 / per_acc(c_ty), m * n / 32 / per_acc(d_ty));
    let mut rng = Rng(seed);
    // With f16 accumulators, fp8 inputs below 2 in magnitude (the top exponent bit
    // clear), so that sums stay finite in f16; f32 accumulators take every finite code.
    let small = if d_ty == "f16" { 0xBF } else { 0xFF };
    let a: Vec<u32> = (0..m * k)
        .map(|_| random_code(&mut rng, a_ty) & small)
        .collect();
    let b: Vec<u32> = (0..k * n)
        .map(|_| random_code(&mut rng, b_ty) & small)
        .collect();
    // C: integers near the s32 limits (so that .satfinite and wrapping both show), or
    // small floats.
    let c: Vec<u32> = (0..m * n)
        .map(|i| match c_ty {
            "s32" => {
                let big = if i % 3 == 0 { 0x7FFF_FF00 } else { 0 };
                (rng.next() % 512).wrapping_add(big) ^ if i % 5 == 0 { 0x8000_0000 } else { 0 }
            }
            "f16" => f32_to_f16((rng.next() % 64) as f32 / 8.0 - 4.0),
            _ => ((rng.next() % 4096) as f32 / 64.0 - 32.0).to_bits(),
        })
        .collect();
    // Registers of every lane, packed as the ISA tabulates.
    let pack = |mat: &[u32], cols: u32, frag: char, bits: u32, nregs: u32, lane: u32| {
        let per = 32 / bits;
        let mut regs = vec![0u32; nregs as usize];
        for i in 0..nregs * per {
            let (r, col) = isa_coords(shape, if frag == 'c' { 8 } else { bits }, frag, lane, i);
            let v = mat[(r * cols + col) as usize]
                & if bits == 32 {
                    u32::MAX
                } else {
                    (1 << bits) - 1
                };
            regs[(i / per) as usize] |= v << (bits * (i % per));
        }
        regs
    };
    let mut mem_a = Vec::new();
    let mut mem_b = Vec::new();
    let mut mem_c = Vec::new();
    for lane in 0..32 {
        mem_a.extend(pack(&a, k, 'a', ab, na, lane));
        mem_b.extend(pack(&b, n, 'b', bb, nb, lane));
        mem_c.extend(pack(&c, n, 'c', type_bits(c_ty), nc, lane));
    }
    // The CPU product.
    let want: Vec<u32> = (0..m * n)
        .map(|ij| {
            let (i, j) = (ij / n, ij % n);
            let products = (0..k).map(|kk| {
                (
                    input_value(a[(i * k + kk) as usize], a_ty),
                    input_value(b[(kk * n + j) as usize], b_ty),
                )
            });
            let cv = c[ij as usize];
            match d_ty {
                "s32" => {
                    let s = products.fold(i64::from(cv as i32), |acc, (x, y)| acc + (x * y) as i64);
                    if sat {
                        s.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32
                    } else {
                        s as i32 as u32
                    }
                }
                _ => {
                    let c0 = if c_ty == "f16" {
                        f16_to_f32(cv)
                    } else {
                        f32::from_bits(cv)
                    };
                    let acc = products.fold(c0, |acc, (x, y)| (x as f32).mul_add(y as f32, acc));
                    if d_ty == "f16" {
                        f32_to_f16(acc)
                    } else {
                        acc.to_bits()
                    }
                }
            }
        })
        .collect();

    // The kernel: every thread loads its fragments, multiplies, stores D.
    let reg_decl = |name: &str, ty: &str, count: u32| {
        let t = if ty == "f32" { "f32" } else { "b32" };
        format!(".reg .{t} %{name}<{count}>;")
    };
    let list = |name: &str, count: u32| {
        let r: Vec<String> = (0..count).map(|i| format!("%{name}{i}")).collect();
        format!("{{{}}}", r.join(", "))
    };
    let loads = |name: &str, ty: &str, count: u32, base: &str| -> String {
        let t = if ty == "f32" { "f32" } else { "b32" };
        (0..count)
            .map(|i| {
                format!(
                    "mul.wide.u32 %rd9, %t, {};\nadd.s64 %rd9, %rd9, {base};\nld.global.{t} %{name}{i}, [%rd9+{}];\n",
                    4 * count,
                    4 * i
                )
            })
            .collect()
    };
    let stores: String = (0..nd)
        .map(|i| {
            let t = if d_ty == "f32" { "f32" } else { "b32" };
            format!(
                "mul.wide.u32 %rd9, %t, {};\nadd.s64 %rd9, %rd9, %rd4;\nst.global.{t} [%rd9+{}], %d{i};\n",
                4 * nd,
                4 * i
            )
        })
        .collect();
    let satf = if sat { ".satfinite" } else { "" };
    let text = format!(
        ".version 8.7\n.target sm_90\n.address_size 64\n\
         .visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{{\n\
         {}\n{}\n{}\n{}\n.reg .b64 %rd<10>;\n.reg .b32 %t;\n\
         ld.param.u64 %rd1, [pa];\nld.param.u64 %rd2, [pb];\nld.param.u64 %rd3, [pc];\nld.param.u64 %rd4, [pd];\n\
         mov.u32 %t, %tid.x;\n{}{}{}\
         mma.sync.aligned.{shape}.row.col{satf}.{d_ty}.{a_ty}.{b_ty}.{c_ty} {}, {}, {}, {};\n{stores}ret;\n}}\n",
        reg_decl("a", "b32", na),
        reg_decl("b", "b32", nb),
        reg_decl("c", c_ty, nc),
        reg_decl("d", d_ty, nd),
        loads("a", "b32", na, "%rd1"),
        loads("b", "b32", nb, "%rd2"),
        loads("c", c_ty, nc, "%rd3"),
        list("d", nd),
        list("a", na),
        list("b", nb),
        list("c", nc),
    );
    let name = format!("{shape}.{d_ty}.{a_ty}.{b_ty}.{c_ty}{satf}");
    let mut emu = Emulator::new();
    let module = emu
        .load_ptx("mma.ptx", &text)
        .unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
    let kernel = emu.kernel(module, "k").unwrap();
    let mut buffer = |words: &[u32]| {
        let p = emu
            .memory
            .alloc(4 * words.len().max(1) as u64, emu::AllocKind::Device)
            .unwrap();
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        emu.memory.write(p, &bytes).unwrap();
        p
    };
    let (pa, pb, pc) = (buffer(&mem_a), buffer(&mem_b), buffer(&mem_c));
    let pd = buffer(&vec![0u32; (32 * nd) as usize]);
    let params: Vec<u8> = [pa, pb, pc, pd]
        .iter()
        .flat_map(|p| p.to_le_bytes())
        .collect();
    emu.run(kernel, LaunchConfig::linear(1, 32), &params)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let d_bits = type_bits(d_ty);
    for lane in 0..32 {
        for i in 0..m * n / 32 {
            let (r, col) = isa_coords(shape, 8, 'c', lane, i);
            let per = 32 / d_bits;
            let reg = lane * nd + i / per;
            let word = emu.memory.read_uint(pd + 4 * u64::from(reg), 4).unwrap() as u32;
            let got = if d_bits == 32 {
                word
            } else {
                (word >> (16 * (i % per))) & 0xFFFF
            };
            let w = want[(r * n + col) as usize];
            assert_eq!(
                got, w,
                "{name}: lane {lane} element {i} (D[{r}][{col}]): got {got:#x}, want {w:#x}"
            );
        }
    }
}

#[test]
fn four_bit_integer_products_match_the_isa_layouts_bit_for_bit() {
    let mut seed = 1;
    for shape in ["m8n8k32", "m16n8k32", "m16n8k64"] {
        for (a, b) in [("s4", "s4"), ("u4", "u4"), ("s4", "u4"), ("u4", "s4")] {
            for sat in [false, true] {
                seed += 1;
                check(shape, "s32", a, b, "s32", sat, seed * 0x9E37_79B9);
            }
        }
    }
}

#[test]
fn eight_bit_m8n8k16_matches_the_isa_layout() {
    for (i, (a, b)) in [("s8", "s8"), ("u8", "s8"), ("s8", "u8"), ("u8", "u8")]
        .into_iter()
        .enumerate()
    {
        check("m8n8k16", "s32", a, b, "s32", i % 2 == 0, 77 + i as u64);
    }
}

#[test]
fn fp8_products_match_the_isa_layouts_bit_for_bit() {
    let mut seed = 5;
    for shape in ["m16n8k32", "m16n8k16"] {
        for (a, b) in [
            ("e4m3", "e4m3"),
            ("e5m2", "e5m2"),
            ("e4m3", "e5m2"),
            ("e5m2", "e4m3"),
        ] {
            for acc in ["f32", "f16"] {
                seed += 1;
                check(shape, acc, a, b, acc, false, seed * 0x2545_F491);
            }
        }
    }
}

#[test]
fn the_reference_helpers_are_right() {
    assert_eq!(fp8(0x38, false), 1.0);
    assert_eq!(fp8(0x7E, false), 448.0);
    assert_eq!(fp8(0x01, false), 2f32.powi(-9));
    assert_eq!(fp8(0x3C, true), 1.0);
    assert_eq!(fp8(0x7B, true), 57344.0);
    assert_eq!(fp8(0x01, true), 2f32.powi(-16));
    assert_eq!(f32_to_f16(1.0), 0x3C00);
    assert_eq!(f32_to_f16(-2.5), 0xC100);
    assert_eq!(f32_to_f16(65504.0), 0x7BFF);
    assert_eq!(f32_to_f16(-70000.0), 0xFC00);
    assert_eq!(f32_to_f16(2f32.powi(-24)), 0x0001);
    // 1 + 2^-11 is a tie: to even (1.0); 1 + 3·2^-11 rounds up to 1 + 2^-9.
    assert_eq!(f32_to_f16(1.0 + 2f32.powi(-11)), 0x3C00);
    assert_eq!(f32_to_f16(1.0 + 3.0 * 2f32.powi(-11)), 0x3C02);
    assert_eq!(f16_to_f32(0x3555), 0.33325195);
    assert_eq!(input_value(0x8, "s4"), -8.0);
    assert_eq!(input_value(0x7, "s4"), 7.0);
    assert_eq!(input_value(0xF, "u4"), 15.0);
}

fn decode(body: &str) -> Result<(), String> {
    let text = format!(
        ".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k()\n{{\n\
         .reg .b32 %r<40>;\n.reg .f32 %f<8>;\n{body}\nret;\n}}\n"
    );
    Emulator::new()
        .load_ptx("d.ptx", &text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn the_decoder_refuses_what_the_isa_does_not_define() {
    for (body, want) in [
        (
            "mma.sync.aligned.m16n8k16.row.col.s32.s4.s4.s32 {%r0,%r1,%r2,%r3}, {%r4,%r5}, {%r6}, {%r7,%r8,%r9,%r10};",
            "with .s4 inputs does not support .m16n8k16",
        ),
        (
            "mma.sync.aligned.m16n8k32.row.col.s32.s4.s8.s32 {%r0,%r1,%r2,%r3}, {%r4,%r5}, {%r6}, {%r7,%r8,%r9,%r10};",
            "with .s4 A and .s8 B is not supported",
        ),
        (
            "mma.sync.aligned.m16n8k32.row.col.satfinite.f32.e4m3.e4m3.f32 {%f0,%f1,%f2,%f3}, {%r4,%r5,%r6,%r7}, {%r8,%r9}, {%f4,%f5,%f6,%f7};",
            "does not take .satfinite",
        ),
        (
            "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f16 {%f0,%f1,%f2,%f3}, {%r4,%r5,%r6,%r7}, {%r8,%r9}, {%r10,%r11};",
            "with .e4m3 inputs does not support .f32 D with .f16 C",
        ),
        (
            "mma.sync.aligned.m16n8k64.row.col.s32.e4m3.e4m3.s32 {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, {%r8,%r9}, {%r10,%r11,%r12,%r13};",
            "with .e4m3 inputs does not support .m16n8k64",
        ),
        (
            "mma.sync.aligned.m16n8k64.row.col.s32.u4.u4.s32 {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6}, {%r8,%r9}, {%r10,%r11,%r12,%r13};",
            "vector",
        ),
    ] {
        let e = decode(body).expect_err(body);
        assert!(e.contains(want), "{body}: {e}");
    }
}
