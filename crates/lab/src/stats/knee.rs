//! The knee of a concave increasing curve (throughput against concurrency):
//! the point past which more concurrency buys little; and of a convex
//! increasing one (latency against concurrency): where latency departs.

/// The x of the knee of a concave increasing curve by Kneedle (Satopää,
/// Albrecht, Irwin & Raghavan, 2011), exactly as the `kneed` package's
/// `KneeLocator(x, y, curve='concave', direction='increasing', S=1,
/// online=False, interp_method='interp1d')` (checked against kneed 0.9.0,
/// reference section `knee`):
///
/// 1. sort the points by x, normalize x and y to [0, 1];
/// 2. take the difference curve d = y_n − x_n;
/// 3. find its local maxima and minima (`argrelextrema` with ≥ / ≤, order
///    1, the ends compared with themselves, so plateaus and ends count);
/// 4. each local maximum sets a threshold d_max − S·mean(Δx_n) with S = 1;
///    walking right from the first maximum, the first point whose next
///    difference value drops below the current threshold makes that
///    maximum the knee. A local minimum resets the threshold to 0 and stops
///    detection until the next maximum.
///
/// `None` when no point qualifies (a straight line, a convex curve), with
/// fewer than 3 points, or when all x or all y are equal.
pub fn knee(points: &[(f64, f64)]) -> Option<f64> {
    let (pts, xn, yn) = normalized(points)?;
    let diff: Vec<f64> = yn.iter().zip(&xn).map(|(y, x)| y - x).collect();
    detect(&xn, &diff).map(|i| pts[i].0)
}

/// The x of the knee of a convex increasing curve (latency against
/// concurrency: flat while the server has room, then climbing), exactly as
/// `kneed`'s `KneeLocator(x, y, curve='convex', direction='increasing', S=1,
/// online=False, interp_method='interp1d')` (reference section
/// `knee_convex`): kneed mirrors the normalized curve into a concave one —
/// y' = flip(1 − y_n), x' = flip(1 − x_n) — runs the same detection on
/// y' − x', and reads the knee's x from the other end (`x[-(i + 1)]`).
/// `None` as for [`knee`].
pub fn knee_convex(points: &[(f64, f64)]) -> Option<f64> {
    let (pts, xn, yn) = normalized(points)?;
    let n = pts.len();
    let xm: Vec<f64> = (0..n).map(|i| 1.0 - xn[n - 1 - i]).collect();
    let diff: Vec<f64> = (0..n).map(|i| (1.0 - yn[n - 1 - i]) - xm[i]).collect();
    detect(&xm, &diff).map(|i| pts[n - 1 - i].0)
}

/// The points sorted by x, with x and y normalized to [0, 1].
#[allow(clippy::type_complexity)]
fn normalized(points: &[(f64, f64)]) -> Option<(Vec<(f64, f64)>, Vec<f64>, Vec<f64>)> {
    let mut pts = points.to_vec();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    if pts.len() < 3 {
        return None;
    }
    let normalize = |v: Vec<f64>| -> Option<Vec<f64>> {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let range = hi - lo;
        (range > 0.0 && range.is_finite()).then(|| v.iter().map(|x| (x - lo) / range).collect())
    };
    let xn = normalize(pts.iter().map(|p| p.0).collect())?;
    let yn = normalize(pts.iter().map(|p| p.1).collect())?;
    Some((pts, xn, yn))
}

/// Kneedle's detection on the difference curve: the index of the local
/// maximum that makes the knee (steps 3 and 4 above).
fn detect(xn: &[f64], diff: &[f64]) -> Option<usize> {
    const S: f64 = 1.0;
    let n = diff.len();
    let prev = |i: usize| diff[i.saturating_sub(1)];
    let next = |i: usize| diff[(i + 1).min(n - 1)];
    let is_max: Vec<bool> = (0..n)
        .map(|i| diff[i] >= prev(i) && diff[i] >= next(i))
        .collect();
    let is_min: Vec<bool> = (0..n)
        .map(|i| diff[i] <= prev(i) && diff[i] <= next(i))
        .collect();
    let first_max = is_max.iter().position(|&m| m)?;

    let mean_dx = xn.windows(2).map(|w| w[1] - w[0]).sum::<f64>() / (n - 1) as f64;
    let step = S * mean_dx.abs();

    let mut threshold = 0.0;
    let mut threshold_index = first_max;
    let mut active = true;
    for i in first_max..n - 1 {
        if is_max[i] {
            threshold = diff[i] - step;
            threshold_index = i;
            active = true;
        }
        if is_min[i] {
            threshold = 0.0;
            active = false;
        }
        if active && diff[i + 1] < threshold {
            return Some(threshold_index);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::reference::{floats, reference};

    #[test]
    fn knee_matches_kneed() {
        for case in reference()["knee"].as_array().unwrap() {
            let name = case["name"].as_str().unwrap();
            let xs = floats(&case["x"]);
            let ys = floats(&case["y"]);
            let points: Vec<(f64, f64)> = xs.into_iter().zip(ys).collect();
            assert_eq!(knee(&points), case["knee"].as_f64(), "{name}");
        }
    }

    #[test]
    fn convex_knee_matches_kneed() {
        for case in reference()["knee_convex"].as_array().unwrap() {
            let name = case["name"].as_str().unwrap();
            let xs = floats(&case["x"]);
            let ys = floats(&case["y"]);
            let points: Vec<(f64, f64)> = xs.into_iter().zip(ys).collect();
            assert_eq!(knee_convex(&points), case["knee"].as_f64(), "{name}");
        }
    }

    #[test]
    fn order_does_not_matter_and_degenerate_input_has_no_knee() {
        let mut pts: Vec<(f64, f64)> = (1..=20)
            .map(|x| (x as f64, (x.min(8) * 100) as f64))
            .collect();
        assert_eq!(knee(&pts), Some(8.0));
        pts.reverse();
        assert_eq!(knee(&pts), Some(8.0));
        assert_eq!(knee(&[(1.0, 1.0), (2.0, 2.0)]), None);
        assert_eq!(knee(&[(1.0, 5.0), (2.0, 5.0), (3.0, 5.0)]), None);
    }
}
