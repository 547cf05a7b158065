//! Sparse `mma.sp` / `mma.sp::ordered_metadata` through PTX kernels: each lane loads its
//! compressed A, B, C and metadata registers, multiplies and stores D, checked bit for bit
//! against a CPU product of the dense A; fragments and metadata are placed from the PTX
//! ISA's sparse tables, written here independently of the emulator. Also the decoder's
//! refusals and target rules at their line, and undefined metadata stopping the kernel.

use emu::{Emulator, LaunchConfig};

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) % n
    }
}

/// One form: PTX type name, K, accumulator ("f32", "f16", "s32").
#[derive(Clone, Copy)]
struct Form {
    ty: &'static str,
    k: u32,
    acc: &'static str,
    ordered: bool,
    sel: u32,
    satfinite: bool,
}

fn elem_bits(ty: &str) -> u32 {
    match ty {
        "f16" | "bf16" => 16,
        "tf32" | "f32" | "s32" => 32,
        "s4" | "u4" => 4,
        _ => 8,
    }
}

fn chunk_width(ty: &str) -> u32 {
    match ty {
        "tf32" => 2,
        "s4" | "u4" => 8,
        _ => 4,
    }
}

/// (raw bits, value) of a random input element.
fn input(rng: &mut Rng, ty: &str) -> (u32, f64) {
    let s = rng.below(15) as i32 - 7;
    match ty {
        "f16" => {
            let x = s as f32 * 0.5;
            (u32::from(f16_bits(x)), f64::from(x))
        }
        "bf16" => {
            let x = s as f32 * 0.5;
            (x.to_bits() >> 16, f64::from(x))
        }
        "tf32" => {
            let x = s as f32 * 0.25;
            (x.to_bits() | (rng.below(0x2000) as u32), f64::from(x))
        }
        "s8" => ((s * 17) as u8 as u32, f64::from(s * 17)),
        "u8" => ((s + 7) as u32 * 17, f64::from((s + 7) * 17)),
        "s4" => ((s as u32) & 0xF, f64::from(s)),
        "u4" => ((s + 7) as u32, f64::from(s + 7)),
        // OCP FP8: 1.0, 2.0, 0.5, -1.0, 3.0.
        "e4m3" => [
            (0x38, 1.0),
            (0x40, 2.0),
            (0x30, 0.5),
            (0xB8, -1.0),
            (0x44, 3.0),
        ][rng.below(5) as usize],
        "e5m2" => [
            (0x3C, 1.0),
            (0x40, 2.0),
            (0x38, 0.5),
            (0xBC, -1.0),
            (0x42, 3.0),
        ][rng.below(5) as usize],
        _ => unreachable!(),
    }
}

/// f16 bits of a value exactly representable in f16 (small multiples of 0.5).
fn f16_bits(x: f32) -> u16 {
    if x == 0.0 {
        return 0;
    }
    let (sign, a) = (u16::from(x < 0.0) << 15, x.abs());
    let e = a.log2().floor() as i32;
    let mant = ((a / 2f32.powi(e) - 1.0) * 1024.0) as u16;
    sign | (((e + 15) as u16) << 10) | mant
}

fn f16_value(b: u16) -> f32 {
    let e = i32::from((b >> 10) & 0x1F);
    let m = f32::from(b & 0x3FF);
    let v = if e == 0 {
        m * 2f32.powi(-24)
    } else {
        (1.0 + m / 1024.0) * 2f32.powi(e - 15)
    };
    if b & 0x8000 != 0 {
        -v
    } else {
        v
    }
}

/// The ISA's sparse A layout: row and stored-column of element `i` of lane (g, t).
fn isa_a(ty: &str, k: u32, g: u32, t: u32, i: u32) -> (u32, u32) {
    match (ty, k) {
        ("f16" | "bf16", 16) => (g + 8 * (i / 2), 2 * t + i % 2),
        ("f16" | "bf16", 32) => (g + 8 * ((i / 2) % 2), 2 * t + i % 2 + 8 * (i / 4)),
        ("tf32", 8) => (g + 8 * i, t),
        ("tf32", 16) => (g + 8 * (i % 2), t + 4 * (i / 2)),
        ("s8" | "u8", 32) => (g + 8 * (i / 4), 4 * t + i % 4),
        (_, 64) if elem_bits(ty) == 8 => (g + 8 * ((i / 4) % 2), 4 * t + i % 4 + 16 * (i / 8)),
        ("s4" | "u4", 64) => (g + 8 * (i / 8), 8 * t + i % 8),
        ("s4" | "u4", 128) => (g + 8 * ((i / 8) % 2), 8 * t + i % 8 + 32 * (i / 16)),
        _ => unreachable!(),
    }
}

fn isa_b(ty: &str, t: u32, i: u32) -> u32 {
    match elem_bits(ty) {
        16 => 2 * t + i % 2 + 8 * (i / 2),
        32 => t + 4 * i,
        8 => 4 * t + i % 4 + 16 * (i / 4),
        _ => 8 * t + i % 8 + 32 * (i / 8),
    }
}

fn pack(words: &mut [u32], bits: u32, i: u32, v: u32) {
    let per = 32 / bits;
    let mask = if bits == 32 {
        u32::MAX
    } else {
        (1 << bits) - 1
    };
    words[(i / per) as usize] |= (v & mask) << (bits * (i % per));
}

/// The kernel text of `f` with `na`, `nb`, `nc` registers.
fn kernel(f: Form, na: u32, nb: u32, nc: u32) -> String {
    let acc_reg = if f.acc == "f32" { "f32" } else { "b32" };
    let list = |name: &str, n: u32| {
        let r: Vec<String> = (0..n).map(|i| format!("%{name}{i}")).collect();
        format!("{{{}}}", r.join(", "))
    };
    let moves = |name: &str, n: u32, base: &str, load: bool, ty: &str| -> String {
        (0..n)
            .map(|i| {
                let access = if load {
                    format!("ld.global.{ty} %{name}{i}, [%rd9+{}];", 4 * i)
                } else {
                    format!("st.global.{ty} [%rd9+{}], %{name}{i};", 4 * i)
                };
                format!(
                    "mul.wide.u32 %rd9, %t, {};\nadd.s64 %rd9, %rd9, {base};\n{access}\n",
                    4 * n
                )
            })
            .collect()
    };
    let sp = if f.ordered {
        "sp::ordered_metadata"
    } else {
        "sp"
    };
    let sat = if f.satfinite { ".satfinite" } else { "" };
    let target = if f.ty.starts_with('e') {
        "sm_89"
    } else {
        "sm_80"
    };
    format!(
        ".version 8.5\n.target {target}\n.address_size 64\n\
         .visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd, .param .u64 pe)\n{{\n\
         .reg .b32 %a<{na}>;\n.reg .b32 %b<{nb}>;\n.reg .{acc_reg} %c<{nc}>;\n.reg .{acc_reg} %d<{nc}>;\n\
         .reg .b64 %rd<10>;\n.reg .b32 %t;\n.reg .b32 %e0;\n\
         ld.param.u64 %rd1, [pa];\nld.param.u64 %rd2, [pb];\nld.param.u64 %rd3, [pc];\n\
         ld.param.u64 %rd4, [pd];\nld.param.u64 %rd5, [pe];\n\
         mov.u32 %t, %tid.x;\n{}{}{}{}\
         mma.{sp}.sync.aligned.m16n8k{}.row.col{sat}.{}.{}.{}.{} {}, {}, {}, {}, %e0, {};\n{}ret;\n}}\n",
        moves("a", na, "%rd1", true, "b32"),
        moves("b", nb, "%rd2", true, "b32"),
        moves("c", nc, "%rd3", true, acc_reg),
        moves("e", 1, "%rd5", true, "b32"),
        f.k,
        f.acc,
        f.ty,
        f.ty,
        f.acc,
        list("d", nc),
        list("a", na),
        list("b", nb),
        list("c", nc),
        f.sel,
        moves("d", nc, "%rd4", false, acc_reg),
    )
}

fn check(f: Form, seed: u64) {
    let (m, n, k) = (16u32, 8u32, f.k);
    let bits = elem_bits(f.ty);
    let (na, nb) = (m * k / 2 * bits / 32 / 32, k * n * bits / 32 / 32);
    let nc = if f.acc == "f16" { 2 } else { 4 };
    let mut rng = Rng(seed);
    let w = chunk_width(f.ty);
    let chunks = k / w;
    let mut nib = vec![0u32; (m * chunks) as usize];
    let mut dense = vec![0f64; (m * k) as usize];
    let mut stored = vec![Vec::new(); m as usize];
    for r in 0..m {
        for q in 0..chunks {
            let v = if f.ty == "tf32" {
                [0b0100, 0b1110][rng.below(2) as usize]
            } else {
                loop {
                    let (i0, i1) = (rng.below(4) as u32, rng.below(4) as u32);
                    if i0 != i1 && (i0 < i1 || !(f.ordered || f.ty.starts_with('e'))) {
                        break i0 | i1 << 2;
                    }
                }
            };
            nib[(r * chunks + q) as usize] = v;
            let places: Vec<u32> = if f.ty == "tf32" {
                vec![w * q + u32::from(v == 0b1110)]
            } else {
                let unit = w / 4;
                (0..2)
                    .flat_map(|s| (0..unit).map(move |u| w * q + ((v >> (2 * s)) & 3) * unit + u))
                    .collect()
            };
            for col in places {
                let (b, x) = input(&mut rng, f.ty);
                dense[(r * k + col) as usize] = x;
                stored[r as usize].push(b);
            }
        }
    }
    let bvals: Vec<(u32, f64)> = (0..k * n).map(|_| input(&mut rng, f.ty)).collect();
    let cvals: Vec<i64> = (0..m * n)
        .map(|i| {
            if f.satfinite && i % 3 == 0 {
                i64::from(i32::MAX) - 5
            } else {
                rng.below(64) as i64 - 32
            }
        })
        .collect();
    let mut mem = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    let threads = chunks / 4;
    for lane in 0..32u32 {
        let (g, t) = (lane / 4, lane % 4);
        let mut ra = vec![0u32; na as usize];
        for i in 0..32 * na / bits {
            let (r, c) = isa_a(f.ty, k, g, t, i);
            pack(&mut ra, bits, i, stored[r as usize][c as usize]);
        }
        let mut rb = vec![0u32; nb as usize];
        for i in 0..32 * nb / bits {
            let kk = isa_b(f.ty, t, i);
            pack(&mut rb, bits, i, bvals[(kk * n + g) as usize].0);
        }
        let mut rc = vec![0u32; nc as usize];
        for i in 0..4 {
            let (r, c) = (g + 8 * (i / 2), 2 * t + i % 2);
            let v = cvals[(r * n + c) as usize];
            match f.acc {
                "f32" => rc[i as usize] = (v as f32).to_bits(),
                "f16" => pack(&mut rc, 16, i, u32::from(f16_bits(v as f32))),
                _ => rc[i as usize] = v as i32 as u32,
            }
        }
        // Metadata: lane 4g + sel*threads + j: chunks 4j..4j+3 of rows g and g+8.
        let j = t.wrapping_sub(f.sel * threads);
        let meta = if j < threads {
            (0..8).fold(0u32, |acc, x| {
                let row = g + 8 * (x / 4);
                acc | nib[(row * chunks + 4 * j + x % 4) as usize] << (4 * x)
            })
        } else {
            0xFFFF_FFFF // invalid everywhere: must be ignored
        };
        mem[0].extend(ra);
        mem[1].extend(rb);
        mem[2].extend(rc);
        mem[3].push(meta);
    }
    let text = kernel(f, na, nb, nc);
    let name = format!(
        "{}.k{}.{} sel {} ordered {}",
        f.ty, f.k, f.acc, f.sel, f.ordered
    );
    let mut emu = Emulator::new();
    let module = emu
        .load_ptx("mma_sp.ptx", &text)
        .unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
    let kern = emu.kernel(module, "k").unwrap();
    let mut buffer = |words: &[u32]| {
        let p = emu
            .memory
            .alloc(4 * words.len().max(1) as u64, emu::AllocKind::Device)
            .unwrap();
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        emu.memory.write(p, &bytes).unwrap();
        p
    };
    let (pa, pb, pc, pe) = (
        buffer(&mem[0]),
        buffer(&mem[1]),
        buffer(&mem[2]),
        buffer(&mem[3]),
    );
    let pd = buffer(&vec![0u32; (32 * nc) as usize]);
    let params: Vec<u8> = [pa, pb, pc, pd, pe]
        .iter()
        .flat_map(|p| p.to_le_bytes())
        .collect();
    emu.run(kern, LaunchConfig::linear(1, 32), &params)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut saturated = 0;
    for lane in 0..32u32 {
        let (g, t) = (lane / 4, lane % 4);
        let words: Vec<u32> = (0..nc)
            .map(|i| {
                emu.memory
                    .read_uint(pd + 4 * u64::from(lane * nc + i), 4)
                    .unwrap() as u32
            })
            .collect();
        for i in 0..4u32 {
            let (r, c) = (g + 8 * (i / 2), 2 * t + i % 2);
            let cv = cvals[(r * n + c) as usize];
            let kk = 0..k;
            match f.acc {
                "s32" => {
                    let s = kk.fold(cv, |s, x| {
                        s + dense[(r * k + x) as usize] as i64
                            * bvals[(x * n + c) as usize].1 as i64
                    });
                    let want = if f.satfinite {
                        saturated += usize::from(s > i64::from(i32::MAX));
                        s.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
                    } else {
                        s as i32
                    };
                    assert_eq!(words[i as usize] as i32, want, "{name}: D[{r}][{c}]");
                }
                _ => {
                    let s = kk.fold(cv as f32, |s, x| {
                        (dense[(r * k + x) as usize] as f32)
                            .mul_add(bvals[(x * n + c) as usize].1 as f32, s)
                    });
                    let got = if f.acc == "f16" {
                        f16_value((words[(i / 2) as usize] >> (16 * (i % 2))) as u16)
                    } else {
                        f32::from_bits(words[i as usize])
                    };
                    // Values are small multiples of 1/64: exact in f32, in f16 to 2048.
                    assert_eq!(got, s, "{name}: D[{r}][{c}]");
                }
            }
        }
    }
    if f.satfinite {
        assert!(saturated > 0, "{name}: nothing saturated");
    }
}

#[test]
fn sparse_products_match_a_cpu_product_of_the_dense_a() {
    let mut seed = 11u64;
    let forms: [(&str, u32, &str); 14] = [
        ("f16", 16, "f32"),
        ("f16", 32, "f16"),
        ("f16", 32, "f32"),
        ("bf16", 16, "f32"),
        ("bf16", 32, "f32"),
        ("tf32", 8, "f32"),
        ("tf32", 16, "f32"),
        ("s8", 32, "s32"),
        ("u8", 64, "s32"),
        ("s4", 64, "s32"),
        ("u4", 128, "s32"),
        ("e4m3", 64, "f32"),
        ("e5m2", 64, "f32"),
        ("s8", 64, "s32"),
    ];
    for (ty, k, acc) in forms {
        let threads = k / chunk_width(ty) / 4;
        for sel in 0..4 / threads {
            for ordered in [false, true] {
                seed += 1;
                let satfinite = acc == "s32" && sel == 0 && ordered;
                let f = Form {
                    ty,
                    k,
                    acc,
                    ordered,
                    sel,
                    satfinite,
                };
                check(f, seed * 0x9E37_79B9);
            }
        }
    }
}

fn decode(target: &str, body: &str) -> Result<(), String> {
    let text = format!(
        ".version 8.7\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\n\
         .reg .b32 %r<40>;\n.reg .f32 %f<8>;\n{body}\nret;\n}}\n"
    );
    Emulator::new()
        .load_ptx("d.ptx", &text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

const K16: &str = "{%f0,%f1,%f2,%f3}, {%r0,%r1}, {%r2,%r3}, {%f4,%f5,%f6,%f7}, %r9";

#[test]
fn the_decoder_refuses_forms_the_isa_does_not_define_at_their_line() {
    for (body, want) in [
        (
            format!("mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {K16}, 4;"),
            "sparsity selector constant from 0 to 3",
        ),
        (
            "mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, \
             {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, {%f4,%f5,%f6,%f7}, %r9, 2;"
                .to_string(),
            "from 0 to 1",
        ),
        (
            "mma.sp.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32 {%r0,%r1,%r2,%r3}, \
             {%r4,%r5,%r6,%r7}, {%r8,%r9,%r10,%r11}, {%r12,%r13,%r14,%r15}, %r16, 1;"
                .to_string(),
            "from 0 to 0",
        ),
        (
            format!("mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {K16}, %r8;"),
            "sparsity selector constant",
        ),
        (
            format!("mma.sp.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {K16}, 0;"),
            "with .f16 inputs does not support .m16n8k8",
        ),
        (
            format!("mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {K16};"),
            "expects 6 operands",
        ),
        (
            "mma.sp.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%r0,%r1}, {%r2}, {%r3}, \
             {%r4,%r5}, %r6, 0;"
                .to_string(),
            "m8n8k4",
        ),
        (
            format!("mma.sp.sync.aligned.m16n8k16.row.col.satfinite.f32.f16.f16.f32 {K16}, 0;"),
            "does not take .satfinite",
        ),
    ] {
        let e = decode("sm_90", &body).expect_err(&body);
        assert!(e.contains(want), "{body}: {e}");
        assert!(e.contains("d.ptx:8:"), "{body}: {e}");
    }
}

#[test]
fn each_form_needs_the_target_the_isa_gives_it() {
    let f16 =
        format!("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {K16}, 3;");
    let fp8 = "mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f32.e4m3.e5m2.f32 \
               {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, {%f4,%f5,%f6,%f7}, %r9, 0;";
    for (inst, ok, below) in [(f16.as_str(), "sm_80", "sm_75"), (fp8, "sm_89", "sm_86")] {
        decode(ok, inst).unwrap_or_else(|e| panic!("{inst} on {ok}: {e}"));
        let e = decode(below, inst).unwrap_err();
        assert!(e.contains("d.ptx:8:"), "{e}");
        assert!(
            e.contains(&format!(
                "requires .target {ok} or higher; the module's .target is {below}"
            )),
            "{inst}: {e}"
        );
    }
}

#[test]
fn undefined_metadata_stops_the_kernel_at_its_line_and_lane() {
    // Every lane's metadata 0x44444444 except lane 5's 0x44444f44 (equal indices).
    let text = ".version 8.5\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\
                .reg .b32 %r<12>;\n.reg .f32 %f<8>;\n.reg .pred %p;\n\
                mov.u32 %r8, %laneid;\nsetp.eq.u32 %p, %r8, 5;\n\
                selp.b32 %r9, 0x44444f44, 0x44444444, %p;\n\
                mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, \
                {%r0,%r1}, {%r2,%r3}, {%f4,%f5,%f6,%f7}, %r9, 1;\nret;\n}\n";
    let mut emu = Emulator::new();
    let module = emu.load_ptx("bad.ptx", text).unwrap();
    let k = emu.kernel(module, "k").unwrap();
    let e = emu
        .run(k, LaunchConfig::linear(1, 32), &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("mma.sp:") && e.contains("0b1111"), "{e}");
    assert!(e.contains("row 1, chunk 2") && e.contains("lane 5"), "{e}");
    assert!(e.contains("bad.ptx:12") || e.contains("line 12"), "{e}");
}
