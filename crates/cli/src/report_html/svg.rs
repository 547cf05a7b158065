//! Hand-written SVG charts for the HTML report: grouped bars, stacked bars and a log-log
//! scatter. Self-contained (no scripts, no fonts fetched, no network), deterministic
//! (same data, same bytes). Every mark carries a class (`bar`, `segment`, `point`) so
//! tests can count what was drawn.

use std::fmt::Write;

/// Colour-blind-friendly palette (Okabe–Ito, then Tol's muted scheme), cycled.
const PALETTE: [&str; 16] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
    "#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255",
];

/// The colour of the `i`-th series.
pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Text safe inside SVG/HTML.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// One series of a grouped bar chart: a value per category (`None`: no bar).
pub struct Series {
    pub name: String,
    pub values: Vec<Option<f64>>,
}

/// One stacked bar: parts by index into the chart's part names.
pub struct Stack {
    pub label: String,
    pub parts: Vec<f64>,
}

const MARGIN_LEFT: f64 = 70.0;
const MARGIN_TOP: f64 = 40.0;
const PLOT_HEIGHT: f64 = 260.0;
const FONT: &str = "font-family=\"DejaVu Sans, Arial, sans-serif\"";

/// A "nice" axis maximum and tick step for values up to `max`.
fn nice_axis(max: f64) -> (f64, f64) {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    ((max / step).ceil() * step, step)
}

fn fmt_tick(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1e4 || v.abs() < 1e-2 {
        format!("{v:.1e}")
    } else {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Room under the plot for vertical x labels (about 6 px per character).
fn label_space<'s>(labels: impl Iterator<Item = &'s str>) -> f64 {
    let chars = labels.map(|l| l.chars().count()).max().unwrap_or(0) as f64;
    (16.0 + chars * 6.0).clamp(40.0, 260.0)
}

fn header(out: &mut String, width: f64, height: f64, title: &str) {
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{width:.0}\" \
         height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" {FONT} font-size=\"11\">\
         <rect x=\"0\" y=\"0\" width=\"{width:.0}\" height=\"{height:.0}\" fill=\"#ffffff\"/>\
         <text x=\"{:.0}\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{}</text>",
        MARGIN_LEFT,
        escape(title)
    );
}

/// Y axis with ticks and grid lines over `plot_width`.
fn y_axis(out: &mut String, plot_width: f64, axis_max: f64, step: f64, y_label: &str) {
    let mut v = 0.0;
    while v <= axis_max + step * 1e-9 {
        let y = MARGIN_TOP + PLOT_HEIGHT * (1.0 - v / axis_max);
        let _ = write!(
            out,
            "<line x1=\"{MARGIN_LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#dddddd\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            MARGIN_LEFT + plot_width,
            MARGIN_LEFT - 4.0,
            y + 4.0,
            fmt_tick(v)
        );
        v += step;
    }
    let _ = write!(
        out,
        "<line x1=\"{MARGIN_LEFT}\" x2=\"{MARGIN_LEFT}\" y1=\"{MARGIN_TOP}\" y2=\"{:.1}\" stroke=\"#333333\"/>\
         <text transform=\"translate(16,{:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        MARGIN_TOP + PLOT_HEIGHT,
        MARGIN_TOP + PLOT_HEIGHT / 2.0,
        escape(y_label)
    );
}

fn x_label(out: &mut String, x: f64, label: &str) {
    let y = MARGIN_TOP + PLOT_HEIGHT + 8.0;
    let _ = write!(
        out,
        "<text transform=\"translate({:.1},{y:.1}) rotate(-90)\" text-anchor=\"end\">{}</text>",
        x + 4.0,
        escape(label)
    );
}

fn legend(out: &mut String, x0: f64, y0: f64, names: &[String]) {
    for (i, name) in names.iter().enumerate() {
        let y = y0 + 16.0 * i as f64;
        let _ = write!(
            out,
            "<rect class=\"legend\" x=\"{x0:.1}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            y - 9.0,
            colour(i),
            x0 + 14.0,
            y,
            escape(name)
        );
    }
}

/// Grouped bars: one group per category, one bar per series; an optional dashed
/// horizontal reference line (1.0 for normalized figures).
pub fn grouped_bars(
    title: &str,
    y_label: &str,
    categories: &[String],
    series: &[Series],
    reference: Option<f64>,
) -> String {
    let bar_w = 12.0;
    let group_w = bar_w * series.len().max(1) as f64 + 10.0;
    let plot_w = (group_w * categories.len() as f64).max(200.0);
    let legend_w = 190.0;
    let width = MARGIN_LEFT + plot_w + 20.0 + legend_w;
    let height = (MARGIN_TOP + PLOT_HEIGHT + label_space(categories.iter().map(String::as_str)))
        .max(MARGIN_TOP + 16.0 * series.len() as f64 + 20.0);
    let max = series
        .iter()
        .flat_map(|s| s.values.iter().flatten())
        .copied()
        .chain(reference)
        .fold(0.0, f64::max);
    let (axis_max, step) = nice_axis(max);
    let mut out = String::new();
    header(&mut out, width, height, title);
    y_axis(&mut out, plot_w, axis_max, step, y_label);
    for (c, cat) in categories.iter().enumerate() {
        let gx = MARGIN_LEFT + group_w * c as f64 + 5.0;
        for (s, ser) in series.iter().enumerate() {
            let Some(v) = ser.values.get(c).copied().flatten() else {
                continue;
            };
            let h = PLOT_HEIGHT * (v.max(0.0) / axis_max);
            let _ = write!(
                out,
                "<rect class=\"bar\" x=\"{:.1}\" y=\"{:.1}\" width=\"{bar_w}\" height=\"{h:.1}\" \
                 fill=\"{}\"><title>{} / {}: {:.4}</title></rect>",
                gx + bar_w * s as f64,
                MARGIN_TOP + PLOT_HEIGHT - h,
                colour(s),
                escape(cat),
                escape(&ser.name),
                v
            );
        }
        x_label(&mut out, gx + group_w / 2.0, cat);
    }
    if let Some(r) = reference {
        let y = MARGIN_TOP + PLOT_HEIGHT * (1.0 - r / axis_max);
        let _ = write!(
            out,
            "<line x1=\"{MARGIN_LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#444444\" \
             stroke-dasharray=\"4 3\"/>",
            MARGIN_LEFT + plot_w
        );
    }
    let names: Vec<String> = series.iter().map(|s| s.name.clone()).collect();
    legend(
        &mut out,
        MARGIN_LEFT + plot_w + 20.0,
        MARGIN_TOP + 10.0,
        &names,
    );
    out.push_str("</svg>\n");
    out
}

/// Stacked bars: one bar per [`Stack`], one segment per non-zero part.
pub fn stacked_bars(title: &str, y_label: &str, part_names: &[String], stacks: &[Stack]) -> String {
    let bar_w = 14.0;
    let slot = bar_w + 6.0;
    let plot_w = (slot * stacks.len() as f64).max(200.0);
    let legend_w = 190.0;
    let width = MARGIN_LEFT + plot_w + 20.0 + legend_w;
    let height = (MARGIN_TOP + PLOT_HEIGHT + label_space(stacks.iter().map(|s| s.label.as_str())))
        .max(MARGIN_TOP + 16.0 * part_names.len() as f64 + 20.0);
    let max = stacks
        .iter()
        .map(|s| s.parts.iter().filter(|v| v.is_finite()).sum::<f64>())
        .fold(0.0, f64::max);
    let (axis_max, step) = nice_axis(max);
    let mut out = String::new();
    header(&mut out, width, height, title);
    y_axis(&mut out, plot_w, axis_max, step, y_label);
    for (b, stack) in stacks.iter().enumerate() {
        let x = MARGIN_LEFT + slot * b as f64 + 3.0;
        let mut base = 0.0;
        for (p, &v) in stack.parts.iter().enumerate() {
            if !(v.is_finite() && v > 0.0) {
                continue;
            }
            let y0 = MARGIN_TOP + PLOT_HEIGHT * (1.0 - (base + v) / axis_max);
            let h = PLOT_HEIGHT * v / axis_max;
            let _ = write!(
                out,
                "<rect class=\"segment\" x=\"{x:.1}\" y=\"{y0:.1}\" width=\"{bar_w}\" height=\"{h:.1}\" \
                 fill=\"{}\"><title>{} / {}: {:.4}</title></rect>",
                colour(p),
                escape(&stack.label),
                escape(part_names.get(p).map_or("?", String::as_str)),
                v
            );
            base += v;
        }
        x_label(&mut out, x + bar_w / 2.0, &stack.label);
    }
    legend(
        &mut out,
        MARGIN_LEFT + plot_w + 20.0,
        MARGIN_TOP + 10.0,
        part_names,
    );
    out.push_str("</svg>\n");
    out
}

/// One scatter point: `(x, y)` in series `series`, with a label for its tooltip.
pub struct ScatterPoint {
    pub x: f64,
    pub y: f64,
    pub series: usize,
    pub label: String,
}

/// A log-log scatter with the y = x line (points with a non-positive coordinate are left
/// out: they have no place on a log axis).
pub fn scatter_loglog(
    title: &str,
    x_label_text: &str,
    y_label_text: &str,
    series_names: &[String],
    points: &[ScatterPoint],
) -> String {
    let size = 320.0;
    let legend_w = 190.0;
    let width = MARGIN_LEFT + size + 30.0 + legend_w;
    let height = MARGIN_TOP + size + 50.0;
    let shown: Vec<&ScatterPoint> = points
        .iter()
        .filter(|p| p.x > 0.0 && p.y > 0.0 && p.x.is_finite() && p.y.is_finite())
        .collect();
    let lo = shown
        .iter()
        .map(|p| p.x.min(p.y).log10().floor())
        .fold(f64::INFINITY, f64::min);
    let hi = shown
        .iter()
        .map(|p| p.x.max(p.y).log10().ceil())
        .fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if lo.is_finite() && hi.is_finite() {
        (lo, hi.max(lo + 1.0))
    } else {
        (0.0, 1.0)
    };
    let to_x = |v: f64| MARGIN_LEFT + size * (v.log10() - lo) / (hi - lo);
    let to_y = |v: f64| MARGIN_TOP + size * (1.0 - (v.log10() - lo) / (hi - lo));
    let mut out = String::new();
    header(&mut out, width, height, title);
    let mut e = lo;
    while e <= hi + 1e-9 {
        let v = 10f64.powf(e);
        let (x, y) = (to_x(v), to_y(v));
        let _ = write!(
            out,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{MARGIN_TOP}\" y2=\"{:.1}\" stroke=\"#dddddd\"/>\
             <line x1=\"{MARGIN_LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#dddddd\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">1e{e:.0}</text>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">1e{e:.0}</text>",
            MARGIN_TOP + size,
            MARGIN_LEFT + size,
            MARGIN_TOP + size + 14.0,
            MARGIN_LEFT - 4.0,
            y + 4.0
        );
        e += 1.0;
    }
    let _ = write!(
        out,
        "<rect x=\"{MARGIN_LEFT}\" y=\"{MARGIN_TOP}\" width=\"{size}\" height=\"{size}\" fill=\"none\" stroke=\"#333333\"/>\
         <line class=\"identity\" x1=\"{MARGIN_LEFT}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{MARGIN_TOP}\" stroke=\"#444444\" stroke-dasharray=\"4 3\"/>\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
         <text transform=\"translate(16,{:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        MARGIN_TOP + size,
        MARGIN_LEFT + size,
        MARGIN_LEFT + size / 2.0,
        MARGIN_TOP + size + 34.0,
        escape(x_label_text),
        MARGIN_TOP + size / 2.0,
        escape(y_label_text)
    );
    for p in shown {
        let _ = write!(
            out,
            "<circle class=\"point\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"{}\" fill-opacity=\"0.8\">\
             <title>{}: {} / {}</title></circle>",
            to_x(p.x),
            to_y(p.y),
            colour(p.series),
            escape(&p.label),
            p.x,
            p.y
        );
    }
    legend(
        &mut out,
        MARGIN_LEFT + size + 30.0,
        MARGIN_TOP + 10.0,
        series_names,
    );
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_are_nice() {
        assert_eq!(nice_axis(1.3), (1.5, 0.5));
        assert_eq!(nice_axis(1.2), (1.25, 0.25));
        assert_eq!(nice_axis(0.0), (1.0, 0.2));
        assert_eq!(nice_axis(97.0), (100.0, 20.0));
    }

    #[test]
    fn charts_draw_one_mark_per_value() {
        let cats = vec!["a".to_string(), "b<c".to_string()];
        let series = vec![
            Series {
                name: "x".into(),
                values: vec![Some(1.0), Some(2.0)],
            },
            Series {
                name: "y".into(),
                values: vec![None, Some(0.5)],
            },
        ];
        let svg = grouped_bars("t", "IPC", &cats, &series, Some(1.0));
        assert_eq!(svg.matches("class=\"bar\"").count(), 3);
        assert!(svg.contains("b&lt;c"));
        assert!(!svg.contains("b<c"));
        let stacks = vec![
            Stack {
                label: "s1".into(),
                parts: vec![1.0, 0.0, 2.0],
            },
            Stack {
                label: "s2".into(),
                parts: vec![0.5, 0.5, f64::NAN],
            },
        ];
        let names = vec!["p".into(), "q".into(), "r".into()];
        let svg = stacked_bars("t", "J", &names, &stacks);
        assert_eq!(svg.matches("class=\"segment\"").count(), 4);
        assert_eq!(svg.matches("class=\"legend\"").count(), 3);
        let pts = vec![
            ScatterPoint {
                x: 10.0,
                y: 20.0,
                series: 0,
                label: "k".into(),
            },
            ScatterPoint {
                x: 0.0,
                y: 5.0,
                series: 0,
                label: "zero".into(),
            },
        ];
        let svg = scatter_loglog("t", "x", "y", &["d".into()], &pts);
        assert_eq!(svg.matches("class=\"point\"").count(), 1);
        // Deterministic.
        assert_eq!(svg, scatter_loglog("t", "x", "y", &["d".into()], &pts));
    }
}
