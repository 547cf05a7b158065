//! Single-bit `mma.sync` (`.s32.b1.b1.s32.{and,xor}.popc`; m8n8k128, m16n8k128,
//! m16n8k256): a kernel loads each lane's fragments, multiplies and stores D; the result is
//! checked bit for bit against a CPU product whose fragment layouts are written here from
//! the PTX ISA's tables ("Matrix Fragments for mma.m8n8k128 / .m16n8k128 / .m16n8k256"),
//! independently of the emulator's layout code; and the decoder's refusals, each at its
//! line.

use emu::{Emulator, LaunchConfig};

/// `(row, column)` of single-bit element `i` of lane `lane`'s A (`'a'`) or B (`'b'`)
/// fragment, or of s32 element `i` of its C/D (`'c'`), as the ISA tabulates them.
fn isa_coords(shape: &str, frag: char, lane: u32, i: u32) -> (u32, u32) {
    let (g, t) = (lane >> 2, lane % 4);
    match (shape, frag) {
        ("m8n8k128", 'c') => (g, 2 * t + i),
        (_, 'c') => (if i < 2 { g } else { g + 8 }, 2 * t + (i & 1)),
        ("m8n8k128", 'a') => (g, 32 * t + i),
        ("m16n8k128", 'a') => (if i < 32 { g } else { g + 8 }, 32 * t + (i & 31)),
        ("m16n8k256", 'a') => (
            if i < 32 || (64..96).contains(&i) {
                g
            } else {
                g + 8
            },
            32 * t + (i & 31) + if i < 64 { 0 } else { 128 },
        ),
        ("m8n8k128" | "m16n8k128", 'b') => (32 * t + i, g),
        ("m16n8k256", 'b') => (32 * t + (i & 31) + if i < 32 { 0 } else { 128 }, g),
        _ => panic!("no ISA layout for {shape} {frag}"),
    }
}

fn dims(shape: &str) -> (u32, u32, u32) {
    match shape {
        "m8n8k128" => (8, 8, 128),
        "m16n8k128" => (16, 8, 128),
        "m16n8k256" => (16, 8, 256),
        _ => unreachable!(),
    }
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

fn check(shape: &str, op: &str, seed: u64) {
    let (m, n, k) = dims(shape);
    let (na, nb, nc) = (m * k / 32 / 32, k * n / 32 / 32, m * n / 32);
    let mut rng = Rng(seed);
    // Bits of A (m x k) and B (k x n), a density per matrix; C near the s32 limits so
    // that wrapping shows.
    let density = (rng.next() % 7) + 1;
    let a: Vec<u32> = (0..m * k)
        .map(|_| u32::from(rng.next() % 8 < density))
        .collect();
    let b: Vec<u32> = (0..k * n)
        .map(|_| u32::from(rng.next() % 8 >= density))
        .collect();
    let c: Vec<u32> = (0..m * n)
        .map(|i| if i % 3 == 0 { 0x7FFF_FFF0 } else { rng.next() })
        .collect();
    let mut mem = [Vec::new(), Vec::new(), Vec::new()];
    for lane in 0..32 {
        let mut ra = vec![0u32; na as usize];
        for i in 0..32 * na {
            let (r, col) = isa_coords(shape, 'a', lane, i);
            ra[(i / 32) as usize] |= a[(r * k + col) as usize] << (i % 32);
        }
        let mut rb = vec![0u32; nb as usize];
        for i in 0..32 * nb {
            let (r, col) = isa_coords(shape, 'b', lane, i);
            rb[(i / 32) as usize] |= b[(r * n + col) as usize] << (i % 32);
        }
        mem[0].extend(ra);
        mem[1].extend(rb);
        mem[2].extend((0..nc).map(|i| {
            let (r, col) = isa_coords(shape, 'c', lane, i);
            c[(r * n + col) as usize]
        }));
    }
    let want = |i: u32, j: u32| -> u32 {
        let count: u32 = (0..k)
            .map(|kk| {
                let (x, y) = (a[(i * k + kk) as usize], b[(kk * n + j) as usize]);
                if op == "and" {
                    x & y
                } else {
                    x ^ y
                }
            })
            .sum();
        c[(i * n + j) as usize].wrapping_add(count)
    };
    let list = |name: &str, count: u32| {
        let r: Vec<String> = (0..count).map(|i| format!("%{name}{i}")).collect();
        format!("{{{}}}", r.join(", "))
    };
    let moves = |name: &str, count: u32, base: &str, load: bool| -> String {
        (0..count)
            .map(|i| {
                let access = if load {
                    format!("ld.global.b32 %{name}{i}, [%rd9+{}];", 4 * i)
                } else {
                    format!("st.global.b32 [%rd9+{}], %{name}{i};", 4 * i)
                };
                format!(
                    "mul.wide.u32 %rd9, %t, {};\nadd.s64 %rd9, %rd9, {base};\n{access}\n",
                    4 * count
                )
            })
            .collect()
    };
    let text = format!(
        ".version 8.7\n.target sm_80\n.address_size 64\n\
         .visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{{\n\
         .reg .b32 %a<{na}>;\n.reg .b32 %b<{nb}>;\n.reg .b32 %c<{nc}>;\n.reg .b32 %d<{nc}>;\n\
         .reg .b64 %rd<10>;\n.reg .b32 %t;\n\
         ld.param.u64 %rd1, [pa];\nld.param.u64 %rd2, [pb];\nld.param.u64 %rd3, [pc];\nld.param.u64 %rd4, [pd];\n\
         mov.u32 %t, %tid.x;\n{}{}{}\
         mma.sync.aligned.{shape}.row.col.s32.b1.b1.s32.{op}.popc {}, {}, {}, {};\n{}ret;\n}}\n",
        moves("a", na, "%rd1", true),
        moves("b", nb, "%rd2", true),
        moves("c", nc, "%rd3", true),
        list("d", nc),
        list("a", na),
        list("b", nb),
        list("c", nc),
        moves("d", nc, "%rd4", false),
    );
    let name = format!("{shape}.{op}");
    let mut emu = Emulator::new();
    let module = emu
        .load_ptx("mma_b1.ptx", &text)
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
    let (pa, pb, pc) = (buffer(&mem[0]), buffer(&mem[1]), buffer(&mem[2]));
    let pd = buffer(&vec![0u32; (32 * nc) as usize]);
    let params: Vec<u8> = [pa, pb, pc, pd]
        .iter()
        .flat_map(|p| p.to_le_bytes())
        .collect();
    emu.run(kernel, LaunchConfig::linear(1, 32), &params)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut wrapped = 0;
    for lane in 0..32 {
        for i in 0..nc {
            let (r, col) = isa_coords(shape, 'c', lane, i);
            let got = emu
                .memory
                .read_uint(pd + 4 * u64::from(lane * nc + i), 4)
                .unwrap() as u32;
            let w = want(r, col);
            wrapped += usize::from((w as i32) < 0 && c[(r * n + col) as usize] == 0x7FFF_FFF0);
            assert_eq!(got, w, "{name}: lane {lane} element {i} (D[{r}][{col}])");
        }
    }
    assert!(wrapped > 0, "{name}: no accumulator wrapped past i32::MAX");
}

#[test]
fn single_bit_products_match_the_isa_layouts_bit_for_bit() {
    let mut seed = 3;
    for shape in ["m8n8k128", "m16n8k128", "m16n8k256"] {
        for op in ["and", "xor"] {
            for _ in 0..3 {
                seed += 1;
                check(shape, op, seed * 0x9E37_79B9);
            }
        }
    }
}

fn decode(target: &str, body: &str) -> Result<(), String> {
    let text = format!(
        ".version 8.7\n.target {target}\n.address_size 64\n.visible .entry k()\n{{\n\
         .reg .b32 %r<40>;\n{body}\nret;\n}}\n"
    );
    Emulator::new()
        .load_ptx("d.ptx", &text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

const K128: &str = "{%r0,%r1,%r2,%r3}, {%r4,%r5}, {%r6}, {%r7,%r8,%r9,%r10};";

#[test]
fn the_decoder_refuses_what_the_isa_does_not_define_at_its_line() {
    for (body, want) in [
        (
            format!("mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32 {K128}"),
            "needs .and.popc or .xor.popc",
        ),
        (
            format!("mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.and {K128}"),
            "needs .and.popc or .xor.popc",
        ),
        (
            format!("mma.sync.aligned.m16n8k128.row.col.satfinite.s32.b1.b1.s32.and.popc {K128}"),
            "does not take .satfinite",
        ),
        (
            format!("mma.sync.aligned.m16n8k64.row.col.s32.b1.b1.s32.xor.popc {K128}"),
            "with .b1 inputs does not support .m16n8k64",
        ),
        (
            format!("mma.sync.aligned.m16n8k128.row.col.f32.b1.b1.f32.xor.popc {K128}"),
            "does not support .f32 D with .f32 C",
        ),
        (
            format!("mma.sync.aligned.m16n8k128.row.col.s32.b1.s4.s32.xor.popc {K128}"),
            "with .b1 A and .s4 B is not supported",
        ),
        (
            // A fragment of m16n8k256 is four registers.
            format!("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc {K128}"),
            "vector",
        ),
        (
            "mov.b1 %r0, %r1;".to_string(),
            "type .b1 is not supported by 'mov'",
        ),
        (
            ".reg .b1 %q;".to_string(),
            "registers of type .b1 are not supported",
        ),
    ] {
        let e = decode("sm_90", &body).expect_err(&body);
        assert!(e.contains(want), "{body}: {e}");
        // The instruction (or declaration) is on line 7.
        assert!(e.contains("d.ptx:7:"), "{body}: {e}");
    }
    // popc after a type that is not .b1 is refused too.
    let e = decode(
        "sm_90",
        "mma.sync.aligned.m8n8k32.row.col.s32.s4.s4.s32.xor.popc {%r0,%r1}, {%r2}, {%r3}, {%r4,%r5};",
    )
    .unwrap_err();
    assert!(e.contains("d.ptx:7:"), "{e}");
}

#[test]
fn each_form_needs_the_target_ptxas_gives_it() {
    // ptxas 12.9: m8n8k128 .xor.popc from sm_75; .and.popc and the m16n8 shapes sm_80.
    let xor = "mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc {%r0,%r1}, {%r2}, {%r3}, {%r4,%r5};";
    let and = "mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.and.popc {%r0,%r1}, {%r2}, {%r3}, {%r4,%r5};";
    let k256 = "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc {%r0,%r1,%r2,%r3}, \
                {%r4,%r5,%r6,%r7}, {%r8,%r9}, {%r10,%r11,%r12,%r13};";
    for (inst, ok, below) in [
        (xor, "sm_75", "sm_70"),
        (and, "sm_80", "sm_75"),
        (k256, "sm_80", "sm_75"),
    ] {
        decode(ok, inst).unwrap_or_else(|e| panic!("{inst} on {ok}: {e}"));
        decode("sm_90a", inst).unwrap_or_else(|e| panic!("{inst} on sm_90a: {e}"));
        let e = decode(below, inst).unwrap_err();
        assert!(e.contains("d.ptx:7:"), "{e}");
        assert!(
            e.contains(&format!(
                "requires .target {ok} or higher; the module's .target is {below}"
            )),
            "{inst}: {e}"
        );
    }
}
