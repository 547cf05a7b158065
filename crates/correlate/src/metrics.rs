//! The two summary figures of a correlation: mean absolute percentage error and Pearson's
//! correlation coefficient, over pairs (reference, regsim).

/// Percentage error of `value` against `reference`: `100 (value - reference) / reference`;
/// `None` when the reference is zero (no relative error exists).
pub fn percent_error(reference: f64, value: f64) -> Option<f64> {
    (reference != 0.0).then(|| 100.0 * (value - reference) / reference)
}

/// Mean absolute percentage error of the pairs `(reference, value)`, in percent, over the
/// pairs whose reference is nonzero; `None` when there is no such pair.
pub fn mape(pairs: &[(f64, f64)]) -> Option<f64> {
    let errors: Vec<f64> = pairs
        .iter()
        .filter_map(|&(r, v)| percent_error(r, v))
        .map(f64::abs)
        .collect();
    (!errors.is_empty()).then(|| errors.iter().sum::<f64>() / errors.len() as f64)
}

/// Pearson's correlation coefficient of the pairs; `None` for fewer than two pairs or when
/// either side is constant (the coefficient is undefined).
pub fn pearson(pairs: &[(f64, f64)]) -> Option<f64> {
    if pairs.len() < 2 {
        return None;
    }
    let n = pairs.len() as f64;
    let mean_x = pairs.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = pairs.iter().map(|p| p.1).sum::<f64>() / n;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for &(x, y) in pairs {
        let (dx, dy) = (x - mean_x, y - mean_y);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn percent_error_is_signed_and_relative_to_the_reference() {
        assert_eq!(percent_error(200.0, 250.0), Some(25.0));
        assert_eq!(percent_error(200.0, 150.0), Some(-25.0));
        assert_eq!(percent_error(0.0, 5.0), None);
    }

    #[test]
    fn mape_of_known_numbers() {
        // |+10%|, |-50%|, |+200%| -> 260 / 3.
        let pairs = [(100.0, 110.0), (40.0, 20.0), (5.0, 15.0)];
        assert!(close(mape(&pairs).unwrap(), 260.0 / 3.0));
        // A zero reference is left out, not counted as zero error.
        let with_zero = [(100.0, 110.0), (0.0, 7.0)];
        assert!(close(mape(&with_zero).unwrap(), 10.0));
        assert_eq!(mape(&[(0.0, 1.0)]), None);
        assert_eq!(mape(&[]), None);
    }

    #[test]
    fn pearson_of_known_numbers() {
        // x = 1..5, y = 2, 4, 5, 4, 5: sxy = 6, sxx = 10, syy = 6 -> r = 6 / sqrt(60).
        let pairs = [(1.0, 2.0), (2.0, 4.0), (3.0, 5.0), (4.0, 4.0), (5.0, 5.0)];
        assert!(close(pearson(&pairs).unwrap(), 6.0 / 60f64.sqrt()));
        // Exact linear relations give +1 and -1 whatever the scale.
        let up = [(1.0, 10.0), (2.0, 30.0), (3.0, 50.0)];
        assert!(close(pearson(&up).unwrap(), 1.0));
        let down = [(1.0, 5.0), (2.0, 3.0), (3.0, 1.0)];
        assert!(close(pearson(&down).unwrap(), -1.0));
    }

    #[test]
    fn pearson_is_undefined_for_one_pair_or_a_constant_side() {
        assert_eq!(pearson(&[(1.0, 2.0)]), None);
        assert_eq!(pearson(&[(1.0, 2.0), (3.0, 2.0)]), None);
        assert_eq!(pearson(&[(4.0, 1.0), (4.0, 2.0)]), None);
    }
}
