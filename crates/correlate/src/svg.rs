//! A log-log scatter plot as a self-contained SVG document, written by hand: square plot
//! area, the same decade range on both axes, decade grid lines and labels, the y = x line
//! with bands of ±10% and ±25% around it, and one circle per point, coloured by workload
//! (a legend names each), with its label as a hover title.

use serde::Serialize;

/// One point: `x` is the reference value, `y` regsim's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScatterPoint {
    pub x: f64,
    pub y: f64,
    pub label: String,
}

impl ScatterPoint {
    /// The workload the point belongs to, which picks its colour: the label up to ` #`
    /// (labels read `program #launch kernel`, as `Correlation::scatter` writes them), or
    /// the whole label.
    pub fn workload(&self) -> &str {
        self.label
            .split_once(" #")
            .map_or(self.label.as_str(), |(w, _)| w)
    }
}

/// Colour-blind-friendly palette (Okabe–Ito, then Tol's muted scheme), cycled; the HTML
/// report's charts use it too.
const PALETTE: [&str; 16] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
    "#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255",
];

/// The colour of the `i`-th series.
pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// The bands drawn around y = x: regsim within ±p% of the reference, widest first.
pub const BANDS_PERCENT: [f64; 2] = [25.0, 10.0];

/// What to draw.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scatter {
    /// Drawn over the plot unless empty (a page that titles the figure itself).
    pub title: String,
    /// A line under the title (e.g. the summary figures).
    pub caption: String,
    pub x_label: String,
    pub y_label: String,
    pub points: Vec<ScatterPoint>,
}

const LEFT: f64 = 90.0;
const TOP: f64 = 70.0;
const SIZE: f64 = 480.0;
const RIGHT: f64 = 40.0;
const BOTTOM: f64 = 70.0;

/// Escapes text for SVG character data and attribute values.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// `10^e` as a short label: 1, 10, 100, 1K, 10K, 100K, 1M, ... 1T and beyond in powers.
pub fn decade_label(e: i32) -> String {
    const SUFFIX: [(i32, &str); 4] = [(12, "T"), (9, "G"), (6, "M"), (3, "K")];
    if e < 0 {
        return format!("1e{e}");
    }
    if e > 14 {
        return format!("1e{e}");
    }
    for (base, s) in SUFFIX {
        if e >= base {
            return format!("{}{s}", 10u64.pow((e - base) as u32));
        }
    }
    10u64.pow(e as u32).to_string()
}

/// The decade range `[lo, hi]` (exponents) covering every positive coordinate, at least
/// one decade wide; `[0, 1]` when there is none.
pub fn decade_range(points: &[ScatterPoint]) -> (i32, i32) {
    let values = points
        .iter()
        .flat_map(|p| [p.x, p.y])
        .filter(|v| v.is_finite() && *v > 0.0);
    let (mut min, mut max) = (f64::INFINITY, 0.0f64);
    for v in values {
        min = min.min(v);
        max = max.max(v);
    }
    if max == 0.0 {
        return (0, 1);
    }
    let lo = min.log10().floor() as i32;
    let hi = (max.log10().ceil() as i32).max(lo + 1);
    (lo, hi)
}

/// Whether a point has a place on log axes (both coordinates positive and finite).
fn drawable(p: &ScatterPoint) -> bool {
    p.x.is_finite() && p.y.is_finite() && p.x > 0.0 && p.y > 0.0
}

/// The workloads of the drawable `points`, sorted: the `i`-th is drawn in
/// [`colour`]`(i)`.
pub fn workloads(points: &[ScatterPoint]) -> Vec<&str> {
    let mut w: Vec<&str> = points
        .iter()
        .filter(|p| drawable(p))
        .map(ScatterPoint::workload)
        .collect();
    w.sort_unstable();
    w.dedup();
    w
}

/// Width of the legend of `names` at the 12 px font (about 0.63 em per character).
fn legend_width(names: &[&str]) -> f64 {
    let chars = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    24.0 + chars as f64 * 7.6 + 12.0
}

/// The fill opacity of the `i`-th band of [`BANDS_PERCENT`]: the narrower bands, drawn
/// over the wider, darker.
fn band_opacity(i: usize) -> f64 {
    0.07 * (i + 1) as f64
}

/// The SVG document (UTF-8 text). Points with a coordinate that is zero, negative or not
/// finite cannot be placed on log axes; the caption says how many were left out.
pub fn scatter_svg(scatter: &Scatter) -> String {
    let (lo, hi) = decade_range(&scatter.points);
    let span = f64::from(hi - lo);
    // Without a title the plot moves up by the title's line.
    let top = if scatter.title.is_empty() {
        TOP - 24.0
    } else {
        TOP
    };
    let px = |v: f64| LEFT + (v.log10() - f64::from(lo)) / span * SIZE;
    let py = |v: f64| top + SIZE - (v.log10() - f64::from(lo)) / span * SIZE;
    let names = workloads(&scatter.points);
    let legend_x = LEFT + SIZE + RIGHT;
    let width = legend_x + legend_width(&names);
    let height = (top + SIZE + BOTTOM).max(top + 18.0 * (names.len() + 3) as f64);
    let mut s = String::new();
    s.push_str(&format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"12\">\n"
    ));
    s.push_str(&format!(
        "<rect width=\"{width}\" height=\"{height}\" fill=\"white\"/>\n"
    ));
    let centre = LEFT + SIZE / 2.0;
    if !scatter.title.is_empty() {
        s.push_str(&format!(
            "<text class=\"title\" x=\"{centre:.1}\" y=\"24\" text-anchor=\"middle\" \
             font-size=\"15\">{}</text>\n",
            escape(&scatter.title)
        ));
    }
    let left_out = scatter.points.iter().filter(|p| !drawable(p)).count();
    let mut caption = scatter.caption.clone();
    if left_out > 0 {
        caption.push_str(&format!(
            " ({left_out} point{} with a zero value not drawn)",
            if left_out == 1 { "" } else { "s" }
        ));
    }
    s.push_str(&format!(
        "<text x=\"{centre:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#444\">{}</text>\n",
        top - 26.0,
        escape(&caption)
    ));

    // Decade grid and tick labels; minor grid at 2x and 5x when there are few decades.
    s.push_str("<g stroke=\"#ddd\" stroke-width=\"1\">\n");
    for e in lo..=hi {
        let d = 10f64.powi(e);
        let (x, y) = (px(d), py(d));
        s.push_str(&format!(
            "<line x1=\"{x:.1}\" y1=\"{top:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\"/>\n",
            top + SIZE
        ));
        s.push_str(&format!(
            "<line x1=\"{LEFT:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/>\n",
            LEFT + SIZE
        ));
        if e < hi && hi - lo <= 4 {
            for m in [2.0, 5.0] {
                let (x, y) = (px(m * d), py(m * d));
                s.push_str(&format!(
                    "<line x1=\"{x:.1}\" y1=\"{top:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#f0f0f0\"/>\n",
                    top + SIZE
                ));
                s.push_str(&format!(
                    "<line x1=\"{LEFT:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#f0f0f0\"/>\n",
                    LEFT + SIZE
                ));
            }
        }
    }
    s.push_str("</g>\n");
    s.push_str("<g fill=\"#333\">\n");
    for e in lo..=hi {
        let d = 10f64.powi(e);
        let label = decade_label(e);
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{label}</text>\n",
            px(d),
            top + SIZE + 18.0
        ));
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{label}</text>\n",
            LEFT - 8.0,
            py(d) + 4.0
        ));
    }
    s.push_str("</g>\n");

    // The ±p% bands: between y = x(1 - p) and y = x(1 + p), parallel to y = x on log
    // axes, clipped to the plot square (a polygon over the whole decade range).
    s.push_str(&format!(
        "<clipPath id=\"correlate-plot\"><rect x=\"{LEFT:.1}\" y=\"{top:.1}\" width=\"{SIZE:.1}\" \
         height=\"{SIZE:.1}\"/></clipPath>\n<g clip-path=\"url(#correlate-plot)\">\n"
    ));
    let (a, b) = (10f64.powi(lo), 10f64.powi(hi));
    for (i, p) in BANDS_PERCENT.iter().enumerate() {
        let (up, down) = (1.0 + p / 100.0, 1.0 - p / 100.0);
        s.push_str(&format!(
            "<polygon class=\"band\" points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\" \
             fill=\"#c33\" fill-opacity=\"{:.2}\"><title>within ±{p}% of the reference</title></polygon>\n",
            px(a),
            py(a * up),
            px(b),
            py(b * up),
            px(b),
            py(b * down),
            px(a),
            py(a * down),
            band_opacity(i)
        ));
    }
    s.push_str("</g>\n");
    s.push_str(&format!(
        "<rect x=\"{LEFT:.1}\" y=\"{top:.1}\" width=\"{SIZE:.1}\" height=\"{SIZE:.1}\" fill=\"none\" stroke=\"#333\"/>\n"
    ));
    s.push_str(&format!(
        "<text x=\"{centre:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
        top + SIZE + 48.0,
        escape(&scatter.x_label)
    ));
    s.push_str(&format!(
        "<text x=\"22\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 22 {:.1})\">{}</text>\n",
        top + SIZE / 2.0,
        top + SIZE / 2.0,
        escape(&scatter.y_label)
    ));

    // y = x runs corner to corner because both axes cover the same decades.
    s.push_str(&format!(
        "<line class=\"identity\" x1=\"{LEFT:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{top:.1}\" \
         stroke=\"#c33\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n",
        top + SIZE,
        LEFT + SIZE
    ));
    s.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#c33\" text-anchor=\"end\">y = x</text>\n",
        LEFT + SIZE - 6.0,
        top + 16.0
    ));

    s.push_str("<g fill-opacity=\"0.8\" stroke=\"#123\" stroke-width=\"0.5\">\n");
    for p in scatter.points.iter().filter(|p| drawable(p)) {
        let w = names.binary_search(&p.workload()).unwrap_or(0);
        s.push_str(&format!(
            "<circle class=\"point\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"{}\"><title>{}: reference {}, regsim {}</title></circle>\n",
            px(p.x),
            py(p.y),
            colour(w),
            escape(&p.label),
            p.x,
            p.y
        ));
    }
    s.push_str("</g>\n");

    // Legend: one swatch per workload, then the bands (as they look where they overlap).
    s.push_str("<g>\n");
    for (i, name) in names.iter().enumerate() {
        let y = top + 18.0 * i as f64;
        s.push_str(&format!(
            "<rect class=\"legend\" x=\"{legend_x:.1}\" y=\"{y:.1}\" width=\"12\" height=\"12\" \
             fill=\"{}\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text>\n",
            colour(i),
            legend_x + 18.0,
            y + 10.0,
            escape(name)
        ));
    }
    let mut clear = 1.0;
    for (i, p) in BANDS_PERCENT.iter().enumerate() {
        clear *= 1.0 - band_opacity(i);
        let y = top + 18.0 * (names.len() + 1 + i) as f64;
        s.push_str(&format!(
            "<rect x=\"{legend_x:.1}\" y=\"{y:.1}\" width=\"12\" height=\"12\" fill=\"#c33\" \
             fill-opacity=\"{:.3}\"/><text x=\"{:.1}\" y=\"{:.1}\">within ±{p}%</text>\n",
            1.0 - clear,
            legend_x + 18.0,
            y + 10.0
        ));
    }
    s.push_str("</g>\n</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(x: f64, y: f64, label: &str) -> ScatterPoint {
        ScatterPoint {
            x,
            y,
            label: label.to_string(),
        }
    }

    fn scatter(points: Vec<ScatterPoint>) -> Scatter {
        Scatter {
            title: "cycles".into(),
            caption: "2 kernels".into(),
            x_label: "reference".into(),
            y_label: "regsim".into(),
            points,
        }
    }

    /// The `(cx, cy)` of every circle.
    fn circles(svg: &str) -> Vec<(f64, f64)> {
        svg.lines()
            .filter(|l| l.starts_with("<circle"))
            .map(|l| {
                let attr = |name: &str| -> f64 {
                    let start = l.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
                    let end = start + l[start..].find('"').unwrap();
                    l[start..end].parse().unwrap()
                };
                (attr("cx"), attr("cy"))
            })
            .collect()
    }

    #[test]
    fn decade_labels() {
        let got: Vec<String> = [0, 1, 2, 3, 5, 6, 7, 9, 12, 15, -1]
            .into_iter()
            .map(decade_label)
            .collect();
        assert_eq!(
            got,
            ["1", "10", "100", "1K", "100K", "1M", "10M", "1G", "1T", "1e15", "1e-1"]
        );
    }

    #[test]
    fn the_range_covers_both_coordinates_in_whole_decades() {
        let pts = [point(1500.0, 90_000.0, "a"), point(20_000.0, 3000.0, "b")];
        assert_eq!(decade_range(&pts), (3, 5));
        assert_eq!(decade_range(&[point(1000.0, 1000.0, "c")]), (3, 4));
        assert_eq!(decade_range(&[point(0.0, 0.0, "z")]), (0, 1));
    }

    #[test]
    fn points_are_placed_on_log_axes_and_y_equals_x_is_the_diagonal() {
        // Range 10^3..10^5 over 480 px: 10^4 is the middle, 10^3.5 a quarter in.
        let svg = scatter_svg(&scatter(vec![
            point(10_000.0, 10_000.0, "mid"),
            point(10f64.powf(3.5), 100_000.0, "top"),
        ]));
        assert_eq!(
            circles(&svg),
            [(LEFT + 240.0, TOP + 240.0), (LEFT + 120.0, TOP)]
        );
        assert!(svg.contains(&format!(
            "class=\"identity\" x1=\"{LEFT:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{TOP:.1}\"",
            TOP + SIZE,
            LEFT + SIZE
        )));
        assert!(
            svg.contains(">10K</text>")
                && svg.contains(">1K</text>")
                && svg.contains(">100K</text>")
        );
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.ends_with("</svg>\n"));
    }

    #[test]
    fn labels_are_escaped_and_zero_points_are_counted_not_drawn() {
        let svg = scatter_svg(&scatter(vec![
            point(100.0, 200.0, "transpose_tiled<1> & co"),
            point(0.0, 5.0, "empty"),
        ]));
        assert!(svg.contains(
            "<title>transpose_tiled&lt;1&gt; &amp; co: reference 100, regsim 200</title>"
        ));
        assert_eq!(circles(&svg).len(), 1);
        assert!(svg.contains("2 kernels (1 point with a zero value not drawn)"));
        assert!(!svg.contains("empty"));
    }

    #[test]
    fn points_are_coloured_by_workload_with_a_legend_and_bands() {
        let svg = scatter_svg(&scatter(vec![
            point(100.0, 110.0, "saxpy #0 saxpy"),
            point(1000.0, 900.0, "bfs #0 bfs_level"),
            point(2000.0, 1900.0, "bfs #1 bfs_level"),
        ]));
        // Workloads sorted: bfs is colour 0, saxpy colour 1; both bfs launches share it.
        let fills: Vec<&str> = svg
            .lines()
            .filter(|l| l.starts_with("<circle"))
            .map(|l| {
                l.split("fill=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap()
            })
            .collect();
        assert_eq!(fills, [colour(1), colour(0), colour(0)]);
        assert_eq!(svg.matches("class=\"legend\"").count(), 2);
        assert!(svg.contains(">bfs</text>") && svg.contains(">saxpy</text>"));
        // One band per percentage, each between y = x(1 - p) and y = x(1 + p): at the
        // left edge (x = 10^2 over 10^2..10^4) the ±10% band spans log10(1.1) and
        // log10(0.9) decades around y = x, of 240 px per decade.
        assert_eq!(svg.matches("class=\"band\"").count(), BANDS_PERCENT.len());
        let band = svg.lines().find(|l| l.contains("±10% of")).unwrap();
        let y_up = TOP + SIZE - 1.1f64.log10() * 240.0;
        assert!(
            band.contains(&format!("points=\"{LEFT:.1},{y_up:.1} ")),
            "{band}"
        );
        assert!(svg.contains("within ±25%</text>") && svg.contains("within ±10%</text>"));
        // An empty title is not drawn, and the plot moves up.
        let mut untitled = scatter(vec![point(100.0, 110.0, "saxpy #0 saxpy")]);
        untitled.title.clear();
        let svg = scatter_svg(&untitled);
        assert!(!svg.contains("class=\"title\""));
        let cy = TOP - 24.0 + SIZE - (110f64.log10() - 2.0) * SIZE;
        assert_eq!(circles(&svg)[0].1, (cy * 10.0).round() / 10.0);
    }
}
