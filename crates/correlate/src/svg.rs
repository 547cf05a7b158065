//! A log-log scatter plot as a self-contained SVG document, written by hand: square plot
//! area, the same decade range on both axes, decade grid lines and labels, the y = x line,
//! and one circle per point with its label as a hover title.

use serde::Serialize;

/// One point: `x` is the reference value, `y` regsim's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScatterPoint {
    pub x: f64,
    pub y: f64,
    pub label: String,
}

/// What to draw.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scatter {
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

/// The SVG document (UTF-8 text). Points with a coordinate that is zero, negative or not
/// finite cannot be placed on log axes; the caption says how many were left out.
pub fn scatter_svg(scatter: &Scatter) -> String {
    let (lo, hi) = decade_range(&scatter.points);
    let span = f64::from(hi - lo);
    let px = |v: f64| LEFT + (v.log10() - f64::from(lo)) / span * SIZE;
    let py = |v: f64| TOP + SIZE - (v.log10() - f64::from(lo)) / span * SIZE;
    let width = LEFT + SIZE + RIGHT;
    let height = TOP + SIZE + BOTTOM;
    let mut s = String::new();
    s.push_str(&format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"12\">\n"
    ));
    s.push_str(&format!(
        "<rect width=\"{width}\" height=\"{height}\" fill=\"white\"/>\n"
    ));
    s.push_str(&format!(
        "<text x=\"{:.1}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">{}</text>\n",
        width / 2.0,
        escape(&scatter.title)
    ));
    let drawable = |p: &&ScatterPoint| p.x.is_finite() && p.y.is_finite() && p.x > 0.0 && p.y > 0.0;
    let left_out = scatter.points.iter().filter(|p| !drawable(p)).count();
    let mut caption = scatter.caption.clone();
    if left_out > 0 {
        caption.push_str(&format!(
            " ({left_out} point{} with a zero value not drawn)",
            if left_out == 1 { "" } else { "s" }
        ));
    }
    s.push_str(&format!(
        "<text x=\"{:.1}\" y=\"44\" text-anchor=\"middle\" fill=\"#444\">{}</text>\n",
        width / 2.0,
        escape(&caption)
    ));

    // Decade grid and tick labels; minor grid at 2x and 5x when there are few decades.
    s.push_str("<g stroke=\"#ddd\" stroke-width=\"1\">\n");
    for e in lo..=hi {
        let d = 10f64.powi(e);
        let (x, y) = (px(d), py(d));
        s.push_str(&format!(
            "<line x1=\"{x:.1}\" y1=\"{TOP:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\"/>\n",
            TOP + SIZE
        ));
        s.push_str(&format!(
            "<line x1=\"{LEFT:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/>\n",
            LEFT + SIZE
        ));
        if e < hi && hi - lo <= 4 {
            for m in [2.0, 5.0] {
                let (x, y) = (px(m * d), py(m * d));
                s.push_str(&format!(
                    "<line x1=\"{x:.1}\" y1=\"{TOP:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#f0f0f0\"/>\n",
                    TOP + SIZE
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
            TOP + SIZE + 18.0
        ));
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{label}</text>\n",
            LEFT - 8.0,
            py(d) + 4.0
        ));
    }
    s.push_str("</g>\n");
    s.push_str(&format!(
        "<rect x=\"{LEFT:.1}\" y=\"{TOP:.1}\" width=\"{SIZE:.1}\" height=\"{SIZE:.1}\" fill=\"none\" stroke=\"#333\"/>\n"
    ));
    s.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
        LEFT + SIZE / 2.0,
        TOP + SIZE + 48.0,
        escape(&scatter.x_label)
    ));
    s.push_str(&format!(
        "<text x=\"22\" y=\"{:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 22 {:.1})\">{}</text>\n",
        TOP + SIZE / 2.0,
        TOP + SIZE / 2.0,
        escape(&scatter.y_label)
    ));

    // y = x runs corner to corner because both axes cover the same decades.
    s.push_str(&format!(
        "<line class=\"identity\" x1=\"{LEFT:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{TOP:.1}\" \
         stroke=\"#c33\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n",
        TOP + SIZE,
        LEFT + SIZE
    ));
    s.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#c33\" text-anchor=\"end\">y = x</text>\n",
        LEFT + SIZE - 6.0,
        TOP + 16.0
    ));

    s.push_str("<g fill=\"#1f5fa8\" fill-opacity=\"0.7\" stroke=\"#123\" stroke-width=\"0.5\">\n");
    for p in scatter.points.iter().filter(drawable) {
        s.push_str(&format!(
            "<circle class=\"point\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\"><title>{}: reference {}, regsim {}</title></circle>\n",
            px(p.x),
            py(p.y),
            escape(&p.label),
            p.x,
            p.y
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
}
