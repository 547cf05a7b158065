//! Device-side `printf`: CUDA compiles `printf(fmt, ...)` to a call of the extern
//! `vprintf(fmt, args)` where `args` points to a buffer holding each argument at the next
//! multiple of its size (ints 4 or 8 bytes, doubles and pointers 8). This formats it with C
//! printf semantics for the conversions CUDA supports.

/// Formats `fmt`, reading argument bytes with `arg(offset, size)` and strings (`%s`) with
/// `string(address)`. Unreadable arguments print as `(null)`/0 rather than failing.
pub fn format(
    fmt: &[u8],
    mut arg: impl FnMut(u64, u32) -> Option<u64>,
    mut string: impl FnMut(u64) -> Option<Vec<u8>>,
) -> Vec<u8> {
    let mut out = Vec::new();
    let mut off = 0u64;
    let mut next = |size: u32, off: &mut u64| -> u64 {
        *off = off.div_ceil(size as u64) * size as u64;
        let v = arg(*off, size).unwrap_or(0);
        *off += size as u64;
        v
    };
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        if c != b'%' {
            out.push(c);
            i += 1;
            continue;
        }
        i += 1;
        if fmt.get(i) == Some(&b'%') {
            out.push(b'%');
            i += 1;
            continue;
        }
        // flags
        let (mut left, mut plus, mut space, mut alt, mut zero) =
            (false, false, false, false, false);
        while let Some(&f) = fmt.get(i) {
            match f {
                b'-' => left = true,
                b'+' => plus = true,
                b' ' => space = true,
                b'#' => alt = true,
                b'0' => zero = true,
                _ => break,
            }
            i += 1;
        }
        let width = field_count(fmt, &mut i, || next(4, &mut off));
        let prec = if fmt.get(i) == Some(&b'.') {
            i += 1;
            // A `.` alone is precision 0.
            Some(field_count(fmt, &mut i, || next(4, &mut off)).unwrap_or(0))
        } else {
            None
        };
        let mut long = 0;
        while let Some(&m) = fmt.get(i) {
            match m {
                b'l' | b'z' | b'j' | b't' | b'q' => long += 1,
                b'h' => {}
                _ => break,
            }
            i += 1;
        }
        let Some(&conv) = fmt.get(i) else { break };
        i += 1;
        let isize = if long > 0 { 8 } else { 4 };
        let (sign, body): (&str, String) = match conv {
            b'd' | b'i' => {
                let raw = next(isize, &mut off);
                let v = if isize == 8 {
                    raw as i64
                } else {
                    raw as u32 as i32 as i64
                };
                let digits = int_digits(v.unsigned_abs(), 10, false, prec);
                (
                    if v < 0 {
                        "-"
                    } else if plus {
                        "+"
                    } else if space {
                        " "
                    } else {
                        ""
                    },
                    digits,
                )
            }
            b'u' | b'x' | b'X' | b'o' => {
                let raw = next(isize, &mut off);
                let v = if isize == 8 { raw } else { raw & 0xFFFF_FFFF };
                let (base, upper) = match conv {
                    b'x' => (16, false),
                    b'X' => (16, true),
                    b'o' => (8, false),
                    _ => (10, false),
                };
                let mut d = int_digits(v, base, upper, prec);
                if alt && v != 0 {
                    d = match conv {
                        b'x' => format!("0x{d}"),
                        b'X' => format!("0X{d}"),
                        b'o' => format!("0{d}"),
                        _ => d,
                    };
                }
                ("", d)
            }
            b'c' => ("", ((next(4, &mut off) as u8) as char).to_string()),
            b's' => {
                let p = next(8, &mut off);
                let s = if p == 0 {
                    b"(null)".to_vec()
                } else {
                    string(p).unwrap_or_else(|| b"(null)".to_vec())
                };
                let s = String::from_utf8_lossy(&s).into_owned();
                let s = match prec {
                    Some(p) => s.chars().take(p).collect(),
                    None => s,
                };
                zero = false;
                ("", s)
            }
            b'p' => {
                zero = false;
                ("", format!("0x{:x}", next(8, &mut off)))
            }
            b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
                let v = f64::from_bits(next(8, &mut off));
                let s = float_text(v.abs(), conv, prec.unwrap_or(6), alt);
                if !v.is_finite() {
                    zero = false;
                }
                (
                    if v.is_sign_negative() && !v.is_nan() {
                        "-"
                    } else if plus {
                        "+"
                    } else if space {
                        " "
                    } else {
                        ""
                    },
                    s,
                )
            }
            other => {
                out.push(b'%');
                out.push(other);
                continue;
            }
        };
        let len = sign.len() + body.chars().count();
        let pad = width.unwrap_or(0).saturating_sub(len);
        // Precision on integers disables zero padding, as in C.
        let zero_pad = zero
            && !left
            && !(prec.is_some() && matches!(conv, b'd' | b'i' | b'u' | b'x' | b'X' | b'o'));
        if left {
            out.extend_from_slice(sign.as_bytes());
            out.extend_from_slice(body.as_bytes());
            out.extend(std::iter::repeat_n(b' ', pad));
        } else if zero_pad {
            out.extend_from_slice(sign.as_bytes());
            if let Some(rest) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
                out.extend_from_slice(&body.as_bytes()[..2]);
                out.extend(std::iter::repeat_n(b'0', pad));
                out.extend_from_slice(rest.as_bytes());
            } else {
                out.extend(std::iter::repeat_n(b'0', pad));
                out.extend_from_slice(body.as_bytes());
            }
        } else {
            out.extend(std::iter::repeat_n(b' ', pad));
            out.extend_from_slice(sign.as_bytes());
            out.extend_from_slice(body.as_bytes());
        }
    }
    out
}

/// A field width or precision at `fmt[*i..]`: `*` takes it from the next `int` argument,
/// else it is written in decimal; `None` when there is neither.
fn field_count(fmt: &[u8], i: &mut usize, int_arg: impl FnOnce() -> u64) -> Option<usize> {
    if fmt.get(*i) == Some(&b'*') {
        *i += 1;
        return Some(int_arg() as i32 as usize);
    }
    let mut n = None;
    while let Some(d) = fmt.get(*i).filter(|d| d.is_ascii_digit()) {
        n = Some(n.unwrap_or(0) * 10 + (d - b'0') as usize);
        *i += 1;
    }
    n
}

fn int_digits(v: u64, base: u64, upper: bool, prec: Option<usize>) -> String {
    let mut s = match (base, upper) {
        (16, false) => format!("{v:x}"),
        (16, true) => format!("{v:X}"),
        (8, _) => format!("{v:o}"),
        _ => format!("{v}"),
    };
    if prec == Some(0) && v == 0 {
        s.clear();
    }
    if let Some(p) = prec {
        while s.len() < p {
            s.insert(0, '0');
        }
    }
    s
}

/// `%f %e %g` (and `%a` as `%e`) of a non-negative value, C style.
fn float_text(v: f64, conv: u8, prec: usize, alt: bool) -> String {
    let upper = conv.is_ascii_uppercase();
    if v.is_nan() {
        return if upper { "NAN" } else { "nan" }.to_string();
    }
    if v.is_infinite() {
        return if upper { "INF" } else { "inf" }.to_string();
    }
    let s = match conv.to_ascii_lowercase() {
        b'f' => format!("{v:.prec$}"),
        b'e' | b'a' => exp_text(v, prec),
        _ => {
            // %g: precision P (0 → 1); exponent X of %e form decides.
            let p = prec.max(1);
            let e = if v == 0.0 { 0 } else { exp_of(v, p - 1) };
            let mut s = if e < -4 || e >= p as i32 {
                exp_text(v, p - 1)
            } else {
                format!("{v:.*}", (p as i32 - 1 - e).max(0) as usize)
            };
            if !alt {
                s = strip_zeros(&s);
            }
            s
        }
    };
    if upper {
        s.to_uppercase()
    } else {
        s
    }
}

/// Decimal exponent of `v` after rounding to `digits` fractional digits in %e form.
fn exp_of(v: f64, digits: usize) -> i32 {
    let s = format!("{v:.digits$e}");
    s.rsplit('e')
        .next()
        .and_then(|e| e.parse().ok())
        .unwrap_or(0)
}

fn exp_text(v: f64, prec: usize) -> String {
    let s = format!("{v:.prec$e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = exp.parse().unwrap_or(0);
    format!("{mant}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
}

fn strip_zeros(s: &str) -> String {
    let (mant, exp) = match s.find('e') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    let mant = if mant.contains('.') {
        mant.trim_end_matches('0').trim_end_matches('.')
    } else {
        mant
    };
    format!("{mant}{exp}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packs arguments the way CUDA's vprintf buffer does.
    struct Args(Vec<u8>);
    impl Args {
        fn new() -> Self {
            Args(Vec::new())
        }
        fn put(mut self, bytes: &[u8]) -> Self {
            let size = bytes.len();
            while !self.0.len().is_multiple_of(size) {
                self.0.push(0);
            }
            self.0.extend_from_slice(bytes);
            self
        }
        fn i32(self, v: i32) -> Self {
            self.put(&v.to_le_bytes())
        }
        fn i64(self, v: i64) -> Self {
            self.put(&v.to_le_bytes())
        }
        fn f64(self, v: f64) -> Self {
            self.put(&v.to_le_bytes())
        }
    }

    fn run(fmt: &str, args: Args) -> String {
        let buf = args.0;
        let out = format(
            fmt.as_bytes(),
            |off, size| {
                let o = off as usize;
                let b = buf.get(o..o + size as usize)?;
                let mut w = [0u8; 8];
                w[..b.len()].copy_from_slice(b);
                Some(u64::from_le_bytes(w))
            },
            |addr| (addr == 0x1000).then(|| b"hello".to_vec()),
        );
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn integers_with_flags_width_precision() {
        assert_eq!(
            run(
                "%d|%5d|%-5d|%05d|%+d",
                Args::new().i32(-7).i32(42).i32(42).i32(-42).i32(3)
            ),
            "-7|   42|42   |-0042|+3"
        );
        assert_eq!(
            run(
                "%u %x %X %o %#x",
                Args::new().i32(-1).i32(255).i32(255).i32(8).i32(255)
            ),
            "4294967295 ff FF 10 0xff"
        );
        assert_eq!(
            run(
                "%ld %lld %lu",
                Args::new().i64(-5_000_000_000).i64(1).i64(-1)
            ),
            "-5000000000 1 18446744073709551615"
        );
        assert_eq!(
            run(
                "%.3d|%c%c",
                Args::new().i32(7).i32(b'o' as i32).i32(b'k' as i32)
            ),
            "007|ok"
        );
        assert_eq!(
            run("%d %ld", Args::new().i32(1).i64(2)),
            "1 2",
            "the 64-bit argument is 8-aligned"
        );
        assert_eq!(run("100%%", Args::new()), "100%");
    }

    #[test]
    fn floats_like_c() {
        assert_eq!(
            run("%f %.2f %8.3f", Args::new().f64(1.5).f64(-2.345).f64(2.5)),
            "1.500000 -2.35    2.500"
        );
        assert_eq!(
            run("%e %E", Args::new().f64(12345.678).f64(0.00012)),
            "1.234568e+04 1.200000E-04"
        );
        assert_eq!(
            run(
                "%g %g %g %g",
                Args::new().f64(100000.0).f64(1e6).f64(0.0001).f64(1.5)
            ),
            "100000 1e+06 0.0001 1.5"
        );
        assert_eq!(
            run("%f %f", Args::new().f64(f64::INFINITY).f64(f64::NAN)),
            "inf nan"
        );
        assert_eq!(run("%08.3f", Args::new().f64(-1.5)), "-001.500");
    }

    #[test]
    fn star_width_and_precision_come_from_arguments() {
        assert_eq!(
            run(
                "%*d|%-*d|%.*f|%.f",
                Args::new()
                    .i32(5)
                    .i32(42)
                    .i32(4)
                    .i32(7)
                    .i32(2)
                    .f64(1.23456)
                    .f64(2.7)
            ),
            "   42|7   |1.23|3"
        );
    }

    #[test]
    fn strings_and_pointers() {
        assert_eq!(
            run(
                "[%s] [%.3s] [%8s]",
                Args::new().i64(0x1000).i64(0x1000).i64(0x1000)
            ),
            "[hello] [hel] [   hello]"
        );
        assert_eq!(run("%s", Args::new().i64(0)), "(null)");
        assert_eq!(run("%p", Args::new().i64(0xdead)), "0xdead");
    }
}
