//! Hand-written SVG charts for the HTML report: grouped bars, stacked bars and a log-log
//! scatter. Self-contained (no scripts, no fonts fetched, no network), deterministic
//! (same data, same bytes). Every mark carries a class (`bar`, `segment`, `point`) so
//! tests can count what was drawn.

use std::fmt::Write;

/// The colour of the `i`-th series: the palette `regsim correlate`'s scatter uses too.
pub use correlate::svg::colour;

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
const PLOT_HEIGHT: f64 = 260.0;
const FONT: &str = "font-family=\"DejaVu Sans, Arial, sans-serif\"";
/// Width of one character of 11 px DejaVu Sans, the widest of the fonts named above
/// (about 0.63 em), so that a label sized by it is never clipped.
const CHAR_W: f64 = 7.0;
/// Room above the plot for a title, when the chart has one.
const TITLE_ROOM: f64 = 28.0;
/// Room above the plot for the value labels over the tallest bar (rotated, 9 px).
const VALUE_ROOM: f64 = 40.0;
/// Widest bar of a grouped bar chart.
const BAR_W: f64 = 12.0;

/// Width of a label at the charts' 11 px font.
fn text_width(s: &str) -> f64 {
    s.chars().count() as f64 * CHAR_W
}

/// The top of the plot area: room for the value labels, and for the title if any (the
/// HTML report's figures carry their titles in the page, not in the SVG).
fn plot_top(title: &str) -> f64 {
    VALUE_ROOM + if title.is_empty() { 0.0 } else { TITLE_ROOM }
}

/// A "nice" tick step for an axis spanning `span`: 1, 2, 2.5 or 5 times a power of ten,
/// about five ticks.
fn nice_step(span: f64) -> f64 {
    let raw = if span.is_finite() && span > 0.0 {
        span / 5.0
    } else {
        0.2
    };
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
}

/// A "nice" axis maximum and tick step for values from zero up to `max`.
fn nice_axis(max: f64) -> (f64, f64) {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let step = nice_step(max);
    ((max / step).ceil() * step, step)
}

/// The y axis of a bar chart as (low, high, step). Without a reference the bars are
/// quantities that start at zero, and so does the axis. With one (1.0 for normalized
/// figures) the bars grow from the reference and the axis spans the data and the
/// reference with a margin, so that a difference of 1% is a visible bar rather than a
/// pixel on an axis from 0; it starts at 0 when the data come near it.
fn bar_axis(values: impl Iterator<Item = f64>, reference: Option<f64>) -> (f64, f64, f64) {
    let values: Vec<f64> = values.filter(|v| v.is_finite()).collect();
    let Some(r) = reference.filter(|r| r.is_finite()) else {
        let (max, step) = nice_axis(values.iter().copied().fold(0.0, f64::max));
        return (0.0, max, step);
    };
    let lo = values.iter().copied().fold(r, f64::min);
    let hi = values.iter().copied().fold(r, f64::max);
    // At least ±1% of the reference, so equal values still get a readable axis.
    let span = (hi - lo).max(0.02 * r.abs().max(1e-9));
    let pad = 0.15 * span;
    let step = nice_step(span + 2.0 * pad);
    let mut low = ((lo - pad) / step).floor() * step;
    if lo >= 0.0 && (low < 0.0 || low < span) {
        low = 0.0;
    }
    let step = if low == 0.0 {
        nice_step(hi + pad)
    } else {
        step
    };
    let high = ((hi + pad) / step).ceil() * step;
    (low, high, step)
}

fn fmt_tick(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1e4 || v.abs() < 1e-2 {
        format!("{v:.1e}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// A bar's value as printed over it: three decimals for ratios, fewer for larger numbers.
fn fmt_value(v: f64) -> String {
    if v.abs() >= 1e4 || (v != 0.0 && v.abs() < 1e-3) {
        format!("{v:.2e}")
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// Room under the plot for vertical x labels: the longest label, whole.
fn label_space<'s>(labels: impl Iterator<Item = &'s str>) -> f64 {
    let width = labels.map(text_width).fold(0.0, f64::max);
    (16.0 + width).max(40.0)
}

/// Width of a legend of `names` (swatch, gap, the longest name, a margin).
fn legend_width(names: &[String]) -> f64 {
    14.0 + names.iter().map(|n| text_width(n)).fold(0.0, f64::max) + 12.0
}

/// Total width of a chart: the plot, its legend, and room for the title.
fn chart_width(plot_w: f64, legend_names: &[String], title: &str) -> f64 {
    let body = MARGIN_LEFT + plot_w + 20.0 + legend_width(legend_names);
    body.max(MARGIN_LEFT + text_width(title) * 14.0 / 11.0 + 10.0)
}

fn header(out: &mut String, width: f64, height: f64, title: &str) {
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{width:.0}\" \
         height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" {FONT} font-size=\"11\">\
         <rect x=\"0\" y=\"0\" width=\"{width:.0}\" height=\"{height:.0}\" fill=\"#ffffff\"/>"
    );
    if !title.is_empty() {
        let _ = write!(
            out,
            "<text class=\"title\" x=\"{MARGIN_LEFT:.0}\" y=\"20\" font-size=\"14\" \
             font-weight=\"bold\">{}</text>",
            escape(title)
        );
    }
}

/// The vertical placement of values on a bar chart's y axis.
struct YScale {
    top: f64,
    low: f64,
    high: f64,
}

impl YScale {
    fn y(&self, v: f64) -> f64 {
        let v = v.clamp(self.low, self.high);
        self.top + PLOT_HEIGHT * (1.0 - (v - self.low) / (self.high - self.low))
    }

    fn bottom(&self) -> f64 {
        self.top + PLOT_HEIGHT
    }
}

/// Y axis with ticks and grid lines over `plot_width`.
fn y_axis(out: &mut String, plot_width: f64, scale: &YScale, step: f64, y_label: &str) {
    let ticks = ((scale.high - scale.low) / step).round() as usize;
    for i in 0..=ticks {
        let v = scale.low + step * i as f64;
        let y = scale.y(v);
        let _ = write!(
            out,
            "<line x1=\"{MARGIN_LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#dddddd\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            MARGIN_LEFT + plot_width,
            MARGIN_LEFT - 4.0,
            y + 4.0,
            fmt_tick(v)
        );
    }
    let _ = write!(
        out,
        "<line x1=\"{MARGIN_LEFT}\" x2=\"{MARGIN_LEFT}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#333333\"/>\
         <text transform=\"translate(16,{:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        scale.top,
        scale.bottom(),
        scale.top + PLOT_HEIGHT / 2.0,
        escape(y_label)
    );
}

/// Text turned to run upwards, anchored at `(x, y)`.
fn vertical_text(
    out: &mut String,
    class: &str,
    (x, y): (f64, f64),
    anchor: &str,
    attrs: &str,
    text: &str,
) {
    let _ = write!(
        out,
        "<text class=\"{class}\" transform=\"translate({x:.1},{y:.1}) rotate(-90)\" \
         text-anchor=\"{anchor}\"{attrs}>{}</text>",
        escape(text)
    );
}

fn x_label(out: &mut String, scale: &YScale, x: f64, label: &str) {
    vertical_text(
        out,
        "xlabel",
        (x + 4.0, scale.bottom() + 8.0),
        "end",
        "",
        label,
    );
}

/// A value printed along a bar, beyond its end (`up`: above it).
fn value_label(out: &mut String, x: f64, y_end: f64, up: bool, v: f64) {
    let (y, anchor) = if up {
        (y_end - 3.0, "start")
    } else {
        (y_end + 3.0, "end")
    };
    let attrs = " font-size=\"9\" fill=\"#333333\"";
    vertical_text(out, "value", (x + 3.0, y), anchor, attrs, &fmt_value(v));
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

/// Grouped bars: one group per category, one bar per series, each with its value printed
/// along it; an optional dashed horizontal reference line (1.0 for normalized figures)
/// from which the bars then grow (see [`bar_axis`]). `title` may be empty (the HTML
/// report titles its figures in the page). The width follows the number of bars and the
/// longest legend entry; the height, the longest category label.
pub fn grouped_bars(
    title: &str,
    y_label: &str,
    categories: &[String],
    series: &[Series],
    reference: Option<f64>,
) -> String {
    let group_w = BAR_W * series.len().max(1) as f64 + 10.0;
    let plot_w = (group_w * categories.len() as f64).max(40.0);
    let names: Vec<String> = series.iter().map(|s| s.name.clone()).collect();
    let width = chart_width(plot_w, &names, title);
    let top = plot_top(title);
    let height = (top + PLOT_HEIGHT + label_space(categories.iter().map(String::as_str)))
        .max(top + 16.0 * series.len() as f64 + 20.0);
    let (low, high, step) = bar_axis(
        series
            .iter()
            .flat_map(|s| s.values.iter().flatten())
            .copied(),
        reference,
    );
    let scale = YScale { top, low, high };
    let base = reference.unwrap_or(0.0);
    let mut out = String::new();
    header(&mut out, width, height, title);
    y_axis(&mut out, plot_w, &scale, step, y_label);
    for (c, cat) in categories.iter().enumerate() {
        let gx = MARGIN_LEFT + group_w * c as f64 + 5.0;
        for (s, ser) in series.iter().enumerate() {
            let Some(v) = ser
                .values
                .get(c)
                .copied()
                .flatten()
                .filter(|v| v.is_finite())
            else {
                continue;
            };
            let x = gx + BAR_W * s as f64;
            let (y_base, y_end) = (scale.y(base), scale.y(v));
            let _ = write!(
                out,
                "<rect class=\"bar\" x=\"{x:.1}\" y=\"{:.1}\" width=\"{BAR_W}\" height=\"{:.1}\" \
                 fill=\"{}\"><title>{} / {}: {:.4}</title></rect>",
                y_base.min(y_end),
                (y_base - y_end).abs(),
                colour(s),
                escape(cat),
                escape(&ser.name),
                v
            );
            value_label(&mut out, x + BAR_W / 2.0 - 3.0, y_end, v >= base, v);
        }
        x_label(&mut out, &scale, gx + group_w / 2.0, cat);
    }
    if let Some(r) = reference {
        let y = scale.y(r);
        let _ = write!(
            out,
            "<line class=\"reference\" x1=\"{MARGIN_LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" \
             y2=\"{y:.1}\" stroke=\"#444444\" stroke-dasharray=\"4 3\"/>",
            MARGIN_LEFT + plot_w
        );
    }
    legend(&mut out, MARGIN_LEFT + plot_w + 20.0, top + 10.0, &names);
    out.push_str("</svg>\n");
    out
}

/// Stacked bars: one bar per [`Stack`], one segment per non-zero part, and each bar's
/// total printed over it unless every bar has the same total (fractions). `title` may be
/// empty; sizes follow the content as for [`grouped_bars`].
pub fn stacked_bars(title: &str, y_label: &str, part_names: &[String], stacks: &[Stack]) -> String {
    let bar_w = 14.0;
    let slot = bar_w + 6.0;
    let plot_w = (slot * stacks.len() as f64).max(40.0);
    let width = chart_width(plot_w, part_names, title);
    let top = plot_top(title);
    let height = (top + PLOT_HEIGHT + label_space(stacks.iter().map(|s| s.label.as_str())))
        .max(top + 16.0 * part_names.len() as f64 + 20.0);
    let totals: Vec<f64> = stacks
        .iter()
        .map(|s| {
            s.parts
                .iter()
                .filter(|v| v.is_finite() && **v > 0.0)
                .sum::<f64>()
        })
        .collect();
    let (max, step) = nice_axis(totals.iter().copied().fold(0.0, f64::max));
    let scale = YScale {
        top,
        low: 0.0,
        high: max,
    };
    let label_totals = totals
        .iter()
        .any(|t| (t - totals[0]).abs() > 1e-9 * t.abs().max(1.0));
    let mut out = String::new();
    header(&mut out, width, height, title);
    y_axis(&mut out, plot_w, &scale, step, y_label);
    for (b, stack) in stacks.iter().enumerate() {
        let x = MARGIN_LEFT + slot * b as f64 + 3.0;
        let mut base = 0.0;
        for (p, &v) in stack.parts.iter().enumerate() {
            if !(v.is_finite() && v > 0.0) {
                continue;
            }
            let y0 = scale.y(base + v);
            let h = scale.y(base) - y0;
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
        if label_totals {
            value_label(&mut out, x + bar_w / 2.0 - 3.0, scale.y(base), true, base);
        }
        x_label(&mut out, &scale, x + bar_w / 2.0, &stack.label);
    }
    legend(
        &mut out,
        MARGIN_LEFT + plot_w + 20.0,
        top + 10.0,
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
    let width = chart_width(size + 10.0, series_names, title);
    // No value labels over a scatter: the title's room, or a small margin.
    let top = plot_top(title) - VALUE_ROOM + 14.0;
    let height = (top + size + 50.0).max(top + 16.0 * series_names.len() as f64 + 20.0);
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
    let to_y = |v: f64| top + size * (1.0 - (v.log10() - lo) / (hi - lo));
    let mut out = String::new();
    header(&mut out, width, height, title);
    let mut e = lo;
    while e <= hi + 1e-9 {
        let v = 10f64.powf(e);
        let (x, y) = (to_x(v), to_y(v));
        let _ = write!(
            out,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{top:.1}\" y2=\"{:.1}\" stroke=\"#dddddd\"/>\
             <line x1=\"{MARGIN_LEFT}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#dddddd\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">1e{e:.0}</text>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">1e{e:.0}</text>",
            top + size,
            MARGIN_LEFT + size,
            top + size + 14.0,
            MARGIN_LEFT - 4.0,
            y + 4.0
        );
        e += 1.0;
    }
    let _ = write!(
        out,
        "<rect x=\"{MARGIN_LEFT}\" y=\"{top:.1}\" width=\"{size}\" height=\"{size}\" fill=\"none\" stroke=\"#333333\"/>\
         <line class=\"identity\" x1=\"{MARGIN_LEFT}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{top:.1}\" stroke=\"#444444\" stroke-dasharray=\"4 3\"/>\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
         <text transform=\"translate(16,{:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        top + size,
        MARGIN_LEFT + size,
        MARGIN_LEFT + size / 2.0,
        top + size + 34.0,
        escape(x_label_text),
        top + size / 2.0,
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
        top + 10.0,
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

    /// The numeric value of attribute `name` of the first element with `class`.
    fn attr(svg: &str, class: &str, name: &str) -> f64 {
        let el = &svg[svg.find(&format!("class=\"{class}\"")).unwrap()..];
        let start = el.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        let end = start + el[start..].find('"').unwrap();
        el[start..end].parse().unwrap()
    }

    #[test]
    fn a_normalized_axis_spans_the_values_and_every_bar_is_labelled() {
        // 0.99 and 1.01 around 1: the axis is 0.98..1.02-ish, not 0..1.25.
        let (low, high, step) = bar_axis([0.99, 1.01].into_iter(), Some(1.0));
        assert!((0.95..=0.99).contains(&low) && (1.01..=1.05).contains(&high));
        assert!(step <= 0.02, "{low} {high} {step}");
        // Far from 1 the axis reaches 0 and the bars still grow from 1.
        assert_eq!(bar_axis([0.2, 3.0].into_iter(), Some(1.0)).0, 0.0);
        // Without a reference: from 0.
        assert_eq!(bar_axis([0.5, 0.75].into_iter(), None), (0.0, 0.8, 0.2));
        let cats = vec!["saxpy".to_string(), "geomean".to_string()];
        let series = vec![Series {
            name: "ideal".into(),
            values: vec![Some(1.01), Some(0.99)],
        }];
        let svg = grouped_bars("", "IPC", &cats, &series, Some(1.0));
        // A 1% difference is a bar of at least 20 px.
        let h = attr(&svg, "bar", "height");
        assert!(h >= 20.0, "{h}");
        assert_eq!(svg.matches("class=\"value\"").count(), 2);
        assert!(svg.contains(">1.010</text>") && svg.contains(">0.990</text>"));
        assert_eq!(svg.matches("class=\"reference\"").count(), 1);
        // No title in the SVG when the page gives it; one when asked.
        assert!(!svg.contains("class=\"title\""));
        let titled = grouped_bars("IPC", "IPC", &cats, &series, Some(1.0));
        assert_eq!(titled.matches("class=\"title\"").count(), 1);
    }

    #[test]
    fn charts_are_sized_by_their_content() {
        let series = |n: usize| {
            vec![Series {
                name: "d".into(),
                values: vec![Some(1.0); n],
            }]
        };
        let cats = |n: usize| (0..n).map(|i| format!("w{i}")).collect::<Vec<_>>();
        let one = grouped_bars("", "y", &cats(1), &series(1), None);
        let ten = grouped_bars("", "y", &cats(10), &series(10), None);
        // One series: 12 px bars in groups of 22 px; a plot of at least 40 px.
        let (w1, w10) = (attr(&one, "chart", "width"), attr(&ten, "chart", "width"));
        // One bar: the axis, a 40 px plot and the legend, not a fixed 200 px plot.
        assert!(w1 < 200.0, "{w1}");
        assert!((w10 - w1 - (10.0 * 22.0 - 40.0)).abs() < 1.0, "{w1} {w10}");
        // A long x label fits whole under the plot: 7 px per character at least.
        let long = "blackscholes / baseline [entries_per_thread=6 lrf=false] @gtx480".to_string();
        let svg = grouped_bars("", "y", std::slice::from_ref(&long), &series(1), None);
        let h = attr(&svg, "chart", "height");
        assert!(
            h >= plot_top("") + PLOT_HEIGHT + 8.0 + 7.0 * long.len() as f64,
            "{h}"
        );
        // A long legend entry widens the chart by its length.
        let wide = vec![Series {
            name: long.clone(),
            values: vec![Some(1.0)],
        }];
        let svg = grouped_bars("", "y", &cats(1), &wide, None);
        assert!(attr(&svg, "chart", "width") >= w1 + 7.0 * (long.len() - 1) as f64);
    }

    #[test]
    fn stacks_print_their_totals_unless_all_are_equal() {
        let names = vec!["p".to_string(), "q".to_string()];
        let stack = |a: f64, b: f64| Stack {
            label: "s".into(),
            parts: vec![a, b],
        };
        let svg = stacked_bars("", "J", &names, &[stack(0.5, 0.25), stack(0.25, 0.25)]);
        assert_eq!(svg.matches("class=\"value\"").count(), 2);
        assert!(svg.contains(">0.750</text>") && svg.contains(">0.500</text>"));
        let fractions = stacked_bars("", "J", &names, &[stack(0.5, 0.5), stack(0.25, 0.75)]);
        assert_eq!(fractions.matches("class=\"value\"").count(), 0);
    }
}
