//! `wmma` beyond f16/bf16: tf32 m16n16k8, f64 m8n8k4 (with `.rnd`), s8/u8 m16n16k16,
//! m32n8k16 and m8n32k16, s4/u4 m8n8k32 and b1 m8n8k128 (`.xor.popc`/`.and.popc`), with
//! `.satfinite`. wmma fragments are opaque (PTX ISA "wmma": the mapping of elements to
//! threads is unspecified), so each kernel only loads A, B and C from memory with
//! `wmma.load` (every layout the ISA allows, strides wider than the tile), multiplies with
//! `wmma.mma` and stores D with `wmma.store`, as a CUDA program does; D in memory is checked
//! bit for bit against a CPU product: tf32 inputs with their 13 low mantissa bits ignored
//! and an f32 FMA chain, f64 an FMA chain, integers exact (wrapping, or saturating with
//! `.satfinite`). Then the decoder's refusals and targets, each at its line.

use emu::{Emulator, LaunchConfig};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 16) as u32
    }
}

fn dims(shape: &str) -> (u32, u32, u32) {
    match shape {
        "m16n16k8" => (16, 16, 8),
        "m8n8k4" => (8, 8, 4),
        "m16n16k16" => (16, 16, 16),
        "m32n8k16" => (32, 8, 16),
        "m8n32k16" => (8, 32, 16),
        "m8n8k32" => (8, 8, 32),
        "m8n8k128" => (8, 8, 128),
        _ => unreachable!("{shape}"),
    }
}

fn bits(ty: &str) -> u32 {
    match ty {
        "b1" => 1,
        "s4" | "u4" => 4,
        "s8" | "u8" => 8,
        "f16" | "bf16" => 16,
        "f64" => 64,
        _ => 32,
    }
}

/// One case: the shape, A/B's type, C/D's type, the layouts of A, B, C and D in memory,
/// and the instruction's extra modifier (`.satfinite`, a rounding, or the b1 operation).
struct Case<'a> {
    shape: &'a str,
    ab: &'a str,
    cd: &'a str,
    layouts: [&'a str; 4],
    extra: &'a str,
}

/// Writes `v`'s low `b` bits at bit `bit` of `buf` (little-endian, as the GPU stores).
fn put(buf: &mut [u8], bit: u64, b: u32, v: u64) {
    for i in 0..u64::from(b) {
        let at = bit + i;
        let byte = &mut buf[(at / 8) as usize];
        *byte = (*byte & !(1 << (at % 8))) | ((((v >> i) & 1) as u8) << (at % 8));
    }
}

fn get(buf: &[u8], bit: u64, b: u32) -> u64 {
    (0..u64::from(b)).fold(0, |v, i| {
        let at = bit + i;
        v | (u64::from((buf[(at / 8) as usize] >> (at % 8)) & 1) << i)
    })
}

/// A matrix of `rows` x `cols` with leading dimension `ld` (elements) in `layout`.
fn offset(layout: &str, ld: u32, r: u32, c: u32) -> u64 {
    u64::from(if layout == "row" {
        r * ld + c
    } else {
        c * ld + r
    })
}

/// Registers per thread of a fragment of `elements` matrix elements of type `ty` (`ab`:
/// an A or B fragment).
fn regs(elements: u32, ty: &str, ab: bool) -> u32 {
    // f16 A and B fragments are always 8 registers (mma.h: 16 halves), repeated when the
    // tile has fewer distinct elements.
    if ty == "f16" && ab {
        return 8;
    }
    let per_lane = elements / 32;
    if bits(ty) == 64 {
        per_lane
    } else {
        (per_lane * bits(ty)).div_ceil(32)
    }
}

/// The value (as the tensor core reads it) of raw element bits of `ty`.
fn value(raw: u64, ty: &str) -> f64 {
    match ty {
        "tf32" => f64::from(f32::from_bits(raw as u32 & 0xFFFF_E000)),
        "f32" => f64::from(f32::from_bits(raw as u32)),
        "f64" => f64::from_bits(raw),
        "s8" => f64::from(raw as u8 as i8),
        "u8" => f64::from(raw as u8),
        "s4" => f64::from(((raw as u8) << 4) as i8 >> 4),
        "u4" | "b1" => raw as f64,
        "s32" => f64::from(raw as u32 as i32),
        "bf16" => f64::from(f32::from_bits((raw as u32) << 16)),
        "f16" => half(raw as u16),
        _ => unreachable!(),
    }
}

/// An IEEE binary16 value.
fn half(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let (e, f) = (i32::from((h >> 10) & 0x1F), f64::from(h & 0x3FF));
    sign * match e {
        0 => f * 2f64.powi(-24),
        31 => f64::INFINITY,
        _ => (1.0 + f / 1024.0) * 2f64.powi(e - 15),
    }
}

/// The binary16 encoding of a small integer (|x| < 2048: exact).
fn half_of_int(x: i32) -> u64 {
    if x == 0 {
        return 0;
    }
    let m = x.unsigned_abs();
    let e = 31 - m.leading_zeros();
    let frac = (m << (10 - e)) & 0x3FF;
    u64::from(u32::from(x < 0) << 15 | (e + 15) << 10 | frac)
}

fn raw_element(rng: &mut Rng, ty: &str, i: u32) -> u64 {
    match ty {
        // Full mantissas: the 13 low bits the tensor core ignores are random.
        "tf32" | "f32" => {
            let x = (rng.next() % 20001) as f32 / 997.0 - 10.0 + (rng.next() % 8192) as f32 * 1e-9;
            u64::from(x.to_bits())
        }
        "f64" => ((f64::from(rng.next() % 20001) - 10000.0) / 977.0).to_bits(),
        // Accumulators near the s32 limits, so that wrapping and saturation show.
        "s32" => u64::from(match i % 3 {
            0 => i32::MAX - (rng.next() % 40000) as i32,
            1 => i32::MIN + (rng.next() % 40000) as i32,
            _ => (rng.next() % 2001) as i32 - 1000,
        } as u32),
        // 16-bit floats: small integers (C below 1000), so every sum is exact in f32 and
        // in an f16 D.
        "f16" => {
            half_of_int((rng.next() % 17) as i32 - 8 + if i > 0 { (i % 1000) as i32 } else { 0 })
        }
        "bf16" => u64::from(((rng.next() % 17) as f32 - 8.0).to_bits() >> 16),
        t => u64::from(rng.next()) & ((1 << bits(t)) - 1),
    }
}

fn reg_decl(ty: &str, name: &str, n: u32) -> String {
    let t = match ty {
        "f32" => ".f32",
        "f64" => ".f64",
        "f16" => ".b32",
        _ => ".b32",
    };
    format!(".reg {t} %{name}<{}>;\n", n.max(1))
}

fn list(name: &str, n: u32) -> String {
    let r: Vec<String> = (0..n).map(|i| format!("%{name}{i}")).collect();
    format!("{{{}}}", r.join(", "))
}

/// Runs `case` through a kernel and checks D bit for bit; returns how many D elements
/// saturated or wrapped (integers).
fn check(case: &Case, seed: u64) -> usize {
    let (m, n, k) = dims(case.shape);
    let [la, lb, lc, ld] = case.layouts;
    let mut rng = Rng(seed);
    // Leading dimensions wider than the tile (sub-byte: whole 32-bit words more).
    let pad = match bits(case.ab) {
        1 => 128,
        4 => 32,
        _ => 4,
    };
    let lda = if la == "row" { k } else { m } + pad;
    let ldb = if lb == "row" { n } else { k } + pad;
    let ldc = if lc == "row" { n } else { m } + 4;
    let ldd = if ld == "row" { n } else { m } + 4;
    let bytes =
        |ld: u32, other: u32, ty: &str| (u64::from(ld * other * bits(ty)).div_ceil(8) + 8) as usize;
    let a_other = if la == "row" { m } else { k };
    let b_other = if lb == "row" { k } else { n };
    let mut abuf = vec![0u8; bytes(lda, a_other, case.ab)];
    let mut bbuf = vec![0u8; bytes(ldb, b_other, case.ab)];
    let mut cbuf = vec![0u8; bytes(ldc, if lc == "row" { m } else { n }, case.cd)];
    let (ab, cd) = (bits(case.ab), bits(case.cd));
    let mut am = vec![0u64; (m * k) as usize];
    let mut bm = vec![0u64; (k * n) as usize];
    let mut cm = vec![0u64; (m * n) as usize];
    for i in 0..m {
        for kk in 0..k {
            let v = raw_element(&mut rng, case.ab, 0);
            am[(i * k + kk) as usize] = v;
            put(&mut abuf, offset(la, lda, i, kk) * u64::from(ab), ab, v);
        }
    }
    for kk in 0..k {
        for j in 0..n {
            let v = raw_element(&mut rng, case.ab, 0);
            bm[(kk * n + j) as usize] = v;
            put(&mut bbuf, offset(lb, ldb, kk, j) * u64::from(ab), ab, v);
        }
    }
    for i in 0..m {
        for j in 0..n {
            let v = raw_element(&mut rng, case.cd, i * n + j);
            cm[(i * n + j) as usize] = v;
            put(&mut cbuf, offset(lc, ldc, i, j) * u64::from(cd), cd, v);
        }
    }
    // The CPU product, element by element.
    let satfinite = case.extra == ".satfinite";
    let mut special = 0;
    let want = |i: u32, j: u32, special: &mut usize| -> u64 {
        let a = |kk: u32| value(am[(i * k + kk) as usize], case.ab);
        let b = |kk: u32| value(bm[(kk * n + j) as usize], case.ab);
        let c = cm[(i * n + j) as usize];
        match case.cd {
            "f32" => {
                let acc = (0..k).fold(f32::from_bits(c as u32), |acc, kk| {
                    (a(kk) as f32).mul_add(b(kk) as f32, acc)
                });
                u64::from(acc.to_bits())
            }
            "f64" => (0..k)
                .fold(f64::from_bits(c), |acc, kk| a(kk).mul_add(b(kk), acc))
                .to_bits(),
            // Integer-valued, so the f32 chain is exact and the f16 D holds it exactly.
            "f16" => {
                let sum = (0..k).fold(value(c, "f16"), |acc, kk| acc + a(kk) * b(kk));
                half_of_int(sum as i32)
            }
            _ => {
                let sum: i64 = (0..k)
                    .map(|kk| {
                        let (x, y) = (a(kk) as i64, b(kk) as i64);
                        match case.extra {
                            ".and.popc" => x & y,
                            ".xor.popc" => x ^ y,
                            _ => x * y,
                        }
                    })
                    .sum::<i64>()
                    + i64::from(c as u32 as i32);
                let d = if satfinite {
                    sum.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
                } else {
                    sum as i32
                };
                *special += usize::from(i64::from(d) != sum);
                u64::from(d as u32)
            }
        }
    };
    let (na, nb, nc) = (
        regs(m * k, case.ab, true),
        regs(k * n, case.ab, true),
        regs(m * n, case.cd, false),
    );
    let (bit_op, rest) = if case.extra.ends_with("popc") {
        (case.extra, "")
    } else {
        ("", case.extra)
    };
    // `.rnd` goes after the shape, `.satfinite` after the types (the ISA's orders).
    let (rnd, satf) = if rest == ".satfinite" {
        ("", rest)
    } else {
        (rest, "")
    };
    let shape = case.shape;
    let (at, ct) = (case.ab, case.cd);
    let text = format!(
        ".version 7.8\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{{\n\
         {}{}{}{}.reg .b64 %rd<5>;\n\
         ld.param.u64 %rd1, [pa];\nld.param.u64 %rd2, [pb];\nld.param.u64 %rd3, [pc];\n\
         ld.param.u64 %rd4, [pd];\n\
         wmma.load.a.sync.aligned.{la}.{shape}.global.{at} {}, [%rd1], {lda};\n\
         wmma.load.b.sync.aligned.{lb}.{shape}.global.{at} {}, [%rd2], {ldb};\n\
         wmma.load.c.sync.aligned.{lc}.{shape}.global.{ct} {}, [%rd3], {ldc};\n\
         wmma.mma{bit_op}.sync.aligned.{la}.{lb}.{shape}{rnd}.{ct}.{at}.{at}.{ct}{satf} {}, {}, {}, {};\n\
         wmma.store.d.sync.aligned.{ld}.{shape}.global.{ct} [%rd4], {}, {ldd};\n\
         ret;\n}}\n",
        reg_decl(at, "a", na),
        reg_decl(at, "b", nb),
        reg_decl(ct, "c", nc),
        reg_decl(ct, "d", nc),
        list("a", na),
        list("b", nb),
        list("c", nc),
        list("d", nc),
        list("a", na),
        list("b", nb),
        list("c", nc),
        list("d", nc),
    );
    let name = format!("{shape} {at} {ct} {la}.{lb} C {lc} D {ld} {}", case.extra);
    let mut emu = Emulator::new();
    let module = emu
        .load_ptx("wmma_types.ptx", &text)
        .unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
    let kernel = emu.kernel(module, "k").unwrap();
    let mut buffer = |b: &[u8]| {
        let p = emu
            .memory
            .alloc(b.len() as u64, emu::AllocKind::Device)
            .unwrap();
        emu.memory.write(p, b).unwrap();
        p
    };
    let dlen = bytes(ldd, if ld == "row" { m } else { n }, ct);
    let (pa, pb, pc, pd) = (
        buffer(&abuf),
        buffer(&bbuf),
        buffer(&cbuf),
        buffer(&vec![0u8; dlen]),
    );
    let params: Vec<u8> = [pa, pb, pc, pd]
        .iter()
        .flat_map(|p| p.to_le_bytes())
        .collect();
    emu.run(kernel, LaunchConfig::linear(1, 32), &params)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut dbuf = vec![0u8; dlen];
    emu.memory.read(pd, &mut dbuf).unwrap();
    for i in 0..m {
        for j in 0..n {
            let got = get(&dbuf, offset(ld, ldd, i, j) * u64::from(cd), cd);
            let w = want(i, j, &mut special);
            assert_eq!(got, w, "{name}: D[{i}][{j}]");
        }
    }
    special
}

#[test]
fn tf32_products_through_every_layout_match_an_f32_fma_chain() {
    let mut seed = 11;
    for la in ["row", "col"] {
        for lb in ["row", "col"] {
            for (lc, ld) in [("row", "col"), ("col", "row")] {
                seed += 1;
                check(
                    &Case {
                        shape: "m16n16k8",
                        ab: "tf32",
                        cd: "f32",
                        layouts: [la, lb, lc, ld],
                        extra: "",
                    },
                    seed * 0x9E37_79B9,
                );
            }
        }
    }
}

#[test]
fn f64_products_through_every_layout_match_an_fma_chain() {
    let mut seed = 21;
    for la in ["row", "col"] {
        for lb in ["row", "col"] {
            for extra in ["", ".rn"] {
                seed += 1;
                check(
                    &Case {
                        shape: "m8n8k4",
                        ab: "f64",
                        cd: "f64",
                        layouts: [la, lb, "row", "col"],
                        extra,
                    },
                    seed * 0x9E37_79B9,
                );
            }
        }
    }
}

#[test]
fn eight_bit_products_of_every_shape_are_exact_and_saturate_with_satfinite() {
    let mut seed = 31;
    for shape in ["m16n16k16", "m32n8k16", "m8n32k16"] {
        for ab in ["s8", "u8"] {
            for (la, lb) in [
                ("row", "col"),
                ("col", "row"),
                ("row", "row"),
                ("col", "col"),
            ] {
                for extra in ["", ".satfinite"] {
                    seed += 1;
                    let special = check(
                        &Case {
                            shape,
                            ab,
                            cd: "s32",
                            layouts: [la, lb, "col", "row"],
                            extra,
                        },
                        seed * 0x9E37_79B9,
                    );
                    // Accumulators start near the limits: some sums leave the s32 range.
                    assert!(special > 0, "{shape} {ab} {la}.{lb} {extra}: none wrapped");
                }
            }
        }
    }
}

#[test]
fn sixteen_bit_products_of_the_tall_and_wide_shapes_match_a_cpu_product() {
    let mut seed = 51;
    for shape in ["m32n8k16", "m8n32k16", "m16n16k16"] {
        for (ab, cd) in [("f16", "f32"), ("f16", "f16"), ("bf16", "f32")] {
            for (la, lb) in [("row", "col"), ("col", "row")] {
                seed += 1;
                check(
                    &Case {
                        shape,
                        ab,
                        cd,
                        layouts: [la, lb, "row", "col"],
                        extra: "",
                    },
                    seed * 0x9E37_79B9,
                );
            }
        }
    }
}

#[test]
fn sub_byte_products_are_exact() {
    let mut seed = 41;
    for (ab, extras) in [
        ("s4", ["", ".satfinite"]),
        ("u4", ["", ".satfinite"]),
        ("b1", [".xor.popc", ".and.popc"]),
    ] {
        for extra in extras {
            for (lc, ld) in [("row", "row"), ("col", "col")] {
                seed += 1;
                check(
                    &Case {
                        shape: if ab == "b1" { "m8n8k128" } else { "m8n8k32" },
                        ab,
                        cd: "s32",
                        layouts: ["row", "col", lc, ld],
                        extra,
                    },
                    seed * 0x9E37_79B9,
                );
            }
        }
    }
}

/// Runs one f64 m8n8k4 `wmma.mma` with every element of A 2^-60 · `sign` and of B and C 1
/// (whatever the layout, every lane holds such elements): each element of D is four FMAs
/// of ±2^-60 onto 1, which each rounding gives differently.
fn f64_rounded(rnd: &str, sign: f64) -> f64 {
    let text = format!(
        ".version 7.8\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 pd)\n{{\n\
         .reg .f64 %a<1>;\n.reg .f64 %b<1>;\n.reg .f64 %c<2>;\n.reg .f64 %d<2>;\n\
         .reg .b64 %rd<2>;\n\
         mov.f64 %a0, 0d{:016X};\nmov.f64 %c0, 0d3FF0000000000000;\nmov.f64 %c1, %c0;\n\
         mov.f64 %b0, 0d3FF0000000000000;\n\
         wmma.mma.sync.aligned.row.col.m8n8k4{rnd}.f64.f64.f64.f64 {{%d0, %d1}}, {{%a0}}, {{%b0}}, {{%c0, %c1}};\n\
         ld.param.u64 %rd1, [pd];\n\
         wmma.store.d.sync.aligned.row.m8n8k4.global.f64 [%rd1], {{%d0, %d1}}, 8;\n\
         ret;\n}}\n",
        (sign * 2f64.powi(-60)).to_bits(),
    );
    let mut emu = Emulator::new();
    let module = emu
        .load_ptx("rnd.ptx", &text)
        .unwrap_or_else(|e| panic!("{rnd}: {e}\n{text}"));
    let kernel = emu.kernel(module, "k").unwrap();
    let pd = emu.memory.alloc(512, emu::AllocKind::Device).unwrap();
    emu.run(kernel, LaunchConfig::linear(1, 32), &pd.to_le_bytes())
        .unwrap_or_else(|e| panic!("{rnd}: {e}"));
    let d = f64::from_bits(emu.memory.read_uint(pd, 8).unwrap());
    // Every element of D is the same: check a second one.
    let d2 = f64::from_bits(emu.memory.read_uint(pd + 8 * 37, 8).unwrap());
    assert_eq!(d.to_bits(), d2.to_bits(), "{rnd}");
    d
}

#[test]
fn f64_rounding_modifiers_round_each_fma_of_the_chain() {
    // D = 1 + 4 · 2^-60 (four FMAs of 2^-60 each, every one rounded): .rn, .rz and .rm
    // stay at 1; .rp steps up once per FMA (1 + 4 · 2^-52).
    let up = 1.0 + 4.0 * f64::EPSILON;
    for (rnd, want) in [
        ("", 1.0),
        (".rn", 1.0),
        (".rz", 1.0),
        (".rm", 1.0),
        (".rp", up),
    ] {
        assert_eq!(f64_rounded(rnd, 1.0), want, "{rnd} +");
    }
    // D = 1 - 4 · 2^-60: .rm and .rz step down once per FMA (below 1 the spacing is
    // 2^-53); .rn and .rp stay at 1.
    let down = 1.0 - 4.0 * f64::EPSILON / 2.0;
    for (rnd, want) in [
        ("", 1.0),
        (".rn", 1.0),
        (".rz", down),
        (".rm", down),
        (".rp", 1.0),
    ] {
        assert_eq!(f64_rounded(rnd, -1.0), want, "{rnd} -");
    }
}

#[test]
fn tf32_inputs_ignore_their_13_low_mantissa_bits() {
    // A = 1 + 2^-11 (below tf32's 10 mantissa bits: read as 1), B = 1, C = 0: every D
    // element is 8 (k = 8), not 8 + 8 · 2^-11.
    let a = (1.0f32 + 2f32.powi(-11)).to_bits();
    let text = format!(
        ".version 7.8\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 pd)\n{{\n\
         .reg .b32 %a<4>;\n.reg .b32 %b<4>;\n.reg .f32 %c<8>;\n.reg .f32 %d<8>;\n.reg .b64 %rd<2>;\n\
         mov.b32 %a0, {a};\nmov.b32 %a1, {a};\nmov.b32 %a2, {a};\nmov.b32 %a3, {a};\n\
         mov.b32 %b0, 0x3F800000;\nmov.b32 %b1, %b0;\nmov.b32 %b2, %b0;\nmov.b32 %b3, %b0;\n\
         mov.f32 %c0, 0f00000000;\nmov.f32 %c1, %c0;\nmov.f32 %c2, %c0;\nmov.f32 %c3, %c0;\n\
         mov.f32 %c4, %c0;\nmov.f32 %c5, %c0;\nmov.f32 %c6, %c0;\nmov.f32 %c7, %c0;\n\
         wmma.mma.sync.aligned.row.row.m16n16k8.f32.tf32.tf32.f32 {}, {{%a0, %a1, %a2, %a3}}, \
         {{%b0, %b1, %b2, %b3}}, {};\n\
         ld.param.u64 %rd1, [pd];\n\
         wmma.store.d.sync.aligned.row.m16n16k8.global.f32 [%rd1], {}, 16;\n\
         ret;\n}}\n",
        list("d", 8),
        list("c", 8),
        list("d", 8),
    );
    let mut emu = Emulator::new();
    let module = emu
        .load_ptx("tf32.ptx", &text)
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    let kernel = emu.kernel(module, "k").unwrap();
    let pd = emu.memory.alloc(1024, emu::AllocKind::Device).unwrap();
    emu.run(kernel, LaunchConfig::linear(1, 32), &pd.to_le_bytes())
        .unwrap();
    for e in 0..256u64 {
        let d = f32::from_bits(emu.memory.read_uint(pd + 4 * e, 4).unwrap() as u32);
        assert_eq!(d, 8.0, "D element {e}");
    }
}

fn decode(target: &str, body: &str) -> Result<(), String> {
    let text = format!(
        ".version 7.8\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\n\
         .reg .b32 %r<40>;\n.reg .f32 %f<40>;\n.reg .f64 %fd<8>;\n.reg .b64 %rd<4>;\n{body}\nret;\n}}\n"
    );
    Emulator::new()
        .load_ptx("d.ptx", &text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

const TF32: &str = "{%f0,%f1,%f2,%f3,%f4,%f5,%f6,%f7}, {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, \
                    {%f8,%f9,%f10,%f11,%f12,%f13,%f14,%f15};";
const F64: &str = "{%fd0,%fd1}, {%fd2}, {%fd3}, {%fd4,%fd5};";
const SUB: &str = "{%r0,%r1}, {%r2}, {%r3}, {%r4,%r5};";
const I8: &str = "{%r0,%r1,%r2,%r3,%r4,%r5,%r6,%r7}, {%r8,%r9}, {%r10,%r11}, \
                  {%r12,%r13,%r14,%r15,%r16,%r17,%r18,%r19};";

#[test]
fn the_decoder_refuses_what_the_isa_does_not_define_at_its_line() {
    for (body, want) in [
        (
            format!("wmma.mma.sync.aligned.row.col.m16n16k8.f16.tf32.tf32.f32 {TF32}"),
            "does not support .f16 D",
        ),
        (
            format!("wmma.mma.sync.aligned.row.col.m16n16k16.f32.tf32.tf32.f32 {TF32}"),
            "with .tf32 inputs does not support .m16n16k16",
        ),
        (
            format!("wmma.mma.sync.aligned.row.col.m16n16k8.rz.f32.tf32.tf32.f32 {TF32}"),
            "does not take .rz",
        ),
        (
            format!("wmma.mma.sync.aligned.row.col.m16n16k8.f32.tf32.tf32.f32.satfinite {TF32}"),
            "does not take .satfinite",
        ),
        (
            format!("wmma.mma.sync.aligned.row.col.m8n8k4.rna.f64.f64.f64.f64 {F64}"),
            "does not take .rna",
        ),
        (
            format!("wmma.mma.sync.aligned.col.col.m8n8k32.s32.s4.s4.s32 {SUB}"),
            "with .s4 inputs needs .row.col",
        ),
        (
            format!("wmma.mma.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {SUB}"),
            "needs .and.popc or .xor.popc",
        ),
        (
            format!(
                "wmma.mma.xor.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32.satfinite {SUB}"
            ),
            "does not take .satfinite",
        ),
        (
            format!("wmma.mma.sync.aligned.row.col.m16n16k16.s32.s8.u8.s32 {I8}"),
            "with .s8 A and .u8 B is not supported",
        ),
        (
            format!("wmma.mma.sync.aligned.row.col.m16n16k16.s32.s4.s4.s32 {I8}"),
            "with .s4 inputs does not support .m16n16k16",
        ),
        (
            "wmma.load.a.sync.aligned.col.m8n8k32.global.s4 {%r0}, [%rd1], 64;".to_string(),
            "'wmma.load.a' of .s4 needs .row",
        ),
        (
            "wmma.load.b.sync.aligned.row.m8n8k128.global.b1 {%r0}, [%rd1], 128;".to_string(),
            "'wmma.load.b' of .b1 needs .col",
        ),
        (
            "wmma.load.a.sync.aligned.row.m16n16k8.f32 {%r0,%r1,%r2,%r3}, [%rd1], 8;".to_string(),
            "type .f32 is not supported by 'wmma.load.m16n16k8' (supported: .tf32)",
        ),
        (
            "wmma.store.d.sync.aligned.row.m8n8k128.global.b1 [%rd1], {%r0,%r1}, 8;".to_string(),
            "type .b1 is not supported by 'wmma.store.m8n8k128' (supported: .s32)",
        ),
        (
            "wmma.load.c.sync.aligned.row.m8n8k4.f32 {%f0,%f1}, [%rd1], 8;".to_string(),
            "(supported: .f64)",
        ),
        (
            "wmma.load.a.sync.aligned.row.m8n8k16.global.s8 {%r0}, [%rd1], 16;".to_string(),
            "unsupported shape",
        ),
        (
            // An m32n8k16 A is four registers.
            "wmma.load.a.sync.aligned.row.m32n8k16.global.s8 {%r0,%r1}, [%rd1], 16;".to_string(),
            "vector",
        ),
    ] {
        let e = decode("sm_90", &body).expect_err(&body);
        assert!(e.contains(want), "{body}: {e}");
        assert!(e.contains("d.ptx:10:"), "{body}: {e}");
    }
}

#[test]
fn each_form_needs_the_target_ptxas_gives_it() {
    let b1 =
        |op: &str| format!("wmma.mma.{op}.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {SUB}");
    for (inst, ok, below) in [
        (format!("wmma.mma.sync.aligned.row.col.m16n16k8.f32.tf32.tf32.f32 {TF32}"), "sm_80", "sm_75"),
        (format!("wmma.mma.sync.aligned.row.col.m8n8k4.rz.f64.f64.f64.f64 {F64}"), "sm_80", "sm_75"),
        (format!("wmma.mma.sync.aligned.row.col.m16n16k16.s32.u8.u8.s32.satfinite {I8}"), "sm_72", "sm_70"),
        (format!("wmma.mma.sync.aligned.row.col.m8n8k32.s32.u4.u4.s32 {SUB}"), "sm_75", "sm_72"),
        (b1("xor"), "sm_75", "sm_72"),
        (b1("and"), "sm_80", "sm_75"),
        (
            "wmma.load.a.sync.aligned.col.m16n16k8.tf32 {%r0,%r1,%r2,%r3}, [%rd1], 16;".to_string(),
            "sm_80",
            "sm_75",
        ),
        (
            "wmma.store.d.sync.aligned.col.m8n8k4.f64 [%rd1], {%fd0,%fd1}, 8;".to_string(),
            "sm_80",
            "sm_75",
        ),
        (
            "wmma.load.b.sync.aligned.col.m8n8k128.global.b1 {%r0}, [%rd1], 128;".to_string(),
            "sm_75",
            "sm_72",
        ),
        (
            "wmma.load.c.sync.aligned.row.m32n8k16.global.s32 {%r0,%r1,%r2,%r3,%r4,%r5,%r6,%r7}, [%rd1], 8;"
                .to_string(),
            "sm_72",
            "sm_70",
        ),
    ] {
        decode(ok, &inst).unwrap_or_else(|e| panic!("{inst} on {ok}: {e}"));
        let e = decode(below, &inst).unwrap_err();
        assert!(e.contains("d.ptx:10:"), "{e}");
        assert!(
            e.contains(&format!(
                "requires .target {ok} or higher; the module's .target is {below}"
            )),
            "{inst}: {e}"
        );
    }
}
