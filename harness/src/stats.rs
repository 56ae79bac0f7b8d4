//! Summary statistics of repeated timings: median, mean, standard deviation, minimum, speedup.

/// The summary of one point's repetition times, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Summary {
    /// Number of repetitions.
    pub n: usize,
    /// Median (mean of the two middle values for an even count).
    pub median: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (divisor n - 1); 0 for a single value.
    pub stddev: f64,
    /// Smallest value.
    pub min: f64,
}

/// The median of `xs`, or `None` for no values. NaN values are not expected (times are finite).
pub(crate) fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    })
}

/// The arithmetic mean of `xs`, or `None` for no values.
pub(crate) fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    Some(xs.iter().sum::<f64>() / xs.len() as f64)
}

/// The sample standard deviation (divisor n - 1) of `xs`: `None` for no values, 0 for one.
pub(crate) fn stddev(xs: &[f64]) -> Option<f64> {
    let m = mean(xs)?;
    if xs.len() < 2 {
        return Some(0.0);
    }
    let ss: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
    Some((ss / (xs.len() - 1) as f64).sqrt())
}

/// Summarises `xs`, or `None` for no values.
pub(crate) fn summarize(xs: &[f64]) -> Option<Summary> {
    Some(Summary {
        n: xs.len(),
        median: median(xs)?,
        mean: mean(xs)?,
        stddev: stddev(xs)?,
        min: xs.iter().copied().fold(f64::INFINITY, f64::min),
    })
}

/// `base / t`: the speedup of a run taking `t` over one taking `base`. `None` when either is
/// missing or not positive.
pub(crate) fn speedup(base: Option<f64>, t: Option<f64>) -> Option<f64> {
    match (base, t) {
        (Some(b), Some(t)) if b > 0.0 && t > 0.0 => Some(b / t),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn mean_and_sample_stddev() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sum of squares 32, sample variance 32/7.
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert!(close(mean(&xs).unwrap(), 5.0));
        assert!(close(stddev(&xs).unwrap(), (32.0f64 / 7.0).sqrt()));
        assert_eq!(stddev(&[1.5]), Some(0.0));
        assert_eq!(stddev(&[]), None);
    }

    #[test]
    fn summary_collects_everything() {
        let s = summarize(&[0.3, 0.1, 0.2, 0.6]).unwrap();
        assert_eq!(s.n, 4);
        assert!(close(s.median, 0.25));
        assert!(close(s.mean, 0.3));
        assert!(close(s.min, 0.1));
        // deviations -0.2, -0.1, 0, 0.3: squares sum 0.14, /3.
        assert!(close(s.stddev, (0.14f64 / 3.0).sqrt()));
        assert!(summarize(&[]).is_none());
    }

    #[test]
    fn speedup_is_base_over_time() {
        assert_eq!(speedup(Some(2.46), Some(1.23)), Some(2.0));
        assert!(close(
            speedup(Some(87.61), Some(44.74)).unwrap(),
            87.61 / 44.74
        ));
        assert_eq!(speedup(None, Some(1.0)), None);
        assert_eq!(speedup(Some(1.0), None), None);
        assert_eq!(speedup(Some(1.0), Some(0.0)), None);
    }
}
