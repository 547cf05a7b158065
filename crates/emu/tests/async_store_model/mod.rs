//! The CPU model of `data/modern/async_store.sm90.ptx`'s `exchange` kernel (shared by
//! the emulator's and the timing model's tests).

/// Words each CTA writes.
#[allow(dead_code)]
pub const WORDS_PER_CTA: usize = 430;

/// The 430 words CTA `c` (of clusters of 2, 32 threads) has received from its partner:
/// the kernel's comment, computed on the CPU.
pub fn expected(c: u32) -> Vec<u32> {
    let p = c ^ 1;
    let mut b = vec![0u8; 1720];
    let put =
        |b: &mut Vec<u8>, at: usize, bytes: &[u8]| b[at..at + bytes.len()].copy_from_slice(bytes);
    let mut counters: [u32; 14] = [
        0,
        -100i32 as u32,
        0xffff_ffff,
        0,
        u32::MAX,
        0,
        0,
        i32::MIN as u32,
        0,
        5,
        u32::MAX,
        0,
        0,
        0,
    ];
    let mut add64 = 0xffff_ffffu64;
    for t in 0..32u32 {
        let v = 1000 * p + t;
        put(&mut b, (4 * t) as usize, &v.to_le_bytes());
        put(&mut b, (128 + 8 * t) as usize, &(v as f32).to_le_bytes());
        put(
            &mut b,
            (132 + 8 * t) as usize,
            &(t as f32 / 4.0).to_le_bytes(),
        );
        for i in 0..4 {
            put(
                &mut b,
                (384 + 16 * t + 4 * i) as usize,
                &(v + i).to_le_bytes(),
            );
        }
        put(
            &mut b,
            (896 + 8 * t) as usize,
            &(-i64::from(v)).to_le_bytes(),
        );
        put(
            &mut b,
            (1152 + 16 * t) as usize,
            &f64::from(v).to_le_bytes(),
        );
        put(
            &mut b,
            (1160 + 16 * t) as usize,
            &(f64::from(t) / 4.0).to_le_bytes(),
        );
        counters[0] = counters[0].wrapping_add(t + 1);
        counters[1] = (counters[1] as i32).wrapping_add(t as i32 - 16) as u32;
        add64 = add64.wrapping_add((u64::from(t) << 32) + 0x8000_0000);
        counters[4] = counters[4].min(1000 * p + 7 * t + 3);
        counters[5] = (counters[5] as i32).min(t as i32 - 20) as u32;
        counters[6] = counters[6].max(t * t);
        counters[7] = (counters[7] as i32).max(-(t as i32)) as u32;
        // PTX ISA: inc d = (a >= b) ? 0 : a + 1; dec d = (a == 0 || a > b) ? b : a - 1.
        counters[8] = if counters[8] >= 20 {
            0
        } else {
            counters[8] + 1
        };
        counters[9] = if counters[9] == 0 || counters[9] > 9 {
            9
        } else {
            counters[9] - 1
        };
        counters[10] &= !(1 << (t % 16));
        counters[11] |= 1 << (t % 24);
        counters[12] ^= t.wrapping_mul(0x0101_0101);
    }
    counters[2] = add64 as u32;
    counters[3] = (add64 >> 32) as u32;
    for (i, w) in counters.iter().take(13).enumerate() {
        put(&mut b, 1664 + 4 * i, &w.to_le_bytes());
    }
    b.chunks(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect()
}
